"""Every row of the spec's verb tables and every error case, on the model and on the module.

Each test runs twice through the `executor` fixture: once on the model, once on a real
valkey-server with the module loaded. A refusal must leave the whole dataset as it was.
"""

import pytest

from trafikey_lab import ReplyError
from trafikey_lab.epoch import ZERO

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_INTEGER = "ERR EMQ row field is not an integer"
FAR = 10**9
"""A lease long enough never to run out during a test."""


def refused(executor, text, *args):
    before = executor.dataset()
    with pytest.raises(ReplyError) as caught:
        executor.call(*args)
    assert caught.value.text == text
    assert executor.dataset() == before, "a refusal wrote to the dataset"


def put_row(executor, queue, job, **fields):
    pairs = [part for name, value in fields.items() for part in (name, value)]
    executor.call("HSET", queue.row_key(job), *pairs)


def pend(executor, queue, *jobs, score=0):
    for job in jobs:
        executor.call("ZADD", queue.pending, score, job)


def expired(executor, queue, job, **fields):
    """A job whose lease ran out long ago: in active with a deadline of 1 ms, and its row."""
    executor.call("ZADD", queue.active, 1, job)
    if fields:
        put_row(executor, queue, job, **fields)


def here(executor) -> bytes:
    return executor.run_id.encode()


def members(executor, key):
    _kind, value = executor.dataset().get(key, ("zset", []))
    return [m for m, _ in value]


def score(executor, key, job):
    _, value = executor.dataset().get(key, ("zset", []))
    return dict(value).get(job.encode() if isinstance(job, str) else job)


# -- EMQ.CLAIM ---------------------------------------------------------------------------------


def test_claim_on_empty_pending_replies_nil_and_writes_nothing(executor, queue):
    assert executor.claim(queue, 1000) is None
    assert executor.dataset() == {}


def test_claim_stamps_state_attempts_and_epoch_in_the_row(executor, queue):
    executor.add(queue, "a", b"payload")
    before = executor.now_ms()
    job, attempts, deadline = executor.claim(queue, 5000)
    after = executor.now_ms()
    assert (job, attempts) == (b"a", 1)
    assert before + 5000 <= deadline <= after + 5000
    assert executor.row(queue, "a") == {
        b"state": b"active", b"attempts": b"1", b"payload": b"payload",
        b"lease_epoch": here(executor),
    }
    assert members(executor, queue.pending) == []
    assert score(executor, queue.active, "a") == deadline


def test_claim_takes_lowest_score_then_lowest_id_bytewise(executor, queue):
    for job in ("b", "a", "c"):
        executor.add(queue, job)
    executor.call("ZADD", queue.pending, 5, "a")
    assert [executor.claim(queue, FAR)[0] for _ in range(3)] == [b"b", b"c", b"a"]


def test_claim_counts_attempts_from_the_row(executor, queue):
    put_row(executor, queue, "a", state="pending", attempts="4")
    pend(executor, queue, "a")
    assert executor.claim(queue, FAR)[1] == 5
    assert executor.row(queue, "a")[b"attempts"] == b"5"


def test_claim_treats_a_missing_attempts_field_as_zero(executor, queue):
    put_row(executor, queue, "a", payload="x")
    pend(executor, queue, "a")
    assert executor.claim(queue, FAR)[1] == 1


def test_claim_removes_ghosts_at_the_head_and_claims_the_next(executor, queue):
    pend(executor, queue, "a", "b")
    executor.add(queue, "c")
    assert executor.claim(queue, FAR)[0] == b"c"
    assert members(executor, queue.pending) == []
    assert executor.row(queue, "a") == {}


def test_claim_with_only_ghosts_removes_them_and_replies_nil(executor, queue):
    pend(executor, queue, "a", "b")
    assert executor.claim(queue, FAR) is None
    assert executor.dataset() == {}


def test_claim_of_a_row_of_the_wrong_type_refuses_and_keeps_the_ghosts(executor, queue):
    pend(executor, queue, "a", "b")
    executor.call("ZADD", queue.pending, 1, "c")
    executor.call("SET", queue.row_key("b"), "not a hash")
    refused(executor, WRONGTYPE, "EMQ.CLAIM", queue.pending, queue.active, queue.prefix, FAR)


