"""RQ, played: its workers (`python -m peers.rq_peer`), the job they run, and the driver side.

The budget is the job's own `Retry(max=1)`: one abandoned run is retried, the next fails the job.
What runs out is the job's entry in the queue's StartedJobRegistry: the worker scores it, at each
heartbeat, `min(job timeout left, job_monitoring_interval) + 60` seconds ahead; a worker's
maintenance task (`StartedJobRegistry.cleanup`) takes an entry past its score as abandoned. The
60 is written into RQ, not a setting: the entry outlives the worker's last heartbeat by a
minute at least, so RQ's stall and restart each take a little over a minute to play.
A run that outlives its worker (the work horse runs on when the worker that forked it dies of a
lost connection) and finishes after the retry saves the whole job as it loaded it, its
retries_left included: the count the retry spent can read 1 again at the end. The recording
keeps the highest count seen.
Settings the play shortens, all the Worker's own: job_monitoring_interval 1 s (heartbeat, from
30), maintenance_interval 1 s (registry cleanup, from 600), worker_ttl 16 s (from 420: the
worker blocks on the queue for worker_ttl - 15 s, and looks at its maintenance only between).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from importlib import metadata
from pathlib import Path

from peers.harness import Crew, Stage, View
from peers.play import EVENT_AFTER_S, RESTART_TAIL_S, Peer, Plan
from peers.record import RQ_ENTRY_S, RQ_MONITORING_S

QUEUE = "peers"
MONITORING_S = RQ_MONITORING_S
MAINTENANCE_S = 1
WORKER_TTL_S = 16
ENTRY_S = RQ_ENTRY_S
"""How long the started-registry entry outlives a heartbeat (RQ adds its fixed 60 s)."""
ROOT = Path(__file__).resolve().parent.parent
CLEANING_LOCK_S = 899
"""How long RQ's lock on cleaning a queue's registries lasts unless the cleaner releases it."""


def note(job: str, event: str) -> bool:
    """One line of the run log: the job's start or end, by this process. Whether the job had
    started before (in any worker)."""
    path = os.environ["PEERS_RUNLOG"]
    with open(path) as log:
        before = any(f'"job": "{job}"' in line and '"event": "start"' in line for line in log)
    line = json.dumps({"job": job, "pid": os.getpid(), "event": event, "t": time.time()})
    with open(path, "a") as log:
        log.write(line + "\n")
    return before


def job(first_s: float) -> str:
    """The job: its first run lasts first_s seconds, any later run one second."""
    from rq import get_current_job

    current = get_current_job()
    name = current.id if current is not None else "?"
    again = note(name, "start")
    time.sleep(1.0 if again else first_s)
    note(name, "end")
    return "done"


def work() -> None:
    """One RQ worker on the play's server, with the shortened settings."""
    from redis import Redis
    from rq import Worker

    connection = Redis.from_url(os.environ["PEERS_URL"])
    Worker([QUEUE], connection=connection, job_monitoring_interval=MONITORING_S,
           maintenance_interval=MAINTENANCE_S, worker_ttl=WORKER_TTL_S).work()


class RQ(Peer):
    key = "rq"
    library = "RQ"
    budget = "Retry(max=1)"
    lease = (f"the job's StartedJobRegistry entry: {ENTRY_S} s past the last heartbeat "
             f"(job_monitoring_interval {MONITORING_S} s + RQ's fixed 60 s)")
    shortened = (f"Worker(job_monitoring_interval={MONITORING_S}, "
                 f"maintenance_interval={MAINTENANCE_S}, worker_ttl={WORKER_TTL_S}): the "
                 "heartbeat every second (default 30 s), the registry cleanup every second "
                 "(default 600 s), the queue blocked on for 1 s between maintenance looks "
                 "(default 405 s); the entry's own 60 s is fixed in RQ")

    def missing(self) -> str | None:
        try:
            metadata.version("rq")
        except metadata.PackageNotFoundError:
            return ("RQ is not installed in this Python: `.venv/bin/pip install -e .` (the lab "
                    "depends on rq), or `pip install rq`")
        return None

    def versions(self) -> dict[str, str]:
        return {"rq": metadata.version("rq"), "redis-py": metadata.version("redis"),
                "python": platform.python_version()}

    def plan(self, history: str) -> Plan:
        if history == "stalled":
            return Plan(first_run_s=3, within_s=ENTRY_S + 30, settle_s=1)
        down = ENTRY_S + 1 if history == "restarted" else 10.0
        return Plan(down_s=down, first_run_s=EVENT_AFTER_S + down + RESTART_TAIL_S,
                    within_s=ENTRY_S + 30, settle_s=1)

    def crew(self, stage: Stage, folder: Path, runlog: Path, plan: Plan) -> Crew:
        env = {"PEERS_URL": stage.url, "PEERS_RUNLOG": str(runlog),
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        return Crew([sys.executable, "-m", "peers.rq_peer"], env | plan.env, folder,
                    count=self.workers, cwd=ROOT)

    def enqueue(self, stage: Stage, folder: Path, first_s: float) -> str:
        from rq import Queue, Retry

        queued = Queue(QUEUE, connection=stage.driver).enqueue(
            "peers.rq_peer.job", first_s, retry=Retry(max=1))
        return str(queued.id)

    def inspect(self, stage: Stage, folder: Path, job: str) -> View:
        from rq.job import Job, JobStatus

        found = Job.fetch(job, connection=stage.driver)
        status = found.get_status()
        left = found.retries_left if found.retries_left is not None else 1
        fate = {JobStatus.FINISHED: "completed", JobStatus.FAILED: "failed",
                JobStatus.STARTED: "running"}.get(status, "waiting")
        result = found.latest_result() if fate == "failed" else None
        reason = (result.exc_string or "").strip().splitlines()[-1:] if result else []
        # A cleaning cut short (by a lost connection, a stop signal) leaves its lock, which
        # keeps every worker from cleaning this queue's registries until it expires (899 s).
        # A cleaning under way holds it a moment; one held for seconds was left behind.
        lock = stage.driver.ttl(f"rq:clean_registries:{QUEUE}")
        lock = lock if 0 < lock < CLEANING_LOCK_S - 5 else -1
        return {"fate": fate, "state": str(status.value), "counted": 1 - left,
                "counted_as": "retries spent of Retry(max=1)",
                "reason": reason[0] if reason else None,
                "cleaning_lock_s": lock if lock > 0 else None}

    def describe(self, view: View, plan: Plan) -> str:
        said = super().describe(view, plan)
        if view.get("cleaning_lock_s"):
            said += (f"; the queue's cleaning lock was held ({view['cleaning_lock_s']} s left "
                     f"of {CLEANING_LOCK_S}): a cleaning cut short left it, and no worker "
                     "cleans the registry until it expires")
        return said


if __name__ == "__main__":
    work()
