"""Notebook 06, why natively: the run_id race a scripted sweep loses, and the check of the fix.

A script cannot read the process's run_id the way the module does (once, at load, from the
server itself). A scripted sweep is either handed the run_id by its caller, who read it from
INFO a moment earlier, or reads INFO itself on every call. The first is wrong across a
restart: the caller reads INFO, the server restarts, the script runs on the new process with
the old run_id, and a lease the old process granted looks as if this process granted it, so
the restart is counted as a stall. `RunIdRace` plays that race one step at a time on a live
server; `check_sweep_survives_restart` runs a learner's sweep with the restart placed in the
worst moment and says whether the job came through.
"""

from .exercises import EXERCISE_QUEUE, RIGHT, WRONG, Feedback, Finding
from .executors import LiveExecutor, Queue
from .scripted import ScriptedPeer, native_sweep
from .text import short

JOB = b"job-1"


def grant_expired_lease(live: LiveExecutor, queue: Queue, lease_ms: int = 50) -> list:
    """An empty queue, one job claimed natively under the running process, its lease run out."""
    live.clear(queue)
    live.add(queue, JOB, b"hello")
    claimed = live.claim(queue, lease_ms)
    live.wait_until(claimed[2])
    return claimed


class RunIdRace:
    """The race, one call per step: grant (a native claim whose lease runs out), read_run_id
    (the client's INFO), restart, then sweep with the run_id the client read."""

    def __init__(self, live: LiveExecutor, queue: Queue, max_stalled: int = 1):
        self.live, self.queue, self.max_stalled = live, queue, max_stalled
        self.client_run_id: str | None = None
        self.processes: dict[str, str] = {}

    def _name(self, run_id) -> str:
        run_id = run_id.decode() if isinstance(run_id, bytes) else run_id
        if run_id is None:
            return "no stamp"
        return self.processes.setdefault(run_id, f"process {'AB'[len(self.processes)]}"
                                         if len(self.processes) < 2 else short(run_id))

    def grant(self) -> str:
        self.processes = {}
        self._name(self.live.run_id)
        grant_expired_lease(self.live, self.queue)
        return f"{JOB.decode()} claimed by {self.stamp()}; its lease has run out"

    def read_run_id(self) -> str:
        self.client_run_id = self.live.run_id
        return f"the client read INFO server: run_id of {self._name(self.client_run_id)}"

    def restart(self) -> str:
        self.live.restart()
        return f"the server restarted: now {self._name(self.live.run_id)} is running"

    def sweep_with_client_run_id(self) -> str:
        peer = ScriptedPeer(self.live.client)
        reply = peer.sweep(self.queue, self.client_run_id, self.max_stalled)
        return self.outcome("stalled2 with the client's run_id", reply, self.client_run_id)

    def sweep_reading_info(self) -> str:
        reply = ScriptedPeer(self.live.client).sweep_reading_info(self.queue, self.max_stalled)
        return self.outcome("stalled2_info", reply, self.live.run_id)

    def sweep_natively(self) -> str:
        reply = native_sweep(self.live.client, self.queue, self.max_stalled)
        return self.outcome("EMQ.STALLED.CHECK", reply, self.live.run_id)

    def stamp(self) -> str:
        return self._name(self.live.row(self.queue, JOB).get(b"lease_epoch"))

    def outcome(self, who: str, reply, compared_with: str) -> str:
        """What the sweep did to the job, and which two processes its decision compared."""
        row = self.live.row(self.queue, JOB)
        stalled = row.get(b"stalled", b"absent").decode()
        recovered, dead = reply
        verdict = "dead-lettered" if JOB in dead else "recovered" if JOB in recovered else "untouched"
        return (f"{who} on {self._name(self.live.run_id)}: {JOB.decode()} {verdict}, "
                f"state {row[b'state'].decode()}, stalled {stalled} "
                f"(stamp: {self.stamp()}, compared with: {self._name(compared_with)})")


class RestartAfterInfo:
    """A client that restarts the server at the worst moment for a sweep: right after it has
    answered an INFO, or, for a sweep that asks none, just before its first command. Every
    call goes on to the real client."""

    def __init__(self, live: LiveExecutor):
        self._live = live
        self.restarted = False

    def _restart_once(self) -> None:
        if not self.restarted:
            self.restarted = True
            self._live.restart()

    def info(self, *args, **kwargs):
        answer = self._live.client.info(*args, **kwargs)
        self._restart_once()
        return answer

    def __getattr__(self, name):
        self._restart_once()
        return getattr(self._live.client, name)


EXERCISE = "a scripted sweep that survives a restart"


def check_sweep_survives_restart(sweep, live: LiveExecutor, queue: Queue = EXERCISE_QUEUE) -> Feedback:
    """Runs `sweep(client, queue)` (meant to sweep with max_stalled 1) on a job whose lease the
    running process granted and which has run out, with a client that restarts the server at
    the worst moment (RestartAfterInfo). Right when the job went back to pending uncounted, as
    a restart deserves."""
    grant_expired_lease(live, queue)
    client = RestartAfterInfo(live)
    try:
        sweep(client, queue)
    except Exception as exc:  # the learner's attempt: whatever it raises is a finding
        return Feedback(EXERCISE, (Finding(WRONG, f"your sweep raised {type(exc).__name__}: {exc}. "
                                                  "Fix it and run the cell again."),))
    if not client.restarted:
        live.restart()
    row = live.row(queue, JOB)
    state = row.get(b"state")
    if state == b"active":
        finding = Finding(WRONG, "the job is still active: nothing swept it. Call a sweep on the "
                                 "queue's keys (active, pending, dead, prefix) with max_stalled 1.")
    elif state == b"dead" or b"stalled" in row:
        finding = Finding(WRONG, "the restart was counted as a stall: the job is "
                                 f"{state.decode()} with stalled {row.get(b'stalled', b'0').decode()}. "
                                 "The script compared the stamp with the run_id your code read before "
                                 "the restart, the old process's. Let the script read INFO itself "
                                 "(sweep_reading_info), or call EMQ.STALLED.CHECK, whose epoch is the "
                                 "running process's.")
    else:
        finding = Finding(RIGHT, "the job is back in pending with no stall counted: the sweep "
                                 "compared the stamp with the run_id of the process that ran it.")
    return Feedback(EXERCISE, (finding,))
