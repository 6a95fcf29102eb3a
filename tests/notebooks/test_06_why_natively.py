"""Notebook 06's library: the run_id race a caller-supplied run_id loses, and the checker of the
exercise, held to a catalogue of wrong sweeps it must reject and right ones it must accept."""

import pytest

from trafikey_lab import LiveExecutor, Queue, choose_server
from trafikey_lab.course import why_natively
from trafikey_lab.course.why_natively import RULES, check_sweep_survives_restart, run_lua
from trafikey_lab.live import scripted
from trafikey_lab.live.scripted import ScriptedPeer

QUEUE = Queue("{natively}")


@pytest.fixture
def live(lab):
    lab.client.flushall()
    return LiveExecutor(lab)


def where(live, job=b"job-1"):
    """The facts a sweep leaves: the sorted sets that hold the job, its state and stalled."""
    sets = tuple(name for name, key in (("active", QUEUE.active), ("pending", QUEUE.pending),
                                        ("dead", QUEUE.dead))
                 if live.client.zscore(key, job) is not None)
    row = live.row(QUEUE, job)
    return sets, row.get(b"state"), row.get(b"stalled")


def test_the_race_harms_a_healthy_workers_lease_that_ran_out_only_across_the_restart(live):
    race = why_natively.RunIdRace(live, QUEUE, max_stalled=1)
    race.grant()
    process_a = live.run_id
    race.read_run_id()
    assert race.client_run_id == process_a
    # The lease is live when the server goes away: it is not a stall under process 1.
    assert live.client.zscore(QUEUE.active, "job-1") > live.now_ms()
    race.restart()
    assert live.run_id != process_a
    assert live.client.zscore(QUEUE.active, "job-1") < live.now_ms()
    assert live.row(QUEUE, b"job-1")[b"lease_epoch"].decode() == process_a
    assert race.stamp() == "process 1"
    outcome = race.sweep_with_client_run_id()
    assert where(live) == (("dead",), b"dead", b"1")
    # What the client can name: the process it swept on, the verdict, the stamp, its argument.
    assert outcome.startswith("stalled2 with the client's run_id on process 2: job-1 dead-lettered")
    assert "stamp: process 1" in outcome
    assert "process 1, the run_id the client passed" in outcome


def test_on_a_lease_whose_worker_stalled_before_the_restart_the_race_counts_a_real_stall(live):
    race = why_natively.RunIdRace(live, QUEUE, max_stalled=1)
    race.grant_stalled()
    race.read_run_id()
    assert live.client.zscore(QUEUE.active, "job-1") < live.now_ms()
    process_a = live.run_id
    race.restart()
    assert live.run_id != process_a
    race.sweep_with_client_run_id()
    assert where(live) == (("dead",), b"dead", b"1")
    # The verb forgives the same stall: its stamp names a process that is gone.
    race.grant_stalled()
    race.read_run_id()
    race.restart()
    race.sweep_natively()
    assert where(live) == (("pending",), b"pending", None)


@pytest.mark.parametrize(("sweep", "who"), [("sweep_reading_info", "stalled2_info"),
                                            ("sweep_natively", "EMQ.STALLED.CHECK")])
def test_a_sweep_that_takes_the_running_processs_run_id_exempts_the_restart(live, sweep, who):
    race = why_natively.RunIdRace(live, QUEUE, max_stalled=1)
    race.grant()
    race.read_run_id()
    race.restart()
    outcome = getattr(race, sweep)()
    assert where(live) == (("pending",), b"pending", None)
    assert outcome.startswith(f"{who} on process 2: job-1 recovered")
    # The value the script or the verb compared with is not the client's to see: the outcome
    # names no process as what the stamp was compared with.
    assert "compared with: process" not in outcome


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
    client.hset(queue.row_key("job-1"), "state", "pending")


def row_set_pending_in_lua(client, queue):
    run_lua(client, "return redis.call('HSET', KEYS[4] .. 'job-1', 'state', 'pending')",
            keys(queue), [1])


def exempt_outcome_written_by_hand(client, queue):
    client.zrem(queue.active, "job-1")
    client.zadd(queue.pending, {"job-1": 0})
    client.hset(queue.row_key("job-1"), "state", "pending")


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


