"""The scenarios of the decision table (notebook 07): each played on the model and on live
servers (a real replica, a real SIGKILL, a real AOF replay) finds the same, and the table the
model makes keeps the course's one line."""

import pytest

from trafikey_lab import scenarios
from trafikey_lab.live.stage import stage_for
from trafikey_lab.player import ModelStage
from trafikey_lab.scenarios import facts, play, play_all
from trafikey_lab.stories import BUDGETS, JOB, Event
from trafikey_lab.stories import TABLE as SCENARIOS
from trafikey_lab.sweep import Outcome, Reading


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda scenario: scenario.key)
def test_each_scenario_played_live_finds_what_the_model_found(scenario):
    model = play_all(lambda _: ModelStage(), [scenario])
    live = play_all(stage_for, [scenario])
    assert [facts(p) for p in live[0]] == [facts(p) for p in model[0]]


MODEL = play_all(lambda _: ModelStage())


@pytest.mark.parametrize("row", MODEL, ids=lambda row: row[0].scenario.key)
def test_every_row_is_counted_exactly_when_the_stamp_names_the_process_that_swept(row):
    for played in row:
        if played.reading == Reading.NOT_READ:
            assert played.outcome == Outcome.UNTOUCHED
            continue
        assert (played.reading == Reading.COUNTED) == (played.stamp == played.swept_by)
        if played.reading == Reading.EXEMPT:
            assert played.outcome == Outcome.RECOVERED


def test_a_counted_stall_is_dead_at_budget_1_and_recovered_at_2_unless_counted_twice():
    for row in MODEL:
        at = {p.max_stalled: p for p in row}
        if at[1].reading == Reading.COUNTED:
            assert at[1].outcome == Outcome.DEAD
            twice = row[0].scenario.steps.count("sweep") == 2
            assert at[2].outcome == (Outcome.DEAD if twice else Outcome.RECOVERED)


def test_the_table_has_a_row_per_scenario_and_an_outcome_per_budget():
    table = scenarios.decision_table(MODEL)
    assert [row[0] for row in table.rows] == [s.title for s in SCENARIOS]
    assert table.columns[5:5 + len(BUDGETS)] == tuple(f"max_stalled {b}" for b in BUDGETS)


def test_the_table_covers_every_case_the_course_plays():
    keys = {s.key for s in SCENARIOS}
    assert {"stalled", "restarted", "extended", "upgrade", "fifth", "claim2_on_stamped_row",
            "ran_out_before_restart", "not_due", "failover", "failback", "aof_replay",
            "foreign_bytes", "race_worker_first", "race_sweep_first", "crash_rdb"} <= keys


def test_a_model_crash_brings_back_the_snapshots_data_under_a_new_process():
    stage = ModelStage()
    queue = scenarios.TABLE_QUEUE
    stage.worker.add(queue, JOB, b"")
    stage.event(Event.SNAPSHOT)
    before = stage.worker.run_id
    stage.worker.claim(queue, 100)
    stage.event(Event.CRASH)
    assert stage.worker.row(queue, JOB)[b"attempts"] == b"0"
    assert stage.worker.run_id != before


def test_a_scenario_whose_job_died_at_an_earlier_sweep_reports_that_sweep():
    claim2 = next(s for s in SCENARIOS if s.key == "claim2_on_stamped_row")
    played = play(claim2, 1, ModelStage())
    assert (played.reading, played.outcome, played.attempts) == (Reading.COUNTED, Outcome.DEAD,
                                                                  "1")


def test_the_model_stage_refuses_an_event_it_does_not_have():
    with pytest.raises(ValueError, match="no event"):
        ModelStage().event("reboot")
