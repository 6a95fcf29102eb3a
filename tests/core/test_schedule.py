"""The schedule's rule (`schedule.decide`) against the model played call by call at the
schedule's times, and each boundary the epoch has on a time axis, crossed by one millisecond."""

from dataclasses import replace
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trafikey_lab import schedule as S
from trafikey_lab.executors import ModelExecutor
from trafikey_lab.schedule import Schedule, decide, play
from trafikey_lab.stories import JOB


def ms(high=3000):
    return st.integers(min_value=0, max_value=high)


schedules = st.builds(
    Schedule,
    lease_ms=st.integers(min_value=1, max_value=2000),
    claim=st.sampled_from(tuple(S.CLAIMS)),
    worker=st.sampled_from(tuple(S.WORKERS)),
    worker_at_ms=ms(), restarts=st.booleans(), restart_at_ms=ms(), restart_ms=ms(1000),
    sweep_at_ms=ms(), max_stalled=st.integers(min_value=1, max_value=4),
    stalled_before=st.integers(min_value=0, max_value=4),
)


def played(schedule: Schedule):
    """What the model did, in the words of a Decision."""
    model = ModelExecutor()
    trace = play(schedule, model)
    names = {run_id: n for n, run_id in enumerate(trace.run_ids, 1)}
    stamp = trace.lease_epoch
    extension = next((s for s in trace.steps if s.action in S.EXTENSIONS), None)
    stalled = trace.steps[-1].row.get(b"stalled")
    return {
        "due": trace.due,
        "reading": trace.reading,
        "outcome": trace.outcome,
        "stamp": None if stamp is None else names[stamp.decode()],
        "sweep process": names[trace.sweep_run_id],
        "stalled after": 0 if stalled is None else int(stalled),
        "extension replied": None if extension is None else extension.reply,
        "processes": len(trace.run_ids),
    }


def decided(schedule: Schedule):
    d = decide(schedule)
    return {
        "due": d.due,
        "reading": d.reading,
        "outcome": d.outcome,
        "stamp": d.stamp,
        "sweep process": d.sweep.process,
        "stalled after": d.stalled_after,
        "extension replied": None if not d.extension else 0 if d.extension == "not live" else 1,
        "processes": 2 if schedule.restarts else 1,
    }


@settings(max_examples=300, deadline=None)
@given(schedules)
def test_the_rule_is_the_model_played_call_by_call(schedule):
    assert decided(schedule) == played(schedule)


@pytest.mark.parametrize("key", S.PRESETS)
def test_every_preset_is_the_model_played(key):
    _, schedule = S.PRESETS[key]
    assert decided(schedule) == played(schedule)


@pytest.mark.parametrize(("key", "reading", "outcome"), [
    ("stalled", "counted", "dead"), ("restarted", "exempt", "recovered"),
    ("extended", "counted", "dead"), ("upgrade", "exempt", "recovered"),
    ("fifth", "exempt", "recovered"),
])
def test_presets_tell_the_dive_histories(key, reading, outcome):
    d = decide(S.PRESETS[key][1])
    assert (d.reading, d.outcome) == (reading, outcome)


BASE = Schedule(lease_ms=1000, restart_at_ms=1200, restart_ms=300, sweep_at_ms=1800)


def flips(before: Schedule, after: Schedule):
    return ((decide(before).reading, decide(before).outcome),
            (decide(after).reading, decide(after).outcome))


def test_a_sweep_a_millisecond_before_the_deadline_finds_nothing_and_at_it_reads_the_stamp():
    before, at = (Schedule(restarts=False, sweep_at_ms=t) for t in (999, 1000))
    assert flips(before, at) == (("not read", "untouched"), ("counted", "dead"))
    assert played(before)["outcome"] == "untouched"
    assert played(at)["outcome"] == "dead"


def test_a_lease_that_ran_out_before_the_restart_but_is_swept_after_it_is_exempt():
    # the lease ran out at 1000 ms, 200 ms before the restart: the sweep decides by when it runs
    swept_before, swept_after = (replace(BASE, sweep_at_ms=t) for t in (1199, 1500))
    assert flips(swept_before, swept_after) == (("counted", "dead"), ("exempt", "recovered"))


