"""A reader who presses "Run in this page" and jumps straight to a widget gets the widget: the
page runs its own setup cell (the one calling `trafikey_lab.course.setup(`) once the kernel
starts, so a widget's cell, which uses the setup's `course`, does not stop on a NameError.

04's page is opened with the network cut off, "Run in this page" pressed, and the explorable
lease's cell run at once, the setup cell never run by hand. Its reading, outcome and figure are
held to what `schedule.decide` gives in CPython for the widget's opening schedule.
"""

from trafikey_lab import schedule as S
from trafikey_lab.course import IN_PAGE
from trafikey_lab.plots import schedule_timeline
from trafikey_lab.widgets.explorable_lease import ExplorableLease

from .page import STDERR, cell_with, open_live, run_and_wait
from .site import SCREENSHOTS

SETUP = "trafikey_lab.course.setup("


def test_a_widget_run_before_the_setup_cell_renders_since_the_page_ran_the_setup(
        browser, served):
    context, live = open_live(browser, served, "notebooks/04_one_lease_across_a_restart.html")
    try:
        page = live.page
        explorable = cell_with(page, "ExplorableLease(")
        # run_and_wait fails with the cell's traceback (the NameError) if `course` is missing
        run_and_wait(explorable, ".widget-text input")
        opening = ExplorableLease().schedule
        decision = S.decide(opening)
        output = explorable.locator(".cell_output")
        output.locator(f"text=reading → outcome: {decision.reading} → {decision.outcome}."
                       ).wait_for()
        assert output.locator("svg[role=img] desc").text_content() == \
            schedule_timeline.alt_text(opening, decision)
        # the setup cell ran in the page: its output is the library's one line for a page
        cell_with(page, SETUP).locator(".cell_output", has_text=IN_PAGE).wait_for()
        assert page.locator(f".cell_output {STDERR}").count() == 0
        assert "NameError" not in page.locator("main").inner_text()
        explorable.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / "runtime__04_setup_first.png"))
        page.locator(".trafikey-runtime").scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / "runtime__04_setup_status.png"))
        assert live.refused == []
        assert live.errors == []
    finally:
        context.close()