@pytest.mark.parametrize("attempts", ["x", "-1", "01", "1.5", " 1", str(2**53)])
def test_claim_refuses_a_row_whose_attempts_is_not_a_counter(executor, queue, attempts):
    put_row(executor, queue, "a", attempts=attempts)
    pend(executor, queue, "a")
    refused(executor, NOT_INTEGER, "EMQ.CLAIM", queue.pending, queue.active, queue.prefix, FAR)


@pytest.mark.parametrize("lease", ["0", "-1", "x", "", "1.5", "+5", "01", str(2**64)])
def test_claim_refuses_a_lease_that_is_not_a_positive_integer(executor, queue, lease):
    executor.add(queue, "a")
    refused(executor, "ERR EMQ lease must be a positive integer",
            "EMQ.CLAIM", queue.pending, queue.active, queue.prefix, lease)


def test_claim_refuses_a_deadline_beyond_exact_scores(executor, queue):
    executor.add(queue, "a")
    refused(executor, "ERR EMQ deadline out of range",
            "EMQ.CLAIM", queue.pending, queue.active, queue.prefix, 2**53)


@pytest.mark.parametrize("which", ["pending", "active"])
def test_claim_refuses_a_declared_key_of_the_wrong_type(executor, queue, which):
    if which == "active":
        executor.add(queue, "a")
    executor.call("SET", getattr(queue, which), "x")
    refused(executor, WRONGTYPE, "EMQ.CLAIM", queue.pending, queue.active, queue.prefix, FAR)


@pytest.mark.parametrize("count", [0, 1, 2, 3, 5])
def test_claim_with_the_wrong_number_of_arguments_is_refused(executor, queue, count):
    args = [queue.pending, queue.active, queue.prefix, FAR, "extra"][:count]
    refused(executor, "ERR wrong number of arguments for 'EMQ.CLAIM' command", "EMQ.CLAIM", *args)


# -- EMQ.EXTEND --------------------------------------------------------------------------------


def claimed(executor, queue, job="a", lease=FAR):
    executor.add(queue, job)
    return executor.claim(queue, lease)


def test_extend_of_a_live_lease_moves_the_deadline_and_restamps(executor, queue):
    claimed(executor, queue, lease=10)
    executor.call("HSET", queue.row_key("a"), "lease_epoch", ZERO)
    before = executor.now_ms()
    assert executor.extend(queue, "a", 1, 7000) == 1
    assert before + 7000 <= score(executor, queue.active, "a") <= executor.now_ms() + 7000
    assert executor.row(queue, "a")[b"lease_epoch"] == here(executor)


@pytest.mark.parametrize("spoil", ["not in active", "state pending", "stale attempt", "no row"])
def test_extend_of_a_lease_that_is_not_live_replies_0_and_writes_nothing(executor, queue, spoil):
    claimed(executor, queue)
    attempt = 1
    if spoil == "not in active":
        executor.call("ZREM", queue.active, "a")
    elif spoil == "state pending":
        executor.call("HSET", queue.row_key("a"), "state", "pending")
    elif spoil == "stale attempt":
        attempt = 0
    else:
        executor.call("DEL", queue.row_key("a"))
    before = executor.dataset()
    assert executor.extend(queue, "a", attempt, FAR) == 0
    assert executor.dataset() == before


@pytest.mark.parametrize("attempt", ["-1", "x", "", "1.0", "-0"])
def test_extend_refuses_an_attempt_that_is_not_a_non_negative_integer(executor, queue, attempt):
    claimed(executor, queue)
    refused(executor, "ERR EMQ attempt must be a non-negative integer",
            "EMQ.EXTEND", queue.active, queue.row_key("a"), "a", attempt, FAR)


def test_extend_refuses_a_bad_lease_and_an_out_of_range_deadline(executor, queue):
    claimed(executor, queue)
    refused(executor, "ERR EMQ lease must be a positive integer",
            "EMQ.EXTEND", queue.active, queue.row_key("a"), "a", 1, 0)
    refused(executor, "ERR EMQ deadline out of range",
            "EMQ.EXTEND", queue.active, queue.row_key("a"), "a", 1, 2**53)


