"""RunIdChecker: both checks on the dive's test values and on typed text, as its labels show
them."""

import ipywidgets as widgets
import pytest

from trafikey_lab import epoch
from trafikey_lab.readings import NAMED_VALUES, read_value
from trafikey_lab.widgets.run_id_checker import TYPE_YOUR_OWN, RunIdChecker


@pytest.fixture
def checker():
    return RunIdChecker()


def test_it_opens_on_now_valid_and_counted(checker):
    assert checker.choice.value == "NOW"
    assert checker.typed.value == epoch.NOW.decode()
    assert checker.length.value == "40 bytes"
    assert checker.shape.value.startswith("valid_run_id → true")
    assert checker.load.value.startswith("cached")
    assert checker.sweep.value.startswith(
        "exempt → false: counted: the stamp is this process's run_id")
    assert "stalled + 1 against max_stalled" in checker.sweep.value
    assert "same process: counted" in checker.tests.value
    assert "run_ids_are_40_lowercase_hex: valid_run_id(NOW) is true" in checker.tests.value


def test_the_dropdown_names_every_test_value_as_the_tests_do():
    assert list(NAMED_VALUES) == [
        "NOW", 'b""', "&NOW[..39]", "NOW in upper case", "NOW ending in g",
        "NOW with a 3 appended", "lease_epoch missing", "lease_epoch forty 0s",
        "lease_epoch empty",
    ]


@pytest.mark.parametrize(("name", "reason"), [
    ('b""', "0 bytes, not 40"),
    ("&NOW[..39]", "39 bytes, not 40"),
    ("NOW in upper case", "byte 2 is b'F', not one of 0-9 a-f"),
    ("NOW ending in g", "byte 40 is b'g', not one of 0-9 a-f"),
    ("NOW with a 3 appended", "41 bytes, not 40"),
])
def test_each_shape_reject_is_refused_at_load_with_its_reason(checker, name, reason):
    checker.choice.value = name
    assert checker.shape.value == f"valid_run_id → false: {reason}"
    assert checker.load.value.startswith(
        'refused: OnLoad logs the warning "trafikey: emq epoch not loaded: run_id is not 40 '
        'characters of 0-9a-f" and the module does not load')
    assert checker.load.value.endswith(
        "the dive's Rust module refuses with ERR EMQ host call failed")
    assert ("run_ids_are_40_lowercase_hex: one of the five values it must reject"
            in checker.tests.value)


def test_the_offending_byte_is_marked_in_the_value(checker):
    checker.choice.value = "NOW ending in g"
    assert checker.value.value == \
        "<code>3f2c0d8e9b1a4c5d6e7f8091a2b3c4d5e6f7081<mark>g</mark></code>"
    checker.choice.value = "NOW in upper case"
    assert checker.value.value.startswith("<code>3<mark>F</mark>2C0D")


@pytest.mark.parametrize(("name", "message", "why"), [
    ("lease_epoch missing", "a missing field is exempt as well: exempt(None, NOW)",
     "there is no stamp, so it is not this process's"),
    ("lease_epoch forty 0s", "another process: exempt",
     "a well-formed run_id, but not this process's"),
    ("lease_epoch empty", "an empty field is not this process",
     "these bytes differ from this process's run_id (0 bytes against 40)"),
])
def test_each_foreign_epoch_is_exempt_from_the_stall_count_and_says_why(checker, name, message,
                                                                        why):
    checker.choice.value = name
    assert checker.sweep.value.startswith(f"exempt → true: exempt: {why}")
    assert "stalled untouched" in checker.sweep.value
    assert f'exemption_is_missing_or_different: &quot;{message}&quot;' in checker.tests.value


def test_forty_zeros_pass_the_shape_check_yet_are_another_process(checker):
    checker.choice.value = "lease_epoch forty 0s"
    assert checker.shape.value.startswith("valid_run_id → true")
    assert checker.load.value.startswith("cached")
    assert checker.sweep.value.startswith("exempt → true")


def test_a_missing_field_has_no_bytes_and_no_shape_verdict(checker):
    checker.choice.value = "lease_epoch missing"
    assert checker.length.value == "no field: nothing stored"
    assert checker.shape.value == "valid_run_id → n/a: there are no bytes to check"
    # a row's missing field is not INFO's missing run_id: load never reads a row
    assert checker.load.value.startswith("n/a")
    assert "refused" not in checker.load.value
    assert checker.typed.value == ""


