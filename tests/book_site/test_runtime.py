"""The page's Python in the reader's browser (book/_assets/trafikey-runtime.js), tried as a reader
would: the 00 page opened with every request to another host refused, "Run in this page"
pressed, a cell edited and run, a widget typed into. Pyodide, the kernel and every wheel come
from the site; the widget's callback runs in Pyodide.

What a reader waits for is measured and written to screenshots/runtime.json: from the page's
load to the kernel ready and to the first widget answering, and one change's time to the
updated text. Nothing here asserts a goal on them (the machine is shared): the numbers go to
docs/benchmarks.md's section on the book's page (tools/book.py timings).

The course's own cells run in the page: 01's run_id checker answers a typed value as `epoch`
does (and says the C module is not in the page), and 00's prediction exercise, edited in the
page, is checked there. The library imports in Pyodide because its pure core and these faces
load no redis, matplotlib or numpy (tests/notebooks/test_in_page.py holds that in CPython).
"""

import time

import pytest

from .page import ANSWER_TIMEOUT_MS, cell_with, open_live, record, run_cell
from .site import SCREENSHOTS

TYPED = "lease_epoch"
# A reader's edit of the exercise cell: a text field whose observer, in Pyodide, writes how
# many UTF-8 bytes the typed text has into an HTML widget.
PROBE = """import ipywidgets as w
typed = w.Text(description="value")
verdict = w.HTML()
typed.observe(lambda change: setattr(verdict, "value",
              f"{len(change['new'].encode())} bytes"), names="value")
w.VBox([typed, verdict])"""


@pytest.fixture(scope="module")
def start_here(browser, served):
    context, live = open_live(browser, served, "notebooks/00_start_here.html")
    page = live.page
    cell = cell_with(page, "def predict")
    cell.locator(".CodeMirror").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(PROBE)
    run_cell(cell)
    field_ = cell.locator(".widget-text input")
    field_.wait_for(timeout=ANSWER_TIMEOUT_MS)
    verdict = cell.locator(".widget-html-content")
    changed = time.monotonic()
    field_.fill(TYPED)
    verdict.filter(has_text="bytes").wait_for(timeout=ANSWER_TIMEOUT_MS)
    live.timings["load_to_first_answer_s"] = time.monotonic() - live.started
    live.timings["change_to_updated_text_ms"] = (time.monotonic() - changed) * 1000
    live.timings["answer"] = verdict.inner_text()
    SCREENSHOTS.mkdir(exist_ok=True)
    cell.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "runtime__00_start_here.png"))
    yield live
    context.close()


def test_the_page_boots_python_and_a_widget_answers_a_typed_value_from_pyodide(start_here):
    assert start_here.timings["answer"] == f"{len(TYPED.encode())} bytes"
    kept = record(**{key: value for key, value in start_here.timings.items()
                     if isinstance(value, float)})
    print(f"\nthe page's Python: {kept}")


def test_a_second_change_answers_too_so_the_callback_stays_attached(start_here):
    cell = cell_with(start_here.page, "import ipywidgets as w")
    cell.locator(".widget-text input").fill("é")
    cell.locator(".widget-html-content", has_text="2 bytes").wait_for()


def test_nothing_is_requested_from_another_host_and_no_console_error(start_here):
    assert start_here.refused == []
    assert start_here.errors == []


def test_the_stored_outputs_stay_until_their_cell_runs(start_here):
    cell = cell_with(start_here.page, "preflight()")
    assert cell.locator(".cell_output").inner_text().strip() != ""


def test_the_run_id_checker_answers_a_typed_value_as_epoch_does(browser, served):
    from trafikey_lab import epoch

    context, live = open_live(browser, served, "notebooks/01_one_value_per_process.html")
    try:
        cell = cell_with(live.page, "RunIdChecker()")
        run_cell(cell)
        answered = cell.locator(".cell_output .widget-text input")
        failed = cell.locator(".cell_output [data-mime-type='application/vnd.jupyter.stderr']")
        answered.or_(failed).first.wait_for(timeout=ANSWER_TIMEOUT_MS)
        assert failed.count() == 0, failed.first.inner_text()[-400:]
        typed = "0" * 39 + "g"
        answered.fill(typed)
        expected = epoch.shape_problem(typed.encode())
        assert expected is not None
        cell.locator(".cell_output", has_text=expected).wait_for()
    finally:
        context.close()


def test_the_prediction_exercise_edited_in_the_page_is_checked(start_here):
    page = start_here.page
    cell = cell_with(page, "import ipywidgets as w")
    cell.locator(".CodeMirror").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(
        "from trafikey_lab.course.start_here import check_sweep_prediction\n"
        "check_sweep_prediction(lambda lease_epoch, run_id, stalled, max_stalled:"
        " ('counted', 'recovered'))")
    run_cell(cell)
    output = cell.locator(".cell_output")
    failed = output.locator("[data-mime-type='application/vnd.jupyter.stderr']")
    checked = output.filter(has_text="predict what the sweep does")
    checked.or_(failed).first.wait_for(timeout=ANSWER_TIMEOUT_MS)
    assert failed.count() == 0, failed.first.inner_text()[-400:]
