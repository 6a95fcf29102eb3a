"""Every comparison a verb makes, pinned on near-miss values on both executors: one byte off,
a prefix, one byte longer, another case. A comparison loosened to a prefix, a case-insensitive
match or a numeric reading of a field fails here."""

import pytest
from test_verbs import FAR, claimed, expired, here, members, put_row

NEAR_STATES = ["activ", "actives", "Active", "ACTIVE", "activf", " active", "active\x00"]


@pytest.mark.parametrize("state", NEAR_STATES)
def test_extend_takes_only_state_active_to_the_byte(executor, queue, state):
    claimed(executor, queue)
    executor.call("HSET", queue.row_key("a"), "state", state)
    before = executor.dataset()
    assert executor.extend(queue, "a", 1, FAR) == 0
    assert executor.extends(queue, FAR, [("a", 1)]) == []
    assert executor.dataset() == before


@pytest.mark.parametrize("attempt", [0, 2, 11, 10**6])
def test_extend_takes_only_the_attempt_the_row_holds(executor, queue, attempt):
    claimed(executor, queue)
    executor.call("HSET", queue.row_key("a"), "attempts", "1")
    assert executor.extend(queue, "a", attempt, FAR) == 0
    assert executor.extend(queue, "a", 1, FAR) == 1


def test_extend_reads_attempts_10_as_ten_not_as_one_followed_by_a_byte(executor, queue):
    claimed(executor, queue)
    executor.call("HSET", queue.row_key("a"), "attempts", "10")
    assert executor.extend(queue, "a", 1, FAR) == 0
    assert executor.extend(queue, "a", 10, FAR) == 1


@pytest.mark.parametrize("member", ["", "a\x00", "A", "aa"])
def test_extend_takes_only_the_id_that_is_in_active(executor, queue, member):
    claimed(executor, queue)
    before = executor.dataset()
    assert executor.extend(queue, member, 1, FAR) == 0
    assert executor.dataset() == before


def near_stamps(run_id: bytes) -> dict[str, bytes]:
    last = b"0" if run_id[-1:] != b"0" else b"1"
    return {
        "one byte off": run_id[:-1] + last,
        "a prefix": run_id[:-1],
        "one byte longer": run_id + run_id[-1:],
        "upper case": run_id.upper(),
        "empty": b"",
    }


@pytest.mark.parametrize("which", list(near_stamps(b"0" * 40)))
def test_the_sweep_counts_only_its_own_run_id_to_the_byte(executor, queue, which):
    stamp = near_stamps(here(executor))[which]
    expired(executor, queue, "near", state="active", attempts="1", lease_epoch=stamp)
    expired(executor, queue, "same", state="active", attempts="1", lease_epoch=here(executor))
    assert executor.sweep(queue, 1) == [[b"near"], [b"same"]]
    assert b"stalled" not in executor.row(queue, "near")
    assert executor.row(queue, "same")[b"stalled"] == b"1"


@pytest.mark.parametrize("field", ["groups", "Group", "grou", "group "])
def test_only_a_field_named_group_makes_a_lane_row(executor, queue, field):
    expired(executor, queue, "a", state="active", lease_epoch=here(executor), **{field: "g"})
    assert executor.sweep(queue, 1) == [[], [b"a"]]


def test_an_empty_group_field_still_makes_a_lane_row(executor, queue):
    expired(executor, queue, "a", state="active", lease_epoch=here(executor), group="")
    assert executor.sweep(queue, 1) == [[], []]
    assert members(executor, queue.active) == [b"a"]


def test_the_sweep_takes_a_lease_at_its_deadline_and_not_a_millisecond_before(executor, queue):
    """`deadline <= now` decides: both executors compare the score with one now."""
    now = executor.now_ms()
    put_row(executor, queue, "due", state="active", lease_epoch=here(executor))
    put_row(executor, queue, "soon", state="active", lease_epoch=here(executor))
    executor.call("ZADD", queue.active, now, "due")
    executor.call("ZADD", queue.active, now + 60_000, "soon")
    assert executor.sweep(queue, 2) == [[b"due"], []]
    assert members(executor, queue.active) == [b"soon"]


def test_the_model_sweep_is_exact_to_the_millisecond(model, queue):
    put_row(model, queue, "a", state="active", lease_epoch=here(model))
    model.call("ZADD", queue.active, model.now_ms() + 5, "a")
    model.advance(4)
    assert model.sweep(queue, 2) == [[], []]
    model.advance(1)
    assert model.sweep(queue, 2) == [[b"a"], []]


@pytest.mark.parametrize(("stalled", "max_stalled", "outcome"), [
    ("0", 1, "dead"), ("0", 2, "recovered"), ("1", 2, "dead"), ("8", 10, "recovered"),
    ("9", 10, "dead"), ("10", 10, "dead"), ("99", 100, "dead"), ("9", 100, "recovered"),
])
def test_the_budget_is_reached_when_stalled_plus_one_equals_max_stalled(executor, queue, stalled,
                                                                         max_stalled, outcome):
    expired(executor, queue, "a", state="active", lease_epoch=here(executor), stalled=stalled)
    reply = executor.sweep(queue, max_stalled)
    assert reply == ([[b"a"], []] if outcome == "recovered" else [[], [b"a"]])
    assert executor.row(queue, "a")[b"stalled"] == b"%d" % (int(stalled) + 1)