def test_extend_refuses_a_row_of_the_wrong_type(executor, queue):
    executor.call("ZADD", queue.active, 1, "a")
    executor.call("SET", queue.row_key("a"), "x")
    refused(executor, WRONGTYPE, "EMQ.EXTEND", queue.active, queue.row_key("a"), "a", 1, FAR)


def test_extend_refuses_a_live_row_whose_attempts_is_not_a_counter(executor, queue):
    claimed(executor, queue)
    executor.call("HSET", queue.row_key("a"), "attempts", "one")
    refused(executor, NOT_INTEGER, "EMQ.EXTEND", queue.active, queue.row_key("a"), "a", 1, FAR)


def test_extend_with_the_wrong_number_of_arguments_is_refused(executor, queue):
    refused(executor, "ERR wrong number of arguments for 'EMQ.EXTEND' command",
            "EMQ.EXTEND", queue.active, queue.row_key("a"), "a", 1)


# -- EMQ.EXTENDS -------------------------------------------------------------------------------


def test_extends_extends_the_live_leases_in_argument_order_under_one_deadline(executor, queue):
    for job in ("a", "b", "c"):
        claimed(executor, queue, job, lease=10)
        executor.call("HSET", queue.row_key(job), "lease_epoch", ZERO)
    extended = executor.extends(queue, 9000, [("c", 1), ("a", 2), ("b", 1), ("a", 1)])
    assert extended == [b"c", b"b", b"a"]
    deadlines = {score(executor, queue.active, job) for job in ("a", "b", "c")}
    assert len(deadlines) == 1
    for job in ("a", "b", "c"):
        assert executor.row(queue, job)[b"lease_epoch"] == here(executor)


def test_extends_with_no_live_lease_replies_empty_and_writes_nothing(executor, queue):
    claimed(executor, queue)
    before = executor.dataset()
    assert executor.extends(queue, FAR, [("a", 7), ("zz", 1)]) == []
    assert executor.dataset() == before


def test_extends_refuses_a_row_of_the_wrong_type_and_extends_none(executor, queue):
    claimed(executor, queue, "a")
    executor.call("SET", queue.row_key("b"), "x")
    refused(executor, WRONGTYPE, "EMQ.EXTENDS", queue.active, FAR,
            "a", queue.row_key("a"), 1, "b", queue.row_key("b"), 1)


def test_extends_refuses_a_bad_attempt_anywhere_in_the_list(executor, queue):
    claimed(executor, queue, "a")
    refused(executor, "ERR EMQ attempt must be a non-negative integer", "EMQ.EXTENDS",
            queue.active, FAR, "a", queue.row_key("a"), 1, "b", queue.row_key("b"), "-3")


@pytest.mark.parametrize("extra", [(), ("a",), ("a", "row")])
def test_extends_with_a_partial_triple_is_an_arity_error(executor, queue, extra):
    args = [queue.active, FAR, "z", queue.row_key("z"), 1, *extra] if extra else [queue.active, FAR]
    refused(executor, "ERR wrong number of arguments for 'EMQ.EXTENDS' command",
            "EMQ.EXTENDS", *args)


# -- EMQ.STALLED.CHECK -------------------------------------------------------------------------


def sweep_call(queue, max_stalled=3, *option):
    return ("EMQ.STALLED.CHECK", queue.active, queue.pending, queue.dead, queue.prefix,
            max_stalled, *option)


def test_sweep_removes_a_ghost_from_active_and_lists_it_nowhere(executor, queue):
    expired(executor, queue, "g")
    assert executor.sweep(queue, 3) == [[], []]
    assert executor.dataset() == {}


def test_sweep_refuses_whole_when_a_row_is_not_a_hash(executor, queue):
    expired(executor, queue, "g")
    expired(executor, queue, "a", state="active", lease_epoch=here(executor))
    executor.call("ZADD", queue.active, 2, "s")
    executor.call("SET", queue.row_key("s"), "x")
    refused(executor, WRONGTYPE, *sweep_call(queue))


def test_sweep_leaves_a_lane_row_alone(executor, queue):
    expired(executor, queue, "l", state="active", group="g1", lease_epoch=here(executor))
    before = executor.dataset()
    assert executor.sweep(queue, 1) == [[], []]
    assert executor.dataset() == before


