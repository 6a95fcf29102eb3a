"""What a played history shows beside its reading: the model's plan just before its sweep, the
outcome without the epoch (the counterfactual), and a model trace held step by step against a
live one.

Pure functions of traces, shared by notebook 04's module and the widgets that play a history or
a schedule, so that each says these things in one set of words.
"""

from trafikey_lab.executors import ModelExecutor, Queue
from trafikey_lab.model import SweptMember
from trafikey_lab.player import QUEUE, Step, Trace, compare, play
from trafikey_lab.stories import Story
from trafikey_lab.sweep import Reading, Verdict, count_stall
from trafikey_lab.text import plain, reply, short

MAX_STALLED = (1, 2, 3, 4, 5)
"""The budgets a learner can pick."""
AGREE = "✓ agree"
DIFFER = "✗ differ"


def play_on_model(history: Story | str, max_stalled: int,
                  queue: Queue = QUEUE) -> tuple[Trace, list[SweptMember]]:
    """Plays the history on a fresh model and returns (trace, plan): the plan is the model's
    read pass over the queue just before the sweep the trace reads, its last
    (`ModelServer.plan_sweep`)."""
    model = ModelExecutor()
    plans = []

    def before(index: int, count: int, action: str) -> None:
        if action == "sweep":
            plans.append(model.plan_sweep(queue, max_stalled))

    trace = play(history, max_stalled, model, queue, progress=before)
    return trace, plans[-1]


def describe_write(write: tuple[bytes, ...]) -> str:
    """One write as a command line: `ZADD {q}:pending 0 exempt`."""
    return " ".join(plain(part) for part in write)


def without_epoch(trace: Trace) -> str:
    """The counterfactual: the outcome ("refused" for a stalled field that is not a counter)
    had the sweep counted this lease whatever its stamp (exempt always false), as a sweep with
    no lease_epoch would have to. The row as it stood before the sweep gives stalled; a count
    that reaches max_stalled is a death."""
    counted = _counted(trace)
    return "refused" if counted.refusal else counted.kind


def _counted(trace: Trace) -> Verdict:
    """The sweep's counted-stall rule on the row as it stood just before the sweep the trace
    reads (its last: a schedule may restart or extend after it)."""
    sweep = max(i for i, step in enumerate(trace.steps) if step.action == "sweep")
    before = trace.steps[sweep - 1].row if sweep else {}
    return count_stall(before.get(b"stalled"), trace.max_stalled)


def counterfactual(reading: Reading, outcome: str, without: str, counted: int | None,
                   max_stalled: int) -> str:
    """What the sweep would have done without the epoch, beside what it did: the one sentence
    the history player and the explorable lease both show. counted is the stall count a
    counting sweep would have written (None: the stalled field is not a counter, so it would
    have refused)."""
    if reading == Reading.NOT_READ:
        return "the same: a lease that is not due is not read, with or without the epoch"
    if reading == Reading.COUNTED:
        return f"the same, {without}: a counted lease is counted with or without the epoch"
    if counted is None:
        return (f"{without} instead of {outcome}: without the epoch this lease would have been "
                "counted, and its stalled field is not a counter")
    count = f"stalled {counted - 1} → {counted} against max_stalled {max_stalled}"
    if without != outcome:
        return (f"{without} instead of {outcome}: without the epoch this lease would have been "
                f"counted, {count}")
    return (f"still {without}: without the epoch this lease would have been counted, {count}, "
            "one stall of its budget spent on a restart")


def counterfactual_note(trace: Trace) -> str:
    """The counterfactual sentence for a played trace."""
    return counterfactual(trace.reading, trace.outcome, without_epoch(trace),
                          _counted(trace).stalled, trace.max_stalled)


def step_summary(step: Step) -> str:
    """A step as one line: its reply and the stamp on the row after it."""
    stamp = step.row.get(b"lease_epoch")
    state = reply(step.row.get(b"state"))
    return f"→ {reply(step.reply)} · stamp {short(stamp)} · state {state}"


def comparison_rows(model_trace: Trace, live_trace: Trace) -> list[tuple[str, str, str, str]]:
    """Step by step: (step, model, live, mark), then compare's last row, the lab's reading and
    the outcome. The mark is AGREE or DIFFER with what differs; run_ids are compared by which
    process of the history they belong to (`compare`)."""
    rows = []
    compared = compare(model_trace, live_trace)
    # compare's last row is the outcome, past the steps: zip stops at the steps.
    for (action, agree, detail), m, live in zip(compared, model_trace.steps, live_trace.steps,
                                                strict=False):
        rows.append((action, step_summary(m), step_summary(live),
                     AGREE if agree else f"{DIFFER}: {detail}"))
    action, agree, detail = compared[-1]
    rows.append((action, read_as(model_trace), read_as(live_trace),
                 AGREE if agree else f"{DIFFER}: {detail}"))
    return rows


def read_as(trace: Trace) -> str:
    """The lab's reading and the sweep's outcome, or that the sweep found the lease not due."""
    if not trace.due:
        return f"not due, so not read → {trace.outcome}"
    return f"read as {trace.reading} → {trace.outcome}"
