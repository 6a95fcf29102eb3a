"""The dive's four histories of one lease, played on either executor, and their traces.

Every history ends in the same sweep; what differs is which process stamped the lease and
which process sweeps it. `play` runs the steps, records each call's reply and the row after
it, and reads the last sweep's stamp: it applies the sweep's rule to the stamp the row held
before that sweep and to the run_id of the process that ran it. That reading is the lab's; the
module reports only its reply (and leaves the row's stalled). A history may hold more than one
lease (a sweep, then another claim): the trace's stamp and reading are those of the last one.
"""

from collections.abc import Callable
from dataclasses import dataclass

from trafikey_lab import epoch
from trafikey_lab.executors import Executor, Queue
from trafikey_lab.sweep import Outcome, Reading, Word
from trafikey_lab.text import short


class Action(Word):
    """A step of a history or a schedule: the C's and the model's names for the calls."""

    ADD = "add"
    STALLED = "stalled"
    """(schedules only) the row's stalled count set by hand before the claim"""
    CLAIM = "claim"
    SCRIPTED_CLAIM = "scripted_claim"
    EXTEND = "extend"
    SCRIPTED_EXTEND = "scripted_extend"
    RESTART = "restart"
    EXPIRE = "expire"
    SWEEP = "sweep"


CLAIMS = (Action.CLAIM, Action.SCRIPTED_CLAIM)
EXTENSIONS = (Action.EXTEND, Action.SCRIPTED_EXTEND)
GRANTS = CLAIMS + EXTENSIONS
"""The steps that grant or extend a lease; the scripted_ ones write no stamp."""
JOB = b"job-1"
LEASE_MS = 250
"""Short enough that a live history takes well under a second of waiting."""


@dataclass(frozen=True)
class History:
    key: str
    title: str
    steps: tuple[str, ...]
    why: str


HISTORIES = {
    h.key: h
    for h in (
        History(
            "stalled",
            "the worker stalled",
            (Action.ADD, Action.CLAIM, Action.EXPIRE, Action.SWEEP),
            "the lease was stamped by the process that sweeps it: the server stayed up and the "
            "worker went away",
        ),
        History(
            "restarted",
            "the server restarted",
            (Action.ADD, Action.CLAIM, Action.RESTART, Action.EXPIRE, Action.SWEEP),
            "the lease was stamped by the process before the restart: as far as the stamp can "
            "tell, the server stopped, not the worker",
        ),
        History(
            "extended",
            "extended after the restart",
            (Action.ADD, Action.CLAIM, Action.RESTART, Action.EXTEND, Action.EXPIRE,
             Action.SWEEP),
            "the worker extended its lease with EMQ.EXTEND after the restart, so the stamp names "
            "the process that sweeps it: the worker went away under a live server",
        ),
        History(
            "upgrade",
            "claimed before the upgrade",
            (Action.ADD, Action.SCRIPTED_CLAIM, Action.RESTART, Action.EXPIRE,
             Action.SWEEP),
            "the lease was granted by a script on a row no native verb had stamped, so the row "
            "has no stamp; a missing stamp is another process's by the same rule, so the "
            "upgrade restart costs the job nothing",
        ),
    )
}


@dataclass(frozen=True)
class Step:
    action: str
    call: str
    reply: object
    row: dict[bytes, bytes]
    run_id: str
    at_ms: int


