"""traces.py: what a played history shows beside its reading, pinned where a history or a
schedule has more than one sweep or steps after its sweep."""

from trafikey_lab.executors import ModelExecutor
from trafikey_lab.schedule import Schedule, play
from trafikey_lab.sweep import Reading
from trafikey_lab.traces import counterfactual, counterfactual_note, play_on_model, without_epoch


def test_the_plan_is_the_read_pass_before_the_sweep_the_trace_reads_its_last():
    # Two sweeps at max_stalled 2: the first counts a stall (stalled 1, recovered), the last the
    # script's lease on the same stamp (stalled 2, dead). The trace reads the last; so must its
    # plan.
    trace, plan = play_on_model("claim2_on_stamped_row", 2)
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
    assert counterfactual_note(trace).startswith("the same, recovered: ")


def test_one_counterfactual_sentence_serves_every_reading():
    # The history player and the explorable lease both show this sentence, so each case is here.
    assert counterfactual(Reading.NOT_READ, "untouched", "untouched", 1, 1).startswith(
        "the same: a lease that is not due is not read")
    assert counterfactual(Reading.COUNTED, "dead", "dead", 1, 1) == (
        "the same, dead: a counted lease is counted with or without the epoch")
    assert counterfactual(Reading.EXEMPT, "recovered", "dead", 1, 1) == (
        "dead instead of recovered: without the epoch this lease would have been counted, "
        "stalled 0 → 1 against max_stalled 1")
    assert counterfactual(Reading.EXEMPT, "recovered", "recovered", 2, 3) == (
        "still recovered: without the epoch this lease would have been counted, stalled 1 → 2 "
        "against max_stalled 3, one stall of its budget spent on a restart")
    assert counterfactual(Reading.EXEMPT, "recovered", "refused", None, 2).endswith(
        "its stalled field is not a counter")
