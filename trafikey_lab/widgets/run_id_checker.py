"""RunIdChecker: the epoch's two checks on one value, as notebook 01 teaches them.

The widget only wires its controls to the library: a value's two readings (the shape check at
load, the exemption at the sweep, each with why) and the C module's answers come from
`trafikey_lab.readings.read_value`; here they are laid out one row each. The C answers are
those of the module file this lab built, opened through ctypes (`trafikey_lab.module.native`): the
file a server the lab starts loads, not necessarily the one an attached server
(TRAFIKEY_VALKEY_URL) loaded. The short rows are
Labels; the long ones are HTML, which wraps where a Label would cut the text off.
"""

import html

import ipywidgets as widgets

from trafikey_lab import epoch
from trafikey_lab.readings import NAMED_VALUES, Reading, read_value
from trafikey_lab.widgets.base import Widget

TYPE_YOUR_OWN = "type your own"


def _flag(value: bool | None) -> str:
    return "n/a" if value is None else str(value).lower()


def _shown(byte: int) -> str:
    return chr(byte) if 32 <= byte < 127 else f"\\x{byte:02x}"


def value_html(value: bytes | None) -> str:
    """The value in monospace, one byte at a time (non-ASCII as \\xNN), its first offending
    byte marked when the length is right and a byte is not."""
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


class RunIdChecker(Widget):
    """Pick one of the dive's test values, or type your own, and see both checks on it.

    Controls: `choice` (Dropdown) and `typed` (Text). Results: the HTML `value`, `length`,
    `shape`, `load`, `sweep`, `native` and `tests` (text escaped); HTML, not Labels, since the
    book's in-page widget manager draws a Label's value as nothing.
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
        self.length = widgets.HTML()
        self.shape = widgets.HTML()
        # flex: a long reading takes the row's remaining width and wraps inside it.
        self.load, self.sweep, self.native = (
            widgets.HTML(layout=widgets.Layout(flex="1 1 0%")) for _ in range(3))
        self.tests = widgets.HTML()
        self.reading: Reading | None = None
        self._syncing = False
        self.choice.observe(self._chosen, names="value")
        self.typed.observe(self._typed, names="value")
        self.lay_out(
            widgets.HBox([self.choice, self.typed]),
            self.value,
            self._row("length", self.length),
            self._row("shape check", self.shape),
            self._row("as the run_id at load", self.load),
            self._row("as a lease_epoch, swept under NOW", self.sweep),
            self._row("the module's C checks", self.native),
            self._row("the dive's test", self.tests),
        )
        self._show_choice()
        self.update()

    @staticmethod
    def _row(title: str, control) -> widgets.HBox:
        return widgets.HBox([widgets.HTML(f"<b>{title}</b>", layout=widgets.Layout(width="16em")),
                             control])

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
        self.length.value = html.escape(r.length, quote=False)
        self.shape.value = html.escape(f"valid_run_id → {_flag(r.valid)}: {r.reason}", quote=False)
        self.load.value = html.escape(r.load, quote=False)
        self.sweep.value = html.escape(f"exempt → {_flag(r.exempt)}: {r.sweep}", quote=False)
        if r.native_absent:
            self.native.value = ("the C module is not in this page (the page runs the model "
                                 "only): open the notebook live to ask it too")
        else:
            self.native.value = (
                f"trafikey_valid_run_id → {_flag(r.native_valid)}, trafikey_exempt → "
                f"{_flag(r.native_exempt)}: "
                + ("the C module agrees with both checks" if r.native_agrees
                   else "the C module DISAGREES with the model")
            )
        self.tests.value = ("<br>".join(html.escape(t) for t in r.tests)
                            or "none of the dive's test assertions names this value")