def test_a_native_extension_moves_the_lease_to_the_process_it_reaches():
    ext = replace(BASE, worker="extend", sweep_at_ms=3000)
    before, after = (replace(ext, worker_at_ms=t) for t in (1199, 1500))
    assert flips(before, after) == (("exempt", "recovered"), ("counted", "dead"))
    assert (decide(before).stamp, decide(after).stamp) == (1, 2)


def test_an_extension_by_script_keeps_the_old_stamp_on_either_side_of_the_restart():
    ext = replace(BASE, worker="scripted_extend", sweep_at_ms=3000)
    for t in (1199, 1500):
        d = decide(replace(ext, worker_at_ms=t))
        assert (d.stamp, d.reading, d.outcome) == (1, "exempt", "recovered")


def test_a_downtime_longer_than_the_lease_left_it_expired_and_a_shorter_one_did_not():
    # claimed at 0 for 500 ms; the server is down from 100 ms; the sweep asked for 200 ms runs
    # when the server is back
    base = Schedule(lease_ms=500, restart_at_ms=100, sweep_at_ms=200)
    shorter, longer = (replace(base, restart_ms=t) for t in (399, 400))
    assert flips(shorter, longer) == (("not read", "untouched"), ("exempt", "recovered"))
    assert decide(longer).sweep.at_ms == 500
    assert decide(longer).sweep.asked_ms == 200


def test_a_call_at_the_restarts_millisecond_is_served_by_the_new_process():
    d = decide(Schedule(restart_at_ms=1500, restart_ms=0, sweep_at_ms=1500))
    assert (d.sweep.process, d.reading) == (2, "exempt")


def test_an_extension_after_the_sweep_took_the_job_replies_0():
    s = Schedule(restarts=False, worker="extend", worker_at_ms=1600, sweep_at_ms=1500)
    assert decide(s).extension == "not live"
    assert played(s)["extension replied"] == 0


def test_an_extension_after_its_deadline_but_before_the_sweep_still_succeeds():
    # EMQ.EXTEND does not look at the deadline: it asks only that the lease be in active
    s = Schedule(restarts=False, worker="extend", worker_at_ms=1200, sweep_at_ms=1500)
    assert (decide(s).extension, decide(s).due) == ("stamped", False)
    assert played(s)["extension replied"] == 1


def test_the_counterfactual_counts_every_expired_lease():
    d = decide(S.PRESETS["restarted"][1])
    assert (d.outcome, d.without_epoch) == ("recovered", "dead")
    d = decide(replace(S.PRESETS["restarted"][1], max_stalled=3, stalled_before=1))
    assert (d.outcome, d.stalled_after, d.without_epoch) == ("recovered", 1, "recovered")


def test_the_sentence_carries_the_schedules_numbers():
    text = S.sentence(replace(BASE, restart_at_ms=1120, sweep_at_ms=1720))
    assert text == ("the lease ran out at 1000 ms, 120 ms before the restart; process 2 swept "
                    "it at 1720 ms and found the stamp of process 1: exempt, back to pending "
                    "uncounted (stalled not written)")


@pytest.mark.parametrize(("change", "words"), [
    ({"lease_ms": 0}, "lease_ms is 0: make it a whole number from 1 to 10000"),
    ({"sweep_at_ms": -1}, "sweep_at_ms is -1"),
    ({"max_stalled": True}, "max_stalled is True"),
    ({"restart_ms": 2.5}, "restart_ms is 2.5"),
    ({"worker": "extends"}, "worker is 'extends': use one of stops, extend, scripted_extend"),
    ({"claim": "CLAIM"}, "claim is 'CLAIM'"),
])
def test_a_schedule_the_lab_cannot_play_is_refused_with_how_to_fix_it(change, words):
    bad = replace(Schedule(), **change)
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        decide(bad)
    model = ModelExecutor()
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        play(bad, model)
    assert model.dataset() == {}


def test_the_sweep_leaves_a_not_due_lease_in_active():
    trace = play(Schedule(restarts=False, sweep_at_ms=10), ModelExecutor())
    assert trace.steps[-1].reply == [[], []]
    assert trace.steps[-1].row[b"state"] == b"active"
    assert JOB not in trace.steps[-1].reply[0]


