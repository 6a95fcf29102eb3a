"""Notebook 04's module and the traces it shows: a history on the model, the counterfactual
without the epoch (traces.py), the outcome table, and the moves 04 asks for on the time axis.

Notebook 04's exercise, a fifth history, tested like a verb: a catalogue of wrong histories
the checker must refuse before playing anything, each with a message that helps without giving
the prediction away; the right variants it must play; and the prediction, which is recorded
first and cannot be changed once a play has shown the result."""

import ast
import re
from pathlib import Path

import nbformat
import pytest

from trafikey_lab import HISTORIES, ModelExecutor, play
from trafikey_lab.course.feedback import NOTE, RIGHT, WRONG
from trafikey_lab.course.one_lease_across_a_restart import (
    FIFTH_TITLE,
    ExplorableLease,
    FifthHistory,
    outcome_table,
)
from trafikey_lab.player import OUTCOME
from trafikey_lab.stories import JOB
from trafikey_lab.traces import (
    AGREE,
    DIFFER,
    MAX_STALLED,
    comparison_rows,
    play_on_model,
    without_epoch,
)


@pytest.mark.parametrize("max_stalled", MAX_STALLED)
@pytest.mark.parametrize("history", sorted(HISTORIES))
def test_without_epoch_counts_every_lease_against_the_budget(history, max_stalled):
    trace, _ = play_on_model(history, max_stalled)
    assert without_epoch(trace) == ("dead" if max_stalled == 1 else "recovered")


def test_play_on_model_plans_the_sweep_that_then_ran():
    trace, (member,) = play_on_model("extended", 1)
    assert member.id == JOB
    assert [n.value for n in member.reads] == ["type", "group", "lease_epoch", "stalled"]
    assert member.verdict.kind == trace.outcome == "dead"


def test_outcome_table_covers_every_history_at_each_budget():
    table = outcome_table((1, 2))
    assert len(table.rows) == 2 * len(HISTORIES)
    restarted_1 = next(r for r in table.rows if r[0] == "the server restarted" and r[1] == "1")
    assert restarted_1[2:] == ("3f2c…0812", "0000…0000", "exempt", "recovered", "dead")
    upgrade_2 = next(r for r in table.rows if r[0] == HISTORIES["upgrade"].title and r[1] == "2")
    assert upgrade_2[2:] == ("(none)", "0000…0000", "exempt", "recovered", "recovered")


def test_comparison_rows_mark_agreement_and_name_what_differs():
    dead = play("stalled", 1, ModelExecutor())
    recovered = play("stalled", 2, ModelExecutor())
    assert all(row[3] == AGREE for row in comparison_rows(dead, dead))
    marks = {row[0]: row[3] for row in comparison_rows(dead, recovered)}
    assert marks["claim"] == AGREE
    assert marks["sweep"].startswith(f"{DIFFER}: reply:")
    assert marks[OUTCOME] == f"{DIFFER}: counted/dead vs counted/recovered"


def test_comparison_rows_end_with_the_labs_reading_and_the_outcome_not_a_step():
    trace = play("restarted", 2, ModelExecutor())
    rows = comparison_rows(trace, trace)
    assert [row[0] for row in rows] == [*trace.story.steps, OUTCOME]
    assert rows[-1][1:3] == ("read as exempt → recovered", "read as exempt → recovered")


# -- the moves 04 asks for on the time axis --------------------------------------------------

def moved(widget, **fields):
    for name, value in fields.items():
        widget.fields[name].value = value
    d = widget.decision
    return (d.deadline_ms, d.stamp, d.sweep.process, d.sweep.at_ms, d.reading, d.outcome)


def test_a_stall_before_the_restart_is_counted_swept_before_it_and_exempt_swept_after_it():
    """04's first move, made on the widget as the learner makes it: from the restarted history,
    the restart at 1120 ms, then the sweep at 1119 ms and at 1120 ms."""
    widget = ExplorableLease()
    widget.preset.value = "restarted"
    assert moved(widget, restart_at_ms=1120, sweep_at_ms=1119) == (
        1000, 1, 1, 1119, "counted", "dead")
    # asked for while the server is down: it runs when the server is back, in process 2
    assert moved(widget, sweep_at_ms=1120) == (1000, 1, 2, 1420, "exempt", "recovered")


def test_a_row_with_no_stamp_is_exempt_with_no_restart_at_all():
    """04's second move, after the first: the claim by claim2 and the restart unticked."""
    widget = ExplorableLease()
    widget.preset.value = "restarted"
    moved(widget, restart_at_ms=1120, sweep_at_ms=1120)
    widget.claim.value = "scripted_claim"
    widget.restarts.value = False
    assert moved(widget) == (1000, None, 1, 1120, "exempt", "recovered")


