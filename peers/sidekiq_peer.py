"""Sidekiq, played: the driver side of peers/sidekiq/peer.rb, with Debian's ruby-sidekiq.

Sidekiq's open-source fetch (basic fetch) takes a job out of its queue with BRPOP and holds it
only in the process that runs it: there is no lease to run out and no count of lost jobs, so no
budget to set. A process killed mid-job loses the job; a process told to stop (SIGTERM) pushes
its unfinished jobs back, which a SIGKILL gives it no chance to do. Sidekiq keeps no record of a
finished job, so the play reads "completed" from the job's own run log; "lost" is a job that is
in no queue, retry, scheduled or dead set, with no run in flight and none finished. No setting
is shortened.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from peers.harness import Crew, InspectError, Stage, View, run_json
from peers.play import EVENT_AFTER_S, RESTART_TAIL_S, Peer, Plan

FOLDER = Path(__file__).resolve().parent / "sidekiq"
DOWN_S = {"restarted": 25.0, "short_restart": 3.0}
INSTALL = "sudo apt-get install -y ruby-sidekiq"


class Sidekiq(Peer):
    key = "sidekiq"
    library = "Sidekiq"
    budget = "none (basic fetch counts no lost job)"
    lease = "none: the job is out of Redis while it runs"
    shortened = "nothing"

    def missing(self) -> str | None:
        if shutil.which("ruby") is None or shutil.which("sidekiq") is None:
            return f"Ruby's Sidekiq is not installed: `{INSTALL}` (Debian's package)"
        return None

    def _run(self, stage: Stage | None, *args: str) -> dict:
        env = {"REDIS_URL": stage.url} if stage is not None else {}
        found = run_json(["ruby", str(FOLDER / "peer.rb"), *args], env, cwd=FOLDER)
        if not isinstance(found, dict):
            raise InspectError(f"peer.rb {args[0]} printed {found!r}")
        return found

    def versions(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self._run(None, "version").items()}

    def plan(self, history: str) -> Plan:
        if history == "stalled":
            return Plan(first_run_s=3, within_s=30, settle_s=5)
        down = DOWN_S[history]
        return Plan(down_s=down, first_run_s=EVENT_AFTER_S + down + RESTART_TAIL_S,
                    within_s=60, settle_s=5,
                    note="no lease: the long and the short restart differ only in downtime")

    def crew(self, stage: Stage, folder: Path, runlog: Path, plan: Plan) -> Crew:
        env = {"REDIS_URL": stage.url, "PEERS_RUNLOG": str(runlog), **plan.env}
        return Crew(["sidekiq", "-r", str(FOLDER / "peer.rb"), "-q", "peers"], env, folder,
                    count=self.workers, cwd=FOLDER)

    def enqueue(self, stage: Stage, folder: Path, first_s: float) -> str:
        return str(self._run(stage, "enqueue", repr(first_s))["id"])

    def inspect(self, stage: Stage, folder: Path, job: str) -> View:
        from peers.harness import RunLog

        found = self._run(stage, "inspect", job)
        where = list(found["where"])
        ended = any(run.end is not None for run in RunLog(folder / "runs.jsonl").runs(job))
        if "dead" in where:
            fate = "failed"
        elif where:
            fate = "waiting"
        else:
            fate = "completed" if ended else "lost"
        return {"fate": fate, "state": ", ".join(where) or "in no queue or set",
                "counted": int(found["retry_count"] or 0),
                "counted_as": "nothing: basic fetch counts no lost job (retry_count counts "
                              "errors the job raised)",
                "reason": found["error"], "busy": found["busy"]}
