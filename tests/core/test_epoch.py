"""The two rules of the epoch, on the dive's own test values."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trafikey_lab.epoch import (
    FOREIGN_EPOCHS,
    NOW,
    SHAPE_REJECTS,
    ZERO,
    argument_integer,
    counter,
    exempt,
    shape_problem,
    valid_run_id,
)


def test_now_is_a_run_id_and_zero_is_too():
    assert valid_run_id(NOW)
    assert valid_run_id(ZERO)


@pytest.mark.parametrize("name", list(SHAPE_REJECTS))
def test_the_shape_check_rejects_each_of_the_dive_s_five(name):
    assert not valid_run_id(SHAPE_REJECTS[name])


@pytest.mark.parametrize(("value", "reason"), [
    (b"", "0 bytes, not 40"),
    (NOW[:39], "39 bytes, not 40"),
    (NOW.upper(), "byte 2 is b'F', not one of 0-9 a-f"),
    (NOW[:39] + b"g", "byte 40 is b'g', not one of 0-9 a-f"),
    (NOW + b"3", "41 bytes, not 40"),
])
def test_shape_problem_names_the_length_or_the_first_bad_byte(value, reason):
    assert shape_problem(value) == reason


@pytest.mark.parametrize(("value", "reason"), [
    ("é".encode(), "2 bytes, not 40"),
    ("🔑".encode() * 10, "byte 1 is b'\\xf0', not one of 0-9 a-f"),
    (NOW[:38] + "٣".encode(), "byte 39 is b'\\xd9', not one of 0-9 a-f"),
])
def test_a_non_ascii_character_is_counted_and_placed_in_bytes_not_characters(value, reason):
    assert shape_problem(value) == reason


def test_same_process_counted_and_every_foreign_field_exempt():
    assert not exempt(NOW, NOW)
    for value in FOREIGN_EPOCHS.values():
        assert exempt(value, NOW)


@given(st.binary(max_size=45))
def test_exempt_is_any_stamp_but_the_current_one(stamp):
    assert exempt(stamp, NOW) == (stamp != NOW)


def one_byte_changed(value: bytes, position: int, byte: int) -> bytes:
    return value[:position] + bytes([byte]) + value[position + 1:]


@pytest.mark.parametrize("position", range(len(NOW)))
def test_a_stamp_differing_from_now_in_any_one_hex_digit_is_exempt(position):
    other_digit = b"0" if NOW[position:position + 1] != b"0" else b"1"
    assert exempt(one_byte_changed(NOW, position, other_digit[0]), NOW)


@given(st.binary(min_size=1, max_size=48), st.data())
def test_a_same_length_stamp_differing_in_any_one_byte_is_exempt(current, data):
    position = data.draw(st.integers(0, len(current) - 1), label="position")
    byte = data.draw(st.integers(0, 255).filter(lambda b: b != current[position]), label="byte")
    assert exempt(one_byte_changed(current, position, byte), current)


def test_property_tests_have_no_per_example_deadline():
    """A busy machine must not turn a slow example into a failure (tests/conftest.py)."""
    assert settings().deadline is None


@pytest.mark.parametrize(("value", "number"), [
    (None, 0), (b"0", 0), (b"7", 7), (b"9007199254740991", 2**53 - 1),
    (b"9007199254740992", None), (b"-1", None), (b"01", None), (b"", None), (b" 1", None),
    (b"\xd9\xa3", None),
])
def test_counter_accepts_canonical_non_negative_integers_below_2_53(value, number):
    assert counter(value) == number


@given(st.integers(-(2**63), 2**63 - 1))
def test_argument_integer_reads_every_canonical_64_bit_integer(number):
    assert argument_integer(str(number).encode()) == number


@pytest.mark.parametrize("value", [b"", b"+1", b"-0", b"01", b"1 ", b"1.0", b"9223372036854775808"])
def test_argument_integer_refuses_what_the_server_refuses(value):
    assert argument_integer(value) is None
