"""Notebook 04's module and the traces it shows: a history on the model, the counterfactual
without the epoch (traces.py), the outcome table, the model held against a live server step by step, and the
diagnostic question held against the history it is about."""

import pytest

from trafikey_lab import HISTORIES, ModelExecutor, Queue, play
from trafikey_lab.course.one_lease_across_a_restart import model_against_live, outcome_table
from trafikey_lab.questions import ONE_LEASE_ACROSS_A_RESTART as QUESTION
from trafikey_lab.questions import QUESTION_HISTORY, QUESTION_MAX_STALLED
from trafikey_lab.traces import (
    AGREE,
    DIFFER,
    MAX_STALLED,
    comparison_rows,
    play_on_model,
    without_epoch,
)
from trafikey_lab.histories import JOB, OUTCOME, History


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
    upgrade_2 = next(r for r in table.rows if r[0] == "claimed before the upgrade" and r[1] == "2")
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
    assert [row[0] for row in rows] == [*trace.history.steps, OUTCOME]
    assert rows[-1][1:3] == ("read as exempt → recovered", "read as exempt → recovered")


ALL_AGREE = [
    ("stalled    live: dead      stalled 1      read as counted · 1 process(es) · "
     "agree on all 4 steps and on the reading and outcome"),
    ("restarted  live: recovered stalled (none) read as exempt  · 2 process(es) · "
     "agree on all 5 steps and on the reading and outcome"),
    ("extended   live: dead      stalled 1      read as counted · 2 process(es) · "
     "agree on all 6 steps and on the reading and outcome"),
    ("upgrade    live: recovered stalled (none) read as exempt  · 2 process(es) · "
     "agree on all 5 steps and on the reading and outcome"),
]
"""Each history's steps are counted as its steps (4 for the stalled one), and the last row of
`compare`, the lab's reading and the outcome, apart from them."""


class UnstampedClaims(ModelExecutor):
    """A model whose claim is the script's: its leases carry no stamp, unlike the model's."""

    def claim(self, queue, lease_ms):
        return self.scripted_claim(queue, lease_ms)


def test_model_against_live_gives_one_line_per_history_and_counts_the_steps_that_agree():
    assert list(model_against_live(ModelExecutor())) == ALL_AGREE


def test_model_against_live_counts_only_the_steps_that_agree_when_the_two_differ():
    lines = list(model_against_live(UnstampedClaims()))
    assert lines[0] == ("stalled    live: recovered stalled (none) read as exempt  · 1 process(es) "
                        "· agree on 1 of 4 steps, not on the reading and outcome")
    assert lines[2] == ("extended   live: dead      stalled 1      read as counted · 2 process(es) "
                        "· agree on 4 of 6 steps and on the reading and outcome")
    assert lines[3] == ALL_AGREE[3], "a scripted claim is the upgrade history's own first step"


@pytest.mark.parametrize("max_stalled", [2, 3])
def test_at_a_budget_where_counted_and_exempt_both_recover_the_line_shows_the_rows_stalled(
        max_stalled):
    """The module's own evidence: its reply says recovered for both; the row's stalled tells a
    counted lease (1) from an exempt one (none)."""
    lines = {line.split()[0]: line for line in model_against_live(ModelExecutor(),
                                                                     max_stalled=max_stalled)}
    assert "live: recovered stalled 1      read as counted" in lines["stalled"]
    assert "live: recovered stalled (none) read as exempt " in lines["restarted"]


def test_model_against_live_plays_only_the_history_without_a_restart_when_it_cannot_restart():
    assert list(model_against_live(ModelExecutor(), restartable=False)) == ALL_AGREE[:1]


def test_model_against_live_agrees_at_every_step_on_the_server(live, lab):
    before = lab.run_id
    assert list(model_against_live(live)) == ALL_AGREE
    assert lab.run_id != before, "three of the four histories restart the server"


# -- the diagnostic question --------------------------------------------------------------------

MISCONCEPTIONS = {"a restart resets stalled", "exempt means not expired",
                  "a failover changes run_id", "extend2 moves the lease to the new process"}


def test_the_question_has_one_right_option_and_names_each_misconception():
    options = QUESTION.options
    assert sum(option.right for option in options) == 1
    assert {o.misconception for o in options if not o.right} == MISCONCEPTIONS
    assert all(o.why for o in options)


@pytest.mark.parametrize("executor", ["model", "live"])
def test_the_right_option_is_what_the_history_does_and_each_wrong_one_is_not(request, executor):
    executor = request.getfixturevalue(executor)
    trace = play(QUESTION_HISTORY, QUESTION_MAX_STALLED, executor)
    before_restart = trace.steps[4]
    assert before_restart.action == "claim" and before_restart.row[b"stalled"] == b"1", \
        "the prompt's premise: a stall counted earlier, then EMQ.CLAIM"
    extension = next(s for s in trace.steps if s.action == "scripted_extend")
    assert extension.reply == 1, "the worker's extend2 found its lease live"
    queue = Queue("{lease}")
    data = executor.dataset()
    row = trace.steps[-1].row
    # right: back to pending uncounted, stalled still 1
    assert trace.exempt and trace.outcome == "recovered" and row[b"stalled"] == b"1"
    assert [m for m, _ in data[queue.pending][1]] == [JOB]
    # extend2 moves the lease: it would have been counted, stalled 2, dead
    assert row[b"lease_epoch"] != trace.sweep_run_id.encode() and row.get(b"stalled") != b"2"
    # a restart resets stalled: the count is still there
    assert row.get(b"stalled") is not None
    # exempt means not expired: the job left active
    assert queue.active not in data


def test_without_a_new_run_id_the_same_history_is_counted_as_the_failover_option_says():
    # A primary promoted back without restarting keeps its run_id: on the model, that is the
    # history with no restart at all.
    steps = tuple(s for s in QUESTION_HISTORY.steps if s != "restart")
    trace = play(History("failback", "no new run_id", steps, ""), QUESTION_MAX_STALLED,
                 ModelExecutor())
    assert not trace.exempt and trace.outcome == "dead"
    assert trace.steps[-1].row[b"stalled"] == b"2"
    right = next(o for o in QUESTION.options if o.right)
    failover = next(o for o in QUESTION.options if o.misconception == "a failover changes run_id")
    assert "counted, stalled 2, dead" in failover.why and "stalled keeps its 1" in right.why
