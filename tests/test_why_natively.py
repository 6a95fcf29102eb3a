"""Notebook 06's library: the run_id race a caller-supplied run_id loses, and the checker of the
exercise, held to a catalogue of wrong sweeps it must reject and right ones it must accept."""

import pytest

from trafikey_lab import LiveExecutor, Queue, scripted, why_natively
from trafikey_lab.scripted import ScriptedPeer
from trafikey_lab.why_natively import RULES, check_sweep_survives_restart, run_lua

QUEUE = Queue("{natively}")


@pytest.fixture
def live(lab):
    lab.client.flushall()
    return LiveExecutor(lab)


def test_a_sweep_given_the_run_id_read_before_a_restart_counts_the_restart_as_a_stall(live):
    race = why_natively.RunIdRace(live, QUEUE, max_stalled=1)
    assert race.grant().endswith("claimed by process A; its lease has run out")
    assert race.read_run_id().endswith("process A")
    assert race.restart().endswith("now process B is running")
    outcome = race.sweep_with_client_run_id()
    assert "job-1 dead-lettered" in outcome and "compared with: process A" in outcome


@pytest.mark.parametrize("sweep", ["sweep_reading_info", "sweep_natively"])
def test_a_sweep_that_takes_the_running_processs_run_id_exempts_the_restart(live, sweep):
    race = why_natively.RunIdRace(live, QUEUE, max_stalled=1)
    race.grant()
    race.read_run_id()
    race.restart()
    outcome = getattr(race, sweep)()
    assert "job-1 recovered, state pending, stalled absent" in outcome
    assert "compared with: process B" in outcome


# -- the exercise's catalogue ---------------------------------------------------------------

def keys(queue):
    return [queue.active, queue.pending, queue.dead, queue.prefix]


READS_INFO = """
local run_id = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
return stalled_sweep(KEYS, run_id, {ARGV[1]})
"""

GIVEN_RUN_ID = "return stalled_sweep(KEYS, ARGV[1], {ARGV[2]})"


def stored_attempt(client, queue):
    """The notebook's own attempt: INFO in the client, the run_id passed to the script."""
    run_id = client.info("server")["run_id"]
    run_lua(client, GIVEN_RUN_ID, keys(queue), [run_id, 1])


def info_read_twice(client, queue):
    client.info("server")
    ScriptedPeer(client).sweep(queue, client.info("server")["run_id"], 1)


def foreign_run_id_in_lua(client, queue):
    run_lua(client, "return stalled_sweep(KEYS, '" + "0" * 40 + "', {ARGV[1]})", keys(queue), [1])


def foreign_run_id_passed(client, queue):
    ScriptedPeer(client).sweep(queue, "0" * 40, 1)


def row_set_pending_by_hand(client, queue):
    client.hset(queue.row("job-1"), "state", "pending")


def row_set_pending_in_lua(client, queue):
    run_lua(client, "return redis.call('HSET', KEYS[4] .. 'job-1', 'state', 'pending')",
            keys(queue), [1])


def exempt_outcome_written_by_hand(client, queue):
    client.zrem(queue.active, "job-1")
    client.zadd(queue.pending, {"job-1": 0})
    client.hset(queue.row("job-1"), "state", "pending")


def the_verb(client, queue):
    scripted.native_sweep(client, queue, 1)


def the_verb_inside_a_script(client, queue):
    run_lua(client, "return redis.call('EMQ.STALLED.CHECK', KEYS[1], KEYS[2], KEYS[3], KEYS[4], "
                    "ARGV[1])", keys(queue), [1])


def no_sweep(client, queue):
    client.ping()


def max_stalled_2(client, queue):
    run_lua(client, READS_INFO, keys(queue), [2])


def pattern_that_takes_the_rest_of_info(client, queue):
    run_lua(client, READS_INFO.replace("%x+", ".+"), keys(queue), [1])


def client_side_sweep_with_run_id_read_first(client, queue):
    run_id = client.info("server")["run_id"].encode()
    scripted.pipelined_sweep(client, queue, run_id, 1)