# -- the exercise: a fifth history -----------------------------------------------------------------

RIGHT_PREDICTION = ("process 1", "exempt", "recovered")
FIFTH = ("add", "claim", "restart", "scripted_extend", "expire", "sweep")
NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "04_one_lease_across_a_restart.ipynb"
ANSWER_WORDS = re.compile(r"\b(exempt|counted|recovered|dead|process [12]|no process)\b")
"""What a message about the steps must not say: any of them would hint at the prediction."""


def predicted(*prediction):
    exercise = FifthHistory()
    exercise.predict(*prediction)
    return exercise


# -- right variants: each tells the fifth history, so each is played ---------------------------

RIGHT_STEPS = {
    "the history as the answer writes it": FIFTH,
    "a list instead of a tuple": list(FIFTH),
    "two script extensions after the restart":
        ("add", "claim", "restart", "scripted_extend", "scripted_extend", "expire", "sweep"),
    "a script extension before the restart as well":
        ("add", "claim", "scripted_extend", "restart", "scripted_extend", "expire", "sweep"),
    "a native extension before the restart, by the process that claimed":
        ("add", "claim", "extend", "restart", "scripted_extend", "expire", "sweep"),
}


@pytest.mark.parametrize("steps", RIGHT_STEPS.values(), ids=RIGHT_STEPS.keys())
def test_a_history_that_tells_the_fifth_story_is_played_and_the_right_prediction_holds(steps):
    feedback = predicted(*RIGHT_PREDICTION).check(steps)
    assert feedback.kinds == [RIGHT], feedback.text
    assert "on the model: the stamp names process 1, the sweep runs in process 2: exempt, so " \
           "recovered, as you predicted" in feedback.text
    (trace,) = feedback.traces
    assert trace.steps[-1].row.get(b"stalled") is None
    assert all(s.reply == 1 for s in trace.steps if s.action == "scripted_extend"), \
        "each script extension found the lease live"


@pytest.mark.parametrize("prediction", [
    ("Process 1", "EXEMPT", "Recovered"),
    ("  process   1 ", " exempt", "recovered\n"),
], ids=["capitals", "spacing"])
def test_a_right_prediction_written_with_other_capitals_or_spacing_holds(prediction):
    feedback = predicted(*prediction).check(FIFTH)
    assert feedback.right
    assert feedback.kinds == [RIGHT]


def test_the_fifth_history_is_played_on_the_model_and_on_the_live_server(live):
    feedback = predicted(*RIGHT_PREDICTION).check(FIFTH, live=live)
    assert feedback.kinds == [RIGHT, RIGHT]
    assert "on the live server: the stamp names process 1, the sweep runs in process 2: " \
           "exempt, so recovered, as you predicted" in feedback.text
    assert [t.executor for t in feedback.traces] == ["model", "live"]
    assert all(t.steps[-1].row.get(b"stalled") is None for t in feedback.traces)


# -- wrong histories: refused before anything is played ----------------------------------------

WRONG_STEPS = {
    "the restarted history, no extension": (
        ("add", "claim", "restart", "expire", "sweep"), "that extension is missing"),
    "the dive's extended history": (
        ("add", "claim", "restart", "extend", "expire", "sweep"), "\"extend\" is EMQ.EXTEND"),
    "a native extension after the script's": (
        ("add", "claim", "restart", "scripted_extend", "extend", "expire", "sweep"),
        "no native verb runs after the restart"),
    "a native extension before the script's, after the restart": (
        ("add", "claim", "restart", "extend", "scripted_extend", "expire", "sweep"),
        "no native verb runs after the restart"),
    "the upgrade history with a script extension": (
        ("add", "scripted_claim", "restart", "scripted_extend", "expire", "sweep"),
        "the module grants the lease"),
    "a script claim and a native one": (
        ("add", "scripted_claim", "claim", "restart", "scripted_extend", "expire", "sweep"),
        "claimed more than once"),
    "a second claim after the restart": (
        ("add", "claim", "restart", "claim", "scripted_extend", "expire", "sweep"),
        "claimed more than once"),
    "a second lease after a sweep": (
        ("add", "claim", "restart", "scripted_extend", "expire", "sweep", "claim", "expire",
         "sweep"), "claimed more than once"),
    "no restart": (
        ("add", "claim", "scripted_extend", "expire", "sweep"), "never restarts"),
    "two restarts": (
        ("add", "claim", "restart", "scripted_extend", "restart", "expire", "sweep"),
        "restarts 2 times"),
    "the restart before the claim": (
        ("add", "restart", "claim", "scripted_extend", "expire", "sweep"),
        "the restart comes before the claim"),
    "the script extension only before the restart": (
        ("add", "claim", "scripted_extend", "restart", "expire", "sweep"),
        "that extension is missing"),
    "no claim at all": (
        ("add", "restart", "scripted_extend", "expire", "sweep"), "the claim is missing"),
    "an extension before the claim": (
        ("add", "scripted_extend", "claim", "restart", "scripted_extend", "expire", "sweep"),
        "an extension before the claim"),
    "the sweep before the lease runs out": (
        ("add", "claim", "restart", "scripted_extend", "sweep"), "the history ends once"),
    "the lease runs out before the extension": (
        ("add", "claim", "restart", "expire", "scripted_extend", "sweep"),
        "the history ends once"),
    "a step after the sweep": (
        ("add", "claim", "restart", "scripted_extend", "expire", "sweep", "restart"),
        "the history ends once"),
    "no add": (
        ("claim", "restart", "scripted_extend", "expire", "sweep"), "the job is added once"),
    "two adds": (
        ("add", "add", "claim", "restart", "scripted_extend", "expire", "sweep"),
        "the job is added once"),
    "a step that does not exist": (
        ("add", "claim", "reboot", "scripted_extend", "expire", "sweep"),
        "'reboot' is not a step"),
    "a string, not a tuple": ("add claim restart scripted_extend expire sweep",
                              "make it a tuple of step names"),
    "nothing": ((), "steps is empty"),
    "not text": ((1, 2, 3), "make it a tuple of step names"),
}


