"""The model-side widgets of 04 and 05 run in the page as a reader moves them, with no server:
their cells run in Pyodide, and every answer is held to what the library gives in this
process (CPython) for the same field values.

- 04's explorable lease: the sweep moved by keyboard (the up arrow) and the restart by mouse
  (its field's step-up arrow) change the reading and the outcome to what `schedule.decide`
  gives for the schedule the page's fields now hold, and its SVG timeline's description to
  `schedule_timeline.alt_text`'s. Each move's time, from the press to the updated text and
  figure, goes to screenshots/runtime.json.
- 04's history player plays a history on the model in the page: its reading line and its
  timeline are the trace's that `traces.play_on_model` plays here.
- 02's diagnostic question answers a choice with the question's own feedback.
- 05's live parts, the replica and RQ's play, refuse in one line in the page.
- Once the page's Python runs, the notes beside the widgets and checkers say what now runs here
  and what still needs a server.
"""

from dataclasses import replace

import pytest

from trafikey_lab import schedule as S
from trafikey_lab.player import reading_line
from trafikey_lab.plots import schedule_timeline, timeline
from trafikey_lab.questions import THREE_WRITERS
from trafikey_lab.traces import play_on_model
from trafikey_lab.widgets.explorable_lease import DESCRIPTIONS, ExplorableLease
from trafikey_lab.widgets.lease_across_restart import LeaseAcrossRestart

from .page import cell_with, open_live, record, run_and_wait, timed_move
from .site import SCREENSHOTS

SETUP = "course = trafikey_lab.course.setup()"
IN_PAGE = "This page runs the course's Python in your browser"


def number_field(output, label: str):
    return output.locator(f".widget-text:has(label:text-is('{label}')) input")


def chosen(select) -> str:
    # ipywidgets writes an option's spaces as no-break spaces
    return select.evaluate("s => s.selectedOptions[0].textContent.replace(/\\u00a0/g, ' ')")


def shown_schedule(output) -> S.Schedule:
    """The schedule the explorable's fields hold in the page, read from its controls."""
    options = ExplorableLease()
    selects = output.locator("select")
    claim = dict(options.claim.options)[chosen(selects.nth(1))]
    worker = dict(options.worker.options)[chosen(selects.nth(2))]
    restarts = output.locator(".widget-checkbox input").is_checked()
    times = {name: int(number_field(output, label).input_value())
             for name, label in DESCRIPTIONS.items()}
    return S.Schedule(claim=claim, worker=worker, restarts=restarts, **times)


def decided(schedule: S.Schedule) -> tuple[str, str]:
    """What the explorable must show for the schedule: its reading and outcome, and its
    figure's description, from the library in this process."""
    d = S.decide(schedule)
    return (f"reading → outcome: {d.reading} → {d.outcome}.",
            schedule_timeline.alt_text(schedule, d))


@pytest.fixture(scope="module")
def lease_page(browser, served):
    context, live = open_live(browser, served, "notebooks/04_one_lease_across_a_restart.html")
    run_and_wait(cell_with(live.page, SETUP), f"text={IN_PAGE}")
    yield live
    context.close()


@pytest.fixture(scope="module")
def explorable(lease_page):
    cell = cell_with(lease_page.page, "lease = ExplorableLease(")
    run_and_wait(cell, ".widget-text input")
    return cell


def test_the_sweep_moved_by_keyboard_changes_the_reading_and_outcome_as_decide_says(
        lease_page, explorable):
    output = explorable.locator(".cell_output")
    sweep = number_field(output, DESCRIPTIONS["sweep_at_ms"])
    sweep.focus()
    lease_page.page.keyboard.press("Control+A")
    lease_page.page.keyboard.type("990")
    before = shown_schedule(output)
    assert before == S.Schedule(sweep_at_ms=990)
    text, desc = decided(before)
    output.locator(f"text={text}").wait_for()
    assert "not read" in text, "at 990 ms the lease is not due yet"
    moved = S.Schedule(sweep_at_ms=1000)
    text, desc = decided(moved)
    took = timed_move(explorable, lambda: sweep.press("ArrowUp"), text, desc)
    assert shown_schedule(output) == moved
    assert "exempt → recovered" in text, "one step later the sweep reads the stamp"
    record(move_by_keyboard_ms=took)


def test_the_restart_moved_by_mouse_changes_the_reading_and_outcome_as_decide_says(
        lease_page, explorable):
    output = explorable.locator(".cell_output")
    restart = number_field(output, DESCRIPTIONS["restart_at_ms"])
    restart.fill("1000")
    before = shown_schedule(output)
    assert before == S.Schedule(sweep_at_ms=1000, restart_at_ms=1000)
    output.locator(f"text={decided(before)[0]}").wait_for()
    # one click on the field's step-up arrow, at its right edge: the restart moves past the
    # sweep, so the process that granted the lease sweeps it
    moved = replace(before, restart_at_ms=1010)
    text, desc = decided(moved)
    box = restart.bounding_box()

    def click_up():
        restart.hover()
        lease_page.page.mouse.click(box["x"] + box["width"] - 8, box["y"] + box["height"] * 0.3)

    took = timed_move(explorable, click_up, text, desc)
    assert shown_schedule(output) == moved
    assert "exempt → recovered" in decided(before)[0]
    assert "counted → dead" in text
    record(move_by_mouse_ms=took)
    explorable.scroll_into_view_if_needed()
    lease_page.page.screenshot(path=str(SCREENSHOTS / "runtime__04_explorable.png"))


