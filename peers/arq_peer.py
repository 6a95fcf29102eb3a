"""arq, played: the driver side of peers/arq/peer.py, which runs in a virtualenv of its own
(peers/arq/.venv, from peers/arq/requirements.txt): arq 0.28 needs a redis-py below 6, the lab
redis-py 8, so the two cannot share the lab's environment.

The budget is the job's max_tries 2: a lost try is retried, a third try fails the job. What runs
out is the job's in-progress key, set once by the worker that starts the job, for the worker's
longest function timeout + 10 s (this worker has one function), never renewed: the play sets
job_timeout 10 s (default 300 s), so the key lasts 20 s. A job cannot run longer than its
timeout, so in both restart histories the first run is set to end within it.
"""

from __future__ import annotations

from pathlib import Path

from peers.harness import Crew, InspectError, Stage, View, run_json
from peers.play import EVENT_AFTER_S, RESTART_TAIL_S, Peer, Plan

FOLDER = Path(__file__).resolve().parent / "arq"
PYTHON = FOLDER / ".venv" / "bin" / "python"
JOB_TIMEOUT_S = 10
KEY_S = JOB_TIMEOUT_S + 10
INSTALL = ("python3 -m venv peers/arq/.venv && "
           "peers/arq/.venv/bin/pip install -r peers/arq/requirements.txt")


class Arq(Peer):
    key = "arq"
    library = "arq"
    budget = "max_tries 2"
    lease = (f"the job's in-progress key: the worker's longest function timeout + 10 s, set "
             f"once, not renewed ({KEY_S} s here)")
    shortened = f"job_timeout {JOB_TIMEOUT_S} s (default 300 s), so the in-progress key lasts " \
                f"{KEY_S} s"

    def missing(self) -> str | None:
        if not PYTHON.exists():
            return f"arq's virtualenv is not made: `{INSTALL}` (make peers does it)"
        return None

    def _run(self, stage: Stage | None, *args: str) -> dict:
        env = {"PEERS_URL": stage.url} if stage is not None else {}
        found = run_json([str(PYTHON), str(FOLDER / "peer.py"), *args], env, cwd=FOLDER)
        if not isinstance(found, dict):
            raise InspectError(f"peer.py {args[0]} printed {found!r}")
        return found

    def versions(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self._run(None, "version").items()}

    def plan(self, history: str) -> Plan:
        if history == "stalled":
            return Plan(first_run_s=3, within_s=KEY_S + 20)
        down = KEY_S + 5.0 if history == "restarted" else 3.0
        first = min(EVENT_AFTER_S + down + RESTART_TAIL_S, JOB_TIMEOUT_S - 2)
        return Plan(down_s=down, first_run_s=first, within_s=KEY_S + 40,
                    note=f"the first run lasts {first:g} s, within the job's {JOB_TIMEOUT_S} s "
                         "timeout")

    def crew(self, stage: Stage, folder: Path, runlog: Path, plan: Plan) -> Crew:
        env = {"PEERS_URL": stage.url, "PEERS_RUNLOG": str(runlog), **plan.env}
        return Crew([str(PYTHON), str(FOLDER / "peer.py"), "work"], env, folder,
                    count=self.workers, cwd=FOLDER)

    def enqueue(self, stage: Stage, folder: Path, first_s: float) -> str:
        return str(self._run(stage, "enqueue", repr(first_s))["id"])

    def inspect(self, stage: Stage, folder: Path, job: str) -> View:
        found = self._run(stage, "inspect", job)
        status = str(found["status"])
        if status == "complete":
            fate = "completed" if found["success"] else "failed"
        else:
            fate = {"in_progress": "running", "not_found": "lost"}.get(status, "waiting")
        tries = found["job_try"] or found["tries_started"] or 0
        return {"fate": fate, "state": status, "counted": max(int(tries) - 1, 0),
                "counted_as": "tries spent before the last (job_try - 1) of max_tries 2",
                "reason": None if found["success"] in (True, None) else found["result"]}