@pytest.mark.parametrize(("steps", "message"), WRONG_STEPS.values(), ids=WRONG_STEPS.keys())
def test_a_history_that_is_not_the_fifth_is_refused_unplayed_with_what_to_change(steps, message):
    feedback = predicted(*RIGHT_PREDICTION).check(steps)
    assert WRONG in feedback.kinds
    assert RIGHT not in feedback.kinds
    assert message in feedback.text
    assert feedback.traces == ()


@pytest.mark.parametrize(("steps", "message"), WRONG_STEPS.values(), ids=WRONG_STEPS.keys())
def test_no_message_about_the_steps_hints_at_the_prediction(steps, message):
    feedback = predicted(*RIGHT_PREDICTION).check(steps)
    assert not ANSWER_WORDS.search(feedback.text), feedback.text


def test_a_wrong_history_with_a_right_looking_reading_is_still_refused():
    # Scripts only, no restart: exempt and recovered as the fifth is, for another reason.
    feedback = predicted(*RIGHT_PREDICTION).check(("add", "scripted_claim", "scripted_extend",
                                                    "expire", "sweep"))
    assert not feedback.right
    assert feedback.traces == ()


# -- the prediction: recorded first, fixed once played -----------------------------------------

WRONG_PREDICTIONS = {
    "nothing yet": ((None, None, None), ["stamp is None", "reading is None", "outcome is None"]),
    "a process by number": ((1, "exempt", "recovered"), ["stamp is 1"]),
    "a reading that is not one": (("process 1", "exempted", "recovered"),
                                  ["reading is 'exempted'"]),
    "a boolean for the reading": (("process 1", True, "recovered"), ["reading is True"]),
    "the outcome as the reply": (("process 1", "exempt", "[[b'job-1'], []]"),
                                 ["outcome is \"[[b'job-1'], []]\""]),
    "a run_id for the stamp": (("3f2c…0812", "exempt", "recovered"), ["stamp is '3f2c…0812'"]),
}


@pytest.mark.parametrize(("prediction", "messages"), WRONG_PREDICTIONS.values(),
                         ids=WRONG_PREDICTIONS.keys())
def test_a_prediction_that_is_not_one_of_the_answers_is_not_recorded(prediction, messages):
    exercise = FifthHistory()
    feedback = exercise.predict(*prediction)
    assert repr(feedback).startswith("NOT YET: ")
    assert all(m in feedback.text for m in messages), feedback.text
    assert exercise.prediction is None
    assert "no prediction is recorded yet" in exercise.check(FIFTH).text


def test_a_recorded_prediction_plays_nothing_by_itself_and_says_what_comes_next():
    exercise = FifthHistory()
    feedback = exercise.predict(*RIGHT_PREDICTION)
    assert feedback.kinds == [NOTE]
    assert repr(feedback).startswith("NOT YET: ")
    assert "Nothing is played yet" in feedback.text
    assert not exercise.played


def test_nothing_is_played_before_a_prediction_is_recorded():
    exercise = FifthHistory()
    feedback = exercise.check(FIFTH)
    assert feedback.kinds == [WRONG]
    assert feedback.traces == ()
    assert "nothing is played before there is one" in feedback.text
    assert not exercise.played


