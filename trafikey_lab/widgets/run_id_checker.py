"""RunIdChecker: the epoch's two checks on one value, as notebook 01 teaches them.

A value is checked twice, in two roles. As the run_id the module reads at load, it must pass the
shape check (40 characters of 0-9a-f) or the load is refused. As a lease_epoch stored on a row,
the sweep only compares it with the current run_id (NOW here) and never re-checks its shape.
`read_value` computes both readings, and the C module's own shape check, without any widget;
the widget shows them.
"""

import html
from dataclasses import dataclass

import ipywidgets as widgets

from .. import epoch, native

TYPE_YOUR_OWN = "type your own"

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


def _flag(value: bool | None) -> str:
    return "n/a" if value is None else str(value).lower()


def _shown(byte: int) -> str:
    return chr(byte) if 32 <= byte < 127 else f"\\x{byte:02x}"


def value_html(value: bytes | None) -> str:
    """The value in monospace, one byte at a time (non-ASCII as \\xNN), its first offending
    character marked when the length is right and a character is not."""
    if value is None:
        return "<code>(no lease_epoch field)</code>"
    if not value:
        return "<code>(empty: b\"\")</code>"
    bad = None
    if len(value) == epoch.RUN_ID_LEN:
        bad = next((i for i, byte in enumerate(value) if byte not in epoch.HEX_DIGITS), None)
    parts = [html.escape(_shown(byte)) for byte in value]
    if bad is not None:
        parts[bad] = f"<mark>{parts[bad]}</mark>"
    return f"<code>{''.join(parts)}</code>"


class RunIdChecker:
    """Pick one of the dive's test values, or type your own, and see both checks on it.

    Controls: `choice` (Dropdown) and `typed` (Text). Results: `value`, `tests` (HTML) and the
    Labels `length`, `shape`, `load`, `sweep`, `native`.
    """

    def __init__(self, current: bytes = epoch.NOW):
        self.current = current
        self.choice = widgets.Dropdown(
            options=[*NAMED_VALUES, TYPE_YOUR_OWN], value="NOW", description="value",
            layout=widgets.Layout(width="22em"),
        )
        self.typed = widgets.Text(
            placeholder="any text; it is checked as UTF-8 bytes", description="or type",
            layout=widgets.Layout(width="40em"),
        )
        self.value = widgets.HTML()
        self.length = widgets.Label()
        self.shape = widgets.Label()
        self.load = widgets.Label()
        self.sweep = widgets.Label()
        self.native = widgets.Label()
        self.tests = widgets.HTML()
        self.reading: Reading | None = None
        self._syncing = False
        self.choice.observe(self._chosen, names="value")
        self.typed.observe(self._typed, names="value")
        self.box = widgets.VBox([
            widgets.HBox([self.choice, self.typed]),
            self.value,
            self._row("length", self.length),
            self._row("shape check", self.shape),
            self._row("as the run_id at load", self.load),
            self._row("as a lease_epoch, swept under NOW", self.sweep),
            self._row("the module's C checks", self.native),
            self._row("the dive's test", self.tests),
        ])
        self._show_choice()
        self.update()

    @staticmethod
    def _row(title: str, control) -> widgets.HBox:
        return widgets.HBox([widgets.HTML(f"<b>{title}</b>", layout=widgets.Layout(width="16em")),
                             control])

    def _repr_mimebundle_(self, **kwargs):
        return self.box._repr_mimebundle_(**kwargs)

    def selected(self) -> bytes | None:
        if self.choice.value == TYPE_YOUR_OWN:
            return self.typed.value.encode("utf-8")
        return NAMED_VALUES[self.choice.value]

    def _show_choice(self) -> None:
        """Copies a named value into the text box, so it can be edited from there."""
        value = NAMED_VALUES.get(self.choice.value)
        if self.choice.value != TYPE_YOUR_OWN:
            self._syncing = True
            self.typed.value = "" if value is None else value.decode()
            self._syncing = False

    def _chosen(self, change) -> None:
        self._show_choice()
        self.update()

    def _typed(self, change) -> None:
        if self._syncing:
            return
        if self.choice.value != TYPE_YOUR_OWN:
            self._syncing = True
            self.choice.value = TYPE_YOUR_OWN
            self._syncing = False
        self.update()

    def update(self) -> None:
        r = self.reading = read_value(self.selected(), self.current)
        self.value.value = value_html(r.value)
        self.length.value = r.length
        self.shape.value = f"valid_run_id → {_flag(r.valid)}: {r.reason}"
        self.load.value = r.load
        self.sweep.value = f"exempt → {_flag(r.exempt)}: {r.sweep}"
        self.native.value = (
            f"trafikey_valid_run_id → {_flag(r.native_valid)}, trafikey_exempt → "
            f"{_flag(r.native_exempt)}: "
            + ("the C module agrees with both checks" if r.native_agrees
               else "the C module DISAGREES with the model")
        )
        self.tests.value = ("<br>".join(html.escape(t) for t in r.tests)
                            or "none of the dive's test assertions names this value")
