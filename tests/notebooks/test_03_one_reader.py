"""Notebook 03's library: the five-member layout, the plan's table and the refusals, on both
executors.

Notebook 03's exercise checker, check_stops, held like a verb: for each read, a catalogue of
wrong rows it must reject, each with a message that says where the row stopped and why, the same
stop the model's and the C module's step machines give it, without handing over the right row;
and right variants it must accept."""

from pathlib import Path

import pytest
import redis
from stored_cells import exercise_namespace

from trafikey_lab import epoch
from trafikey_lab.course.feedback import NOTE, RIGHT, WRONG
from trafikey_lab.course.one_reader import (
    KINDS,
    MAX_STALLED,
    READS,
    REFUSALS,
    STOP_MAX_STALLED,
    THIS_PROCESS,
    _row_bytes,
    check_stops,
    lay_out,
    member_table,
    plan_rows,
    queue_state,
    rows_for,
    spoil,
    try_sweep,
)
from trafikey_lab.epoch import NOW, ZERO
from trafikey_lab.executors import ModelExecutor
from trafikey_lab.model import decide_row
from trafikey_lab.module import native
from trafikey_lab.module.build import c_excerpt
from trafikey_lab.sweep import Need, Seen


def test_layout_plants_one_expired_member_of_each_kind_in_deadline_order(executor, queue):
    planted = lay_out(executor, queue)
    assert [p.kind for p in planted] == list(KINDS)
    _, active = executor.dataset()[queue.active]
    assert [member for member, _ in active] == [p.id for p in planted]
    assert all(score < executor.now_ms() for _, score in active)
    assert queue.row_key(b"ghost") not in executor.dataset()
    assert executor.row(queue, b"lane")[b"group"] == b"lane-a"


def test_layout_stamps_the_lane_and_counted_rows_with_the_executors_own_run_id_not_the_exempt(
        executor, queue):
    lay_out(executor, queue)
    current = executor.run_id.encode()
    for member in (b"lane", b"recovered", b"dead"):
        assert executor.row(queue, member)[b"lease_epoch"] == current, member
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
    assert lane[b"state"] == b"active"
    assert b"stalled" not in lane


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


# -- which leases a sweep takes: the deadline, and a downtime --------------------------------------


@pytest.mark.parametrize(("restarts", "stalled"), [(False, b"1"), (True, None)])
def test_a_lease_is_taken_at_its_deadline_not_a_millisecond_before_and_after_a_restart_is_exempt(
        queue, restarts, stalled):
    """03's boundary cell: a 500 ms lease swept at 499 ms and at 500 ms, with and without a
    restart (instant on the model) right after the claim."""
    clock = ModelExecutor()
    clock.add(queue, "job")
    clock.claim(queue, 500)
    if restarts:
        clock.restart()
    clock.advance(499)
    assert clock.sweep(queue, MAX_STALLED) == [[], []]
    clock.advance(1)
    assert clock.sweep(queue, MAX_STALLED) == [[b"job"], []]
    assert clock.row(queue, "job").get(b"stalled") == stalled


# -- 03's Precisely note: this C fetches the decision's three fields in one read ---------------


def test_this_modules_decide_row_fetches_group_lease_epoch_and_stalled_in_one_hash_read():
    hash_reads = [line for line in c_excerpt("decide_row").splitlines() if "HashGet" in line]
    assert len(hash_reads) == 1
    assert "lit.group" in hash_reads[0]
    assert "lit.lease_epoch" in hash_reads[0]
    assert "lit.stalled" in c_excerpt("decide_row", "ValkeyModule_HashGet", "NULL);")


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


# -- the exercise: check_stops ---------------------------------------------------------------------

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "03_one_reader.ipynb"

ANSWER = {
    "type": None,
    "group": {"state": "active", "group": "lane-a"},
    "lease_epoch": {"state": "active"},
    "stalled": {"state": "active", "lease_epoch": THIS_PROCESS},
}

GIVEAWAYS = ("(None)", "give no row", "with a group field", "forty 0s", "whose lease_epoch is "
             "THIS_PROCESS", "give a hash", "does not refuse", "missing or another process's")
"""Recipes of the right rows: no feedback on a wrong row may contain them. The last two were in
the stored attempt's feedback once: "the row for type needs the case that does not refuse"
(beside the notebook's list of refusals, that names None) and "its lease_epoch is missing or
another process's" (beside "stalled only for a lease it counts", that names THIS_PROCESS)."""


# -- right variants -----------------------------------------------------------------------------

