"""Every scenario the course plays, as steps on a stage, and the decision table they make.

A scenario is a short list of steps on one job: the verbs (`histories.perform` runs them), and
the events around a server that the histories do not have: a failover to a replica, a failback,
a restart that replays the append-only file, a snapshot and a crash (SIGKILL) that loses what
came after it, and a stamp written with a plain HSET (foreign bytes). A stage is where the
steps run: `ModelStage` plays them on the model (a failover is a new process over the same
data there, a failback none, a crash the last snapshot's data under a new process); the live
stage (live/stage.py) plays them on real servers. `play` reads, at the last sweep, which
process the stamp names, which process swept, the reading and the outcome, so that the model's
table and a live replay of it can be held side by side.

The worker's calls (claim, extend) and the sweep go to the stage's two clients, `worker` and
`sweeper`: on the model they are the same executor; live, two connections, as in production.
"""

import copy
from dataclasses import dataclass

from trafikey_lab import epoch
from trafikey_lab.executors import Executor, ModelExecutor, Queue
from trafikey_lab.histories import JOB, LEASE_MS, Action, outcome_of, perform
from trafikey_lab.sweep import Outcome, Reading, Word
from trafikey_lab.table import Table


class Event(Word):
    """A step around the server, beside the verbs of `histories.Action`."""

    FAILOVER = "failover"
    """a replica with the data is promoted: another process serves the queue"""
    FAILBACK = "failback"
    """the old primary hands its role to a replica and takes it back, without a restart"""
    AOF_RESTART = "aof_restart"
    """a restart that rebuilds the data by replaying the append-only file"""
    SNAPSHOT = "snapshot"
    """an RDB snapshot (SAVE)"""
    CRASH = "crash"
    """SIGKILL, then a new process that loads the last snapshot: what came after it is lost"""
    FOREIGN = "foreign"
    """the row's stamp overwritten with a plain HSET: the running run_id in upper case"""


class Stage:
    """Where a scenario runs: the two clients and the events. Subclasses provide them."""

    worker: Executor
    sweeper: Executor

    def restart(self) -> None:
        raise NotImplementedError

    def event(self, event: Event) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Gives back what the stage started."""


class ModelStage(Stage):
    """The model, with the events as the model can have them: one executor for both clients."""

    def __init__(self) -> None:
        self.model = ModelExecutor()
        self.worker = self.sweeper = self.model
        self._snapshot: dict = {}

    @property
    def server(self):
        return self.model.server

    def restart(self) -> None:
        self.worker.restart()

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
            raise ValueError(f"the model stage has no event {event!r}")


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    steps: tuple[str, ...]


S = Action
SCENARIOS = tuple(Scenario(*fields) for fields in (
    ("stalled", "the worker stalled", (S.ADD, S.CLAIM, S.EXPIRE, S.SWEEP)),
    ("restarted", "the server restarted", (S.ADD, S.CLAIM, S.RESTART, S.EXPIRE, S.SWEEP)),
    ("extended", "extended after the restart",
     (S.ADD, S.CLAIM, S.RESTART, S.EXTEND, S.EXPIRE, S.SWEEP)),
    ("upgrade", "claimed by a script before the upgrade",
     (S.ADD, S.SCRIPTED_CLAIM, S.RESTART, S.EXPIRE, S.SWEEP)),
    ("fifth", "extended by a script after the restart",
     (S.ADD, S.CLAIM, S.RESTART, S.SCRIPTED_EXTEND, S.EXPIRE, S.SWEEP)),
    ("claim2_on_stamped_row", "claim2 on a row a native claim stamped",
     (S.ADD, S.CLAIM, S.EXPIRE, S.SWEEP, S.SCRIPTED_CLAIM, S.EXPIRE, S.SWEEP)),
    ("ran_out_before_restart", "ran out before the restart, swept after it",
     (S.ADD, S.CLAIM, S.EXPIRE, S.RESTART, S.SWEEP)),
    ("extended_before_restart", "extended before the restart, not after",
     (S.ADD, S.CLAIM, S.EXTEND, S.RESTART, S.EXPIRE, S.SWEEP)),
    ("not_due", "swept before its deadline", (S.ADD, S.CLAIM, S.SWEEP)),
    ("failover", "a replica promoted", (S.ADD, S.CLAIM, Event.FAILOVER, S.EXPIRE, S.SWEEP)),
    ("failback", "failed over and back, no restart",
     (S.ADD, S.CLAIM, Event.FAILBACK, S.EXPIRE, S.SWEEP)),
    ("aof_replay", "restarted from the append-only file",
     (S.ADD, S.CLAIM, Event.AOF_RESTART, S.EXPIRE, S.SWEEP)),
    ("foreign_bytes", "a stamp written with HSET, upper case",
     (S.ADD, S.CLAIM, Event.FOREIGN, S.EXPIRE, S.SWEEP)),
    ("race_worker_first", "the race after a restart: the worker first",
     (S.ADD, S.CLAIM, S.RESTART, S.EXPIRE, S.EXTEND, S.SWEEP)),
    ("race_sweep_first", "the race after a restart: the sweep first",
     (S.ADD, S.CLAIM, S.RESTART, S.EXPIRE, S.SWEEP, S.EXTEND)),
    ("crash_rdb", "a crash, the lease in the last snapshot",
     (S.ADD, S.CLAIM, Event.SNAPSHOT, S.EXTEND, Event.CRASH, S.EXPIRE, S.SWEEP)),
))
BUDGETS = (1, 2)
"""The table's two budgets: where a counted stall dead-letters the job, and where it does not."""