@dataclass(frozen=True)
class Trace:
    history: History
    max_stalled: int
    executor: str
    steps: tuple[Step, ...]
    lease_epoch: bytes | None
    """The row's stamp as the sweep found it (None: no stamp)."""
    sweep_run_id: str
    exempt: bool
    """The lab's reading, not the module's report: `epoch.exempt` (the comparison
    trafikey_exempt makes) applied to lease_epoch and sweep_run_id as the server returned them.
    The module replies only with ids; its own evidence is that reply and the row's stalled."""
    outcome: Outcome
    """recovered or dead, from the sweep's reply ("untouched" when the reply lists the job in
    neither list)."""
    due: bool = True
    """Whether the lease had run out when the sweep ran (a history always waits for that; a
    schedule may sweep before the deadline)."""

    @property
    def reading(self) -> Reading:
        """How the sweep reads the stamp: exempt or counted (sweep.py names the words); "not
        read" when the lease was not due, since the sweep reads only expired leases."""
        if not self.due:
            return Reading.NOT_READ
        return Reading.EXEMPT if self.exempt else Reading.COUNTED

    @property
    def run_ids(self) -> tuple[str, ...]:
        """The processes involved, in the order they served the history."""
        return tuple(dict.fromkeys(step.run_id for step in self.steps))

    def process_name(self, run_id: bytes | str | None) -> str:
        """A run_id named by the order its process served the history ("process 1"), so that
        a live trace can be told without printing a live run_id."""
        if run_id is None:
            return "no process"
        text = run_id.decode(errors="replace") if isinstance(run_id, bytes) else run_id
        if text in self.run_ids:
            return f"process {self.run_ids.index(text) + 1}"
        return "a process outside the history"


def reading_line(trace: Trace) -> str:
    """The sweep's reading in the dive's form, as the lab applies the rule to the trace."""
    return (
        f"sweep: run_id {short(trace.sweep_run_id)} · lease_epoch {short(trace.lease_epoch)}"
        f" → exempt = {str(trace.exempt).lower()}"
    )


def play(history: History | str, max_stalled: int, executor: Executor,
         queue: Queue = Queue("{lease}"), lease_ms: int = LEASE_MS,
         progress: Callable[[int, int, str], object] | None = None) -> Trace:
    """Plays one history from an empty queue and returns its trace.

    progress, if given, is called as progress(index, count, action) before each step, so a
    widget can say what it is waiting for while a live lease runs out.
    """
    if isinstance(history, str):
        history = HISTORIES[history]
    executor.clear(queue)
    steps = []
    stamp = None
    for index, action in enumerate(history.steps):
        if progress is not None:
            progress(index, len(history.steps), action)
        reply = perform(action, executor, queue, lease_ms=lease_ms, max_stalled=max_stalled)
        row = executor.row(queue, JOB)
        if action == Action.EXPIRE:
            stamp = row.get(b"lease_epoch")
        steps.append(Step(action, _call_text(action, reply, lease_ms, max_stalled), reply.value,
                          row, executor.run_id, executor.now_ms()))
    sweep_run_id = steps[-1].run_id
    return Trace(
        history=history,
        max_stalled=max_stalled,
        executor=executor.name,
        steps=tuple(steps),
        lease_epoch=stamp,
        sweep_run_id=sweep_run_id,
        exempt=epoch.exempt(stamp, sweep_run_id.encode()),
        outcome=outcome_of(steps[-1].reply),
    )


def outcome_of(reply: object) -> Outcome:
    """The job's outcome from a sweep's reply: dead or recovered by the list that names it,
    untouched when neither does (or the reply is not a sweep's)."""
    if not (isinstance(reply, list) and len(reply) == 2):
        return Outcome.UNTOUCHED
    recovered, dead = reply
    return (Outcome.DEAD if JOB in dead else Outcome.RECOVERED if JOB in recovered
            else Outcome.UNTOUCHED)


@dataclass(frozen=True)
class Performed:
    """What one step did: the server's reply, and what the call named (the attempt an
    extension gave, the deadline an expiry waited past)."""

    value: object
    attempt: int | None = None
    deadline: int | None = None


