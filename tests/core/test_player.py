"""The dive's four histories x max_stalled 1, 2, 3: the same verdict, sweep reply and final row
on the model and on the module."""

import pytest

from trafikey_lab import HISTORIES, ModelExecutor, compare, play, reading_line
from trafikey_lab.epoch import NOW, ZERO
from trafikey_lab.player import OUTCOME
from trafikey_lab.stories import JOB, Story
from trafikey_lab.text import short

EXPECTED = {
    # history: (exempt, stamp the sweep finds, as a process number or None)
    "stalled": (False, 1),
    "restarted": (True, 1),
    "extended": (False, 2),
    "upgrade": (True, None),
}


@pytest.mark.parametrize("max_stalled", [1, 2, 3])
@pytest.mark.parametrize("key", list(HISTORIES))
def test_history_gives_the_same_verdict_reply_and_row_on_both(live, queue, key, max_stalled):
    on_model = play(key, max_stalled, ModelExecutor())
    on_live = play(key, max_stalled, live, queue)
    assert [row for row in compare(on_model, on_live) if not row[1]] == []
    exempt, _ = EXPECTED[key]
    assert on_model.exempt is exempt
    # What the server did, read from the server: the sweep's reply, the row and the sets it
    # left. An exempt lease is recovered with no stall written, whatever the budget.
    dead = not exempt and max_stalled == 1
    assert on_live.steps[-1].reply == ([[], [JOB]] if dead else [[JOB], []])
    row = live.row(queue, JOB)
    assert row.get(b"stalled") == (None if exempt else b"1")
    assert row[b"state"] == (b"dead" if dead else b"pending")
    data = live.dataset()
    assert queue.active not in data
    assert [member for member, _ in data[queue.dead if dead else queue.pending][1]] == [JOB]


@pytest.mark.parametrize("key", list(HISTORIES))
def test_history_stamp_names_the_process_whose_native_verb_last_stamped_the_row(live, key):
    trace = play(key, 2, live)
    _, process = EXPECTED[key]
    if process is None:
        assert trace.lease_epoch is None
    else:
        assert trace.lease_epoch == trace.run_ids[process - 1].encode()
    restarts = key != "stalled"
    assert len(trace.run_ids) == (2 if restarts else 1)


def test_model_histories_use_the_dive_run_ids():
    trace = play("restarted", 1, ModelExecutor())
    assert trace.run_ids == (NOW.decode(), ZERO.decode())
    assert reading_line(trace) == "sweep: run_id 0000…0000 · lease_epoch 3f2c…0812 → exempt = true"


def test_a_model_history_takes_no_wall_time_and_a_live_one_waits_out_the_lease(live):
    model_trace = play("stalled", 1, ModelExecutor())
    claim, sweep = model_trace.steps[1], model_trace.steps[-1]
    assert sweep.at_ms - claim.at_ms == 251
    live_trace = play("stalled", 1, live)
    deadline = live_trace.steps[1].reply[2]
    assert live_trace.steps[-1].at_ms > deadline


def test_compare_marks_a_difference():
    counted = play("stalled", 1, ModelExecutor())
    exempt = play("restarted", 1, ModelExecutor())
    rows = compare(counted, play("stalled", 2, ModelExecutor()))
    assert rows[-1] == (OUTCOME, False, "counted/dead vs counted/recovered")
    assert len(rows) == len(counted.steps) + 1, "one row per step, then the reading and outcome"
    # Traces of different lengths: no step lines up with another.
    with pytest.raises(ValueError, match=r"zip\(\) argument 2 is (shorter|longer)"):
        compare(counted, exempt)


def test_the_verdict_is_the_labs_reading_of_the_stamp_and_run_id_not_a_reply(live):
    """The module replies with ids only; the trace's verdict is the rule applied to the stamp
    the row held before the sweep and the run_id of the process that swept."""
    trace = play("restarted", 2, live)
    assert trace.steps[-1].reply == [[JOB], []], "the reply says recovered, not exempt"
    assert trace.exempt is (trace.steps[-2].row[b"lease_epoch"] != trace.sweep_run_id.encode())
    assert b"stalled" not in trace.steps[-1].row, "the row is the module's own evidence"


def test_progress_is_told_each_step_before_it_runs():
    seen = []
    play("extended", 1, ModelExecutor(), progress=lambda i, n, action: seen.append((i, n, action)))
    assert seen == [(0, 6, "add"), (1, 6, "claim"), (2, 6, "restart"), (3, 6, "extend"),
                    (4, 6, "expire"), (5, 6, "sweep")]


def test_short_keeps_four_characters_each_side():
    assert short(NOW) == "3f2c…0812"
    assert short(None) == "(none)"
    assert JOB == b"job-1"


def test_the_four_histories_extend_with_the_attempt_of_their_one_claim():
    trace = play("extended", 1, ModelExecutor())
    extend = next(s for s in trace.steps if s.action == "extend")
    assert extend.call == "EMQ.EXTEND attempt 1, lease 250 ms"
    assert extend.reply == 1


@pytest.mark.parametrize("extension", ["extend", "scripted_extend"])
def test_an_extension_after_a_second_claim_uses_that_claims_attempt(executor, extension):
    history = Story("again", "claimed twice", ("add", "claim", "expire", "sweep", "claim",
                                                 extension, "expire", "sweep"), "")
    trace = play(history, 3, executor)
    step = next(s for s in trace.steps if s.action == extension)
    assert "attempt 2," in step.call
    assert step.reply == 1
    assert trace.steps[-1].row[b"stalled"] == b"2", "the last sweep read the second lease"


def test_a_history_with_two_leases_reports_the_last_sweep():
    history = Story("again", "claimed twice", ("add", "claim", "expire", "sweep", "claim",
                                                 "restart", "expire", "sweep"), "")
    trace = play(history, 2, ModelExecutor())
    assert trace.steps[3].reply == [[JOB], []]
    assert trace.steps[3].row[b"stalled"] == b"1"
    assert trace.exempt
    assert trace.outcome == "recovered"
    assert trace.steps[-1].row[b"stalled"] == b"1"


@pytest.mark.parametrize("extension", ["extend", "scripted_extend"])
def test_a_lease_that_ran_out_unswept_still_extends_so_a_slow_restart_changes_no_verdict(
        executor, extension):
    """Live is the id in active, state active and the attempt: neither EMQ.EXTEND nor extend2
    checks the deadline. So a lease that runs out while the server restarts is extended after
    it as one that did not, and 04's histories reach the same verdict either way."""
    history = Story("late", "extended after it ran out",
                      ("add", "claim", "expire", "restart", extension, "expire", "sweep"), "")
    trace = play(history, 1, executor)
    step = next(s for s in trace.steps if s.action == extension)
    assert step.reply == 1
    assert trace.exempt is (extension == "scripted_extend")


def test_a_live_history_reads_only_its_own_queue_s_keys(lab, live, queue):
    for other in range(100):  # the rest of a shared server, which a history must not read
        lab.client.hset(f"{{someone-else}}:job:{other}", "state", "active")
    lab.client.config_resetstat()
    play("stalled", 2, live, queue)
    sent = {name.removeprefix("cmdstat_").upper(): fields["calls"]
            for name, fields in lab.client.info("commandstats").items()}
    assert sent["SCAN"] == 1, "one SCAN MATCH the queue's prefix: clear"
    assert sent["TYPE"] == 1, "the add script's own check of pending, and no other"
    assert sent["HGETALL"] == len(HISTORIES["stalled"].steps)  # the row after each step
    assert lab.client.hlen("{someone-else}:job:7") == 1
