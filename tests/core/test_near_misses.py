"""The near misses of a run_id the byte checkers try: every class at every place, none a run_id,
drawn afresh, named the same on every draw."""

import random

import pytest

from trafikey_lab import epoch, near_misses


@pytest.mark.parametrize("seed", range(5))
def test_every_class_is_put_at_every_place_and_a_byte_is_removed_at_either_end(seed):
    rng = random.Random(seed)
    value = near_misses.run_id(rng)
    made = near_misses.near_misses(value, rng)
    assert epoch.valid_run_id(value)
    assert [(m.kind, m.where) for m in made] == [
        *((kind, where) for kind in near_misses.CLASSES for where in near_misses.PLACES),
        *((near_misses.REMOVED, where) for where in near_misses.REMOVALS)]
    assert not any(epoch.valid_run_id(m.value) for m in made)
    for miss in made:
        if miss.kind == near_misses.REMOVED:
            assert miss.value in (value[1:], value[:-1])
            continue
        member = _member(value, miss)
        assert member in near_misses.CLASSES[miss.kind], miss
        if miss.where.startswith("in place of"):
            assert len(miss.value) == len(value), miss  # a UTF-8 member replaces as many bytes
        else:
            assert len(miss.value) == len(value) + len(member), miss


def _member(value: bytes, miss: near_misses.NearMiss) -> bytes:
    """The bytes the near miss holds where the run_id does not: the longest run between the
    common start and the common end."""
    start = 0
    while start < min(len(value), len(miss.value)) and value[start] == miss.value[start]:
        start += 1
    end = 0
    while (end < min(len(value), len(miss.value)) - start
           and value[-1 - end] == miss.value[-1 - end]):
        end += 1
    found = miss.value[start:len(miss.value) - end]
    # A member may equal the run_id's byte it sits beside; widen to a whole member.
    for member in near_misses.CLASSES[miss.kind]:
        if found in member and member in miss.value:
            return member
    return found


def test_nul_a_byte_that_is_not_utf8_and_valid_utf8_outside_ascii_are_tried_on_every_run():
    for seed in range(5):
        rng = random.Random(seed)
        values = [m.value for m in near_misses.near_misses(near_misses.run_id(rng), rng)]
        assert any(b"\x00" in v for v in values)
        high = [v for v in values if any(b >= 0x80 for b in v)]
        assert any(_not_utf8(v) for v in high)
        assert not all(_not_utf8(v) for v in high)


def _not_utf8(value: bytes) -> bool:
    try:
        value.decode()
    except UnicodeDecodeError:
        return True
    return False


def test_the_classes_do_not_overlap_and_none_holds_a_hex_digit():
    members = [m for ms in near_misses.CLASSES.values() for m in ms]
    assert len(members) == len(set(members))
    assert not any(set(m) <= set(epoch.HEX_DIGITS) for m in members)
    assert all(m.decode().isspace() for m in near_misses.CLASSES["ASCII whitespace"])
    assert all(m.decode().isdigit() and not m.isascii()
               for m in near_misses.CLASSES["a digit of another script (UTF-8)"])


def test_the_draw_changes_from_run_to_run_and_the_names_do_not():
    first = near_misses.near_misses(epoch.NOW, random.Random(1))
    second = near_misses.near_misses(epoch.NOW, random.Random(2))
    assert [m.value for m in first] != [m.value for m in second]
    assert [(m.kind, m.where) for m in first] == [(m.kind, m.where) for m in second]
