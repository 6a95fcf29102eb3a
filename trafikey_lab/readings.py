"""One value read in the run_id's two roles, as notebook 01 teaches them, and the dive's test
values under the names its tests give them.

As the run_id the module reads at load, a value must pass the shape check (40 characters of
0-9a-f) or the load is refused. As a lease_epoch stored on a row, the sweep only compares it
with the current run_id and never re-checks its shape. `read_value` gives both readings and the
C module's own answers to the same bytes; `readings_table` gives them for every named value.
The RunIdChecker widget shows a `Reading`.
"""

from dataclasses import dataclass

from . import epoch, native
from .table import Table

SHAPE_TEST = "run_ids_are_40_lowercase_hex"
EXEMPTION_TEST = "exemption_is_missing_or_different"

NAMED_VALUES: dict[str, bytes | None] = {
    "NOW": epoch.NOW,
    **epoch.SHAPE_REJECTS,
    **{f"lease_epoch {name}": value for name, value in epoch.FOREIGN_EPOCHS.items()},
}
"""The dive's test values, in the order its tests list them, under the names they go by."""

# What each test asserts about a value, in the tests' own words where they give a message.
_EXEMPTION_MESSAGES: dict[bytes | None, str] = {
    epoch.NOW: "same process: counted",
    None: "a missing field is exempt as well: exempt(None, NOW)",
    epoch.ZERO: "another process: exempt",
    b"": "an empty field is not this process",
}


@dataclass(frozen=True)
class Reading:
    """Both checks on one value (None: a lease_epoch field that is not there)."""

    value: bytes | None
    length: str
    valid: bool | None
    """The shape check's verdict; None when there are no bytes to check."""
    reason: str
    load: str
    native_valid: bool | None
    exempt: bool
    native_exempt: bool
    sweep: str
    tests: tuple[str, ...]

    @property
    def native_agrees(self) -> bool:
        return (self.valid, self.exempt) == (self.native_valid, self.native_exempt)


def _length(value: bytes | None) -> str:
    if value is None:
        return "no field: nothing stored"
    text = value.decode("utf-8", errors="replace")
    extra = f" ({len(text)} typed characters, UTF-8)" if len(text) != len(value) else ""
    return f"{len(value)} bytes{extra}"


def _tests(value: bytes | None) -> tuple[str, ...]:
    found = []
    if value == epoch.NOW:
        found.append(f"{SHAPE_TEST}: valid_run_id(NOW) is true")
    if value in epoch.SHAPE_REJECTS.values():
        found.append(f"{SHAPE_TEST}: one of the five values it must reject")
    if value in _EXEMPTION_MESSAGES:
        found.append(f'{EXEMPTION_TEST}: "{_EXEMPTION_MESSAGES[value]}"')
    return tuple(found)


def read_value(value: bytes | None, current: bytes = epoch.NOW) -> Reading:
    """The shape check and the load as the server's run_id; the exemption as a stored
    lease_epoch while the run_id is `current`; the C module's answers to the same bytes."""
    if value is None:
        valid = native_valid = None
        reason = "there are no bytes to check"
        load = ("the read finds no run_id field: the load is refused with "
                "ERR EMQ host call failed, logged as a warning")
    else:
        problem = epoch.shape_problem(value)
        valid, native_valid = problem is None, native.valid_run_id(value)
        reason = problem or f"{epoch.RUN_ID_LEN} characters, each one of 0-9 a-f"
        load = ("cached: the module keeps these bytes as its epoch for the life of the "
                "process, and a second load keeps them" if valid else
                "refused: ERR EMQ host call failed, logged as a warning; the module does not "
                "load and the server has no EMQ verbs")
    exempt = epoch.exempt(value, current)
    if exempt:
        sweep = ("exempt: the lease crossed a restart; back to pending with stalled "
                 "untouched, listed among the recovered")
    else:
        sweep = "counted: stalled + 1 against max_stalled (recovered below it, dead at it)"
    return Reading(
        value=value,
        length=_length(value),
        valid=valid,
        reason=reason,
        load=load,
        native_valid=native_valid,
        exempt=exempt,
        native_exempt=native.exempt(value, current),
        sweep=sweep,
        tests=_tests(value),
    )


def readings_table(current: bytes = epoch.NOW) -> Table:
    """Every named value read both ways, one row each: the shape check's verdict, what the
    load does, the exemption while the run_id is `current`, what the sweep does, and why the
    shape check said so. A missing field has no bytes to check, so its load is refused."""
    rows = []
    for name, value in NAMED_VALUES.items():
        r = read_value(value, current)
        rows.append((name, str(r.valid), "cached" if r.valid else "refused", str(r.exempt),
                     "exempt" if r.exempt else "counted", r.reason))
    return Table(("value", "valid", "at load", "exempt", "sweep", "why the shape check said so"),
                 tuple(rows))
