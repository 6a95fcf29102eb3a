"""The exercise checkers: a right answer is called right, each kind of wrong one is called wrong
with the reason the learner needs, and no attempt makes a checker raise."""

import re

import pytest

from trafikey_lab import ModelExecutor, epoch
from trafikey_lab.exercises import (
    NOTE,
    RIGHT,
    SHAPE_CASES,
    THIS_PROCESS,
    WRONG,
    check_history,
    check_lease_move,
    check_shape_check,
    check_stops,
)


def kinds(feedback):
    return [f.kind for f in feedback.findings]


def texts(feedback):
    return "\n".join(f.text for f in feedback.findings)


# -- 01: the shape check ----------------------------------------------------------------------


def test_a_correct_shape_check_agrees_with_the_module_on_every_value():
    feedback = check_shape_check(
        lambda value: len(value) == 40 and all(b in b"0123456789abcdef" for b in value))
    assert feedback.right and kinds(feedback) == [RIGHT]
    assert f"{len(SHAPE_CASES)} of {len(SHAPE_CASES)} values" in texts(feedback)
    assert repr(feedback).startswith("RIGHT: ")


def test_a_length_only_check_is_wrong_on_each_value_of_the_right_length_and_says_why():
    feedback = check_shape_check(lambda value: len(value) == 40)
    assert not feedback.right and repr(feedback).startswith("NOT YET: ")
    wrong = [f.text for f in feedback.findings if f.kind == WRONG]
    assert [text.split(":")[0] for text in wrong] == [
        "NOW in upper case", "NOW ending in g", "NOW starting 0x", "NOW with an underscore",
        "NOW ending in a space"]
    assert "your check says True, the module says False: character 2 is b'F'" in wrong[0]


def test_a_check_built_on_int_base_16_lets_through_what_int_accepts():
    def by_int(value):
        try:
            int(value, 16)
        except ValueError:
            return False
        return len(value) == 40

    wrong = [f.text.split(":")[0] for f in check_shape_check(by_int).findings if f.kind == WRONG]
    assert wrong == ["NOW in upper case", "NOW starting 0x", "NOW with an underscore",
                     "NOW ending in a space"]


def test_a_check_that_raises_or_returns_no_bool_is_wrong_without_raising():
    raising = check_shape_check(lambda value: value.decode("ascii")[39] in "0123456789abcdef")
    assert "b\"\": your check raised IndexError" in texts(raising)
    matching = check_shape_check(lambda value: re.fullmatch(rb"[0-9a-f]{40}", value))
    assert "NOW: your check returned <re.Match" in texts(matching)
    assert "wrap the test in bool(...)" in texts(matching)
    assert not raising.right and not matching.right


def test_something_that_is_not_a_function_is_told_to_be_one():
    feedback = check_shape_check(None)
    assert kinds(feedback) == [WRONG] and "is not a function" in texts(feedback)


# -- 02: move the lease -----------------------------------------------------------------------


def extend(executor, queue):
    return executor.extend(queue, "job-1", 1, 60_000)


def test_extending_with_the_workers_attempt_moves_the_lease_on_model_and_live(live):
    feedback = check_lease_move(extend, executors=(ModelExecutor(), live))
    assert feedback.right and kinds(feedback) == [RIGHT, RIGHT]
    assert "on the model: the reply was 1" in texts(feedback)
    assert "on the live server: the reply was 1" in texts(feedback)


def test_extends_with_the_workers_attempt_is_right_too():
    feedback = check_lease_move(lambda ex, q: ex.extends(q, 60_000, [("job-1", 1)]))
    assert feedback.right


