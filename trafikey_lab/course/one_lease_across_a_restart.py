"""Notebook 04, one lease across a restart: the table of every history x max_stalled, the fifth
history the learner writes and predicts, and the names the notebook uses.

The counterfactual the table shows is `trafikey_lab.traces`, shared with the widgets.
"""

from dataclasses import dataclass

from trafikey_lab.course.feedback import (
    EXERCISE_QUEUE,
    NOTE,
    OUTCOMES,
    READINGS,
    RIGHT,
    WRONG,
    Feedback,
    Finding,
    error_text,
    feedback,
)
from trafikey_lab.errors import LabError, ReplyError
from trafikey_lab.executors import Executor, ModelExecutor, Queue
from trafikey_lab.player import Trace, play
from trafikey_lab.stories import CLAIMS, EXTENSIONS, HISTORIES, STORIES, Story
from trafikey_lab.table import Table
from trafikey_lab.text import short
from trafikey_lab.traces import play_on_model, without_epoch
from trafikey_lab.widgets.explorable_lease import ExplorableLease
from trafikey_lab.widgets.lease_across_restart import LeaseAcrossRestart

__all__ = ["ExplorableLease", "LeaseAcrossRestart", "check_history", "outcome_table",
           "predict_fifth"]


def outcome_table(max_stalled_values=(1, 2)) -> Table:
    """Every history x max_stalled on the model: what the sweep saw, its reading, the outcome,
    and the outcome without the epoch."""
    rows = []
    for key, history in HISTORIES.items():
        for max_stalled in max_stalled_values:
            trace, _ = play_on_model(key, max_stalled)
            rows.append((
                history.title, str(max_stalled), short(trace.lease_epoch),
                short(trace.sweep_run_id), trace.reading, trace.outcome, without_epoch(trace),
            ))
    return Table(("history", "max_stalled", "lease_epoch", "run_id at the sweep", "reading",
                  "outcome", "without the epoch (counterfactual)"), tuple(rows))


# -- 04: a fifth history ----------------------------------------------------------------------

ACTIONS = ("add", "claim", "scripted_claim", "extend", "scripted_extend", "restart", "expire",
           "sweep")
FIFTH_TITLE = STORIES["fifth"].title
FIFTH_MAX_STALLED = 1
STAMPS = ("process 1", "process 2", "no process")
_NATIVE = {"claim": "EMQ.CLAIM", "extend": "EMQ.EXTEND"}


@dataclass(frozen=True)
class FifthPrediction:
    stamp: str
    reading: str
    outcome: str

    def __str__(self) -> str:
        return (f"the stamp names {self.stamp}, the reading is {self.reading}, the job is "
                f"{self.outcome}")


def _word(value) -> str | None:
    """A prediction's word, case and spacing aside; None for anything but text."""
    return " ".join(value.lower().split()) if isinstance(value, str) else None


def _prediction_problems(stamp, reading, outcome) -> list[str]:
    asked = (
        ("stamp", stamp, STAMPS, "which process the stamp names at the sweep: \"process 1\" "
                                 "(before the restart), \"process 2\" (after it) or "
                                 "\"no process\""),
        ("reading", reading, READINGS, "the sweep's reading: \"counted\" or \"exempt\""),
        ("outcome", outcome, OUTCOMES, f"the job's outcome at max_stalled {FIFTH_MAX_STALLED}: "
                                       "\"recovered\" or \"dead\""),
    )
    return [f"{name} is {value!r}: write {what}" for name, value, allowed, what in asked
            if _word(value) not in allowed]


def _fifth_restart_problems(steps: list[str], claims: list[int], restarts: list[int]) -> list[str]:
    """What keeps the fifth history's one restart from falling after the claim, with the worker
    extending by the script alone on the new process."""
    problems: list[str] = []
    if len(restarts) != 1:
        times = "never restarts" if not restarts else f"restarts {len(restarts)} times"
        problems.append(f"the server {times}: in this history it restarts once, after the "
                        "claim")
    elif claims and restarts[0] < claims[0]:
        problems.append("the restart comes before the claim, so one process would grant the "
                        "lease and sweep it: in this history the module grants the lease before "
                        "the server restarts")
    else:
        after = steps[restarts[0] + 1:]
        if "extend" in after:
            problems.append("\"extend\" is EMQ.EXTEND, a native verb: after the restart it would "
                            "write a stamp of its own. In this history no native verb runs after "
                            "the restart; the worker keeps its lease through the script alone")
        if "scripted_extend" not in after:
            problems.append("after the restart the worker extends its lease by the script, then "
                            "stops: that extension is missing")
    return problems


