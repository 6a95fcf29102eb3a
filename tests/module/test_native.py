"""The module's pure C functions, through ctypes: the dive's values, the sweep's table, the model.

Every test here runs the compiled trafikey.so, not the Python model; the hypothesis tests at
the end put random inputs to both and require the same answer.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trafikey_lab import epoch, sweep
from trafikey_lab.module import native
from trafikey_lab.sweep import NOT_READ, Need, Seen, Verdict

NOW = b"3f2c0d8e9b1a4c5d6e7f8091a2b3c4d5e6f70812"
ZERO = b"0" * 40
COUNTER_MAX = 2**53 - 1


# -- the run_id shape check ---------------------------------------------------------------------


def test_dive_now_is_a_valid_run_id():
    assert native.valid_run_id(NOW)


@pytest.mark.parametrize(
    "value",
    [b"", NOW[:39], NOW.upper(), NOW[:39] + b"g", NOW + b"3"],
    ids=["empty", "39 characters", "upper case", "ends in g", "41 characters"],
)
def test_shape_check_rejects_the_dives_five_shapes(value):
    assert not native.valid_run_id(value)


def test_forty_zeros_is_a_valid_run_id():
    assert native.valid_run_id(ZERO)


def test_shape_check_rejects_an_embedded_nul():
    assert not native.valid_run_id(NOW[:20] + b"\0" + NOW[21:])


# -- the exemption ------------------------------------------------------------------------------


def test_lease_stamped_by_the_current_process_is_counted():
    assert not native.exempt(NOW, NOW)


@pytest.mark.parametrize(
    "stored", [None, ZERO, b""], ids=["missing", "forty 0s", "empty"]
)
def test_foreign_or_missing_stamp_is_exempt(stored):
    assert native.exempt(stored, NOW)


def test_exemption_compares_bytes_not_shape():
    assert native.exempt(NOW.upper(), NOW)
    assert native.exempt(NOW[:39], NOW)
    assert not native.exempt(b"not a run id", b"not a run id")


def one_byte_changed(value: bytes, position: int, byte: int) -> bytes:
    return value[:position] + bytes([byte]) + value[position + 1:]


@pytest.mark.parametrize("position", range(len(NOW)))
@pytest.mark.parametrize("byte", [ord("0"), ord("f"), 0, 0xFF], ids=["0", "f", "nul", "xff"])
def test_a_stamp_differing_from_now_in_any_one_byte_is_exempt_in_c_and_python(position, byte):
    if NOW[position] == byte:
        byte = ord("1")
    stamp = one_byte_changed(NOW, position, byte)
    assert native.exempt(stamp, NOW)
    assert epoch.exempt(stamp, NOW)


@given(st.binary(min_size=1, max_size=48), st.data())
def test_a_same_length_stamp_differing_in_any_one_byte_is_exempt_in_c_and_python(current, data):
    position = data.draw(st.integers(0, len(current) - 1), label="position")
    byte = data.draw(st.integers(0, 255).filter(lambda b: b != current[position]), label="byte")
    stamp = one_byte_changed(current, position, byte)
    assert native.exempt(stamp, current)
    assert epoch.exempt(stamp, current)


# -- counters -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [(b"0", 0), (b"1", 1), (b"41", 41), (str(COUNTER_MAX).encode(), COUNTER_MAX)],
)
def test_counter_reads_canonical_non_negative_integers(value, expected):
    assert native.counter(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        b"",
        b"-1",
        b"-0",
        b"+1",
        b"01",
        b"00",
        b" 1",
        b"1 ",
        b"1.0",
        b"1e3",
        b"x",
        b"1\x00",
        str(COUNTER_MAX + 1).encode(),
        b"9" * 20,
        b"9" * 40,
    ],
)
def test_counter_refuses_anything_else(value):
    assert native.counter(value) is None


# -- the sweep's decision table -----------------------------------------------------------------


def sweep_member(decide, run_id, max_stalled, row):
    """Runs a decide_member to its verdict over `row` (None: no row; else (type, fields))."""
    seen, asked = Seen(), []
    while isinstance(step := decide(run_id, max_stalled, seen), Need):
        asked.append(step)
        if step is Need.TYPE:
            seen = Seen(type="none" if row is None else row[0])
        else:
            name = "group" if step is Need.GROUP else step.name.lower()
            seen = Seen(**{**seen.__dict__, name: row[1].get(step.value)})
    return step, asked


def hash_row(**fields):
    return ("hash", dict(fields))


def test_member_without_row_is_a_ghost_after_one_read():
    assert sweep_member(native.decide_member, NOW, 3, None) == (Verdict("ghost"), [Need.TYPE])


@pytest.mark.parametrize("key_type", ["string", "list", "set", "zset", "stream"])
def test_member_row_of_another_type_refuses_with_wrongtype(key_type):
    row = (key_type, {})
    assert sweep_member(native.decide_member, NOW, 3, row) == (Verdict("wrongtype"), [Need.TYPE])


@pytest.mark.parametrize("group", [b"g1", b""], ids=["named", "empty"])
def test_lane_row_is_left_alone_before_its_stamp_is_read(group):
    row = hash_row(group=group, lease_epoch=NOW, stalled=b"not a number")
    assert sweep_member(native.decide_member, NOW, 3, row) == (
        Verdict("lane"),
        [Need.TYPE, Need.GROUP],
    )


@pytest.mark.parametrize("stored", [None, ZERO, b""], ids=["missing", "forty 0s", "empty"])
def test_foreign_stamp_is_exempt_without_reading_stalled(stored):
    row = hash_row(lease_epoch=stored, stalled=b"not a number")
    assert sweep_member(native.decide_member, NOW, 1, row) == (
        Verdict("exempt"),
        [Need.TYPE, Need.GROUP, Need.EPOCH],
    )


@pytest.mark.parametrize("stalled", [b"x", b"-1", b"01", b"", str(COUNTER_MAX + 1).encode()])
def test_counted_member_with_a_bad_stalled_field_refuses_the_sweep(stalled):
    row = hash_row(lease_epoch=NOW, stalled=stalled)
    assert sweep_member(native.decide_member, NOW, 3, row) == (
        Verdict("not_integer"),
        [Need.TYPE, Need.GROUP, Need.EPOCH, Need.STALLED],
    )


@pytest.mark.parametrize(
    ("stalled", "max_stalled", "expected"),
    [(None, 2, 1), (None, 3, 1), (b"1", 3, 2), (b"5", 100, 6)],
)
def test_counted_stall_under_the_budget_is_recovered(stalled, max_stalled, expected):
    row = hash_row(lease_epoch=NOW, stalled=stalled)
    verdict, asked = sweep_member(native.decide_member, NOW, max_stalled, row)
    assert verdict == Verdict("recovered", expected)
    assert asked == [Need.TYPE, Need.GROUP, Need.EPOCH, Need.STALLED]


@pytest.mark.parametrize(
    ("stalled", "max_stalled", "expected"),
    [(None, 1, 1), (b"1", 2, 2), (b"7", 3, 8), (str(COUNTER_MAX).encode(), 5, 2**53)],
)
def test_counted_stall_reaching_the_budget_is_dead(stalled, max_stalled, expected):
    row = hash_row(lease_epoch=NOW, stalled=stalled)
    assert sweep_member(native.decide_member, NOW, max_stalled, row)[0] == Verdict("dead", expected)


@pytest.mark.parametrize("max_stalled", [1, 2, 5])
@pytest.mark.parametrize(
    ("history", "run_id", "stamp", "counted"),
    [
        ("the worker stalled", NOW, NOW, True),
        ("the server restarted", ZERO, NOW, False),
        ("extended after the restart", ZERO, ZERO, True),
        ("claimed by a script before the upgrade", ZERO, None, False),
    ],
)
def test_four_histories_verdicts(history, run_id, stamp, counted, max_stalled):
    row = hash_row(lease_epoch=stamp)
    verdict, _ = sweep_member(native.decide_member, run_id, max_stalled, row)
    if not counted:
        assert verdict == Verdict("exempt")
    elif max_stalled == 1:
        assert verdict == Verdict("dead", 1)
    else:
        assert verdict == Verdict("recovered", 1)


# -- the C functions agree with the Python model ------------------------------------------------

hex_like = st.text(alphabet="0123456789abcdefABCDEFg \0", min_size=38, max_size=42).map(
    lambda s: s.encode("latin-1")
)
any_bytes = st.binary(max_size=48)
epochs = st.one_of(st.just(NOW), st.just(ZERO), hex_like, any_bytes)
numberish = st.one_of(
    st.integers(min_value=-5, max_value=2**64).map(lambda n: str(n).encode()),
    st.integers(min_value=COUNTER_MAX - 3, max_value=COUNTER_MAX + 3)
    .map(lambda n: str(n).encode()),
    st.text(alphabet="0123456789+- .e", max_size=22).map(str.encode),
    any_bytes,
)


@given(st.one_of(hex_like, any_bytes, st.just(NOW)))
def test_valid_run_id_matches_the_model(value):
    assert native.valid_run_id(value) == epoch.valid_run_id(value)


@given(st.one_of(st.none(), epochs), epochs)
def test_exempt_matches_the_model(stored, current):
    assert native.exempt(stored, current) == epoch.exempt(stored, current)


@given(numberish)
def test_counter_matches_the_model(value):
    assert native.counter(value) == epoch.counter(value)


def maybe_read(values):
    return st.one_of(st.just(NOT_READ), st.none(), values)


seens = st.builds(
    Seen,
    type=st.one_of(st.none(), st.sampled_from(["none", "string", "list", "hash", "set", "zset"])),
    group=maybe_read(st.sampled_from([b"", b"lane-1"])),
    epoch=maybe_read(epochs),
    stalled=maybe_read(numberish),
)


@given(
    st.sampled_from([NOW, ZERO]),
    st.integers(min_value=1, max_value=2**63 - 1),
    seens,
)
def test_decide_member_step_matches_the_model(run_id, max_stalled, seen):
    assert native.decide_member(run_id, max_stalled, seen) == sweep.decide_member(
        run_id, max_stalled, seen
    )


@given(
    st.sampled_from([NOW, ZERO]),
    st.integers(min_value=1, max_value=8),
    st.one_of(
        st.none(),
        st.tuples(
            st.sampled_from(["hash", "hash", "hash", "string", "zset"]),
            st.fixed_dictionaries(
                {},
                optional={
                    "group": st.sampled_from([b"", b"g"]),
                    "lease_epoch": st.one_of(st.just(NOW), st.just(ZERO), any_bytes),
                    "stalled": st.one_of(
                        st.integers(min_value=0, max_value=9).map(lambda n: str(n).encode()),
                        numberish,
                    ),
                },
            ),
        ),
    ),
)
def test_whole_member_decision_and_its_reads_match_the_model(run_id, max_stalled, row):
    assert sweep_member(native.decide_member, run_id, max_stalled, row) == sweep_member(
        sweep.decide_member, run_id, max_stalled, row
    )