@pytest.mark.parametrize("move,reason", [
    (lambda ex, q: ex.scripted_extend(q, "job-1", 1, 60_000),
     "the deadline moved but the stamp still names the process before the restart"),
    (lambda ex, q: ex.extend(q, "job-1", 0, 60_000),
     "the reply was 0: the lease is not live for the attempt you named; the row says attempts 1"),
    (lambda ex, q: ex.call("HSET", q.row("job-1"), "lease_epoch", ex.run_id),
     "the stamp names this process but the deadline did not move"),
    (lambda ex, q: None, "nothing changed"),
    (lambda ex, q: ex.call("ZREM", q.active, "job-1"), "job-1 is no longer the same lease"),
    (lambda ex, q: ex.extend(q, "job-1", 1, 0), "refused with ERR EMQ lease must be a positive"),
    (lambda ex, q: 1 / 0, "your function raised ZeroDivisionError"),
])
def test_each_wrong_move_is_named_with_its_reason(move, reason):
    feedback = check_lease_move(move)
    assert kinds(feedback) == [WRONG]
    assert reason in texts(feedback)


def test_a_wrong_move_is_wrong_on_the_live_server_for_the_same_reason(live):
    feedback = check_lease_move(lambda ex, q: ex.scripted_extend(q, "job-1", 1, 60_000),
                                executors=(live,))
    assert kinds(feedback) == [WRONG]
    assert "on the live server: the deadline moved but the stamp still names" in texts(feedback)


def test_the_move_checker_cleans_up_its_queue(live):
    check_lease_move(extend, executors=(live,))
    assert live.dataset() == {}


# -- 03: one row per read ----------------------------------------------------------------------

RIGHT_ROWS = {
    "type": None,
    "group": {"state": "active", "group": ""},
    "lease_epoch": {"state": "active", "lease_epoch": epoch.ZERO},
    "stalled": {"state": "active", "lease_epoch": THIS_PROCESS},
}


def test_four_right_rows_stop_at_each_read_and_the_live_sweep_agrees(live):
    feedback = check_stops(RIGHT_ROWS, live=live)
    assert feedback.right
    assert kinds(feedback) == [RIGHT] * 4 + [NOTE, NOTE]
    assert "the four rows swept together on the model: [[b'lease_epoch', b'stalled'], []]" in \
        texts(feedback)
    assert "the live server's sweep of the same rows gave the same reply" in texts(feedback)
    assert live.dataset() == {}


def test_swapped_stamps_stop_one_read_early_and_one_late_and_say_what_to_change():
    rows = {**RIGHT_ROWS,
            "lease_epoch": {"state": "active", "lease_epoch": THIS_PROCESS},
            "stalled": {"state": "active"}}
    feedback = check_stops(rows)
    wrong = [f.text for f in feedback.findings if f.kind == WRONG]
    assert wrong[0].startswith("lease_epoch: it stops at stalled instead (recovered)")
    assert "lease_epoch is missing or another process's" in wrong[0]
    assert wrong[1].startswith("stalled: it stops at lease_epoch instead (exempt)")
    assert "THIS_PROCESS" in wrong[1]


def test_a_row_that_stops_by_refusing_the_sweep_is_wrong():
    feedback = check_stops({**RIGHT_ROWS, "type": "a string",
                            "stalled": {"lease_epoch": THIS_PROCESS, "stalled": "two"}})
    text = texts(feedback)
    assert "type: it stops at type, but as a refusal (WRONGTYPE)" in text
    assert "stalled: it stops at stalled, but as a refusal (ERR EMQ row field is not an " \
           "integer)" in text
    assert "[[b'lease_epoch'], []]" not in text
    assert "ERR EMQ row field is not an integer" in text.splitlines()[-1] or \
        "WRONGTYPE" in text.splitlines()[-1]


@pytest.mark.parametrize("rows,message", [
    ({}, "type: no row given; add rows['type']"),
    ({**RIGHT_ROWS, "group": {}}, "a hash with no fields cannot exist in Valkey"),
    ({**RIGHT_ROWS, "group": ["group"]}, "is not a row: give None"),
    ({**RIGHT_ROWS, "stalled": {"lease_epoch": epoch.NOW}},
     "NOW is the model's run_id, not every server's: write THIS_PROCESS"),
    ([], "rows is list: make it a dict"),
])
def test_malformed_rows_are_named_without_raising(rows, message):
    feedback = check_stops(rows)
    assert not feedback.right and message in texts(feedback)


