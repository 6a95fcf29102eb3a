"""The near misses of a run_id the byte checkers try, held to the list they must make: every
member of every byte class at the first, a middle and the last place, in place of a byte,
inserted, prepended and appended, and one byte removed at either end; the same set on every
run. The members are written out here, apart from the generator, so that the test does not
take its word for what a class holds."""

import itertools
import random

import pytest

from trafikey_lab import epoch, near_misses
from trafikey_lab.near_misses import Operation, Position

WHITESPACE = b" \t\n\r\x0b\x0c"
SINGLE_BYTES = {
    "whitespace": WHITESPACE,
    "NUL and every other control byte, DEL included": bytes(
        b for b in [*range(0x20), 0x7F] if b not in WHITESPACE),
    "every byte at or above 0x80 (none of them UTF-8 alone)": bytes(range(0x80, 0x100)),
    "upper case": b"ABCDEF",
    "letters past f": bytes(b for b in range(0x41, 0x7B)
                            if chr(b).isalpha() and chr(b).lower() > "f"),
}
DIGITS = ["٣".encode(), "३".encode()]
"""A digit of another script: two bytes in UTF-8 (Arabic-Indic 3), three (Devanagari 3)."""


def places(value: bytes, member: bytes) -> list[bytes]:
    """Where a member goes: in place of the first, a middle and the last byte; inserted after
    the first, in the middle and before the last; prepended; appended."""
    middle = len(value) // 2
    return [member + value[1:], value[:middle] + member + value[middle + 1:],
            value[:-1] + member,
            value[:1] + member + value[1:], value[:middle] + member + value[middle:],
            value[:-1] + member + value[-1:],
            member + value, value + member]


def corpus(seed: int) -> tuple[bytes, set[bytes]]:
    value = near_misses.run_id(random.Random(seed))
    return value, {m.value for m in near_misses.near_misses(value)}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", SINGLE_BYTES)
def test_every_single_byte_of_a_class_is_tried_at_every_place_on_every_run(name, seed):
    value, made = corpus(seed)
    missing = [(bytes([b]), n) for b in SINGLE_BYTES[name]
               for n, near in enumerate(places(value, bytes([b]))) if near not in made]
    assert not missing, f"{len(missing)} of {len(SINGLE_BYTES[name]) * 8} not tried: " \
                        f"{missing[:6]}"


@pytest.mark.parametrize("seed", range(3))
def test_a_digit_of_another_script_replaces_one_byte_and_as_many_bytes_as_it_has(seed):
    value, made = corpus(seed)
    middle = len(value) // 2
    for digit in DIGITS:
        n = len(digit)
        byte_for_byte = [digit + value[n:], value[:middle] + digit + value[middle + n:],
                         value[:-n] + digit]
        missing = [near for near in places(value, digit) + byte_for_byte if near not in made]
        assert not missing, (digit, missing)


@pytest.mark.parametrize("seed", range(3))
def test_one_byte_is_removed_at_either_end(seed):
    value, made = corpus(seed)
    assert {value[1:], value[:-1]} <= made


def test_every_class_is_at_every_position_by_every_operation_and_the_set_is_the_same_each_run():
    made = near_misses.near_misses(near_misses.run_id(random.Random(1)))
    found = {(m.kind, m.operation, m.position) for m in made}
    operations = (Operation.ONE_BYTE, Operation.INSERTED)
    expected = {*itertools.product(near_misses.CLASSES, operations, Position),
                *itertools.product(near_misses.CLASSES, (Operation.PREPENDED,
                                                         Operation.APPENDED), [None]),
                (near_misses.REMOVED, Operation.REMOVED, Position.FIRST),
                (near_misses.REMOVED, Operation.REMOVED, Position.LAST)}
    # A member of several bytes also covers as many: each class that has one, at each position.
    several = [kind for kind, members in near_misses.CLASSES.items()
               if any(len(m) > 1 for m in members)]
    assert several == ["ASCII whitespace", "a byte at or above 0x80",
                       "a digit of another script (UTF-8)"]
    expected |= set(itertools.product(several, [Operation.AS_MANY], Position))
    assert found == expected
    # every member at every place of its operations, once
    for kind, members in near_misses.CLASSES.items():
        for member in members:
            ways = [(m.operation, m.position) for m in made if m.member == member]
            one_byte = len(ways) == 8 and (Operation.AS_MANY, Position.FIRST) not in ways
            assert one_byte if len(member) == 1 else len(ways) == 11, (kind, member, ways)
    assert len(made) == 8 * sum(len(ms) for ms in near_misses.CLASSES.values()) + 3 * sum(
        len(m) > 1 for ms in near_misses.CLASSES.values() for m in ms) + 2 == 2139
    other = near_misses.near_misses(near_misses.run_id(random.Random(2)))
    assert [(m.kind, m.member, m.where) for m in other] == [(m.kind, m.member, m.where)
                                                            for m in made]
    assert [m.value for m in other] != [m.value for m in made]


