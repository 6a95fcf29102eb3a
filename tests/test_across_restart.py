"""across_restart.py, notebook 04's logic: a history on the model, the counterfactual without the
epoch, the outcome table, and the model held against a live server step by step."""

import pytest

from trafikey_lab import HISTORIES, ModelExecutor, play
from trafikey_lab.across_restart import (
    AGREE,
    DIFFER,
    MAX_STALLED,
    comparison_rows,
    model_against_live,
    outcome_table,
    play_on_model,
    without_epoch,
)
from trafikey_lab.histories import JOB


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
    assert marks["verdict"] == f"{DIFFER}: counted/dead vs counted/recovered"


ALL_AGREE = [
    "stalled    live: counted → dead      1 process(es) · 5 of 5 steps agree",
    "restarted  live: exempt  → recovered 2 process(es) · 6 of 6 steps agree",
    "extended   live: counted → dead      2 process(es) · 7 of 7 steps agree",
    "upgrade    live: exempt  → recovered 2 process(es) · 6 of 6 steps agree",
]


class UnstampedClaims(ModelExecutor):
    """A model whose claim is the script's: its leases carry no stamp, unlike the model's."""

    def claim(self, queue, lease_ms):
        return self.scripted_claim(queue, lease_ms)


def test_model_against_live_gives_one_line_per_history_and_counts_the_steps_that_agree():
    assert list(model_against_live(ModelExecutor())) == ALL_AGREE


def test_model_against_live_counts_only_the_steps_that_agree_when_the_two_differ():
    lines = list(model_against_live(UnstampedClaims()))
    assert lines[0] == "stalled    live: exempt  → recovered 1 process(es) · 1 of 5 steps agree"
    assert lines[2] == "extended   live: counted → dead      2 process(es) · 5 of 7 steps agree"
    assert lines[3] == ALL_AGREE[3], "a scripted claim is the upgrade history's own first step"


def test_model_against_live_plays_only_the_history_without_a_restart_when_it_cannot_restart():
    assert list(model_against_live(ModelExecutor(), restartable=False)) == ALL_AGREE[:1]


def test_model_against_live_agrees_at_every_step_on_the_server(live, lab):
    before = lab.run_id
    assert list(model_against_live(live)) == ALL_AGREE
    assert lab.run_id != before, "three of the four histories restart the server"
