"""The sweep's step machine: the reads each verdict asks for, in order, and where it stops."""

import pytest

from trafikey_lab import sweep
from trafikey_lab.epoch import NOW, ZERO
from trafikey_lab.module import native
from trafikey_lab.sweep import Need, Seen, Verdict, decide, decide_member

ROWS = {
    "ghost": (None, Verdict("ghost"), [Need.TYPE]),
    "string": ("string", Verdict("wrongtype"), [Need.TYPE]),
    "lane": ({b"group": b"g"}, Verdict("lane"), [Need.TYPE, Need.GROUP]),
    "no stamp": ({}, Verdict("exempt"), [Need.TYPE, Need.GROUP, Need.EPOCH]),
    "foreign": ({b"lease_epoch": ZERO}, Verdict("exempt"), [Need.TYPE, Need.GROUP, Need.EPOCH]),
    "bad stalled": ({b"lease_epoch": NOW, b"stalled": b"x"}, Verdict("not_integer"),
                    [Need.TYPE, Need.GROUP, Need.EPOCH, Need.STALLED]),
    "recovered": ({b"lease_epoch": NOW, b"stalled": b"1"}, Verdict("recovered", 2),
                  [Need.TYPE, Need.GROUP, Need.EPOCH, Need.STALLED]),
    "dead": ({b"lease_epoch": NOW, b"stalled": b"2"}, Verdict("dead", 3),
             [Need.TYPE, Need.GROUP, Need.EPOCH, Need.STALLED]),
}


def reader(row):
    def read(need):
        if need is Need.TYPE:
            return "none" if row is None else row if isinstance(row, str) else "hash"
        return row.get(need.value.encode())
    return read


@pytest.mark.parametrize("name", list(ROWS))
def test_each_verdict_stops_at_its_own_read(name):
    row, verdict, reads = ROWS[name]
    assert decide(NOW, 3, reader(row)) == (verdict, reads)


def test_nothing_read_asks_for_the_type_first():
    assert decide_member(NOW, 1, Seen()) is Need.TYPE


def test_an_exempt_members_stalled_field_is_never_read_whatever_it_holds():
    asked = []

    def read(need):
        asked.append(need)
        if need is Need.STALLED:
            raise AssertionError("the sweep read an exempt member's stalled field")
        return reader({b"lease_epoch": ZERO, b"stalled": b"not a number"})(need)

    assert decide(NOW, 1, read) == (Verdict("exempt"), [Need.TYPE, Need.GROUP, Need.EPOCH])
    assert asked == [Need.TYPE, Need.GROUP, Need.EPOCH]


@pytest.mark.parametrize(("max_stalled", "kind"), [(1, "dead"), (2, "recovered"), (5, "recovered")])
def test_a_first_counted_stall_dies_only_at_max_stalled_1(max_stalled, kind):
    seen = Seen(type="hash", group=None, epoch=NOW, stalled=None)
    assert decide_member(NOW, max_stalled, seen) == Verdict(kind, 1)


def test_refusals_are_marked_as_refusals():
    assert Verdict("wrongtype").refusal
    assert Verdict("not_integer").refusal
    assert not Verdict("exempt").refusal


# -- the stamp comparison on near misses, in the model's step machine and in the C one ---------

DECIDERS = {"model": sweep.decide_member, "C": native.decide_member}

NEAR_MISSES = {
    "the last byte off": NOW[:-1] + b"3",
    "the first byte off": b"4" + NOW[1:],
    "a prefix: the first 39 bytes": NOW[:-1],
    "one byte longer": NOW + b"0",
    "the run_id twice": NOW + NOW,
    "in upper case": NOW.upper(),
    "empty": b"",
}
"""Stamps a comparison that is not byte for byte over the whole length would take for NOW: a
compare of the shorter length, of all but the last byte, or one that ignores case."""


@pytest.mark.parametrize("decider", DECIDERS)
@pytest.mark.parametrize("name", NEAR_MISSES)
def test_a_stamp_that_is_not_the_run_id_byte_for_byte_is_exempt(decider, name):
    assert NEAR_MISSES[name] != NOW
    seen = Seen(type="hash", group=None, epoch=NEAR_MISSES[name])
    assert DECIDERS[decider](NOW, 3, seen) == Verdict("exempt")


@pytest.mark.parametrize("decider", DECIDERS)
def test_the_run_ids_own_bytes_are_counted_and_go_on_to_stalled(decider):
    decide_with = DECIDERS[decider]
    stamp = bytes(bytearray(NOW))  # equal bytes in another object: the bytes are compared
    seen = Seen(type="hash", group=None, epoch=stamp)
    assert decide_with(NOW, 3, seen) is Need.STALLED
    counted = Seen(**{**seen.__dict__, "stalled": None})
    assert decide_with(NOW, 3, counted) == Verdict("recovered", 1)


@pytest.mark.parametrize("decider", DECIDERS)
def test_the_run_id_is_a_near_miss_of_a_longer_or_shorter_current_run_id(decider):
    """The comparison is symmetric in length: the stored NOW is foreign to a current value
    that extends it or that it extends."""
    seen = Seen(type="hash", group=None, epoch=NOW)
    assert DECIDERS[decider](NOW + b"0", 3, seen) == Verdict("exempt")
    assert DECIDERS[decider](NOW[:-1], 3, seen) == Verdict("exempt")
    assert DECIDERS[decider](ZERO, 3, seen) == Verdict("exempt")


# -- the domain's words ------------------------------------------------------------------------


def test_every_verdict_the_c_gives_is_a_kind_and_every_kind_is_one_the_c_gives():
    assert set(native.VERDICTS.values()) == set(sweep.Kind)


def test_a_word_is_its_string_printed_compared_and_shown_as_before():
    assert sweep.Kind.DEAD == "dead"
    assert f"{sweep.Outcome.UNTOUCHED}" == "untouched"
    assert repr(Verdict(sweep.Kind.EXEMPT)) == "Verdict(kind='exempt', stalled=None)"
    assert sweep.Reading("not read") is sweep.Reading.NOT_READ


def test_the_model_s_decisions_are_kinds_not_bare_strings():
    verdict, _ = decide(NOW, 2, {sweep.Need.TYPE: "hash"}.get)
    assert type(verdict.kind) is sweep.Kind