@settings(max_examples=300, deadline=None)
@given(schedules)
def test_the_live_plan_keeps_every_moment_in_order_within_about_3_seconds(schedule):
    plan = S.LivePlan(schedule)
    times = S.key_times(schedule)
    live = [plan.live[t] for t in times]
    assert all(a < b for a, b in pairwise(live))
    # only the widened gaps may push the replay past the budget
    assert plan.total_ms <= 3000 + plan.min_gap_ms * len(times)
    if schedule.restarts:
        assert plan.slot_ms >= 900


def test_a_long_downtime_is_shrunk_with_the_rest():
    plan = S.LivePlan(Schedule(restart_ms=5000, sweep_at_ms=6000))
    assert plan.total_ms == 3000
    assert plan.factor == 0.5
    assert plan.slot_ms == 2500


# -- the lab's rules of time, each pinned: a test here fails when the rule changes --------------
# They are the lab's, not the server's: on a real server a restart takes time and which client
# reaches the new process first is a race. `decide` and `play` share `moments`, so agreeing
# with each other cannot pin them; each test says what the rule must give.


def actions(schedule: Schedule) -> list[str]:
    return [m.action for m in S.moments(schedule)]


def test_an_extension_and_a_sweep_at_the_same_millisecond_run_extension_first():
    # the deadline is 1000 ms; both calls at 1000: the extension first moves it to 2000
    tie = Schedule(restarts=False, worker="extend", worker_at_ms=1000, sweep_at_ms=1000)
    assert actions(tie) == ["claim", "extend", "sweep"]
    d = decide(tie)
    assert (d.deadline_ms, d.due, d.reading, d.extension) == (2000, False, "not read", "stamped")
    assert played(tie)["outcome"] == "untouched"


def test_calls_held_by_the_downtime_run_at_up_the_extension_first_then_the_sweep():
    # down from 100 to 500 ms; the extension asked for 150 and the sweep for 200 both run at 500
    held = Schedule(lease_ms=500, worker="extend", worker_at_ms=150, restart_at_ms=100,
                    restart_ms=400, sweep_at_ms=200)
    order = S.moments(held)
    assert [(m.action, m.asked_ms, m.at_ms, m.process) for m in order] == [
        ("claim", 0, 0, 1), ("restart", 100, 100, 1), ("extend", 150, 500, 2),
        ("sweep", 200, 500, 2)]
    d = decide(held)
    assert (d.deadline_ms, d.due, d.stamp) == (1000, False, 2)
    assert played(held)["outcome"] == "untouched"


def test_a_held_extension_sets_its_deadline_from_when_it_ran_not_when_it_was_asked():
    # asked for 150 ms, run at 500: the lease runs to 1000, so a sweep at 900 finds it not due
    held = Schedule(lease_ms=500, worker="extend", worker_at_ms=150, restart_at_ms=100,
                    restart_ms=400, sweep_at_ms=900)
    d = decide(held)
    assert (d.deadline_ms, d.due) == (1000, False)
    assert played(held)["outcome"] == "untouched"


def test_the_restart_runs_before_a_call_at_its_own_millisecond_which_the_new_process_serves():
    at_once = Schedule(restart_at_ms=1500, restart_ms=0, sweep_at_ms=1500)
    assert actions(at_once) == ["claim", "restart", "sweep"]
    assert decide(at_once).sweep.process == 2
    assert played(at_once)["sweep process"] == 2


def test_a_call_at_the_restarts_own_millisecond_is_held_to_up_when_there_is_a_downtime():
    # the lease runs to 1000 ms; the sweep asked for 800 ms, the moment the server goes down,
    # runs when it is back at 1100 and finds the lease due
    held = Schedule(lease_ms=1000, restart_at_ms=800, restart_ms=300, sweep_at_ms=800)
    d = decide(held)
    assert (d.sweep.asked_ms, d.sweep.at_ms, d.sweep.process) == (800, 1100, 2)
    assert (d.due, d.reading) == (True, "exempt")


def test_the_claim_runs_before_a_restart_at_0_so_the_old_process_stamps_it():
    early = Schedule(restart_at_ms=0, restart_ms=100, sweep_at_ms=1500)
    assert actions(early) == ["claim", "restart", "sweep"]
    assert (played(early)["stamp"], played(early)["reading"]) == (1, "exempt")