def _fifth_problems(steps) -> list[str]:
    """What keeps `steps` from telling the fifth history: the module grants the lease, the
    server restarts after the claim, on the new process the worker extends it by the script
    alone, then the lease runs out and one sweep reads it. Judged by what each step does to
    the stamp, so a native verb after the restart is refused wherever it stands."""
    if not isinstance(steps, (tuple, list)) or not all(isinstance(s, str) for s in steps):
        return [f"steps is {steps!r}: make it a tuple of step names, such as "
                "(\"add\", \"claim\", ...)"]
    problems = [f"{s!r} is not a step: use one of {', '.join(ACTIONS)}"
                for s in steps if s not in ACTIONS]
    if problems or not steps:
        return problems or ["steps is empty: write the history's steps, in order"]
    steps = list(steps)
    claims = [i for i, s in enumerate(steps) if s in CLAIMS]
    restarts = [i for i, s in enumerate(steps) if s == "restart"]
    if steps[0] != "add" or steps.count("add") != 1:
        problems.append("the history starts from an empty queue: the job is added once, as the "
                        "first step")
    if "scripted_claim" in steps:
        problems.append("\"scripted_claim\" is the script claim2, a grant the module does not "
                        "make: in this history the module grants the lease")
    elif not claims:
        problems.append("nothing grants the worker its lease: the claim is missing")
    if len(claims) > 1:
        problems.append("the job is claimed more than once: while its lease is in active the job "
                        "is not in pending, so a second claim has nothing to take, and a claim "
                        "after a sweep starts another lease. Claim it once")
    problems += _fifth_restart_problems(steps, claims, restarts)
    if claims and any(s in EXTENSIONS for s in steps[:claims[0]]):
        problems.append("an extension before the claim finds no lease to extend (it replies 0): "
                        "extend after the claim")
    if steps[-2:] != ["expire", "sweep"] or steps.count("expire") != 1 \
            or steps.count("sweep") != 1:
        problems.append("the history ends once: after the last extension the lease runs out "
                        "(\"expire\"), then the one sweep reads it (\"sweep\"); neither comes "
                        "earlier or twice")
    return problems


def _why_stamp(trace: Trace) -> str:
    """Which verb wrote the stamp the sweep found, and what the script's extensions did to it."""
    native = [(i, s) for i, s in enumerate(trace.steps)
              if s.action in _NATIVE and s.reply not in (None, 0)]
    if not native:
        return "no native verb stamped the row, so it has no stamp"
    last, step = native[-1]
    why = (f"the last native verb to stamp the row was {_NATIVE[step.action]}, in "
           f"{trace.process_name(step.run_id)}")
    scripted = [trace.process_name(s.run_id) for s in trace.steps[last + 1:]
                if s.action == "scripted_extend"]
    if scripted:
        why += (f"; the script's extension after it (extend2, in {scripted[-1]}) moved the "
                "deadline and wrote no stamp")
    return why


def _history_finding(trace: Trace, prediction: FifthPrediction, where: str) -> Finding:
    stamp = trace.process_name(trace.lease_epoch)
    sweeper = trace.process_name(trace.sweep_run_id)
    seen = FifthPrediction(stamp, trace.reading, trace.outcome)
    result = (f"{where}: the stamp names {stamp}, the sweep runs in {sweeper}: "
              f"{trace.reading}, so {trace.outcome}")
    if seen == prediction:
        return Finding(RIGHT, f"{result}, as you predicted")
    wrong = []
    if prediction.stamp != seen.stamp:
        wrong.append(f'the stamp names {stamp}, not "{prediction.stamp}": {_why_stamp(trace)}')
    if prediction.reading != seen.reading:
        own = "is not" if trace.exempt else "is"
        wrong.append(f'{trace.reading}, not "{prediction.reading}": the sweep in {sweeper} '
                     f"compares the stamp with its own run_id, and {stamp}'s {own} its own")
    if prediction.outcome != seen.outcome:
        wrong.append(f'{trace.outcome}, not "{prediction.outcome}": ' + (
            "an exempt lease goes back to pending whatever max_stalled is, stalled untouched"
            if trace.exempt else
            f"a counted stall makes stalled 1, which reaches max_stalled {trace.max_stalled}"))
    return Finding(WRONG, f"{result}. Not as you predicted: " + "; ".join(wrong))


