"""The one player of the course's stories: their steps run on a stage, and the last sweep read.

A stage is where the steps run: its two clients (`worker`, `sweeper`) and the events around
the server. `ExecutorStage` is one executor as both clients, the model's or a live one's, with
its restart; `ModelStage` adds the events as the model can have them; the live stage with real
replicas and crashes is live/stage.py. `play` runs a story's steps on a stage, records each
call's reply and the row after it, and reads the last sweep.

How the last sweep is read is one rule, the lab's: the stamp is the row's `lease_epoch` just
before that sweep, the process is the sweeper's, and the reading is `epoch.exempt` of the two
(the comparison trafikey_exempt makes). The module itself reports only its reply (and leaves
the row's stalled). A lease the sweep did not find due has no reading ("not read"): the reply
names the job in neither list, and the sweep read no stamp.

A Clock says when each step runs: by default at once, an `expire` waiting on the executor's
own clock for the lease's deadline; `schedule` plays a schedule's moments with a clock of its
own through the same loop.
"""

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from trafikey_lab import epoch
from trafikey_lab.executors import Executor, ModelExecutor, Queue
from trafikey_lab.stories import EXTENSIONS, JOB, LEASE_MS, STORIES, Action, Event, Story
from trafikey_lab.sweep import Outcome, Reading
from trafikey_lab.text import short

QUEUE = Queue("{lease}")
"""The queue a story plays on unless told another."""


# -- stages -------------------------------------------------------------------------------------


class Stage:
    """Where a story runs: the two clients, the restart and the events."""

    worker: Executor
    sweeper: Executor

    def restart(self) -> None:
        self.worker.restart()

    def event(self, event: Event) -> None:
        raise ValueError(f"this stage has no event {event!r}: play that story on a stage that "
                         "has it (the model's, or live/stage.py's)")

    def close(self) -> None:
        """Gives back what the stage started."""


class ExecutorStage(Stage):
    """One executor as both clients: a story's verbs and restarts, no events."""

    def __init__(self, executor: Executor) -> None:
        self.worker = self.sweeper = executor


class ModelStage(ExecutorStage):
    """The model, with the events as the model can have them."""

    def __init__(self, model: ModelExecutor | None = None) -> None:
        self.model = model or ModelExecutor()
        super().__init__(self.model)
        self._snapshot: dict = {}

    @property
    def server(self):
        return self.model.server

    def event(self, event: Event) -> None:
        if event in (Event.FAILOVER, Event.AOF_RESTART):
            # A promoted replica and a replaying process both hold the data under a run_id of
            # their own, which is all the model's restart is.
            self.restart()
        elif event == Event.FAILBACK:
            pass  # the same process serves again: no new run_id, nothing to model
        elif event == Event.SNAPSHOT:
            self._snapshot = copy.deepcopy(self.server.store.data)
        elif event == Event.CRASH:
            self.server.store.data = copy.deepcopy(self._snapshot)
            self.restart()
        else:
            super().event(event)


def stage_of(where: "Stage | Executor") -> Stage:
    """A stage as given, or an executor as a stage of its own (one client for both)."""
    return where if isinstance(where, Stage) else ExecutorStage(where)


# -- one step -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Performed:
    """What one step did: the server's reply, and what the call named (the attempt an
    extension gave, the deadline an expiry waited past)."""

    value: object
    attempt: int | None = None
    deadline: int | None = None