@pytest.mark.parametrize(("prediction", "wrong"), [
    (("process 2", "counted", "dead"), ['the stamp names process 1, not "process 2"',
                                        'exempt, not "counted"', 'recovered, not "dead"']),
    (("process 1", "counted", "dead"), ['exempt, not "counted"', 'recovered, not "dead"']),
    (("process 1", "exempt", "dead"), ['recovered, not "dead"']),
    (("no process", "exempt", "recovered"), ['the stamp names process 1, not "no process"']),
], ids=["all three", "reading and outcome", "outcome", "stamp"])
def test_a_wrong_prediction_is_wrong_on_exactly_the_parts_that_are_wrong(prediction, wrong):
    feedback = predicted(*prediction).check(FIFTH)
    assert feedback.kinds == [WRONG]
    assert len(feedback.traces) == 1
    text = feedback.text
    assert all(w in text for w in wrong), text
    assert text.count(', not "') == len(wrong)


def test_a_wrong_stamp_is_explained_by_the_verb_that_wrote_it_and_the_script_that_did_not():
    text = predicted("process 2", "exempt", "recovered").check(FIFTH).text
    assert "the last native verb to stamp the row was EMQ.CLAIM, in process 1" in text
    assert "extend2, in process 2) moved the deadline and wrote no stamp" in text


def test_a_prediction_before_the_play_may_change():
    exercise = predicted("process 2", "counted", "dead")
    assert exercise.predict(*RIGHT_PREDICTION).kinds == [NOTE]
    assert exercise.check(FIFTH).right


def test_a_prediction_changed_after_the_play_is_refused_and_the_first_one_holds():
    exercise = predicted("process 2", "counted", "dead")
    assert not exercise.check(FIFTH).right
    changed = exercise.predict(*RIGHT_PREDICTION)
    assert changed.kinds == [WRONG]
    assert "refused" in changed.text
    assert "the stamp names process 2, the reading is counted, the job is dead" in changed.text
    again = exercise.check(FIFTH)
    assert not again.right
    assert "the prediction changed after the result" in again.text
    assert "was refused: this play is held against the first one" in again.text


def test_an_unusable_prediction_after_the_play_leaves_the_first_one_in_place():
    exercise = predicted("process 2", "counted", "dead")
    exercise.check(FIFTH)
    feedback = exercise.predict(None, None, None)
    assert "still holds: the stamp names process 2" in feedback.text
    assert exercise.prediction.stamp == "process 2"


def test_a_history_refused_unplayed_does_not_fix_the_prediction():
    exercise = predicted("process 2", "counted", "dead")
    exercise.check(("add", "claim", "restart", "expire", "sweep"))
    assert exercise.predict(*RIGHT_PREDICTION).kinds == [NOTE]


def test_the_notebook_run_again_from_the_top_records_the_same_prediction_and_plays_again():
    exercise = FifthHistory()
    for _ in range(2):
        recorded = exercise.predict(*RIGHT_PREDICTION)
        assert WRONG not in recorded.kinds
        assert exercise.check(FIFTH).right
    assert "recorded again, unchanged" in recorded.text


def test_a_server_that_cannot_restart_is_a_note_and_the_model_still_judges(lab, servers):
    external = servers(url=lab.connection_url)
    from trafikey_lab import LiveExecutor

    feedback = predicted(*RIGHT_PREDICTION).check(FIFTH, live=LiveExecutor(external))
    assert feedback.kinds == [RIGHT, NOTE]
    assert feedback.right
    assert "not played on the live server" in feedback.text


# -- the notebook's own attempt ----------------------------------------------------------------

def _stored_attempt():
    """The prediction and the steps as notebook 04 stores them."""
    cells = [c.source for c in nbformat.read(NOTEBOOK, as_version=4).cells
             if c.cell_type == "code"]
    predict = next(s for s in cells if "predict_fifth(" in s and "import" in s)
    check = next(s for s in cells if "check_history(steps" in s)
    call = ast.parse(predict).body[-1].value
    prediction = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    steps = ast.literal_eval(next(node.value for node in ast.parse(check).body
                                  if isinstance(node, ast.Assign)
                                  and node.targets[0].id == "steps"))
    return prediction, steps


def test_the_notebooks_stored_attempt_is_not_yet_right_and_gives_nothing_away():
    prediction, steps = _stored_attempt()
    exercise = FifthHistory()
    predicted_feedback = exercise.predict(**prediction)
    feedback = exercise.check(steps)
    assert repr(predicted_feedback).startswith("NOT YET: ")
    assert repr(feedback).startswith(f"NOT YET: a fifth history: {FIFTH_TITLE}")
    assert feedback.traces == ()
    assert not ANSWER_WORDS.search(feedback.text), feedback.text
    assert "scripted_extend" not in feedback.text