def test_the_history_player_plays_a_history_on_the_model_in_the_page(lease_page):
    cell = cell_with(lease_page.page, "LeaseAcrossRestart(live=")
    run_and_wait(cell, "select")
    output = cell.locator(".cell_output")
    player = LeaseAcrossRestart()
    keys = [key for _, key in player.history.options]
    budgets = [budget for _, budget in player.max_stalled.options]
    for key, max_stalled in (("extended", 1), ("stalled", 2)):
        trace, _ = play_on_model(key, max_stalled)
        selects = output.locator("select")
        took = timed_move(cell, lambda key=key, max_stalled=max_stalled, selects=selects: (
            selects.nth(0).select_option(index=keys.index(key)),
            selects.nth(1).select_option(index=budgets.index(max_stalled))),
            reading_line(trace), timeline.alt_text(trace))
        output.locator(f"text={trace.reading} → {trace.outcome}: the writes the verdict "
                       "implies").wait_for()
        record(history_move_ms=took)
    cell.scroll_into_view_if_needed()
    lease_page.page.screenshot(path=str(SCREENSHOTS / "runtime__04_history_player.png"))


def test_the_question_answers_each_choice_with_its_own_feedback_in_the_page(browser, served):
    # 02 keeps the course's one diagnostic question after the rewrite
    context, live = open_live(browser, served, "notebooks/02_three_writers.html")
    try:
        run_and_wait(cell_with(live.page, SETUP), f"text={IN_PAGE}")
        cell = cell_with(live.page, "three_writers.stamp_question()")
        run_and_wait(cell, "input[type=radio]")
        question = THREE_WRITERS
        output = cell.locator(".cell_output")
        wrong = next(o for o in question.options if not o.right)
        right = next(o for o in question.options if o.right)
        for option in (wrong, right):
            label = question.labels()[question.options.index(option)]
            output.locator("label", has_text=label).click()
            mark = "✓" if option.right else "✗"
            output.locator(f"text={mark} {question.feedback(option)}").wait_for()
        # the longest option wraps onto a second line, above the answer, not into it
        labels = output.locator(".widget-radio-box label")
        last = max((labels.nth(i).bounding_box() for i in range(labels.count())),
                   key=lambda box: box["height"])
        answer = output.locator(".widget-html-content").last.bounding_box()
        assert last["y"] + last["height"] <= answer["y"]
        cell.scroll_into_view_if_needed()
        live.page.screenshot(path=str(SCREENSHOTS / "runtime__02_question.png"))
        assert live.refused == []
    finally:
        context.close()


def test_once_the_page_runs_its_notes_say_what_runs_here_and_what_still_needs_a_server(
        lease_page):
    notes = lease_page.page.locator(".trafikey-live-note")
    texts = [notes.nth(i).inner_text() for i in range(notes.count())]
    widgets_ = [t for t in texts if "these controls answer from the model" in t]
    checkers = [t for t in texts if "what the checker plays on the model" in t]
    assert len(widgets_) + len(checkers) == len(texts) > 0
    assert all(t.startswith("Runs in this page.") and "live kernel" not in t for t in texts)
    assert any("Pressing “Run live” still needs the live server" in t for t in widgets_)
    assert any("“Run live at this timing” still needs the live server" in t for t in widgets_)
    assert checkers, "04's fifth history is checked on the model and live"
    lease_page.page.locator(".trafikey-live-note").first.scroll_into_view_if_needed()
    lease_page.page.screenshot(path=str(SCREENSHOTS / "runtime__04_note.png"))


def test_nothing_is_requested_from_another_host_and_no_console_error_on_04(lease_page):
    assert lease_page.refused == []
    assert lease_page.errors == []


def test_05s_live_parts_refuse_in_one_line_in_the_page(browser, served):
    # (that the recordings read with no redis is held in CPython by test_in_page.py: their
    # stored table here would answer a wait before the run did)
    context, live = open_live(browser, served, "notebooks/05_beyond_one_server.html")
    try:
        page = live.page
        run_and_wait(cell_with(page, SETUP), f"text={IN_PAGE}")
        run_and_wait(cell_with(page, "beyond.replica_copy("), "text=is not in this page")
        run_and_wait(cell_with(page, "beyond.play_rq()"), "text=is not in this page")
        assert live.refused == []
        assert live.errors == []
    finally:
        context.close()