def perform(action: str, executor: Executor, queue: Queue, *, lease_ms: int,
            max_stalled: int) -> Performed:
    """Runs one verb on the job: the one interpreter of steps. A grant is for lease_ms; an
    extension names the attempt the job's latest claim gave it (the fencing token), so that
    in a story with a second claim it extends that claim's lease; `expire` waits on the
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


def _attempt(row: dict[bytes, bytes]) -> int:
    value = row.get(b"attempts")
    return int(value) if value is not None and value.isdigit() else 0


def call_text(action: str, done: Performed, *, lease_ms: int, max_stalled: int) -> str:
    """How a trace names a step's call (a schedule adds each moment's time: schedule.py)."""
    names: dict[str, str] = {
        Action.ADD: f"add {JOB.decode()}",
        Action.CLAIM: f"EMQ.CLAIM lease {lease_ms} ms",
        Action.SCRIPTED_CLAIM: f"claim2 script, lease {lease_ms} ms",
        Action.EXTEND: f"EMQ.EXTEND attempt {done.attempt}, lease {lease_ms} ms",
        Action.SCRIPTED_EXTEND: f"extend2 script attempt {done.attempt}, lease {lease_ms} ms",
        Action.RESTART: "restart",
        Action.EXPIRE: f"wait past the deadline {done.deadline}",
        Action.SWEEP: f"EMQ.STALLED.CHECK max_stalled {max_stalled}",
    }
    return names.get(action, str(action))


# -- the trace ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    action: str
    call: str
    reply: object
    row: dict[bytes, bytes]
    run_id: str
    at_ms: int


def process_name(run_id: bytes | str | None, processes: Sequence[str], *,
                 none: str = "no process", other: str = "a process outside the story") -> str:
    """A run_id named by the order its process served ("process 1"), so that a live story is
    told without printing a live run_id; `none` for no run_id, `other` for one of no process
    in `processes`."""
    if run_id is None:
        return none
    text = run_id.decode(errors="replace") if isinstance(run_id, bytes) else run_id
    return f"process {processes.index(text) + 1}" if text in processes else other


class Processes:
    """Run_ids named as they are first seen: process 1, process 2 (a process_name that grows)."""

    def __init__(self, none: str = "no stamp") -> None:
        self.seen: list[str] = []
        self.none = none

    def __call__(self, run_id: bytes | str | None) -> str:
        if run_id is not None:
            text = run_id.decode(errors="replace") if isinstance(run_id, bytes) else run_id
            if text not in self.seen:
                self.seen.append(text)
        return process_name(run_id, self.seen, none=self.none)


@dataclass(frozen=True)
class Trace:
    story: Story
    max_stalled: int
    executor: str
    steps: tuple[Step, ...]
    lease_epoch: bytes | None
    """The row's stamp just before the last sweep (None: no stamp)."""
    sweep_run_id: str
    exempt: bool
    """The lab's reading, not the module's report: `epoch.exempt` (the comparison
    trafikey_exempt makes) applied to lease_epoch and sweep_run_id as the server returned them.
    The module replies only with ids; its own evidence is that reply and the row's stalled."""
    outcome: Outcome
    """recovered or dead, from the sweep's reply ("untouched" when the reply lists the job in
    neither list)."""
    due: bool = True
    """Whether the lease had run out when the last sweep ran, by the server's own word: a
    lease the sweep found due is in one of its reply's lists."""

    @property
    def reading(self) -> Reading:
        """How the sweep reads the stamp: exempt or counted (sweep.py names the words); "not
        read" when the lease was not due, since the sweep reads only expired leases."""
        if not self.due:
            return Reading.NOT_READ
        return Reading.EXEMPT if self.exempt else Reading.COUNTED

    @property
    def run_ids(self) -> tuple[str, ...]:
        """The processes involved, in the order they served the story."""
        return tuple(dict.fromkeys(step.run_id for step in self.steps))

    def process_name(self, run_id: bytes | str | None) -> str:
        return process_name(run_id, self.run_ids)

    def extension(self) -> str:
        """The reply of the last EMQ.EXTEND, or "-" when the story has none."""
        return next((str(s.reply) for s in reversed(self.steps) if s.action == Action.EXTEND),
                    "-")


def reading_line(trace: Trace) -> str:
    """The sweep's reading in the dive's form, as the lab applies the rule to the trace."""
    return (
        f"sweep: run_id {short(trace.sweep_run_id)} · lease_epoch {short(trace.lease_epoch)}"
        f" → exempt = {str(trace.exempt).lower()}"
    )


def outcome_of(reply: object) -> Outcome:
    """The job's outcome from a sweep's reply: dead or recovered by the list that names it,
    untouched when neither does (or the reply is not a sweep's)."""
    if not (isinstance(reply, list) and len(reply) == 2):
        return Outcome.UNTOUCHED
    recovered, dead = reply
    return (Outcome.DEAD if JOB in dead else Outcome.RECOVERED if JOB in recovered
            else Outcome.UNTOUCHED)


