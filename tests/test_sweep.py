"""The sweep's step machine: the reads each verdict asks for, in order, and where it stops."""

import pytest

from trafikey_lab.epoch import NOW, ZERO
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


@pytest.mark.parametrize("max_stalled,kind", [(1, "dead"), (2, "recovered"), (5, "recovered")])
def test_a_first_counted_stall_dies_only_at_max_stalled_1(max_stalled, kind):
    seen = Seen(type="hash", group=None, epoch=NOW, stalled=None)
    assert decide_member(NOW, max_stalled, seen) == Verdict(kind, 1)


def test_refusals_are_marked_as_refusals():
    assert Verdict("wrongtype").refusal and Verdict("not_integer").refusal
    assert not Verdict("exempt").refusal
