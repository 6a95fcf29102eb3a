"""arq, played: run with the Python of peers/arq/.venv, where arq and the redis-py it needs
(below 6, which the lab's own redis-py 8 is not) are installed from requirements.txt.

    python peer.py work           one arq worker on the queue "peers"
    python peer.py enqueue SECONDS  adds the one job (its first run lasts SECONDS, a later
                                    one 1 s); prints its id as JSON
    python peer.py inspect ID     arq's own view of the job as JSON
    python peer.py version        the versions as JSON

The server's URL comes in PEERS_URL (never on the command line, where `ps` would show its
password); the run log's path in PEERS_RUNLOG. The budget is the job's max_tries 2. What runs
out is the job's in-progress key, which a worker sets once when it starts the job, for the
job's timeout + 10 s, and does not renew: the play's job_timeout is 10 s (default 300 s).
"""

import asyncio
import json
import os
import platform
import sys
import time
from importlib import metadata

from arq import create_pool, func, run_worker
from arq.connections import ArqRedis, RedisSettings
from arq.jobs import Job

QUEUE = "peers"
MAX_TRIES = 2
JOB_TIMEOUT_S = 10


def note(job: str, event: str) -> bool:
    """One line of the run log; whether the job had started before (in any worker)."""
    path = os.environ["PEERS_RUNLOG"]
    with open(path) as log:
        before = any(f'"job": "{job}"' in line and '"event": "start"' in line for line in log)
    line = json.dumps({"job": job, "pid": os.getpid(), "event": event, "t": time.time()})
    with open(path, "a") as log:
        log.write(line + "\n")
    return before


async def job(ctx: dict, first_s: float) -> str:
    """The first run lasts first_s seconds, any later run one second."""
    again = note(ctx["job_id"], "start")
    await asyncio.sleep(1.0 if again else first_s)
    note(ctx["job_id"], "end")
    return "done"


def settings() -> RedisSettings:
    return RedisSettings.from_dsn(os.environ["PEERS_URL"])


class WorkerSettings:
    functions = [func(job, name="job", max_tries=MAX_TRIES)]  # noqa: RUF012 (arq reads it)
    queue_name = QUEUE
    job_timeout = JOB_TIMEOUT_S
    redis_settings = settings() if "PEERS_URL" in os.environ else None


async def enqueue(first_s: str) -> None:
    pool = await create_pool(settings(), default_queue_name=QUEUE)
    try:
        queued = await pool.enqueue_job("job", float(first_s))
        assert queued is not None, "a new job id is never taken"
        print(json.dumps({"id": queued.job_id}))
    finally:
        await pool.aclose()


async def inspect(job_id: str) -> None:
    # Named, so that the harness does not take the inspector's connection for a worker's.
    pool = ArqRedis.from_url(os.environ["PEERS_URL"], client_name="peers-inspect")
    try:
        found = Job(job_id, pool, _queue_name=QUEUE)
        status = await found.status()
        result = await found.result_info()
        tries = await pool.get(f"arq:retry:{job_id}")
        print(json.dumps({
            "status": status.value,
            "success": None if result is None else result.success,
            "result": None if result is None else str(result.result),
            "job_try": None if result is None else result.job_try,
            "tries_started": None if tries is None else int(tries),
            "in_progress_ms": await pool.pttl(f"arq:in-progress:{job_id}"),
        }))
    finally:
        await pool.aclose()


def version() -> None:
    print(json.dumps({"arq": metadata.version("arq"), "redis-py": metadata.version("redis"),
                      "python": platform.python_version()}))


def main() -> None:
    command, *args = sys.argv[1:] or [""]
    if command == "work":
        run_worker(WorkerSettings)  # type: ignore[arg-type]
    elif command == "enqueue":
        asyncio.run(enqueue(*args))
    elif command == "inspect":
        asyncio.run(inspect(*args))
    elif command == "version":
        version()
    else:
        sys.exit("usage: python peer.py work | enqueue SECONDS | inspect ID | version")


if __name__ == "__main__":
    main()