@dataclass(frozen=True)
class Played:
    """What one scenario came to at one budget, with processes named by the order they served."""

    scenario: Scenario
    max_stalled: int
    stamp: str
    """The process the row's stamp named at the last sweep: "process 1", "no stamp", or
    "foreign bytes" for a stamp no process of the scenario has."""
    swept_by: str
    reading: Reading
    outcome: Outcome
    extension: str
    """The reply of the last EMQ.EXTEND, or "-" when the scenario has none."""
    attempts: str
    """The row's attempts after the last step."""


TABLE_QUEUE = Queue("{table}")


def play(scenario: Scenario, max_stalled: int, stage: Stage, queue: Queue = TABLE_QUEUE,
         lease_ms: int = LEASE_MS) -> Played:
    """Plays the scenario from an empty queue on the stage; reads its last sweep."""
    stage.worker.clear(queue)
    processes = [stage.worker.run_id]
    stamp, swept_by, reading, outcome, extension = None, None, Reading.NOT_READ, \
        Outcome.UNTOUCHED, "-"
    for step in scenario.steps:
        if step == Action.RESTART:
            stage.restart()
        elif step == Event.FOREIGN:
            upper = stage.worker.run_id.upper().encode()
            stage.worker.call("HSET", queue.row_key(JOB), "lease_epoch", upper)
        elif step in tuple(Event):
            stage.event(Event(step))
        elif step == Action.SWEEP:
            sweeper = stage.sweeper.run_id
            before = stage.sweeper.row(queue, JOB).get(b"lease_epoch")
            outcome = outcome_of(stage.sweeper.sweep(queue, max_stalled))
            stamp, swept_by = before, sweeper
            # JOB is a hash row with no group: an expired lease always gets an outcome, so
            # "untouched" means the sweep did not take it, and did not read its stamp.
            reading = (Reading.NOT_READ if outcome == Outcome.UNTOUCHED
                       else Reading.EXEMPT if epoch.exempt(before, sweeper.encode())
                       else Reading.COUNTED)
        elif step == Action.EXPIRE and stage.worker.deadline(queue, JOB) is None:
            break  # the job left active at an earlier sweep (dead): nothing more to play
        else:
            done = perform(step, stage.worker, queue, lease_ms=lease_ms, max_stalled=max_stalled)
            if step == Action.EXTEND:
                extension = str(done.value)
        if (now := stage.worker.run_id) not in processes:
            processes.append(now)
    attempts = stage.worker.row(queue, JOB).get(b"attempts")
    stage.worker.clear(queue)
    return Played(scenario, max_stalled, _name(stamp, processes), _name(swept_by, processes),
                  reading, outcome, extension, "-" if attempts is None else attempts.decode())


def _name(run_id: bytes | str | None, processes: list[str]) -> str:
    if run_id is None:
        return "no stamp"
    text = run_id.decode(errors="replace") if isinstance(run_id, bytes) else run_id
    return f"process {processes.index(text) + 1}" if text in processes else "foreign bytes"


def facts(played: Played) -> tuple[str, ...]:
    """What a live replay must find the same as the model: all but the scenario."""
    return (played.stamp, played.swept_by, played.reading, played.outcome, played.extension,
            played.attempts)


def play_all(stage_for, scenarios=SCENARIOS, budgets=BUDGETS) -> list[tuple[Played, ...]]:
    """Each scenario at each budget, each on a stage of its own from stage_for(scenario),
    closed after it: one tuple of Played per scenario, a Played per budget."""
    rows = []
    for scenario in scenarios:
        played = []
        for max_stalled in budgets:
            stage = stage_for(scenario)
            try:
                played.append(play(scenario, max_stalled, stage))
            finally:
                stage.close()
        rows.append(tuple(played))
    return rows


COLUMNS = ("scenario", "steps", "the stamp names", "swept by", "reading", "max_stalled 1",
           "max_stalled 2", "last EMQ.EXTEND")


def decision_table(rows: list[tuple[Played, ...]]) -> Table:
    """The played scenarios as one table: a row per scenario, an outcome per budget."""
    lines = []
    for first, *others in rows:
        readings = list(dict.fromkeys([first.reading, *(p.reading for p in others)]))
        lines.append((first.scenario.title, " → ".join(first.scenario.steps), first.stamp,
                      first.swept_by, " / ".join(readings),
                      *(p.outcome for p in (first, *others)), first.extension))
    return Table(COLUMNS, tuple(tuple(str(cell) for cell in line) for line in lines))
