"""ExplorableLease driven as a learner would: set a field, read what it shows; press Run live."""

import html
import xml.etree.ElementTree as ET

import pytest

from trafikey_lab import schedule as S
from trafikey_lab.live.executor import LiveExecutor
from trafikey_lab.plots.schedule_timeline import alt_text
from trafikey_lab.stories import JOB
from trafikey_lab.traces import QUEUE
from trafikey_lab.widgets.explorable_lease import ExplorableLease

SVG = "{http://www.w3.org/2000/svg}"

ROW = (QUEUE.prefix + JOB).decode()


@pytest.fixture
def widget():
    return ExplorableLease()


def shown(widget):
    return html.unescape(widget.sentence.value), html.unescape(widget.reading_outcome.value)


def svg(widget) -> ET.Element:
    return ET.fromstring(widget.figure.value)


@pytest.mark.parametrize("key", S.PRESETS)
def test_each_preset_sets_every_control_and_shows_its_decision(widget, key):
    widget.preset.value = key
    _, schedule = S.PRESETS[key]
    assert widget.schedule == schedule
    sentence, reading_outcome = shown(widget)
    d = S.decide(schedule)
    told = S.sentence(schedule)
    if not told.startswith("extend2"):
        told = told[0].upper() + told[1:]
    assert sentence == f"<p><b>{told}.</b></p>"
    assert f"{d.reading} → {d.outcome}" in reading_outcome


def test_the_preset_drop_down_names_the_preset_the_fields_hold_or_says_they_hold_none(widget):
    widget.preset.value = "stalled"
    widget.fields["sweep_at_ms"].value = 1490
    assert widget.preset.value == "own"
    assert widget.preset.label == "your own schedule"
    assert widget.schedule.sweep_at_ms == 1490  # naming it changed no field
    widget.fields["sweep_at_ms"].value = 1500
    assert widget.preset.value == "stalled"
    widget.preset.value = "own"  # choosing it keeps the fields as they are
    assert widget.schedule == S.PRESETS["stalled"][1]


def test_moving_the_sweep_across_the_deadline_flips_reading_and_outcome_at_the_millisecond(widget):
    widget.preset.value = "stalled"
    widget.fields["sweep_at_ms"].value = 999
    assert "not read → untouched" in shown(widget)[1]
    assert "none (it finds no expired lease)" in shown(widget)[1]
    before = widget.figure.value
    widget.fields["sweep_at_ms"].value = 1000
    assert "counted → dead" in shown(widget)[1]
    assert f"HSET {ROW} state dead stalled 1" in shown(widget)[1]
    assert widget.figure.value != before
    (label,) = (t for t in svg(widget).iter(f"{SVG}text") if t.get("class") == "sweep-label")
    assert label.text == "sweep 1000 ms: counted → dead"
    assert "swept it at 1000 ms" in shown(widget)[0]


def test_moving_the_restart_past_the_deadline_makes_the_stall_the_workers(widget):
    widget.preset.value = "restarted"
    widget.fields["sweep_at_ms"].value = 1720
    widget.fields["restart_at_ms"].value = 1120
    assert "120 ms before the restart" in shown(widget)[0]
    assert "exempt → recovered" in shown(widget)[1]
    assert f"HSET {ROW} state pending" in shown(widget)[1]
    widget.fields["sweep_at_ms"].value = 1119
    assert "counted → dead" in shown(widget)[1]


def test_the_native_extension_moves_the_lease_to_the_process_it_reaches(widget):
    widget.preset.value = "extended"
    assert "counted → dead" in shown(widget)[1]
    widget.fields["worker_at_ms"].value = 399
    assert "exempt → recovered" in shown(widget)[1]
    widget.worker.value = "scripted_extend"
    widget.fields["worker_at_ms"].value = 800
    assert "exempt → recovered" in shown(widget)[1]
    assert "left the stamp of process 1" in shown(widget)[0]


def test_the_downtime_against_the_rest_of_the_lease(widget):
    widget.show(S.Schedule(lease_ms=500, restart_at_ms=100, restart_ms=399, sweep_at_ms=200))
    assert "not read → untouched" in shown(widget)[1]
    widget.fields["restart_ms"].value = 400
    assert "exempt → recovered" in shown(widget)[1]
    assert "asked for 200 ms, while the server was down" in shown(widget)[0]


def test_the_counterfactual_and_the_budget_follow_the_fields(widget):
    widget.preset.value = "restarted"
    assert "dead instead of recovered: without the epoch" in widget.counterfactual.value
    widget.fields["max_stalled"].value = 3
    widget.fields["stalled_before"].value = 1
    assert "still recovered: without the epoch" in widget.counterfactual.value
    assert "stalled 1 → 2 against max_stalled 3" in widget.counterfactual.value
    widget.restarts.value = False
    assert "counted → recovered" in shown(widget)[1]
    assert widget.fields["restart_at_ms"].disabled
    assert widget.fields["restart_ms"].disabled


def test_every_control_has_a_label_and_the_figure_says_what_it_shows(widget):
    for control in (widget.preset, widget.claim, widget.worker, widget.restarts,
                    *widget.fields.values()):
        assert control.description
    figure = svg(widget)
    assert figure.get("role") == "img"
    desc = figure.find(f"{SVG}desc").text
    told = S.sentence(widget.schedule)
    assert f"{told[0].upper()}{told[1:]}." in desc
    assert desc.startswith("Timeline to scale")
    assert desc == alt_text(widget.schedule, widget.decision)
    assert "max_stalled 1" in figure.find(f"{SVG}title").text


def test_a_field_out_of_bounds_is_held_at_its_bound(widget):
    widget.fields["lease_ms"].value = 0
    assert widget.fields["lease_ms"].value == 1
    assert widget.schedule.lease_ms == 1
    assert "cannot draw" not in widget.status.value


def test_run_live_without_a_server_says_how_to_give_it_one(widget):
    widget.run_live.click()
    assert "pass live=course.live" in widget.status.value


@pytest.mark.parametrize("key", ["restarted", "extended"])
def test_run_live_replays_the_timing_and_agrees_with_the_model(lab, key):
    widget = ExplorableLease(live=LiveExecutor(lab), preset=key)
    widget.run_live.click()
    assert "model and live agree at every step" in widget.status.value, widget.status.value
    assert widget.plan is not None
    assert widget.plan.held()
    assert "Every moment kept its order" in widget.replay.value
    assert "stretched to 900 ms" in widget.replay.value
    assert widget.live_trace.outcome == S.decide(widget.schedule).outcome
    assert not widget.run_live.disabled
    widget.fields["sweep_at_ms"].value += 10
    assert widget.replay.value == ""
    assert widget.comparison.value == ""


def test_a_replay_on_a_stopped_server_says_so_and_gives_the_button_back(servers):
    server = servers()
    widget = ExplorableLease(live=LiveExecutor(server))
    server.stop()
    widget.run_live.click()
    assert widget.status.value.startswith("the live run stopped: the lab's server is not running")
    assert not widget.run_live.disabled
    assert widget.plan is None