def perform(action: str, executor: Executor, queue: Queue, *, lease_ms: int,
            max_stalled: int) -> Performed:
    """Runs one step on the job on any executor: the one interpreter of steps, which the
    histories and the schedules (schedule.play) both use. A grant is for lease_ms; an
    extension names the attempt the job's latest claim gave it (the fencing token), so that
    in a history with a second claim it extends that claim's lease; `expire` waits on the
    executor's own clock until the lease's deadline has passed."""
    if action == Action.ADD:
        return Performed(executor.add(queue, JOB, b"hello"))
    if action == Action.CLAIM:
        return Performed(executor.claim(queue, lease_ms))
    if action == Action.SCRIPTED_CLAIM:
        return Performed(executor.scripted_claim(queue, lease_ms))
    if action in EXTENSIONS:
        attempt = _attempt(executor.row(queue, JOB))
        verb = executor.extend if action == Action.EXTEND else executor.scripted_extend
        return Performed(verb(queue, JOB, attempt, lease_ms), attempt=attempt)
    if action == Action.RESTART:
        return Performed(executor.restart())
    if action == Action.EXPIRE:
        deadline = executor.deadline(queue, JOB)
        if deadline is None:
            raise ValueError("expire: the job holds no lease in active, so there is no "
                             "deadline to wait past; put a claim before it")
        executor.wait_until(deadline)
        return Performed(None, deadline=deadline)
    if action == Action.SWEEP:
        return Performed(executor.sweep(queue, max_stalled))
    raise ValueError(f"unknown step {action!r}: use one of {', '.join(Action)}")


def _call_text(action: str, done: Performed, lease_ms: int, max_stalled: int) -> str:
    """How a history names a step's call."""
    return {
        Action.ADD: f"add {JOB.decode()}",
        Action.CLAIM: f"EMQ.CLAIM lease {lease_ms} ms",
        Action.SCRIPTED_CLAIM: f"claim2 script, lease {lease_ms} ms",
        Action.EXTEND: f"EMQ.EXTEND attempt {done.attempt}, lease {lease_ms} ms",
        Action.SCRIPTED_EXTEND: f"extend2 script attempt {done.attempt}, lease {lease_ms} ms",
        Action.RESTART: "restart",
        Action.EXPIRE: f"wait past the deadline {done.deadline}",
        Action.SWEEP: f"EMQ.STALLED.CHECK max_stalled {max_stalled}",
    }[Action(action)]


def _attempt(row: dict[bytes, bytes]) -> int:
    value = row.get(b"attempts")
    return int(value) if value is not None and value.isdigit() else 0


def _normal(value: object, names: dict[str, str]) -> object:
    """A value with run_ids named by process and clock times hidden, for comparison."""
    if isinstance(value, bytes):
        text = value.decode(errors="replace")
        return names.get(text, value)
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, int) and value > 10**12:
        return "<time>"
    if isinstance(value, dict):
        return {k: _normal(v, names) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normal(v, names) for v in value]
    return value


def normalised(trace: Trace) -> list[tuple[str, object, object, str]]:
    names = {run_id: f"process {n}" for n, run_id in enumerate(trace.run_ids, 1)}
    return [
        (s.action, _normal(s.reply, names), _normal(s.row, names), names[s.run_id])
        for s in trace.steps
    ]


OUTCOME = "reading → outcome"
"""The name of compare's last row, which is not a step of the history."""


def compare(left: Trace, right: Trace) -> list[tuple[str, bool, str]]:
    """Step by step: (action, agree, what differs), one row per step; then one last row, named
    OUTCOME, for the lab's reading of each trace (counted or exempt, see Trace.exempt) and the
    outcome its sweep replied. Run_ids are compared by the process they belong to (first,
    second), and clock times not at all, since only they may differ."""
    rows = []
    for a, b in zip(normalised(left), normalised(right), strict=True):
        differences = [
            f"{what}: {x!r} vs {y!r}"
            for what, x, y in zip(("reply", "row", "process"), a[1:], b[1:], strict=True)
            if x != y
        ]
        rows.append((a[0], not differences, "; ".join(differences)))
    same = (left.reading, left.outcome) == (right.reading, right.outcome)
    detail = f"{left.reading}/{left.outcome} vs {right.reading}/{right.outcome}"
    rows.append((OUTCOME, same, "" if same else detail))
    return rows


def agreement(rows: list[tuple[str, bool, str]]) -> str:
    """compare's rows in words, the steps counted apart from the last row, which is not one:
    "agree on all 4 steps and on the reading and outcome"."""
    *steps, (_, same, _) = rows
    agreed = sum(ok for _, ok, _ in steps)
    counted = (f"agree on all {len(steps)} steps" if agreed == len(steps)
               else f"agree on {agreed} of {len(steps)} steps")
    return counted + (" and on the reading and outcome" if same
                      else ", not on the reading and outcome")