RIGHT_VARIANTS = {
    "the notebook's answer": {},
    "an empty group, forty 0s, stalled 0": {
        "group": {"state": "active", "group": ""},
        "lease_epoch": {"state": "active", "lease_epoch": ZERO},
        "stalled": {"state": "active", "lease_epoch": THIS_PROCESS, "stalled": "0"}},
    "an empty stamp, and a counted lease that dies": {
        "lease_epoch": {"lease_epoch": ""},
        "stalled": {"lease_epoch": THIS_PROCESS, "stalled": 2}},
    "a lane row whose stamp is this process's and whose stalled is not a number": {
        "group": {"group": "g", "lease_epoch": THIS_PROCESS, "stalled": "banana"}},
    "an exempt row whose stalled is not a number": {
        "lease_epoch": {"lease_epoch": ZERO, "stalled": "banana"}},
    "a stamp one byte off the model's run_id": {
        "lease_epoch": {"lease_epoch": NOW[:-1] + b"3"}},
    "a prefix of the model's run_id": {"lease_epoch": {"lease_epoch": NOW[:-1]}},
    "the model's run_id one byte longer": {"lease_epoch": {"lease_epoch": NOW + b"0"}},
    "bytes for names and values": {
        "group": {b"group": b"lane-a"}, "stalled": {b"lease_epoch": THIS_PROCESS}},
}


@pytest.mark.parametrize("name", RIGHT_VARIANTS)
def test_each_right_variant_is_right_on_the_model(name):
    feedback = check_stops({**ANSWER, **RIGHT_VARIANTS[name]})
    assert feedback.right, repr(feedback)
    assert feedback.kinds == [RIGHT] * 4 + [NOTE]


def test_the_answer_is_right_and_the_live_sweep_agrees_and_leaves_nothing(live):
    feedback = check_stops(ANSWER, live=live)
    assert feedback.right
    assert feedback.kinds == [RIGHT] * 4 + [NOTE, NOTE]
    assert "the four rows swept together on the model: [[b'lease_epoch', b'stalled'], []]" in \
        feedback.text
    # the last note is the live sweep's agreement: a disagreement is WRONG, a failure to sweep
    # is the other note
    assert "not swept live" not in feedback.text
    assert live.dataset() == {}


def test_a_key_that_is_not_a_read_is_noted_and_ignored():
    feedback = check_stops({**ANSWER, "payload": None})
    assert feedback.right
    assert "'payload' is not one of the reads" in feedback.text


# -- the catalogue of wrong rows, read by read --------------------------------------------------

WRONG_ROWS = {
    "type": {
        "a string key": ("a string", "it stops at type, but as a refusal (WRONGTYPE)"),
        "an empty string key": ("", "it stops at type, but as a refusal (WRONGTYPE)"),
        "a hash with no stamp": ({"state": "active"}, "it stops at lease_epoch instead (exempt)"),
        "a lane row": ({"group": "lane-a"}, "it stops at group instead (lane)"),
        "a counted row": ({"lease_epoch": THIS_PROCESS}, "it stops at stalled instead"),
    },
    "group": {
        "no row": (None, "it stops at type instead (ghost)"),
        "a hash without group": ({"state": "active"},
                                 "it stops at lease_epoch instead (exempt)"),
        "a string key named group": ("group", "it refuses the whole sweep at type (WRONGTYPE)"),
        "a group of None": ({"group": None}, "None cannot be stored in a hash"),
        "a hash with no fields": ({}, "a hash with no fields cannot exist in Valkey"),
        "a list of fields": (["group"], "is not a row"),
    },
    "lease_epoch": {
        "this process's stamp": ({"lease_epoch": THIS_PROCESS},
                                 "it stops at stalled instead (recovered)"),
        "this process's stamp and a stalled that is not a number": (
            {"lease_epoch": THIS_PROCESS, "stalled": "two"},
            "it refuses the whole sweep at stalled (ERR EMQ row field is not an integer)"),
        "a stamp and a group": ({"lease_epoch": ZERO, "group": "g"},
                                "it stops at group instead (lane)"),
        "the model's run_id typed out": ({"lease_epoch": NOW}, "NOW is the model's run_id"),
        "the model's run_id typed as text": ({"lease_epoch": NOW.decode()},
                                             "NOW is the model's run_id"),
    },
    "stalled": {
        "no stamp": ({"state": "active"}, "it stops at lease_epoch instead (exempt)"),
        "another process's stamp": ({"lease_epoch": ZERO}, "it stops at lease_epoch instead"),
        "a stalled that is not a number": (
            {"lease_epoch": THIS_PROCESS, "stalled": "two"},
            "it stops at stalled, but as a refusal (ERR EMQ row field is not an integer)"),
        "a stalled with a leading zero": ({"lease_epoch": THIS_PROCESS, "stalled": "01"},
                                          "but as a refusal"),
        "a negative stalled": ({"lease_epoch": THIS_PROCESS, "stalled": "-1"},
                               "but as a refusal"),
        "a stalled with a space": ({"lease_epoch": THIS_PROCESS, "stalled": " 1"},
                                   "but as a refusal"),
        "a stalled of 2^53, one past the counter's limit": (
            {"lease_epoch": THIS_PROCESS, "stalled": 2**53}, "but as a refusal"),
        "a counted row in a lane": ({"lease_epoch": THIS_PROCESS, "group": "g"},
                                    "it stops at group instead (lane)"),
        "the model's run_id typed out": ({"lease_epoch": NOW}, "NOW is the model's run_id"),
        "a stamp of True": ({"lease_epoch": True}, "True cannot be stored in a hash"),
    },
}
CASES = [(read, name) for read, rows in WRONG_ROWS.items() for name in rows]