def by_hand(deadlines=True, lanes=True, counts=True, exempt_keeps_stalled=True, ghosts=True):
    """A sweep written by hand in one script that reads INFO itself, so that every restart
    finds the job exempt and the one lease the stored attempt looks at comes out right. Each
    flag set False drops one of the verb's rules: the checker's other rows must catch each."""
    members = ("redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE')" if deadlines
               else "redis.call('ZRANGE', KEYS[1], 0, -1)")
    body = f"""
        local run_id = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        for _, id in ipairs({members}) do
          local row = KEYS[4] .. id
          local f = redis.call('HMGET', row, 'group', 'lease_epoch', 'stalled')
          if {'true' if ghosts else 'false'} and redis.call('EXISTS', row) == 0 then
            redis.call('ZREM', KEYS[1], id)
          elseif {'true' if lanes else 'false'} and f[1] then
          elseif f[2] == run_id then
            local stalled = {"tonumber(f[3] or '0') + 1" if counts else '1'}
            redis.call('ZREM', KEYS[1], id)
            redis.call('ZADD', KEYS[3], now, id)
            redis.call('HSET', row, 'state', 'dead', 'stalled', stalled)
          else
            redis.call('ZREM', KEYS[1], id)
            redis.call('ZADD', KEYS[2], 0, id)
            redis.call('HSET', row, 'state', 'pending')
            {'' if exempt_keeps_stalled else "redis.call('HDEL', row, 'stalled')"}
          end
        end
    """

    def sweep(client, queue):
        run_lua(client, body, keys(queue), [1])

    sweep.__name__ = "by_hand_" + "_".join(
        name for name, kept in (("ignoring_deadlines", deadlines), ("ignoring_lanes", lanes),
                                ("setting_stalled_to_1", counts),
                                ("clearing_an_exempt_rows_stalled", exempt_keeps_stalled),
                                ("giving_a_ghost_a_row", ghosts)) if not kept)
    return sweep


EVERY_MEMBER_BY_ITS_STAMP = by_hand(deadlines=False, lanes=False, counts=False,
                                    exempt_keeps_stalled=False, ghosts=False)
EVERY_MEMBER_BY_ITS_STAMP.__name__ = "every_member_of_active_moved_by_its_stamp_alone"


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
    (EVERY_MEMBER_BY_ITS_STAMP, "a lease this process granted whose deadline has not passed "
                                "(job-running) ended in dead, its row saying state dead, stalled "
                                "1; the verb leaves it in active, its row saying state active, "
                                "stalled (none): a sweep takes only the members of active whose "
                                "deadline has passed"),
    (by_hand(deadlines=False), "(job-running) ended in dead"),
    (by_hand(lanes=False), "a lane row (its row has a group field), run out (job-lane) ended in "
                           "dead, its row saying state dead, stalled 1; the verb leaves it in "
                           "active, its row saying state active, stalled (none): the sweep leaves "
                           "a lane row where it is"),
    (by_hand(counts=False), "(job-counted-before) ended in dead, its row saying state dead, "
                            "stalled 1; the verb leaves it in dead, its row saying state dead, "
                            "stalled 3: a counted stall adds one"),
    (by_hand(exempt_keeps_stalled=False), "(job-exempt) ended in pending, its row saying state "
                                          "pending, stalled (none); the verb leaves it in "
                                          "pending, its row saying state pending, stalled 1"),
    (by_hand(ghosts=False), "a member of active with no row (a ghost), run out (job-ghost) ended "
                            "in pending, its row saying state pending, stalled (none); the verb "
                            "leaves it in none of the sorted sets, with no row"),
]

GIVES_THE_ANSWER_AWAY = ("stalled2_info", "sweep_reading_info", "redis.call", "string.match")


@pytest.mark.parametrize(("sweep", "says"), WRONG_SWEEPS, ids=[s.__name__ for s, _ in WRONG_SWEEPS])
def test_the_restart_checker_rejects_each_wrong_sweep_saying_what_went_wrong(live, sweep, says):
    feedback = check_sweep_survives_restart(sweep, live=live, queue=QUEUE)
    assert not feedback.right
    text = repr(feedback)
    assert text.startswith("NOT YET: ")
    assert says in text
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
                the_courses_stalled2_info, a_registered_script_of_its_own, an_unused_info_first,
                by_hand()]