@pytest.mark.parametrize("stamp", ["missing", "forty 0s", "empty"])
def test_sweep_recovers_a_foreign_lease_uncounted(executor, queue, stamp):
    fields = {"state": "active", "attempts": "1"}
    if stamp != "missing":
        fields["lease_epoch"] = ZERO if stamp == "forty 0s" else ""
    expired(executor, queue, "a", **fields)
    assert executor.sweep(queue, 1) == [[b"a"], []]
    row = executor.row(queue, "a")
    assert row[b"state"] == b"pending"
    assert b"stalled" not in row
    assert members(executor, queue.active) == []
    assert score(executor, queue.pending, "a") == 0


@pytest.mark.parametrize("stalled", ["x", "-1", "1.5", "", str(2**53)])
def test_sweep_refuses_whole_when_stalled_is_not_a_counter(executor, queue, stalled):
    expired(executor, queue, "a", state="active", lease_epoch=here(executor), stalled=stalled)
    refused(executor, NOT_INTEGER, *sweep_call(queue))


def test_sweep_counts_a_lease_of_this_process_and_recovers_it_under_budget(executor, queue):
    expired(executor, queue, "a", state="active", lease_epoch=here(executor), stalled="1")
    assert executor.sweep(queue, 3) == [[b"a"], []]
    assert executor.row(queue, "a")[b"stalled"] == b"2"
    assert executor.row(queue, "a")[b"state"] == b"pending"
    assert score(executor, queue.pending, "a") == 0


def test_sweep_dead_letters_a_counted_lease_that_spends_the_budget(executor, queue):
    expired(executor, queue, "a", state="active", lease_epoch=here(executor), stalled="2")
    before = executor.now_ms()
    assert executor.sweep(queue, 3) == [[], [b"a"]]
    row = executor.row(queue, "a")
    assert (row[b"state"], row[b"stalled"]) == (b"dead", b"3")
    assert before <= score(executor, queue.dead, "a") <= executor.now_ms()
    assert members(executor, queue.active) == []


def test_sweep_with_max_stalled_1_dead_letters_the_first_counted_stall(executor, queue):
    expired(executor, queue, "a", state="active", lease_epoch=here(executor))
    assert executor.sweep(queue, 1) == [[], [b"a"]]
    assert executor.row(queue, "a")[b"stalled"] == b"1"


def test_sweep_lists_in_deadline_order_and_skips_leases_not_yet_expired(executor, queue):
    stamp = here(executor)
    for job, deadline in (("c", 3), ("a", 5), ("b", 4)):
        executor.call("ZADD", queue.active, deadline, job)
        put_row(executor, queue, job, state="active", lease_epoch=stamp)
    executor.call("ZADD", queue.active, executor.now_ms() + FAR, "later")
    put_row(executor, queue, "later", state="active", lease_epoch=stamp)
    assert executor.sweep(queue, 5) == [[b"c", b"b", b"a"], []]
    assert members(executor, queue.active) == [b"later"]


LADDER = 200
"""Rungs of the boundary ladder, one per millisecond: the time a sweep may take to arrive."""


def test_sweep_takes_a_deadline_equal_to_its_now_and_leaves_one_a_millisecond_later(
        executor, queue):
    """The sweep reads one now, selects deadline <= now and scores the dead with that now, so a
    dead-lettered member's score says which now the sweep used. Every rung of a ladder of
    leases of this process, one deadline per millisecond from the clock read just before the
    sweep, dies when swept (max_stalled 1). Whatever millisecond the sweep lands on, the rung
    on that millisecond must be taken and the one on the next left. No timing is assumed: a
    sweep that lands beyond the ladder (a stalled machine) is told apart and tried again."""
    rungs = [b"rung-%03d" % i for i in range(LADDER)]
    for job in rungs:
        put_row(executor, queue, job, state="active", lease_epoch=here(executor))
    for _ in range(5):
        start = executor.now_ms()
        deadlines = {job: start + i for i, job in enumerate(rungs)}
        executor.call("ZADD", queue.active, *[p for job in rungs for p in (deadlines[job], job)])
        recovered, dead = executor.sweep(queue, 1)
        assert recovered == []
        assert dead, "no rung was swept, not even the one at the clock read before"
        dead_scores = {score(executor, queue.dead, job) for job in dead}
        assert len(dead_scores) == 1, f"one sweep scored its dead with several nows: {dead_scores}"
        now = int(dead_scores.pop())
        if now - start < LADDER - 1:
            break
        for job in rungs:
            put_row(executor, queue, job, state="active")
        executor.call("DEL", queue.dead)
    else:
        pytest.fail(f"five sweeps in a row came over {LADDER} ms after the clock was read")
    assert dead == [job for job in rungs if deadlines[job] <= now]
    assert members(executor, queue.active) == [job for job in rungs if deadlines[job] > now]
    on_now = rungs[now - start]
    assert deadlines[on_now] == now
    assert on_now in dead
    assert deadlines[rungs[now - start + 1]] == now + 1
    assert rungs[now - start + 1] not in dead


