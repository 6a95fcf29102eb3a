"""One lease across a restart, for notebook 04 and its widget: the history played on the
model, what the sweep would have done without the epoch (the counterfactual), the table of
every history x max_stalled, the step-by-step comparison of a model trace with a live one, and
every history played on both with one line each; and the notebook's diagnostic question.

These are pure functions of traces, so the notebook's static table and the widget use the
same code, and tests pin them without a browser.
"""

from .executors import Executor, ModelExecutor, Queue
from .histories import HISTORIES, History, Trace, agreement, compare, play
from .sweep import Verdict, count_stall
from .table import Table
from .text import reply, short
from .widgets.diagnostic import Option, Question

QUEUE = Queue("{lease}")
MAX_STALLED = (1, 2, 3, 4, 5)
"""The budgets a learner can pick."""
AGREE = "✓ agree"
DIFFER = "✗ differ"


def play_on_model(history, max_stalled: int, queue: Queue = QUEUE):
    """Plays the history on a fresh model and returns (trace, plan): the plan is the model's
    read pass over the queue just before the sweep ran (`ModelServer.plan_sweep`)."""
    model = ModelExecutor()
    plans = []

    def before(index, count, action):
        if action == "sweep":
            plans.append(model.plan_sweep(queue, max_stalled))

    trace = play(history, max_stalled, model, queue, progress=before)
    return trace, plans[0]


def without_epoch(trace: Trace) -> str:
    """The counterfactual: the outcome had the sweep counted this lease whatever its stamp
    (exempt always false), as a sweep with no lease_epoch would have to. The row as it stood
    before the sweep gives stalled; a count that reaches max_stalled is a death."""
    counted = _counted(trace)
    return "refused" if counted.refusal else counted.kind


def _counted(trace: Trace) -> Verdict:
    """The sweep's counted-stall rule on the row as it stood just before the sweep."""
    return count_stall(trace.steps[-2].row.get(b"stalled"), trace.max_stalled)


def counterfactual_note(trace: Trace) -> str:
    """What the sweep would have done without the epoch, beside what it did (HTML)."""
    other = without_epoch(trace)
    if not trace.exempt:
        return f"the same: a counted lease is counted with or without the epoch (<b>{other}</b>)."
    # a stalled field that is not a counter counts from 0, as the note has nothing else to say
    counted = _counted(trace).stalled or 1
    if other != trace.outcome:
        return (f"without the epoch this lease would have been counted: stalled {counted} "
                f"against max_stalled {trace.max_stalled}, so <b>{other}</b> instead of "
                f"{trace.outcome}.")
    return (f"without the epoch this lease would have been counted (stalled {counted}): still "
            f"<b>{other}</b> at max_stalled {trace.max_stalled}, but with one stall of its "
            f"budget spent on a restart.")


def outcome_table(max_stalled_values=(1, 2)) -> Table:
    """Every history x max_stalled on the model: what the sweep saw, its verdict, the outcome,
    and the outcome without the epoch."""
    rows = []
    for key, history in HISTORIES.items():
        for max_stalled in max_stalled_values:
            trace, _ = play_on_model(key, max_stalled)
            rows.append((
                history.title, str(max_stalled), short(trace.lease_epoch),
                short(trace.sweep_run_id), trace.verdict, trace.outcome, without_epoch(trace),
            ))
    return Table(("history", "max_stalled", "lease_epoch", "run_id at the sweep", "verdict",
                  "outcome", "without the epoch (counterfactual)"), tuple(rows))


def step_summary(step) -> str:
    """A step as one line: its reply and the stamp on the row after it."""
    stamp = step.row.get(b"lease_epoch")
    state = reply(step.row.get(b"state"))
    return f"→ {reply(step.reply)} · stamp {short(stamp)} · state {state}"


def comparison_rows(model_trace: Trace, live_trace: Trace) -> list[tuple[str, str, str, str]]:
    """Step by step: (step, model, live, mark), then compare's last row, the lab's reading and
    the outcome. The mark is AGREE or DIFFER with what differs; run_ids are compared by which
    process of the history they belong to (`compare`)."""
    rows = []
    verdicts = compare(model_trace, live_trace)
    for (action, agree, detail), m, live in zip(verdicts, model_trace.steps, live_trace.steps):
        rows.append((action, step_summary(m), step_summary(live),
                     AGREE if agree else f"{DIFFER}: {detail}"))
    action, agree, detail = verdicts[-1]
    rows.append((action, f"read as {model_trace.verdict} → {model_trace.outcome}",
                 f"read as {live_trace.verdict} → {live_trace.outcome}",
                 AGREE if agree else f"{DIFFER}: {detail}"))
    return rows


