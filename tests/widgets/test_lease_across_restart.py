"""LeaseAcrossRestart driven as a reader would: set a control or click, then read its outputs."""

import html
import threading
import xml.etree.ElementTree as ET

import ipywidgets as widgets
import pytest

from trafikey_lab import HISTORIES, LiveExecutor, ModelExecutor, play, reading_line
from trafikey_lab.plots.timeline import alt_text
from trafikey_lab.stories import JOB
from trafikey_lab.text import short
from trafikey_lab.traces import AGREE, DIFFER, MAX_STALLED, QUEUE
from trafikey_lab.widgets.lease_across_restart import LeaseAcrossRestart

SVG = "{http://www.w3.org/2000/svg}"


def texts(widget, kind: str) -> list[str]:
    return [t.text for t in ET.fromstring(widget.figure.value).iter(f"{SVG}text")
            if t.get("class") == kind]

EXEMPT = {"restarted", "upgrade"}


@pytest.fixture
def widget():
    return LeaseAcrossRestart()


@pytest.mark.parametrize("max_stalled", MAX_STALLED)
@pytest.mark.parametrize("history", sorted(HISTORIES))
def test_each_choice_shows_the_models_reading_line_writes_and_why(widget, history, max_stalled):
    widget.history.value = history
    widget.max_stalled.value = max_stalled
    expected = play(history, max_stalled, ModelExecutor(), QUEUE)
    assert reading_line(expected) in widget.reading.value
    assert "the writes the verdict implies" in widget.writes.value
    assert "the sweep wrote" not in widget.writes.value
    assert widget.trace.outcome == expected.outcome
    assert html.escape(HISTORIES[history].why) in widget.why.value
    row = QUEUE.row_key(JOB).decode()
    if history in EXEMPT:
        assert f"<li>HSET {row} state pending</li>" in widget.writes.value
        assert "stalled" not in widget.writes.value
    elif max_stalled == 1:
        assert f"<li>HSET {row} state dead stalled 1</li>" in widget.writes.value
    else:
        assert f"<li>HSET {row} state pending stalled 1</li>" in widget.writes.value


@pytest.mark.parametrize("history", sorted(HISTORIES))
def test_the_figure_is_redrawn_for_the_chosen_history(widget, history):
    widget.history.value = history
    widget.max_stalled.value = 3
    assert texts(widget, "sweep-label") == [
        f"sweep: {widget.trace.reading} → {widget.trace.outcome}"]
    assert texts(widget, "title") == [f"{HISTORIES[history].title} · max_stalled 3 · model"]


def test_the_figure_is_svg_text_the_widget_redraws(widget):
    first = widget.figure.value
    assert isinstance(widget.figure, widgets.HTML)
    assert first.startswith("<svg ")
    widget.history.value = "stalled"
    assert widget.figure.value.startswith("<svg ")
    assert widget.figure.value != first


@pytest.mark.parametrize("history", sorted(HISTORIES))
def test_the_figure_is_an_image_described_by_the_timelines_alt_text(widget, history):
    widget.history.value = history
    figure = ET.fromstring(widget.figure.value)
    assert figure.get("role") == "img"
    assert figure.find(f"{SVG}desc").text == alt_text(widget.trace)
    assert figure.find(f"{SVG}title").text.startswith(
        f"Timeline of one lease: {HISTORIES[history].title}")


def test_every_control_has_a_label_as_wide_as_its_text(widget):
    for control, label in ((widget.history, "history"), (widget.max_stalled, "max_stalled")):
        assert control.description == label
        assert control.style.description_width == "initial", f"{label} would be cut off"
    assert widget.run_live.description == "Run live"


def test_max_stalled_is_a_labelled_drop_down_of_the_budgets_a_learner_can_pick(widget):
    # An ipywidgets slider's handle carries no accessible name; a drop-down's <select> is
    # named by its label.
    assert isinstance(widget.max_stalled, widgets.Dropdown)
    assert [value for _, value in widget.max_stalled.options] == list(MAX_STALLED)
    assert [label for label, _ in widget.max_stalled.options] == [str(n) for n in MAX_STALLED]


def test_the_progress_bar_is_a_native_one_inside_its_visible_label(widget):
    steps = len(widget.trace.steps)
    assert widget.progress.value == (f'<label>live run <progress max="{steps}" value="0">'
                                     f"</progress> 0 of {steps} steps done</label>")


def test_the_figure_is_never_drawn_inside_an_output_widgets_context(monkeypatch):
    # Under Voila, output captured through `with output:` is written back to the kernel by the
    # server-side executor, a write that now and then goes unsent and hangs the page.
    def captured(self):
        raise AssertionError("the widget drew inside `with output:`")

    monkeypatch.setattr(widgets.Output, "__enter__", captured)
    widget = LeaseAcrossRestart()
    widget.max_stalled.value = 2
    assert "max_stalled 2" in widget.figure.value


