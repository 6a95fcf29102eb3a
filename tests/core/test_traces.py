"""traces.py: what a played history shows beside its reading, pinned where a history or a
schedule has more than one sweep or steps after its sweep."""

from trafikey_lab.course.limits import STAMP_OUTLIVES_LEASE, STAMP_OUTLIVES_MAX_STALLED
from trafikey_lab.executors import ModelExecutor
from trafikey_lab.schedule import Schedule, play
from trafikey_lab.traces import counterfactual_note, play_on_model, without_epoch


def test_the_plan_is_the_read_pass_before_the_sweep_the_trace_reads_its_last():
    # Two sweeps: the first counts a stall (stalled 1, recovered), the last the script's lease
    # on the same stamp (stalled 2, dead). The trace reads the last; so must its plan.
    trace, plan = play_on_model(STAMP_OUTLIVES_LEASE, STAMP_OUTLIVES_MAX_STALLED)
    (member,) = plan
    assert trace.outcome == "dead"
    assert member.verdict.kind == trace.outcome
    assert member.verdict.stalled == 2


def test_the_counterfactual_reads_the_row_before_the_sweep_when_steps_follow_it():
    # A counted stall swept before the restart: the restart is the trace's last step, so the row
    # just before the sweep is not the one before the last step.
    schedule = Schedule(restart_at_ms=1600, sweep_at_ms=1500, stalled_before=1, max_stalled=3)
    trace = play(schedule, ModelExecutor())
    assert trace.steps[-1].action == "restart"
    assert trace.reading == "counted"
    assert trace.outcome == "recovered"
    assert without_epoch(trace) == "recovered"
    assert "<b>recovered</b>" in counterfactual_note(trace)
