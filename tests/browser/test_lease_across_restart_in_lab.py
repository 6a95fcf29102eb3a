"""LeaseAcrossRestart in notebook 04, in the browser: choose, press Run live, read the verdict.

Each history plays on the notebook's own live server (restarts included) and the widget says
whether the model and the server agreed at every step.
"""


import pytest
from lab_pages.notebook import course_notebook
from lab_pages.widgets import AGREE, ANSWER_TIMEOUT, LeaseAcrossRestartView
from playwright.sync_api import expect

from trafikey_lab import HISTORIES
from trafikey_lab.traces import counterfactual_note, play_on_model

NOT_RUN = "not run live yet for this choice"
COUNTED = {"stalled", "extended"}
"""The histories whose lease the sweeping process stamped itself: counted, not exempt."""

# Records every text the status line takes, so a test can read the whole sequence of what a
# learner saw, including the states that came and went between two looks.
RECORD_STATUS = """(node) => {
  window.statusSeen = [node.textContent];
  new MutationObserver(() => {
    const text = node.textContent;
    if (window.statusSeen[window.statusSeen.length - 1] !== text) window.statusSeen.push(text);
  }).observe(node, {childList: true, characterData: true, subtree: true});
}"""


@pytest.fixture(scope="module", params=[course_notebook("04")])
def notebook(request, notebooks):
    """Notebook 04, run; the id names the notebook, so -k "04" selects these tests."""
    run = notebooks.run(request.param)
    yield run
    LeaseAcrossRestartView(run.page).root.scroll_into_view_if_needed()
    run.screenshot("lease-across-restart")


@pytest.fixture
def lease(notebook):
    return LeaseAcrossRestartView(notebook.page)


def choose(lease: LeaseAcrossRestartView, history: str, max_stalled: int) -> None:
    """Sets both controls, then waits until the kernel has drawn this very choice.

    The page holds back a control's next value while the kernel is still busy with its last
    one, but sends a button press at once: a press made before the kernel has the final
    value would play the value before it. The why line names the history and the
    counterfactual names the budget, so together they show the kernel has both."""
    lease.choose(HISTORIES[history].title)
    lease.set_max_stalled(max_stalled)
    trace, _ = play_on_model(history, max_stalled)
    note = counterfactual_note(trace)
    expect(lease.why).to_have_text(f"why: {HISTORIES[history].why}", timeout=ANSWER_TIMEOUT)
    expect(lease.counterfactual).to_have_text(f"counterfactual, without the epoch: {note}",
                                              timeout=ANSWER_TIMEOUT)
    expect(lease.status).to_have_text(NOT_RUN, timeout=ANSWER_TIMEOUT)


@pytest.mark.parametrize("max_stalled", [1, 3])
@pytest.mark.parametrize("history", list(HISTORIES))
def test_run_live_agrees_with_the_model_for_each_history_and_budget(lease, history, max_stalled):
    choose(lease, history, max_stalled)
    lease.run_live.click()
    status = lease.wait_for_agreement()
    counted = history in COUNTED
    assert f"exempt = {str(not counted).lower()}" in status
    assert f", {'dead' if counted and max_stalled == 1 else 'recovered'};" in status
    expect(lease.run_live).to_be_enabled()
    lease.wraps_status()


def test_a_second_quick_press_of_run_live_does_not_break_the_first(notebook, lease):
    choose(lease, "stalled", 1)  # a change first, so the wait below sees a fresh redraw
    choose(lease, "restarted", 1)
    lease.status.evaluate(RECORD_STATUS)
    # Two presses inside a few milliseconds: both reach the button before the kernel has
    # had time to disable it.
    lease.run_live.click(click_count=2)
    lease.wait_for_agreement()
    notebook.wait_until_idle()
    expect(lease.run_live).to_be_enabled()
    seen = notebook.page.evaluate("window.statusSeen")
    runs = []
    for text in seen[1:]:
        if text.startswith("step 1 of"):
            runs.append([])
        assert runs, f"the status changed before any run started: {seen}"
        runs[-1].append(text)
    assert 1 <= len(runs) <= 2, f"two presses, {len(runs)} runs: {seen}"
    for run in runs:
        assert run[-1].startswith("done:"), f"a run did not end: {seen}"
        assert run[-1].endswith(AGREE), f"a run did not end in agreement: {seen}"
        assert not [text for text in run[:-1] if text.startswith("done:")], \
            f"one run's steps were interleaved with another's: {seen}"
    assert not [text for text in seen if "stopped" in text or "differ" in text], seen
