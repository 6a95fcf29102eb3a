"""The module's counters (INFO trafikey) and the model's, kept by the same rules.

A sweep that runs counts itself and each member it takes by verdict; a refused verb counts one
refusal of that verb and nothing else; a restart starts every counter at zero. The
differential and bad-input suites compare the two on random sequences; these tests pin the
section as an operator reads it and the counts of the course's four histories.
"""

import pytest
import redis

from trafikey_lab import LiveExecutor, ModelExecutor, Queue, ReplyError
from trafikey_lab.model import new_counters
from trafikey_lab.player import play
from trafikey_lab.stories import HISTORIES

QUEUE = Queue("{counted}")
VERDICT_OF = {
    ("stalled", 1): "dead",
    ("stalled", 2): "recovered",
    ("restarted", 1): "exempt",
    ("restarted", 2): "exempt",
    ("extended", 1): "dead",
    ("extended", 2): "recovered",
    ("upgrade", 1): "exempt",
    ("upgrade", 2): "exempt",
}
"""The verdict each history's sweep gives its one job, by the rule of the dive."""


def counted_by(executor, action) -> dict[str, int]:
    """What the counters of the process that ends the action counted during it: all they hold
    when the action restarted the server, what they moved by otherwise."""
    run_id, before = executor.run_id, executor.counters()
    action()
    after = executor.counters()
    if executor.run_id != run_id:
        return after
    return {name: value - before[name] for name, value in after.items()}


def raw_info(server, section: str) -> str:
    """INFO's reply as the server sends it, not as redis-py parses it into a dict."""
    client = redis.Redis(host=server.host, port=server.port, password=server.password)
    client.set_response_callback("INFO", lambda response, **_: response)
    try:
        return client.execute_command("INFO", section).decode()
    finally:
        client.close()


@pytest.mark.parametrize(("key", "max_stalled"), sorted(VERDICT_OF))
def test_each_history_counts_one_sweep_and_its_job_by_verdict_on_model_and_module(
        executor, key, max_stalled):
    counted = counted_by(executor, lambda: play(key, max_stalled, executor, QUEUE))
    expected = new_counters()
    expected["sweeps"] = 1
    expected[f"swept_{VERDICT_OF[key, max_stalled]}"] = 1
    assert counted == expected


def test_the_table_of_verdicts_covers_every_history_at_both_budgets():
    assert set(VERDICT_OF) == {(key, budget) for key in HISTORIES for budget in (1, 2)}


def test_info_trafikey_prints_the_modules_own_section_on_a_fresh_server(servers):
    """The exact text an operator reads after the restarted history on a fresh server: the
    restart forgave the lease, so the new process counts one sweep and one exempt member."""
    server = servers()
    play("restarted", 2, LiveExecutor(server), QUEUE)
    assert raw_info(server, "trafikey") == (
        "# trafikey\r\n"
        "trafikey_sweeps:1\r\n"
        "trafikey_swept_ghost:0\r\n"
        "trafikey_swept_lane:0\r\n"
        "trafikey_swept_exempt:1\r\n"
        "trafikey_swept_recovered:0\r\n"
        "trafikey_swept_dead:0\r\n"
        "trafikey_claim_refusals:0\r\n"
        "trafikey_extend_refusals:0\r\n"
        "trafikey_extends_refusals:0\r\n"
        "trafikey_stalled_check_refusals:0\r\n"
    )
    assert "# trafikey\r\n" in raw_info(server, "modules")
    assert "trafikey_sweeps" not in raw_info(server, "default")


def test_a_sweep_counts_every_member_it_takes_and_none_it_leaves(executor):
    """A ghost, a lane row, a foreign lease, two of this process's (one dead at the budget)
    and a lease not yet due: five members counted, one per verdict, and the sixth not."""
    now = executor.now_ms()
    executor.call("HSET", QUEUE.row_key("lane"), "group", "g")
    executor.call("HSET", QUEUE.row_key("foreign"), "state", "active", "lease_epoch", "f" * 40)
    executor.call("HSET", QUEUE.row_key("ours"), "state", "active", "lease_epoch", executor.run_id)
    executor.call("HSET", QUEUE.row_key("last"), "state", "active", "lease_epoch", executor.run_id,
                  "stalled", 1)
    executor.call("ZADD", QUEUE.active, now - 5, "ghost", now - 4, "lane", now - 3, "foreign",
                  now - 2, "ours", now - 1, "last", now + 60_000, "later")
    counted = counted_by(executor, lambda: executor.sweep(QUEUE, 2))
    assert counted == {**new_counters(), "sweeps": 1, "swept_ghost": 1, "swept_lane": 1,
                       "swept_exempt": 1, "swept_recovered": 1, "swept_dead": 1}


def test_the_model_starts_its_counters_again_at_each_restart():
    model = ModelExecutor()
    model.sweep(QUEUE, 1)
    with pytest.raises(ReplyError, match="max_stalled"):
        model.sweep(QUEUE, 0)
    assert model.counters()["sweeps"] == 1
    assert model.counters()["stalled_check_refusals"] == 1
    model.restart()
    assert model.counters() == new_counters()