def test_typing_switches_to_type_your_own_and_checks_the_text(checker):
    checker.typed.value = epoch.NOW.decode()[:39] + "G"
    assert checker.choice.value == TYPE_YOUR_OWN
    assert checker.shape.value == "valid_run_id → false: byte 40 is b'G', not one of 0-9 a-f"
    assert checker.tests.value == "none of the dive's test assertions names this value"


def test_typing_now_by_hand_matches_the_same_process_assertion(checker):
    checker.choice.value = "NOW ending in g"
    checker.typed.value = "3f2c0d8e9b1a4c5d6e7f8091a2b3c4d5e6f70812"
    assert checker.choice.value == TYPE_YOUR_OWN
    assert checker.sweep.value.startswith("exempt → false: counted")
    assert "same process: counted" in checker.tests.value


def test_picking_a_named_value_copies_it_into_the_text_box_without_leaving_the_pick(checker):
    checker.choice.value = "NOW with a 3 appended"
    assert checker.typed.value == epoch.NOW.decode() + "3"
    assert checker.choice.value == "NOW with a 3 appended"


def test_non_ascii_text_is_checked_as_utf8_bytes_without_crashing(checker):
    checker.typed.value = "é" * 20
    assert checker.length.value == "40 bytes (20 typed characters, UTF-8)"
    assert checker.shape.value == "valid_run_id → false: byte 1 is b'\\xc3', not one of 0-9 a-f"
    assert checker.value.value.startswith("<code><mark>\\xc3</mark>\\xa9")
    assert "agrees" in checker.native.value


def test_html_in_typed_text_is_escaped(checker):
    checker.typed.value = "<b>x</b>"
    assert "<b>" not in checker.value.value
    assert "&lt;b&gt;" in checker.value.value


def test_typed_text_that_differs_only_in_case_is_exempt_for_that_reason_alone(checker):
    checker.typed.value = epoch.NOW.decode().upper()
    assert checker.sweep.value.startswith(
        "exempt → true: exempt: these bytes differ from this process's run_id only in case, and "
        "the comparison is byte for byte")
    assert "restart" not in checker.sweep.value


def test_the_long_readings_are_html_that_wraps_not_labels_that_cut_off(checker):
    for row in (checker.load, checker.sweep, checker.native):
        assert isinstance(row, widgets.HTML)
        assert row.layout.flex == "1 1 0%"


@pytest.mark.parametrize("value", [*NAMED_VALUES.values(), "é".encode(), b"\x00" * 40, b"A" * 40])
def test_the_modules_c_checks_agree_with_the_model(value):
    reading = read_value(value)
    assert reading.native_agrees
    assert reading.native_valid == (None if value is None else epoch.valid_run_id(value))
    assert reading.native_exempt == epoch.exempt(value, epoch.NOW)


def test_the_native_label_reports_the_c_verdicts(checker):
    checker.choice.value = "NOW ending in g"
    assert checker.native.value == (
        "trafikey_valid_run_id → false, trafikey_exempt → true: "
        "the C module agrees with both checks"
    )


def test_the_checkers_verdicts_on_a_live_run_id_are_what_the_live_server_does(live, queue):
    """The server loaded the module with its run_id, so that id passed the module's shape check;
    its sweep counts a lease stamped with that id and exempts one stamped with the dive's NOW.
    The checker must say the same of those bytes."""
    run_id = live.run_id.encode()
    for job, stamp in ((b"own", run_id), (b"dive", epoch.NOW)):
        live.call("HSET", queue.row_key(job), "state", "active", "lease_epoch", stamp)
        live.call("ZADD", queue.active, 1, job)
    recovered, dead = live.sweep(queue, 1)
    assert (recovered, dead) == ([b"dive"], [b"own"])
    assert b"stalled" not in live.row(queue, b"dive")
    assert read_value(run_id, current=run_id).valid is True
    assert read_value(run_id, current=run_id).exempt is (b"own" in recovered)
    assert read_value(epoch.NOW, current=run_id).exempt is (b"dive" in recovered)