# -- the loop -----------------------------------------------------------------------------------


class Clock:
    """When each step runs, and what it is called. This one runs each at once and names it by
    `call_text`; a schedule's (schedule.py) waits for each moment and names its time."""

    stalled_before = 0
    """The count a `stalled` step writes (a schedule's, set before its claim)."""

    def wait(self, index: int, executor: Executor, queue: Queue) -> None:
        """Before step `index`, until its time."""

    def lease_ms(self, index: int, lease_ms: int) -> int:
        """The lease argument of the grant at step `index`."""
        return lease_ms

    def name(self, index: int, action: str, done: Performed, lease_ms: int,
             max_stalled: int) -> str:
        return call_text(action, done, lease_ms=lease_ms, max_stalled=max_stalled)

    def after(self, index: int, executor: Executor, queue: Queue) -> None:
        """After step `index`."""


Progress = Callable[[int, int, str], object]


def play(story: Story | str, max_stalled: int, where: "Stage | Executor",
         queue: Queue = QUEUE, lease_ms: int = LEASE_MS, *, progress: Progress | None = None,
         clock: Clock | None = None) -> Trace:
    """Plays the story from an empty queue on a stage (or on one executor) and returns its
    trace. The job's row is read after each step; an `expire` once an earlier sweep has taken
    the job out of active (dead) ends the story there.

    progress, if given, is called as progress(index, count, action) before each step, once its
    clock has come, so that a widget can say what it is waiting for while a live lease runs
    out, or take the model's read pass just before a sweep."""
    if isinstance(story, str):
        story = STORIES[story]
    stage, clock = stage_of(where), clock or Clock()
    stage.worker.clear(queue)
    steps: list[Step] = []
    stamp, sweep_run_id, outcome = None, stage.sweeper.run_id, Outcome.UNTOUCHED
    for index, action in enumerate(story.steps):
        client = stage.sweeper if action == Action.SWEEP else stage.worker
        clock.wait(index, client, queue)
        if action == Action.EXPIRE and outcome == Outcome.DEAD \
                and client.deadline(queue, JOB) is None:
            break
        if progress is not None:
            progress(index, len(story.steps), action)
        if action == Action.SWEEP:  # the row as the step before left it: nothing came between
            stamp = steps[-1].row.get(b"lease_epoch") if steps else None
        done = _run(action, stage, client, queue, clock, clock.lease_ms(index, lease_ms),
                    max_stalled)
        if action == Action.SWEEP:
            sweep_run_id, outcome = client.run_id, outcome_of(done.value)
        steps.append(Step(action, clock.name(index, action, done, lease_ms, max_stalled),
                          done.value, client.row(queue, JOB), client.run_id, client.now_ms()))
        clock.after(index, client, queue)
    return Trace(story, max_stalled, stage.worker.name, tuple(steps), stamp, sweep_run_id,
                 epoch.exempt(stamp, sweep_run_id.encode()), outcome,
                 due=outcome != Outcome.UNTOUCHED)


def _run(action: str, stage: Stage, client: Executor, queue: Queue, clock: Clock,
         lease_ms: int, max_stalled: int) -> Performed:
    """One step on the stage: an event or a restart is the stage's, a verb the client's."""
    if action == Action.RESTART:
        stage.restart()
        return Performed(stage.worker.run_id)
    if action == Event.FOREIGN:
        upper = client.run_id.upper().encode()
        return Performed(client.call("HSET", queue.row_key(JOB), "lease_epoch", upper))
    if action in tuple(Event):
        stage.event(Event(action))
        return Performed(None)
    if action == Action.STALLED:
        return Performed(client.call("HSET", queue.row_key(JOB), "stalled", clock.stalled_before))
    return perform(action, client, queue, lease_ms=lease_ms, max_stalled=max_stalled)


# -- two traces side by side --------------------------------------------------------------------


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
    names = {run_id: trace.process_name(run_id) for run_id in trace.run_ids}
    return [
        (s.action, _normal(s.reply, names), _normal(s.row, names), names[s.run_id])
        for s in trace.steps
    ]


OUTCOME = "reading → outcome"
"""The name of compare's last row, which is not a step of the story."""


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