@pytest.mark.parametrize("seed", range(3))
def test_the_words_of_each_near_miss_say_what_was_done_to_the_run_id(seed):
    """A member of several bytes in place of "the first byte" stands where one byte stood; in
    place of "as many bytes" it keeps the value's length."""
    value = near_misses.run_id(random.Random(seed))
    for miss in near_misses.near_misses(value):
        left, right = _around(value, miss)
        assert miss.value == left + miss.member + right, miss
        if miss.where.startswith("in place of as many"):
            assert len(miss.value) == len(value), miss
        elif miss.where.startswith("in place of"):
            assert len(left) + len(right) == len(value) - 1, miss
        elif miss.kind == near_misses.REMOVED:
            assert miss.member == b"", miss
            assert len(miss.value) == len(value) - 1, miss
        else:
            assert left + right == value, miss


def _around(value: bytes, miss: near_misses.NearMiss) -> tuple[bytes, bytes]:
    """The run_id's bytes before and after the member, as the words of `where` say."""
    n = len(miss.member) if "as many" in miss.where else 1
    middle = len(value) // 2
    return {
        "in place of the first byte": (b"", value[1:]),
        "in place of a middle byte": (value[:middle], value[middle + 1:]),
        "in place of the last byte": (value[:-1], b""),
        "in place of as many bytes at the start": (b"", value[n:]),
        "in place of as many bytes in the middle": (value[:middle], value[middle + n:]),
        "in place of as many bytes at the end": (value[:-n], b""),
        "inserted after the first byte": (value[:1], value[1:]),
        "inserted in the middle": (value[:middle], value[middle:]),
        "inserted before the last byte": (value[:-1], value[-1:]),
        "prepended": (b"", value),
        "appended": (value, b""),
        "at the start": (b"", value[1:]),
        "at the end": (value[:-1], b""),
    }[miss.where]


def test_none_is_a_run_id_and_each_value_is_made_once():
    made = [m.value for m in near_misses.near_misses(epoch.NOW)]
    assert not any(epoch.valid_run_id(v) for v in made)
    assert len(made) == len(set(made))


def test_the_classes_do_not_overlap_and_none_holds_a_hex_digit():
    members = [m for ms in near_misses.CLASSES.values() for m in ms]
    assert len(members) == len(set(members))
    assert not any(set(m) & set(epoch.HEX_DIGITS) for m in members)
    assert all(m.decode().isspace() for m in near_misses.CLASSES["ASCII whitespace"])
    assert all(m.decode().isdigit() and not m.isascii()
               for m in near_misses.CLASSES["a digit of another script (UTF-8)"])
    digits = {len(m) for m in near_misses.CLASSES["a digit of another script (UTF-8)"]}
    assert digits == {2, 3, 4}  # as the module's docstring says: two, three or four bytes
    high = near_misses.CLASSES["a byte at or above 0x80"]
    assert all(min(m) >= 0x80 for m in high)
    assert any(len(m) > 1 and _not_utf8(m) for m in high)
    assert any(len(m) > 1 and not _not_utf8(m) for m in high)


def _not_utf8(value: bytes) -> bool:
    try:
        value.decode()
    except UnicodeDecodeError:
        return True
    return False


def test_the_members_missed_are_named_when_few_and_counted_when_many():
    made = near_misses.near_misses(epoch.NOW)
    nul = [m for m in made if m.member == b"\x00" and m.where == "appended"]
    assert near_misses.missed_members(nul[0].kind, nul) == "b'\\x00' only"
    control = [m for m in made if m.kind == nul[0].kind]
    assert near_misses.missed_members(nul[0].kind, control) == ""
    upper = [m for m in made if m.member in (b"A", b"B", b"C", b"D")]
    assert near_misses.missed_members(upper[0].kind, upper) == "4 of its 6 members"
    assert near_misses.wheres(upper) == ", ".join(
        where for operation, _, where in near_misses.PLACES
        if operation is not Operation.AS_MANY)
