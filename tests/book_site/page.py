"""A book page whose Python runs in the browser (book/_assets/trafikey-runtime.js), opened as a
reader would: every request to another host refused and recorded, "Run in this page" pressed,
the kernel waited for; then its cells found, run and their widgets moved, each move timed.

What the reader waits for is kept in screenshots/runtime.json (`record`), which
`tools/book.py timings` writes into docs/benchmarks.md once the book's checks have run.
"""

import json
import os
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from chromium import VIEWPORT
from playwright.sync_api import BrowserContext, Page

from .site import SCREENSHOTS

BOOT_TIMEOUT_MS = 180_000
ANSWER_TIMEOUT_MS = 60_000
RUN = "text=Run in this page"
RUNTIME_JSON = SCREENSHOTS / "runtime.json"
STDERR = "[data-mime-type='application/vnd.jupyter.stderr']"


@dataclass
class Live:
    page: Page
    started: float
    errors: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


def open_live(browser, served, page_name: str) -> tuple[BrowserContext, Live]:
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(ANSWER_TIMEOUT_MS)
    own = urlsplit(served.base).netloc
    live = Live(page=context.new_page(), started=time.monotonic())

    def route(route_):
        url = route_.request.url
        if urlsplit(url).netloc == own or url.startswith(("data:", "blob:", "about:")):
            route_.continue_()
        else:
            live.refused.append(url)
            route_.abort()

    context.route("**/*", route)
    page = live.page
    page.on("console", lambda message: live.errors.append(message.text)
            if message.type == "error" else None)
    page.on("pageerror", lambda error: live.errors.append(f"uncaught: {error}"))
    page.on("response", lambda response: live.errors.append(
        f"{response.url} (HTTP {response.status})") if response.status >= 400 else None)
    live.started = time.monotonic()
    page.goto(served.base + page_name, wait_until="load")
    page.click(RUN)
    page.wait_for_function("window.trafikeyRuntime.ready", timeout=BOOT_TIMEOUT_MS)
    live.timings["load_to_kernel_ready_s"] = time.monotonic() - live.started
    return context, live


def cell_with(page: Page, text: str):
    """The page's cell (its editor and its output) whose source contains text now, found by
    its editor's id so that editing the source does not lose it."""
    box = page.locator(".thebe-cell", has_text=text).first.get_attribute("data-thebe-id")
    return page.locator(f"div.cell:has([data-thebe-id='{box}'])")


def run_cell(cell) -> None:
    cell.locator("button.thebe-run-button").click()


def run_and_wait(cell, answered: str) -> None:
    """Runs the cell and waits for `answered` (a selector inside its output) or a traceback,
    which fails the test with its last lines."""
    run_cell(cell)
    output = cell.locator(".cell_output")
    failed = output.locator(STDERR)
    output.locator(answered).or_(failed).first.wait_for(timeout=ANSWER_TIMEOUT_MS)
    assert failed.count() == 0, failed.first.inner_text()[-3000:]


# Installed just before a move: the time from the move's first key or mouse press (or a
# drop-down list's change) to the first moment the widget shows what the test expects, both in
# its text and in its figure's description (the SVG's <desc>), read on every change of its DOM.
WATCH_MOVE = """({selector, text, desc}) => {
    const root = document.querySelector(selector);
    const move = window.trafikeyMove = {start: null, done: null};
    const begin = () => { if (move.start === null) move.start = performance.now(); };
    // a choice made in a drop-down list arrives as its change alone
    for (const kind of ['keydown', 'mousedown', 'change']) {
        document.addEventListener(kind, begin, {capture: true, once: true});
    }
    const shown = () => {
        const found = root.querySelector('svg[role=img] desc');
        return root.innerText.includes(text) && !!found && found.textContent === desc;
    };
    const observer = new MutationObserver(() => {
        if (move.start !== null && shown()) {
            move.done = performance.now();
            observer.disconnect();
        }
    });
    observer.observe(root, {subtree: true, childList: true, characterData: true,
                            attributes: true});
}"""


def timed_move(cell, move, text: str, desc: str) -> float:
    """Milliseconds from the move's first press to `text` in the cell's output and `desc` as
    its figure's description; fails when they are not shown within ANSWER_TIMEOUT_MS."""
    box = cell.locator("[data-thebe-id]").first.get_attribute("data-thebe-id")
    selector = f"div.cell:has([data-thebe-id='{box}']) .cell_output"
    page = cell.page
    page.evaluate(WATCH_MOVE, {"selector": selector, "text": text, "desc": desc})
    move()
    page.wait_for_function("window.trafikeyMove.done !== null", timeout=ANSWER_TIMEOUT_MS)
    return page.evaluate("window.trafikeyMove.done - window.trafikeyMove.start")


def record(**timings) -> dict:
    """Adds these timings to screenshots/runtime.json, with the machine's load beside them."""
    SCREENSHOTS.mkdir(exist_ok=True)
    kept = json.loads(RUNTIME_JSON.read_text()) if RUNTIME_JSON.exists() else {}
    kept.update({key: round(value, 1) if isinstance(value, float) else value
                 for key, value in timings.items()})
    kept["cores"] = os.cpu_count()
    kept["load_average"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    RUNTIME_JSON.write_text(json.dumps(kept, indent=1) + "\n")
    return kept
