"""One value read in the run_id's two roles, as notebook 01 teaches them, and the dive's test
values under the names its tests give them.

As the run_id the module reads at load, a value must pass the shape check (40 bytes, each one
of 0-9 a-f) or the module refuses to load. As a lease_epoch stored on a row, the sweep only
compares it with the current run_id, byte for byte, and never re-checks its shape: a stamp is
exempt because it is not this process's, whatever the reason it is not. `read_value` gives both
readings, with why, and the C module's own answers to the same bytes. The RunIdChecker widget
shows a `Reading`.
"""

from dataclasses import dataclass

from trafikey_lab import epoch
from trafikey_lab.model import HOST_CALL_FAILED
from trafikey_lab.module import native

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

NO_RUN_ID_FIELD = "INFO server has no run_id field"
BAD_SHAPE = "run_id is not 40 characters of 0-9a-f"
"""Two of load_epoch's reasons for not loading an epoch, in trafikey.c's own words."""

LOAD_WARNING = "trafikey: emq epoch not loaded: "
"""The start of the warning OnLoad logs, before the reason, when it refuses the load."""

MODULE_LOAD_REFUSED = "Error loading the extension. Please check the server logs."
"""What Valkey's MODULE LOAD answers (after ERR) when a module's load function refuses."""


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
    native_exempt: bool | None
    """The C module's answers; both None in a page that runs the course's Python with no C
    module (the book in the reader's browser), where the model's checks are all there is."""
    sweep: str
    """What the sweep does with the value as a stored lease_epoch, and why."""
    tests: tuple[str, ...]

    @property
    def native_agrees(self) -> bool:
        return (self.valid, self.exempt) == (self.native_valid, self.native_exempt)

    @property
    def native_absent(self) -> bool:
        return self.native_exempt is None


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


def _refused(reason: str) -> str:
    return (f'refused: OnLoad logs the warning "{LOAD_WARNING}{reason}" and the module does '
            "not load (MODULE LOAD answers an error; a server started with --loadmodule "
            f"stops); the dive's Rust module refuses with {HOST_CALL_FAILED}")


def _load(value: bytes | None, valid: bool | None) -> str:
    if value is None:
        # a row's missing field, not INFO's: load never reads a row (NO_RUN_ID_FIELD is the
        # C's reason when INFO itself lacks the field, which a running server never shows)
        return ("n/a: a missing lease_epoch is a row's field, not a value load reads; load "
                "takes INFO server's run_id, never a row")
    if valid:
        return (f"cached: load_epoch copies these {len(value)} bytes into cached_run_id and the "
                "module loads with them as its epoch, until the process ends or the module "
                "is unloaded")
    return _refused(BAD_SHAPE)


def _sweep(value: bytes | None, current: bytes) -> str:
    """The sweep's reading of a stored lease_epoch under `current`."""
    if not epoch.exempt(value, current):
        return ("counted: the stamp is this process's run_id, so the lease ran out under a "
                "live server and the worker is charged: stalled + 1 against max_stalled "
                "(recovered while it is below max_stalled, dead once it reaches or passes it)")
    back = "; back to pending with stalled untouched, listed among the recovered"
    if value is None:
        return ("exempt: there is no stamp, so it is not this process's: no native verb left "
                "one on this row (every native claim and extension writes one, the scripts "
                "none)" + back)
    if epoch.valid_run_id(value):
        return ("exempt: a well-formed run_id, but not this process's (this server before "
                "a restart, another server, or bytes some tool wrote), so the sweep does not "
                "count the stall" + back)
    if value.lower() == current:
        differs = "only in case, and the comparison is byte for byte"
    elif len(value) != len(current):
        differs = f"({len(value)} bytes against {len(current)})"
    else:
        differs = ""
    return (f"exempt: these bytes differ from this process's run_id {differs}".rstrip()
            + ", so they are not its stamp. No native verb wrote them (they are not even a "
              "run_id: a plain command or another tool did), and the sweep never checks a "
              "stamp's shape, it only compares bytes" + back)


def read_value(value: bytes | None, current: bytes = epoch.NOW) -> Reading:
    """The shape check and the load as the server's run_id; the exemption as a stored
    lease_epoch while the run_id is `current`; the C module's answers to the same bytes."""
    in_page = native.in_page()
    if value is None:
        valid = native_valid = None
        reason = "there are no bytes to check"
    else:
        problem = epoch.shape_problem(value)
        valid = problem is None
        native_valid = None if in_page else native.valid_run_id(value)
        reason = problem or f"{epoch.RUN_ID_LEN} bytes, each one of 0-9 a-f"
    return Reading(
        value=value,
        length=_length(value),
        valid=valid,
        reason=reason,
        load=_load(value, valid),
        native_valid=native_valid,
        exempt=epoch.exempt(value, current),
        native_exempt=None if in_page else native.exempt(value, current),
        sweep=_sweep(value, current),
        tests=_tests(value),
    )