WRONG_SWEEPS = [
    (stored_attempt, "between your sweep's command 1 (INFO) and command 2 (EVAL) was counted "
                     "as a stall"),
    (info_read_twice, "between your sweep's command 2 (INFO) and command 3 (EVALSHA) was "
                      "counted as a stall"),
    (foreign_run_id_in_lua, "sent the job back to pending uncounted, as if the server had "
                            "restarted"),
    (foreign_run_id_passed, "sent the job back to pending uncounted, as if the server had "
                            "restarted"),
    (row_set_pending_by_hand, "the job is in active, its row says state pending"),
    (row_set_pending_in_lua, "the job is in active, its row says state pending"),
    (exempt_outcome_written_by_hand, "sent the job back to pending uncounted"),
    (the_verb, "calls the module's verb"),
    (the_verb_inside_a_script, "calls the module's verb"),
    (no_sweep, "nothing swept the job"),
    (max_stalled_2, "counted the stall but kept the job (stalled 1"),
    (pattern_that_takes_the_rest_of_info, "raised ResponseError: EMQ run_id must be 40 characters"),
    (client_side_sweep_with_run_id_read_first, "between your sweep's command 1 (INFO) and "
                                               "command 2 (TIME) was counted as a stall"),
]

GIVES_THE_ANSWER_AWAY = ("stalled2_info", "sweep_reading_info", "redis.call", "string.match")


@pytest.mark.parametrize("sweep,says", WRONG_SWEEPS, ids=[s.__name__ for s, _ in WRONG_SWEEPS])
def test_the_restart_checker_rejects_each_wrong_sweep_saying_what_went_wrong(live, sweep, says):
    feedback = check_sweep_survives_restart(sweep, live, QUEUE)
    assert not feedback.right
    text = repr(feedback)
    assert text.startswith("NOT YET: ") and says in text
    assert not any(hint in text for hint in GIVES_THE_ANSWER_AWAY), text
    assert live.dataset() == {}, "the checker leaves its queue empty"


def reads_info_in_the_script(client, queue):
    run_lua(client, READS_INFO, keys(queue), [1])


def reads_every_info_section_with_another_pattern(client, queue):
    run_lua(client, """
        local info = redis.call('INFO')
        return stalled_sweep(KEYS, info:match('run_id:(%w+)'), {ARGV[1]})
    """, keys(queue), [1])


def the_courses_stalled2_info(client, queue):
    ScriptedPeer(client).sweep_reading_info(queue, 1)


def a_registered_script_of_its_own(client, queue):
    client.register_script(RULES + READS_INFO)(keys=keys(queue), args=[1])


def an_unused_info_first(client, queue):
    client.info("server")
    run_lua(client, READS_INFO, keys(queue), [1])


RIGHT_SWEEPS = [reads_info_in_the_script, reads_every_info_section_with_another_pattern,
                the_courses_stalled2_info, a_registered_script_of_its_own, an_unused_info_first]


@pytest.mark.parametrize("sweep", RIGHT_SWEEPS, ids=[s.__name__ for s in RIGHT_SWEEPS])
def test_the_restart_checker_accepts_each_script_that_reads_the_run_id_itself(live, sweep):
    feedback = check_sweep_survives_restart(sweep, live, QUEUE)
    assert feedback.right, repr(feedback)
    assert "sent the job back to pending uncounted" in repr(feedback)
    assert live.dataset() == {}


def test_the_restart_checker_restarts_before_every_command_a_right_sweep_sends(live):
    feedback = check_sweep_survives_restart(an_unused_info_first, live, QUEUE)
    assert "before each of the 2 commands it sends, in turn" in repr(feedback)


def test_the_restart_checker_turns_an_attempt_that_raises_or_is_not_a_function_into_a_finding(
        live):
    def broken(client, queue):
        raise KeyError("run_id")

    feedback = check_sweep_survives_restart(broken, live, QUEUE)
    assert not feedback.right and "your sweep raised KeyError" in repr(feedback)
    feedback = check_sweep_survives_restart("EMQ.STALLED.CHECK", live, QUEUE)
    assert not feedback.right and "define it as a function" in repr(feedback)


def test_the_restart_checker_does_not_restart_a_server_the_lab_did_not_start():
    from trafikey_lab.server import LabServer

    external = LiveExecutor(LabServer(url="redis://127.0.0.1:1"))
    feedback = check_sweep_survives_restart(reads_info_in_the_script, external, QUEUE)
    assert not feedback.right and "Unset TRAFIKEY_VALKEY_URL" in repr(feedback)


def test_the_restart_checker_does_not_call_a_long_sweep_right_on_the_restarts_it_could_try(
        live, monkeypatch):
    monkeypatch.setattr(why_natively, "MAX_RESTARTS", 2)

    def three_pings_then_the_right_script(client, queue):
        for _ in range(3):
            client.ping()
        reads_info_in_the_script(client, queue)

    feedback = check_sweep_survives_restart(three_pings_then_the_right_script, live, QUEUE)
    assert not feedback.right and "sends more than 2 commands" in repr(feedback)