@pytest.mark.parametrize("sweep", RIGHT_SWEEPS, ids=[s.__name__ for s in RIGHT_SWEEPS])
def test_the_restart_checker_accepts_each_script_that_reads_the_run_id_itself(live, sweep):
    feedback = check_sweep_survives_restart(sweep, live=live, queue=QUEUE)
    assert feedback.right, repr(feedback)
    assert "sent the job back to pending uncounted every time" in repr(feedback)
    assert "left the 5 other rows of the queue as the verb leaves them" in repr(feedback)
    assert live.dataset() == {}


def test_the_restart_checker_says_what_it_saw_not_why_it_happened(live):
    """The right answer's message reports what the runs showed; it does not claim to know
    which run_id the sweep compared with, which no run observes."""
    text = repr(check_sweep_survives_restart(reads_info_in_the_script, live=live, queue=QUEUE))
    assert "compared the stamp with" not in text


def test_a_counted_restart_is_told_without_pointing_at_the_fix(live):
    """The stored attempt's feedback says what went wrong, not where the run_id should come
    from: that is the exercise (and its hint)."""
    text = repr(check_sweep_survives_restart(stored_attempt, live=live, queue=QUEUE))
    assert "should have been exempt" in text
    assert not any(word in text for word in ("read before", "had gone", "inside", "INFO itself"))


def test_the_control_rows_are_what_the_model_decides_for_them(live):
    """The control's expected rows come from the verb's own run; what the checker's messages
    say the verb does with each is what the verb did, and what the model decides for it."""
    expected = why_natively._verbs_control(live, QUEUE)
    live.clear(QUEUE)
    assert expected[b"job-running"].sets == ("active",)
    assert expected[b"job-running"].scores == (why_natively.FAR_DEADLINE_MS, None)
    assert expected[b"job-lane"].sets == ("active",)
    assert expected[b"job-lane"].row[b"state"] == b"active"
    assert expected[b"job-counted-before"].sets == ("dead",)
    assert expected[b"job-counted-before"].row[b"stalled"] == b"3"
    assert expected[b"job-exempt"].sets == ("pending",)
    assert expected[b"job-exempt"].row[b"stalled"] == b"1"
    assert expected[b"job-ghost"] == why_natively._Member((), (None, None), {})
    from trafikey_lab.sweep import Seen, Verdict, decide_member

    this, other = b"a" * 40, b"0" * 40
    assert decide_member(this, 1, Seen("hash", None, this, b"2")) == Verdict("dead", 3)
    assert decide_member(this, 1, Seen("hash", b"lane-a", this, None)) == Verdict("lane")
    assert decide_member(this, 1, Seen("hash", None, other, b"1")) == Verdict("exempt")
    assert decide_member(this, 1, Seen("none")) == Verdict("ghost")


def test_the_restart_checker_restarts_before_every_command_a_right_sweep_sends(live):
    feedback = check_sweep_survives_restart(an_unused_info_first, live=live, queue=QUEUE)
    assert "before each of the 2 commands it sends, in turn" in repr(feedback)


def test_the_restart_checker_turns_an_attempt_that_raises_or_is_not_a_function_into_a_finding(
        live):
    def broken(client, queue):
        raise KeyError("run_id")

    feedback = check_sweep_survives_restart(broken, live=live, queue=QUEUE)
    assert not feedback.right
    assert "your sweep raised KeyError" in repr(feedback)
    feedback = check_sweep_survives_restart("EMQ.STALLED.CHECK", live=live, queue=QUEUE)
    assert not feedback.right
    assert "define it as a function" in repr(feedback)


def test_the_restart_checker_does_not_restart_a_server_the_lab_did_not_start():

    external = LiveExecutor(choose_server(url="redis://127.0.0.1:1"))
    feedback = check_sweep_survives_restart(reads_info_in_the_script, live=external, queue=QUEUE)
    assert not feedback.right
    assert "Unset TRAFIKEY_VALKEY_URL" in repr(feedback)


def test_the_restart_checker_does_not_call_a_long_sweep_right_on_the_restarts_it_could_try(
        live, monkeypatch):
    monkeypatch.setattr(why_natively, "MAX_RESTARTS", 2)

    def three_pings_then_the_right_script(client, queue):
        for _ in range(3):
            client.ping()
        reads_info_in_the_script(client, queue)

    feedback = check_sweep_survives_restart(three_pings_then_the_right_script, live=live,
                                            queue=QUEUE)
    assert not feedback.right
    assert "sends more than 2 commands" in repr(feedback)