def test_a_key_that_is_not_a_read_is_noted_and_ignored():
    feedback = check_stops({**RIGHT_ROWS, "payload": None})
    assert feedback.right and "'payload' is not one of the reads" in texts(feedback)


# -- 04: the fifth history ----------------------------------------------------------------------

FIFTH = ("add", "claim", "restart", "scripted_extend", "expire", "sweep")


def test_the_right_history_and_prediction_are_played_on_model_and_live(live):
    feedback = check_history(FIFTH, "exempt", executors=(ModelExecutor(), live))
    assert feedback.right and kinds(feedback) == [RIGHT, RIGHT]
    assert "on the live server: the stamp names process 1, the sweep runs in process 2: exempt, so " \
           "recovered, as you predicted" in texts(feedback)
    assert [t.executor for t in feedback.traces] == ["model", "live"]
    assert all(t.steps[-1].row.get(b"stalled") is None for t in feedback.traces)


def test_the_wrong_prediction_is_called_wrong_with_the_reason():
    feedback = check_history(FIFTH, "counted")
    assert kinds(feedback) == [WRONG]
    assert "exempt, so recovered, not counted: extend2 moved the deadline but wrote no stamp" \
        in texts(feedback)


def test_nothing_is_played_before_there_is_a_prediction():
    feedback = check_history(FIFTH, None)
    assert kinds(feedback) == [WRONG] and feedback.traces == ()
    assert "write \"counted\" or \"exempt\" before anything is played" in texts(feedback)


@pytest.mark.parametrize("steps,message", [
    (("add", "claim", "restart", "expire", "sweep"), "add \"scripted_extend\" after \"restart\""),
    (("add", "claim", "restart", "extend", "expire", "sweep"), "the dive's *extended* history"),
    (("add", "scripted_claim", "restart", "scripted_extend", "expire", "sweep"),
     "then the native claim"),
    (("add", "claim", "scripted_extend", "expire", "sweep"), "the server must restart"),
    (("add", "claim", "restart", "scripted_extend", "sweep"), "end with \"expire\""),
    (("add", "claim", "reboot", "sweep"), "'reboot' is not a step"),
    ("add claim restart", "make it a tuple of step names"),
])
def test_a_history_that_is_not_the_fifth_says_what_is_missing(steps, message):
    feedback = check_history(steps, "exempt")
    assert WRONG in kinds(feedback) and message in texts(feedback)
    assert feedback.traces == ()


# -- 05: promote the replica ------------------------------------------------------------------

from trafikey_lab.exercises import check_promotion  # noqa: E402


def test_replicaof_no_one_is_right_and_the_promoted_replica_finds_the_lease_exempt(lab):
    feedback = check_promotion(lambda c: c.execute_command("REPLICAOF", "NO", "ONE"), lab)
    assert feedback.right and kinds(feedback) == [RIGHT, RIGHT, RIGHT]
    assert "sends the old primary's lease back to pending uncounted" in texts(feedback)


def test_a_promote_that_does_nothing_leaves_a_replica_and_says_so(lab):
    feedback = check_promotion(lambda c: None, lab)
    assert kinds(feedback) == [WRONG]
    assert "still answers role slave" in texts(feedback)


def test_a_promote_that_raises_is_called_wrong_with_the_servers_error(lab):
    feedback = check_promotion(lambda c: c.execute_command("FAILOVER"), lab)
    assert kinds(feedback) == [WRONG]
    assert "FAILOVER is not valid when server is a replica" in texts(feedback)


def test_a_promote_that_is_not_a_function_is_called_wrong_before_any_server_starts(lab):
    feedback = check_promotion("REPLICAOF NO ONE", lab)
    assert kinds(feedback) == [WRONG] and "define it as a function" in texts(feedback)