def test_sweep_limit_takes_the_earliest_deadlines_only(executor, queue):
    for job, deadline in (("a", 3), ("b", 1), ("c", 2)):
        expired(executor, queue, job, state="active")
        executor.call("ZADD", queue.active, deadline, job)
    assert executor.sweep(queue, 5, limit=2) == [[b"b", b"c"], []]
    assert members(executor, queue.active) == [b"a"]


@pytest.mark.parametrize(("option", "text"), [
    (("LIMIT", 0), "ERR EMQ limit must be a positive integer"),
    (("limit", "x"), "ERR EMQ limit must be a positive integer"),
    (("COUNT", 5), "ERR EMQ syntax error"),
])
def test_sweep_refuses_a_bad_option(executor, queue, option, text):
    expired(executor, queue, "a", state="active")
    refused(executor, text, *sweep_call(queue, 3, *option))


@pytest.mark.parametrize("max_stalled", ["0", "-2", "x", "2.0"])
def test_sweep_refuses_a_max_stalled_that_is_not_a_positive_integer(executor, queue, max_stalled):
    expired(executor, queue, "a", state="active")
    refused(executor, "ERR EMQ max_stalled must be a positive integer",
            *sweep_call(queue, max_stalled))


@pytest.mark.parametrize("which", ["active", "pending", "dead"])
def test_sweep_refuses_a_declared_key_of_the_wrong_type(executor, queue, which):
    if which != "active":
        expired(executor, queue, "a", state="active")
    executor.call("SET", getattr(queue, which), "x")
    refused(executor, WRONGTYPE, *sweep_call(queue))


@pytest.mark.parametrize("cut", [1, 2, 6])
def test_sweep_with_the_wrong_number_of_arguments_is_refused(executor, queue, cut):
    args = list(sweep_call(queue, 3, "LIMIT", 5))
    args = args[:cut] if cut != 6 else args[:7]
    refused(executor, "ERR wrong number of arguments for 'EMQ.STALLED.CHECK' command", *args)


def test_sweep_over_one_member_of_each_kind(executor, queue):
    stamp = here(executor)
    expired(executor, queue, "ghost")
    expired(executor, queue, "lane", state="active", group="g", lease_epoch=stamp)
    expired(executor, queue, "exempt", state="active", lease_epoch=ZERO)
    expired(executor, queue, "counted", state="active", lease_epoch=stamp)
    expired(executor, queue, "dead", state="active", lease_epoch=stamp, stalled="2")
    assert executor.sweep(queue, 3) == [[b"counted", b"exempt"], [b"dead"]]
    assert members(executor, queue.active) == [b"lane"]
    assert b"stalled" not in executor.row(queue, "exempt")
    assert executor.row(queue, "counted")[b"stalled"] == b"1"


# -- the scripted executor ---------------------------------------------------------------------


def test_scripted_claim_and_extend_write_no_stamp(executor, queue):
    executor.add(queue, "a", b"p")
    job, attempts, _ = executor.scripted_claim(queue, FAR)
    assert (job, attempts) == (b"a", 1)
    assert executor.scripted_extend(queue, "a", 1, FAR) == 1
    assert executor.row(queue, "a") == {b"state": b"active", b"attempts": b"1", b"payload": b"p"}


def test_add_refuses_an_id_whose_row_exists(executor, queue):
    executor.add(queue, "a")
    before = executor.dataset()
    with pytest.raises(ReplyError) as caught:
        executor.add(queue, "a")
    assert caught.value.text == "ERR EMQ job already exists"
    assert executor.dataset() == before