class FifthHistory:
    """The exercise in one kernel: the prediction is recorded first, and once a play has shown
    the result it can no longer be changed. The module holds the one instance the notebook
    uses (FIFTH), not a notebook cell, so that running the prediction cell again cannot reset
    it; a notebook run again from the top with the same prediction records it unchanged."""

    def __init__(self):
        self.prediction: FifthPrediction | None = None
        self.played = False
        self.refused: FifthPrediction | None = None

    def predict(self, stamp=None, reading=None, outcome=None) -> Feedback:
        exercise = "a fifth history: your prediction"
        findings = [Finding(WRONG, p) for p in _prediction_problems(stamp, reading, outcome)]
        if findings:
            if self.played:
                findings.append(Finding(NOTE, f"the prediction recorded before the play still "
                                              f"holds: {self.prediction}"))
            return feedback(exercise, findings)
        # the words were checked above: each is one of the allowed ones, never None
        stamp_word, reading_word, outcome_word = (_word(v) or "" for v in (stamp, reading,
                                                                             outcome))
        new = FifthPrediction(stamp_word, reading_word, outcome_word)
        if self.played and new != self.prediction:
            self.refused, first = new, self.prediction
            return feedback(exercise, [Finding(WRONG, (
                f"refused: your prediction was recorded before the history was played ({first}), "
                "and the play has shown the result since. A prediction changed "
                "after the result is not a prediction: the check holds you to the first one for "
                "the rest of this kernel's session"))])
        again = new == self.prediction
        self.prediction, self.refused = new, None
        return feedback(exercise, [Finding(NOTE, (
            f"{'recorded again, unchanged' if again else 'recorded'}: {new}. "
            + ("It holds: the history has been played with it."
               if self.played else "Nothing is played yet: write the steps in the next cell "
                                   "and run it."))
        )])

    def check(self, steps, *, live: Executor | None = None,
              queue: Queue = EXERCISE_QUEUE) -> Feedback:
        """Plays the steps at max_stalled 1, on a fresh model, then on `live` when it is given,
        only if they tell the fifth history and a prediction is recorded."""
        exercise = f"a fifth history: {FIFTH_TITLE}"
        findings = [Finding(WRONG, p) for p in _fifth_problems(steps)]
        prediction = self.prediction
        if prediction is None:
            findings.append(Finding(WRONG, "no prediction is recorded yet: run predict_fifth(...) "
                                           "with your three answers first; nothing is played "
                                           "before there is one"))
        if findings or prediction is None:
            return feedback(exercise, findings)
        if (refused := self.refused) is not None:
            findings.append(Finding(NOTE, f"the prediction changed after the result ({refused}) "
                                          "was refused: this play is held against the first one"))
        history = Story("fifth", FIFTH_TITLE, tuple(steps), "")
        traces = []
        for executor in (ModelExecutor(), *([live] if live is not None else [])):
            try:
                trace = play(history, FIFTH_MAX_STALLED, executor, queue)
            except (LabError, ReplyError) as exc:
                findings.append(Finding(NOTE, f"not played {executor.where}: {error_text(exc)}"))
                continue
            self.played = True
            traces.append(trace)
            findings.append(_history_finding(trace, prediction, executor.where))
        return feedback(exercise, findings, traces)


FIFTH = FifthHistory()
"""Notebook 04's exercise, for the kernel's whole session."""


def predict_fifth(stamp=None, reading=None, outcome=None) -> Feedback:
    """Records the prediction for the fifth history: the stamp's process, the reading and the
    outcome."""
    return FIFTH.predict(stamp, reading, outcome)


def check_history(steps, *, live: Executor | None = None,
                  queue: Queue = EXERCISE_QUEUE) -> Feedback:
    """Plays the learner's fifth history against the recorded prediction (FifthHistory.check),
    on a fresh model, then on `live` when it is given."""
    return FIFTH.check(steps, live=live, queue=queue)


