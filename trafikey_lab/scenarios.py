"""07's decision table: every story of `stories.TABLE` played at each budget, on the model or
live, and what each came to, with processes named by the order they served.

`player.play` runs the steps on a stage (the model's `ModelStage`, or live/stage.py's
`LiveStage` with real replicas and crashes); here each trace becomes a `Played` row, so that
the model's table and a live replay of it can be held side by side (`facts`).
"""

from dataclasses import dataclass

from trafikey_lab.executors import Queue
from trafikey_lab.player import Stage, process_name
from trafikey_lab.player import play as play_story
from trafikey_lab.stories import BUDGETS, LEASE_MS, TABLE, Story
from trafikey_lab.sweep import Outcome, Reading
from trafikey_lab.table import Table


@dataclass(frozen=True)
class Played:
    """What one story came to at one budget, with processes named by the order they served."""

    scenario: Story
    max_stalled: int
    stamp: str
    """The process the row's stamp named at the last sweep: "process 1", "no stamp", or
    "foreign bytes" for a stamp no process of the story has."""
    swept_by: str
    reading: Reading
    outcome: Outcome
    extension: str
    """The reply of the last EMQ.EXTEND, or "-" when the story has none."""
    attempts: str
    """The row's attempts after the last step."""


TABLE_QUEUE = Queue("{table}")


def play(scenario: Story, max_stalled: int, stage: Stage, queue: Queue = TABLE_QUEUE,
         lease_ms: int = LEASE_MS) -> Played:
    """Plays the story from an empty queue on the stage; reads its last sweep."""
    trace = play_story(scenario, max_stalled, stage, queue, lease_ms)
    stage.worker.clear(queue)
    attempts = trace.steps[-1].row.get(b"attempts")
    return Played(scenario, max_stalled,
                  process_name(trace.lease_epoch, trace.run_ids, none="no stamp",
                               other="foreign bytes"),
                  process_name(trace.sweep_run_id, trace.run_ids), trace.reading, trace.outcome,
                  trace.extension(), "-" if attempts is None else attempts.decode())


def facts(played: Played) -> tuple[str, ...]:
    """What a live replay must find the same as the model: all but the scenario."""
    return (played.stamp, played.swept_by, played.reading, played.outcome, played.extension,
            played.attempts)


def play_all(stage_for, scenarios=TABLE, budgets=BUDGETS) -> list[tuple[Played, ...]]:
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