@pytest.mark.parametrize(("read", "name"), CASES)
def test_each_wrong_row_is_rejected_with_where_it_stopped_and_nothing_given_away(read, name):
    row, message = WRONG_ROWS[read][name]
    feedback = check_stops({**ANSWER, read: row})
    assert not feedback.right
    wrong = feedback.about(read)
    assert wrong.kind == WRONG, wrong.text
    assert message in wrong.text, wrong.text
    assert [f.kind for f in feedback.findings if not f.text.startswith(f"{read}: ")][:3] == \
        [RIGHT] * 3, "the three right rows stay right"
    assert not [word for word in GIVEAWAYS if word in feedback.text], feedback.text


def machine_stop(decide_member, row):
    """Where a step machine stops on a stored row, and its verdict, fed read by read."""
    seen = Seen()
    while isinstance(step := decide_member(NOW, STOP_MAX_STALLED, seen), Need):
        if step is Need.TYPE:
            kind = "none" if row is None else "hash" if isinstance(row, dict) else "string"
            seen = Seen(type=kind)
        else:
            seen = Seen(**{**seen.__dict__, step.name.lower(): row.get(step.value.encode())})
        last = step
    return last.value, step.kind


@pytest.mark.parametrize(("read", "name"), [c for c in CASES
                                            if "instead" in WRONG_ROWS[c[0]][c[1]][1]
                                            or "refus" in WRONG_ROWS[c[0]][c[1]][1]])
def test_where_the_checker_says_a_wrong_row_stops_is_where_both_machines_stop(read, name):
    row, _ = WRONG_ROWS[read][name]
    stored = _row_bytes(row, NOW)
    verdict, asked = decide_row(NOW, STOP_MAX_STALLED, stored)
    assert machine_stop(native.decide_member, stored) == (asked[-1].value, verdict.kind)
    text = check_stops({**ANSWER, read: row}).about(read).text
    stop = asked[-1].value
    assert f"at {stop}" in text
    assert verdict.kind in text or verdict.refusal


def test_a_stamp_typed_from_the_live_servers_run_id_is_named_not_reported_as_a_bug(live):
    rows = {**ANSWER, "stalled": {"lease_epoch": live.run_id}}
    feedback = check_stops(rows, live=live)
    assert not feedback.right
    assert "stalled: that is your live server's run_id, not every server's" in feedback.text
    assert "report this as a bug" not in feedback.text


def test_rows_that_are_not_a_dict_or_miss_a_read_are_named_without_raising():
    assert "rows is list: make it a dict" in check_stops([]).text
    missing = check_stops({"type": None})
    assert not missing.right
    assert [f.text for f in missing.findings if f.kind == WRONG] == [
        f"{read}: no row given; add rows[{read!r}]" for read in READS[1:]]


def test_a_row_that_refuses_keeps_the_swept_reply_a_refusal():
    feedback = check_stops({**ANSWER, "type": "a string"})
    assert feedback.text.splitlines()[-1] == (
        "the four rows swept together on the model: 'WRONGTYPE Operation against a key holding "
        "the wrong kind of value'")


# -- the notebook's stored attempt --------------------------------------------------------------


def stored_rows():
    return exercise_namespace(NOTEBOOK, "check_stops")["rows"]


def test_the_stored_rows_are_not_right_and_their_feedback_gives_no_row_away():
    feedback = check_stops(stored_rows())
    assert not feedback.right
    assert feedback.kinds.count(WRONG) == 3
    assert not [word for word in GIVEAWAYS if word in feedback.text]


def test_the_stored_attempts_feedback_names_what_is_wrong_with_each_row_not_the_recipe():
    feedback = check_stops(stored_rows())
    for read in ("type", "group", "stalled"):
        text = feedback.about(read).text
        assert "at lease_epoch" in text, text
        assert "(exempt)" in text, text
    assert "NEED_TYPE" in feedback.about("type").text
    assert "NEED_GROUP" in feedback.about("group").text
    assert "THIS_PROCESS" not in feedback.text
    assert "this process's" not in feedback.text
