"""The course's widgets as a page shows them, found by what a learner reads on them
(their labels, their button), never by the cell they sit in: notebooks change."""

import re

from playwright.sync_api import Locator, Page, expect

from trafikey_lab.widgets.run_id_checker import TYPE_YOUR_OWN

ANSWER_TIMEOUT = 30_000
"""Milliseconds for the kernel to answer a control (a figure redraw, on a busy machine)."""
LIVE_TIMEOUT = 90_000
"""Milliseconds for one Run live: restarts and a lease running out, on a busy machine."""

AGREE = "model and live agree at every step"
RUN_LIVE = re.compile(r"Run live$")
"""LeaseAcrossRestart's button, by its whole name (its icon comes before it), and not
ExplorableLease's "Run live at this timing"."""


def _one(root: Locator, what: str) -> Locator:
    count = root.count()
    assert count == 1, f"expected one {what} on the page, found {count}"
    return root


class RunIdCheckerView:
    """The RunIdChecker: the `value` dropdown, the `or type` box and one row per check."""

    def __init__(self, page: Page):
        self.page = page
        self.root = _one(page.locator(".jp-OutputArea-output").filter(
            has=page.get_by_label("or type", exact=True)), "RunIdChecker")
        self.choice = self.root.get_by_label("value", exact=True)
        self.typed = self.root.get_by_label("or type", exact=True)
        self.value = self.root.locator(".widget-html-content code").first

    def row(self, title: str) -> Locator:
        """The answer beside a row's bold title ("length", "shape check", ...)."""
        row = self.root.locator(".widget-hbox").filter(
            has=self.page.locator(".widget-html-content > b",
                                  has_text=re.compile(f"^{re.escape(title)}$")))
        return _one(row, f"row {title!r}").locator(":scope > :nth-child(2)")

    def type(self, text: str) -> None:
        """Empties the box and types the text key by key, as a learner does. The empty box
        is waited for first, so that no answer on screen is left from the value before."""
        if self.typed.input_value():
            self.typed.fill("")  # editing the box switches the dropdown to "type your own"
        else:
            self.choose(TYPE_YOUR_OWN)  # the box is empty already: nothing to edit
        self.shows("length", "0 bytes")
        if text:
            self.typed.press_sequentially(text)

    def paste(self, text: str) -> None:
        """Puts the whole text in the box at once, as a paste does."""
        self.typed.fill(text)

    def choose(self, name: str) -> None:
        self.choice.select_option(label=name)

    def shows(self, title: str, text: str | re.Pattern) -> None:
        """Waits for the kernel's answer to reach a row, then pins it; each row is its own
        widget, updated by its own message, so every row is waited for."""
        expect(self.row(title)).to_have_text(text, timeout=ANSWER_TIMEOUT)

    def shows_part(self, title: str, text: str) -> None:
        expect(self.row(title)).to_contain_text(text, timeout=ANSWER_TIMEOUT)


class LeaseAcrossRestartView:
    """The LeaseAcrossRestart: history, max_stalled, Run live and the status line under it."""

    def __init__(self, page: Page):
        self.page = page
        self.root = _one(page.locator(".jp-OutputArea-output").filter(
            has=page.get_by_role("button", name=RUN_LIVE)), "LeaseAcrossRestart")
        self.history = self.root.get_by_label("history", exact=True)
        self.max_stalled = self.root.get_by_label("max_stalled", exact=True)
        self.run_live = self.root.get_by_role("button", name=RUN_LIVE)
        self.status = _one(self.root.locator(".widget-hbox:has(button) + .widget-label"),
                           "status line under Run live")
        self.why = self.root.locator(".widget-html-content", has_text=re.compile("^why:"))
        self.counterfactual = self.root.locator(".widget-html-content",
                                                has_text=re.compile("^counterfactual"))

    def choose(self, title: str) -> None:
        self.history.select_option(label=title)

    def set_max_stalled(self, value: int) -> None:
        """Chooses the budget from its drop-down, found by its label as a screen reader finds it."""
        self.max_stalled.select_option(label=str(value))

    def wait_for_agreement(self) -> str:
        expect(self.status).to_contain_text(AGREE, timeout=LIVE_TIMEOUT)
        return self.status.inner_text()

    def wraps_status(self) -> None:
        status_wraps(self.status)


class ExplorableLeaseView:
    """The ExplorableLease: its number fields by their labels, the figure, the sentence, and
    Run live at this timing with the status line under it."""

    def __init__(self, page: Page):
        self.page = page
        self.root = _one(page.locator(".jp-OutputArea-output").filter(
            has=page.get_by_role("button", name="Run live at this timing")), "ExplorableLease")
        self.run_live = self.root.get_by_role("button", name="Run live at this timing")
        self.sentence = self.root.locator(".widget-html-content p b")
        self.figure = self.root.locator('svg[role="img"]')
        self.status = _one(self.root.locator(".widget-button + .widget-label"),
                           "status line under Run live at this timing")

    def field(self, label: str) -> Locator:
        return self.root.get_by_label(label, exact=True)

    def shows(self, text: str) -> None:
        expect(self.sentence).to_contain_text(text, timeout=ANSWER_TIMEOUT)

    def wait_for_agreement(self) -> str:
        expect(self.status).to_contain_text(AGREE, timeout=LIVE_TIMEOUT)
        return self.status.inner_text()

    def wraps_status(self) -> None:
        status_wraps(self.status)


STATUS_FITS = """(node) => {
  const box = node.closest('.jp-OutputArea-output').getBoundingClientRect();
  const line = node.getBoundingClientRect();
  return {right: line.right, edge: box.right, scroll: node.scrollWidth, width: node.clientWidth,
          height: line.height, lineHeight: parseFloat(getComputedStyle(node).lineHeight)};
}"""


def status_wraps(status: Locator) -> None:
    """The status line wraps inside the widget, measured in a page narrower than its text:
    its box ends before the output area's right edge, nothing of it is scrolled out of view,
    and it takes more than one line."""
    page = status.page
    size = page.viewport_size
    assert size is not None
    page.set_viewport_size({"width": 640, "height": size["height"]})
    try:
        status.scroll_into_view_if_needed()
        seen = status.evaluate(STATUS_FITS)
    finally:
        page.set_viewport_size(size)
    assert seen["right"] <= seen["edge"] + 0.5, seen
    assert seen["scroll"] <= seen["width"] + 1, seen
    assert seen["height"] > 1.5 * seen["lineHeight"], seen