@pytest.mark.parametrize("history", sorted(EXEMPT))
def test_with_max_stalled_1_an_exempt_lease_would_die_without_the_epoch(widget, history):
    widget.history.value = history
    widget.max_stalled.value = 1
    assert widget.trace.outcome == "recovered"
    assert "dead instead of recovered" in widget.counterfactual.value


@pytest.mark.parametrize("max_stalled", [2, 5])
def test_with_a_larger_budget_an_exempt_lease_would_only_lose_one_stall(widget, max_stalled):
    widget.history.value = "restarted"
    widget.max_stalled.value = max_stalled
    assert "still recovered" in widget.counterfactual.value
    assert "one stall of its budget spent on a restart" in widget.counterfactual.value


def test_a_counted_lease_is_counted_with_or_without_the_epoch(widget):
    widget.history.value = "stalled"
    assert "the same, dead: a counted lease is counted" in widget.counterfactual.value


def test_without_a_live_executor_run_live_says_so():
    widget = LeaseAcrossRestart(live=None)
    widget.run_live.click()
    assert widget.status.value.startswith("no live server")
    assert widget.live_trace is None


@pytest.mark.parametrize(("history", "outcome"), [("restarted", "recovered"), ("stalled", "dead")])
def test_run_live_plays_the_history_on_the_server_and_agrees_with_the_model(
        live, lab, history, outcome):
    widget = LeaseAcrossRestart(live=live)
    widget.history.value = history
    widget.max_stalled.value = 1
    seen = []
    widget.progress.observe(lambda change: seen.append(widget.steps_done), names="value")
    before = lab.run_id
    widget.run_live.click()
    assert widget.live_trace.outcome == outcome
    assert widget.status.value.endswith(
        "reading and outcome included, model and live agree at every step")
    stalled = "(none)" if history == "restarted" else "1"
    assert f"→ exempt = {str(history == 'restarted').lower()}, {outcome}; the reading is the " \
        f"lab's, from the row and the run_id, while the reply and stalled {stalled} are " \
        "the server's; " in widget.status.value
    assert widget.comparison.value.count(AGREE) == len(widget.trace.steps) + 1, \
        "one row per step, then the reading and outcome"
    assert DIFFER not in widget.comparison.value
    steps = len(widget.trace.steps)
    assert seen == [*list(range(1, steps)), steps]
    assert f'value="{steps}"></progress> {steps} of {steps} steps done' in widget.progress.value
    assert not widget.run_live.disabled
    row = live.row(QUEUE, JOB)
    if history == "restarted":
        assert lab.run_id != before
        assert row[b"state"] == b"pending"
        assert b"stalled" not in row
        assert row[b"lease_epoch"] == before.encode()
    else:
        assert row[b"state"] == b"dead"
        assert row[b"stalled"] == b"1"
        assert row[b"lease_epoch"] == lab.run_id.encode()
    assert short(lab.run_id) in widget.status.value


def test_changing_a_control_clears_the_last_live_run(live):
    widget = LeaseAcrossRestart(live=live)
    widget.history.value = "stalled"
    widget.run_live.click()
    widget.max_stalled.value = 2
    assert widget.live_trace is None
    assert widget.comparison.value == ""
    assert widget.steps_done == 0
    assert 'value="0"' in widget.progress.value


def test_a_live_run_on_a_stopped_server_is_reported_in_the_widget(servers):
    server = servers()
    widget = LeaseAcrossRestart(live=LiveExecutor(server))
    server.stop()
    widget.history.value = "stalled"
    widget.run_live.click()
    assert widget.status.value.startswith("the live run stopped:")
    assert widget.live_trace is None
    assert not widget.run_live.disabled


def test_a_restart_on_a_server_the_lab_did_not_start_is_reported_in_the_widget(lab, servers):
    lab.client.flushall()
    external = servers(url=lab.connection_url)
    widget = LeaseAcrossRestart(live=LiveExecutor(external))
    widget.history.value = "restarted"
    widget.run_live.click()
    assert "cannot restart it" in widget.status.value
    widget.history.value = "stalled"
    widget.run_live.click()
    assert widget.live_trace.outcome == "dead"


def test_a_second_press_during_a_live_run_is_ignored_and_the_first_run_finishes(live):
    # The page sends a second quick press before the button shows disabled, and the kernel
    # may handle it while the first run is still playing: here it lands mid-run, on another
    # thread, as the first run is about to restart the server.
    widget = LeaseAcrossRestart(live=live)
    widget.history.value = "restarted"
    second = []

    def press_again(change):
        if change["new"].endswith(": restart") and not second:
            second.append("pressed")
            presser = threading.Thread(target=widget.run_live.click)
            presser.start()
            presser.join(timeout=30)
            second.append(widget.status.value)

    widget.status.observe(press_again, names="value")
    widget.run_live.click()
    assert second == ["pressed", "step 3 of 5: restart"], "the second press changed nothing"
    assert widget.live_trace.outcome == "recovered"
    assert "model and live agree at every step" in widget.status.value
    assert not widget.run_live.disabled
