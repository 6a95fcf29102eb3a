"""Notebook 03's exercise checker, check_stops, held like a verb: for each read, a catalogue of
wrong rows it must reject, each with a message that says where the row stopped and why, the same
stop the model's and the C module's step machines give it, without handing over the right row;
and right variants it must accept."""

from pathlib import Path

import pytest
from stored_cells import exercise_namespace

from trafikey_lab.course.feedback import NOTE, RIGHT, WRONG
from trafikey_lab.course.one_reader import (
    READS,
    STOP_MAX_STALLED,
    THIS_PROCESS,
    _row_bytes,
    check_stops,
)
from trafikey_lab.epoch import NOW, ZERO
from trafikey_lab.model import decide_row
from trafikey_lab.module import native
from trafikey_lab.sweep import Need, Seen

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
    assert feedback.right and feedback.kinds == [RIGHT] * 4 + [NOTE, NOTE]
    assert "the four rows swept together on the model: [[b'lease_epoch', b'stalled'], []]" in \
        feedback.text
    assert "the live server's sweep of the same rows gave the same reply" in feedback.text
    assert live.dataset() == {}


def test_a_key_that_is_not_a_read_is_noted_and_ignored():
    feedback = check_stops({**ANSWER, "payload": None})
    assert feedback.right and "'payload' is not one of the reads" in feedback.text


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


@pytest.mark.parametrize("read,name", CASES)
def test_each_wrong_row_is_rejected_with_where_it_stopped_and_nothing_given_away(read, name):
    row, message = WRONG_ROWS[read][name]
    feedback = check_stops({**ANSWER, read: row})
    assert not feedback.right
    wrong = feedback.about(read)
    assert wrong.kind == WRONG and message in wrong.text, wrong.text
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


@pytest.mark.parametrize("read,name", [c for c in CASES if "instead" in WRONG_ROWS[c[0]][c[1]][1]
                                       or "refus" in WRONG_ROWS[c[0]][c[1]][1]])
def test_where_the_checker_says_a_wrong_row_stops_is_where_both_machines_stop(read, name):
    row, _ = WRONG_ROWS[read][name]
    stored = _row_bytes(row, NOW)
    verdict, asked = decide_row(NOW, STOP_MAX_STALLED, stored)
    assert machine_stop(native.decide_member, stored) == (asked[-1].value, verdict.kind)
    text = check_stops({**ANSWER, read: row}).about(read).text
    stop = asked[-1].value
    assert f"at {stop}" in text and (verdict.kind in text or verdict.refusal)


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
    assert not feedback.right and feedback.kinds.count(WRONG) == 3
    assert not [word for word in GIVEAWAYS if word in feedback.text]


def test_the_stored_attempts_feedback_names_what_is_wrong_with_each_row_not_the_recipe():
    feedback = check_stops(stored_rows())
    for read in ("type", "group", "stalled"):
        text = feedback.about(read).text
        assert text.startswith(f"{read}: it stops at lease_epoch instead (exempt): it went past "
                               "type and group, and the stamp comparison settled it. "), text
    assert "see the branches after NEED_TYPE in trafikey_decide_member" in \
        feedback.about("type").text
    assert "THIS_PROCESS" not in feedback.text and "this process's" not in feedback.text
