"""Notebook 03's library: the five-member layout, the plan's table and the refusals, on both
executors."""

import pytest
import redis

from trafikey_lab import epoch
from trafikey_lab.questions import ONE_READER as QUESTION
from trafikey_lab.course.one_reader import (
    KINDS,
    MAX_STALLED,
    REFUSALS,
    lay_out,
    member_table,
    plan_rows,
    queue_state,
    rows_for,
    spoil,
    try_sweep,
)
from trafikey_lab.model import decide_row
from trafikey_lab.module.build import c_excerpt
from trafikey_lab.sweep import Need


def test_layout_plants_one_expired_member_of_each_kind_in_deadline_order(executor, queue):
    planted = lay_out(executor, queue)
    assert [p.kind for p in planted] == list(KINDS)
    _, active = executor.dataset()[queue.active]
    assert [member for member, _ in active] == [p.id for p in planted]
    assert all(score < executor.now_ms() for _, score in active)
    assert queue.row_key(b"ghost") not in executor.dataset()
    assert executor.row(queue, b"lane")[b"group"] == b"lane-a"


def test_layout_stamps_counted_rows_with_the_executors_own_run_id_and_the_exempt_one_not(
        executor, queue):
    lay_out(executor, queue)
    current = executor.run_id.encode()
    assert executor.row(queue, b"recovered")[b"lease_epoch"] == current
    assert executor.row(queue, b"dead")[b"lease_epoch"] == current
    assert epoch.exempt(executor.row(queue, b"exempt")[b"lease_epoch"], current)


def test_layout_run_twice_starts_from_an_empty_queue(executor, queue):
    lay_out(executor, queue)
    executor.sweep(queue, MAX_STALLED)
    lay_out(executor, queue)
    assert queue.pending not in executor.dataset()
    assert queue.dead not in executor.dataset()


def test_plan_rows_name_the_reads_in_order_and_where_each_verdict_stopped(model, queue):
    lay_out(model, queue)
    rows = {row[0]: row for row in plan_rows(model.plan_sweep(queue, MAX_STALLED))}
    assert rows["ghost"][1:4] == ("type", "type", "ghost")
    assert rows["lane"][1:4] == ("type → group", "group", "lane")
    assert rows["exempt"][1:4] == ("type → group → lease_epoch", "lease_epoch", "exempt")
    assert rows["recovered"][1:4] == ("type → group → lease_epoch → stalled", "stalled",
                                      "recovered (stalled 1)")
    assert rows["dead"][3] == "dead (stalled 3)"


def test_plan_rows_give_each_verdicts_writes_and_none_for_a_lane(model, queue):
    lay_out(model, queue)
    rows = {row[0]: row[4] for row in plan_rows(model.plan_sweep(queue, MAX_STALLED))}
    assert rows["ghost"] == "ZREM {jobs}:active ghost"
    assert rows["lane"] == "none"
    assert rows["exempt"] == ("ZREM {jobs}:active exempt; ZADD {jobs}:pending 0 exempt; "
                              "HSET {jobs}:job:exempt state pending")
    assert rows["recovered"].endswith("HSET {jobs}:job:recovered state pending stalled 1")
    assert rows["dead"].startswith("ZREM {jobs}:active dead; ZADD {jobs}:dead ")
    assert rows["dead"].endswith("HSET {jobs}:job:dead state dead stalled 3")


def test_planning_writes_nothing(model, queue):
    lay_out(model, queue)
    before = model.dataset()
    model.plan_sweep(queue, MAX_STALLED)
    assert model.dataset() == before


def test_sweep_lists_exempt_among_the_recovered_and_leaves_its_stalled_alone(executor, queue):
    lay_out(executor, queue)
    assert executor.sweep(queue, MAX_STALLED) == [[b"exempt", b"recovered"], [b"dead"]]
    exempt = executor.row(queue, b"exempt")
    assert (exempt[b"state"], exempt[b"stalled"]) == (b"pending", b"2")
    lane = executor.row(queue, b"lane")
    assert lane[b"state"] == b"active" and b"stalled" not in lane


def test_model_and_live_leave_the_same_queue_after_the_sweep(model, live, queue):
    for executor in (model, live):
        lay_out(executor, queue)
        executor.sweep(queue, MAX_STALLED)
    assert queue_state(model, queue) == queue_state(live, queue)
    assert repr(member_table(model, queue)) == repr(member_table(live, queue))


def test_queue_state_hides_clock_readings_and_names_the_current_process(model, queue):
    lay_out(model, queue)
    model.sweep(queue, MAX_STALLED)
    state = queue_state(model, queue)
    assert state["{jobs}:dead"] == [("dead", "<time of death>")]
    assert state["{jobs}:active"] == [("lane", "<deadline>")]
    assert state["{jobs}:job:dead"]["lease_epoch"] == "<this process>"
    assert state["{jobs}:job:exempt"]["lease_epoch"] == "0000…0000"


@pytest.mark.parametrize("how", sorted(REFUSALS))
def test_each_refusal_refuses_the_whole_sweep_and_writes_nothing(executor, queue, how):
    lay_out(executor, queue)
    spoil(executor, queue, how)
    before = executor.dataset()
    reply = try_sweep(executor, queue)
    expected = {"not_integer": "ERR EMQ row field is not an integer",
                "wrongtype": "WRONGTYPE Operation against a key holding the wrong kind of value",
                "pending_wrongtype": "WRONGTYPE Operation against a key holding the wrong kind "
                                     "of value"}
    assert reply == expected[how]
    assert executor.dataset() == before