def model_against_live(live: Executor, queue: Queue = QUEUE, max_stalled: int = 1,
                       restartable: bool = True):
    """Plays each history on a fresh model and on `live` and yields one line per history as
    soon as both are played: what the live server did (the outcome its sweep replied, and the
    row's stalled after it), the lab's reading of the stamp (counted or exempt, Trace.exempt),
    how many processes served the live history, and on how many of its steps the two traces
    agree, then whether they agree on the reading and outcome (`compare`, `agreement`). When
    `live` is a server the lab cannot restart, only the histories without a restart are
    played."""
    for key, history in HISTORIES.items():
        if not restartable and "restart" in history.steps:
            continue
        model_trace = play(key, max_stalled, ModelExecutor(), queue)
        live_trace = play(key, max_stalled, live, queue)
        stalled = live_trace.steps[-1].row.get(b"stalled")
        stalled_text = "(none)" if stalled is None else stalled.decode(errors="replace")
        yield (f"{key:10} live: {live_trace.outcome:9} stalled {stalled_text:6} "
               f"read as {live_trace.verdict:7} · {len(live_trace.run_ids)} process(es) · "
               f"{agreement(compare(model_trace, live_trace))}")


QUESTION_HISTORY = History(
    "counted_then_extended_by_script",
    "one stall counted, then extended by a script after a restart",
    ("add", "claim", "expire", "sweep", "claim", "restart", "scripted_extend", "expire", "sweep"),
    "the second claim stamped the row with the process before the restart and extend2 left "
    "that stamp, so the sweep after the restart finds another process's stamp",
)
"""The history the question is about: the first sweep counts a stall (stalled 1), the rest
is the fifth history of the exercise."""
QUESTION_MAX_STALLED = 2


def question() -> Question:
    """04's diagnostic question: one history, one right reading of it, and a wrong option for
    each misconception about restarts, exemption, failover and the scripted extension."""
    return Question(
        "A job's row already holds stalled 1 from a stall counted earlier. Its worker claims it "
        "with EMQ.CLAIM; then the server restarts; on the new process the "
        "worker extends the lease once with the script extend2, then stops. The lease runs out "
        f"and the new process sweeps with max_stalled {QUESTION_MAX_STALLED}. Which is true?",
        [
            Option(
                "The job goes back to pending uncounted, and its stalled field still holds 1.",
                right=True,
                why="EMQ.CLAIM stamped the row with the process before the restart, and extend2 "
                    "moved the deadline without writing lease_epoch, so the sweep finds another "
                    "process's stamp: exempt. It takes the job out of active, puts it in "
                    "pending and lists it among the recovered; on the row it writes state "
                    "pending and nothing else, so stalled keeps its 1.",
            ),
            Option(
                "The stall is counted: stalled becomes 2, which reaches max_stalled 2, and the "
                "job is dead-lettered.",
                misconception="extend2 moves the lease to the new process",
                why="extend2 makes EMQ.EXTEND's test (the id in active, state active, attempts "
                    "equal to the worker's attempt; neither checks the deadline) and moves the "
                    "deadline as EMQ.EXTEND does, but it writes no lease_epoch: the stamp still "
                    "names the process before the restart. Had the worker extended with "
                    "EMQ.EXTEND, this would be the answer.",
            ),
            Option(
                "The job goes back to pending with no stalled count left: the restart wiped it.",
                misconception="a restart resets stalled",
                why="A restart keeps the dataset (the lab's server saves it and the new process "
                    "loads it); what changes is the run_id. No verb clears stalled, and the "
                    "exempt sweep writes only state pending, so the 1 stays.",
            ),
            Option(
                "The job stays in active: exempt means its lease has not run out yet.",
                misconception="exempt means not expired",
                why="The sweep reads only leases whose deadline has passed. Exempt is its "
                    "verdict on such an expired lease when the stamp is not its own process's: "
                    "the job leaves active for pending.",
            ),
            Option(
                "Had the server handed over to a replica and been promoted back instead of "
                "restarting, the job would also go back uncounted.",
                misconception="a failover changes run_id",
                why="A run_id names one process and changes only when a process starts. A "
                    "primary promoted back without restarting keeps its run_id, so the stamp "
                    "its claim wrote is its own again: counted, stalled 2, dead. The failback "
                    "limit shows the same rule on your server with a fresh row and max_stalled "
                    "1: counted, stalled 1, dead.",
            ),
        ],
    )
