"""BullMQ, played: the driver side of peers/bullmq/peer.mjs (Node), with the exact versions
peers/bullmq/package-lock.json locks, installed by `npm ci` in that folder.

The budget is the worker's maxStalledCount 1 (BullMQ's default): the job's stall counter may
reach 1; the stall that takes it past 1 fails the job. What runs out is the job's lock, which
the worker renews every lockDuration / 2. The stall check runs every stalledInterval, in two
passes: one marks the active jobs, the next moves a marked job whose lock is gone back to wait
and counts the stall. The stall and the long restart shorten lockDuration and stalledInterval
to 2 s (defaults 30 s each); the short restart keeps BullMQ's defaults, a 30 s lock, with the
server down 25 s, and its default reconnect back-off.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from peers.harness import Crew, InspectError, Stage, View, run_json
from peers.play import EVENT_AFTER_S, RESTART_TAIL_S, Peer, Plan

FOLDER = Path(__file__).resolve().parent / "bullmq"
LOCK_MS = 2000
SHORT_DOWN_S = 25.0
NPM_CI = "cd peers/bullmq && npm ci --no-audit --no-fund --ignore-scripts"


class BullMQ(Peer):
    key = "bullmq"
    library = "BullMQ"
    budget = "maxStalledCount 1"
    lease = (f"the job's lock: lockDuration {LOCK_MS} ms for the stall and the long restart, "
             "BullMQ's default 30 s for the short restart")
    shortened = (f"lockDuration and stalledInterval {LOCK_MS} ms (defaults 30000 each) for the "
                 "stall and the long restart; the short restart keeps every default")

    def missing(self) -> str | None:
        if shutil.which("node") is None:
            return ("Node.js is not installed: `sudo apt-get install -y nodejs npm`, then "
                    f"`{NPM_CI}` (make peers does that step)")
        if not (FOLDER / "node_modules" / "bullmq").is_dir():
            return f"BullMQ is not installed in peers/bullmq: `{NPM_CI}` (make peers does it)"
        return None

    def _run(self, stage: Stage, *args: str) -> dict:
        found = run_json(["node", str(FOLDER / "peer.mjs"), *args], {"PEERS_URL": stage.url},
                         cwd=FOLDER)
        if not isinstance(found, dict):
            raise InspectError(f"peer.mjs {args[0]} printed {found!r}")
        return found

    def versions(self) -> dict[str, str]:
        done = run_json(["node", str(FOLDER / "peer.mjs"), "version"], {}, cwd=FOLDER)
        return {str(k): str(v) for k, v in done.items()}

    def plan(self, history: str) -> Plan:
        lock = {"PEERS_LOCK_MS": str(LOCK_MS)}
        if history == "stalled":
            return Plan(first_run_s=3, within_s=30, env=lock)
        if history == "restarted":
            down = 5.0
            return Plan(down_s=down, first_run_s=EVENT_AFTER_S + down + RESTART_TAIL_S,
                        within_s=60, env=lock)
        return Plan(down_s=SHORT_DOWN_S,
                    first_run_s=EVENT_AFTER_S + SHORT_DOWN_S + RESTART_TAIL_S, within_s=150,
                    note="BullMQ's defaults: lockDuration 30 s, stalledInterval 30 s, "
                         "reconnect back-off max(min(e^n ms, 20 s), 1 s)")

    def crew(self, stage: Stage, folder: Path, runlog: Path, plan: Plan) -> Crew:
        env = {"PEERS_URL": stage.url, "PEERS_RUNLOG": str(runlog), **plan.env}
        return Crew(["node", str(FOLDER / "peer.mjs"), "work"], env, folder,
                    count=self.workers, cwd=FOLDER)

    def enqueue(self, stage: Stage, folder: Path, first_s: float) -> str:
        return str(self._run(stage, "enqueue", repr(first_s))["id"])

    def inspect(self, stage: Stage, folder: Path, job: str) -> View:
        found = self._run(stage, "inspect", job)
        state = str(found["state"])
        fate = {"completed": "completed", "failed": "failed", "active": "running",
                "missing": "lost"}.get(state, "waiting")
        return {"fate": fate, "state": state, "counted": int(found.get("stalledCounter", 0)),
                "counted_as": "the job's stalledCounter (fails past maxStalledCount 1)",
                "reason": found.get("failedReason")}