def test_plan_marks_the_refusing_member_and_that_it_writes_nothing(model, queue):
    lay_out(model, queue)
    spoil(model, queue, "wrongtype")
    rows = {row[0]: row for row in plan_rows(model.plan_sweep(queue, MAX_STALLED))}
    assert rows["wrong"][2:] == ("type", "wrongtype", "none: the whole sweep refuses")


@pytest.mark.parametrize("member", [b"lane", b"exempt"])
def test_a_stalled_field_the_sweep_never_reads_cannot_refuse_it(executor, queue, member):
    lay_out(executor, queue)
    executor.call("HSET", queue.row_key(member), b"stalled", b"banana")
    assert try_sweep(executor, queue) == [[b"exempt", b"recovered"], [b"dead"]]


def test_spoil_names_the_refusals_it_knows(model, queue):
    with pytest.raises(ValueError, match="not_integer"):
        spoil(model, queue, "typo")


def test_foreign_stamp_is_not_the_current_run_id_even_when_that_is_forty_zeros():
    assert rows_for(epoch.ZERO)["exempt"][b"lease_epoch"] == epoch.NOW
    assert rows_for(epoch.NOW)["exempt"][b"lease_epoch"] == epoch.ZERO


def test_a_declared_key_of_the_wrong_type_refuses_before_any_member_is_decided(model, queue):
    lay_out(model, queue)
    spoil(model, queue, "pending_wrongtype")
    assert try_sweep(model, queue).startswith("WRONGTYPE")
    assert model.dataset()[queue.pending] == ("string", b"a string")


# -- 03's diagnostic question ---------------------------------------------------------------------


def test_the_question_has_exactly_one_right_option_and_each_wrong_one_names_a_misconception():
    options = QUESTION.options
    assert sum(option.right for option in options) == 1
    assert all(option.misconception for option in options if not option.right)


def test_the_questions_member_is_exempt_its_decision_never_sees_stalled_and_it_stays_2(
        executor, queue):
    """The right option, held against the model's decision, the C's one hash read and both
    executors' sweep of the member the question describes."""
    right = QUESTION.right
    row = {b"state": b"active", b"attempts": b"1", b"lease_epoch": epoch.ZERO, b"stalled": b"2"}
    verdict, asked = decide_row(epoch.NOW, MAX_STALLED, row)
    assert verdict.kind == "exempt" and asked == [Need.TYPE, Need.GROUP, Need.EPOCH]
    assert "shows its decision only the type, group and lease_epoch" in right.text
    hash_reads = [line for line in c_excerpt("decide_row").splitlines() if "HashGet" in line]
    assert len(hash_reads) == 1
    assert "lit.group" in hash_reads[0] and "lit.lease_epoch" in hash_reads[0]
    assert "lit.stalled" in c_excerpt("decide_row", "ValkeyModule_HashGet", "NULL);")
    assert right.text.startswith("It fetches group, lease_epoch and stalled in one hash read")

    executor.call("HSET", queue.row_key(b"m"), *[p for item in row.items() for p in item])
    executor.call("ZADD", queue.active, executor.now_ms(), b"m")
    executor.wait_until(executor.now_ms())
    assert executor.sweep(queue, MAX_STALLED) == [[b"m"], []]
    swept = executor.row(queue, b"m")
    assert (swept[b"state"], swept[b"stalled"]) == (b"pending", b"2")
    assert "back to pending with stalled still 2" in right.text


# -- 03's list of refusals: the server's own ACL check comes first --------------------------------


@pytest.fixture
def restricted(lab):
    """A user of the session's server who may run every command on keys under {a} only."""
    lab.client.execute_command("ACL", "SETUSER", "notebook03", "on", ">pw", "~{a}:*", "+@all")
    client = redis.Redis(host="127.0.0.1", port=lab.port, username="notebook03", password="pw")
    yield client
    client.close()
    lab.client.execute_command("ACL", "DELUSER", "notebook03")


def refusal(client, *args) -> str:
    try:
        client.execute_command("EMQ.STALLED.CHECK", *args)
    except redis.ResponseError as exc:
        return str(exc)
    raise AssertionError("the sweep was not refused")


def test_the_server_checks_the_acl_of_all_four_declared_keys_prefix_included_first(restricted):
    """OnLoad declares keys 1 to 4, so a prefix the user may not access is refused by the server
    with NOPERM, before the module looks at max_stalled; with the prefix allowed, the same bad
    max_stalled is the module's refusal."""
    sets = ("{a}:active", "{a}:pending", "{a}:dead")
    assert refusal(restricted, *sets, "{b}:job:", 0).startswith("No permissions to access a key")
    assert refusal(restricted, *sets, "{a}:job:", 0) == "EMQ max_stalled must be a positive integer"


def test_a_call_too_short_to_name_the_four_keys_meets_the_modules_arity_check(restricted):
    assert refusal(restricted, "{b}:active", "{a}:pending", "{a}:dead").startswith(
        "wrong number of arguments")
    assert refusal(restricted, "{b}:active", "{a}:pending", "{a}:dead", "{a}:job:").startswith(
        "No permissions to access a key")
