"""schedule_svg, tested on what it draws: the SVG parsed, its marks read by their classes."""

import xml.etree.ElementTree as ET

import pytest

from trafikey_lab import schedule as S
from trafikey_lab.plots.schedule_timeline import LEFT, RIGHT, WIDTH, alt_text, schedule_svg
from trafikey_lab.plots.svg import text_width

SVG = "{http://www.w3.org/2000/svg}"


def drawn(schedule: S.Schedule) -> ET.Element:
    return ET.fromstring(schedule_svg(schedule, S.decide(schedule)))


def marks(figure: ET.Element, kind: str) -> list[ET.Element]:
    return [e for e in figure.iter() if kind in (e.get("class") or "").split()]


def extent(text: ET.Element) -> tuple[float, float]:
    """A text's left and right edges, by the width the drawing allows for each character."""
    x, width = float(text.get("x")), text_width(text.text, float(text.get("font-size")))
    left = x - {"start": 0, "middle": width / 2, "end": width}[text.get("text-anchor")]
    return left, left + width


def span(rect: ET.Element) -> tuple[float, float]:
    return float(rect.get("x")), float(rect.get("x")) + float(rect.get("width"))


def ms_at(x: float, schedule_end: float) -> float:
    return (x - LEFT) / (WIDTH - LEFT - RIGHT) * schedule_end


@pytest.mark.parametrize("key", S.PRESETS)
def test_the_figure_is_an_image_titled_and_described_by_the_schedules_sentence(key):
    schedule = S.PRESETS[key][1]
    figure = drawn(schedule)
    assert figure.get("role") == "img"
    title, desc = figure.find(f"{SVG}title"), figure.find(f"{SVG}desc")
    assert figure.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    assert f"{schedule.lease_ms} ms lease at max_stalled {schedule.max_stalled}" in title.text
    assert desc.text == alt_text(schedule, S.decide(schedule))


def test_one_band_per_process_with_the_downtime_hatched_and_labelled_between_them():
    figure = drawn(S.PRESETS["restarted"][1])  # down from 400 to 700 ms
    first, second = marks(figure, "band")
    (downtime,) = marks(figure, "downtime")
    assert span(first)[1] == span(downtime)[0]
    assert span(downtime)[1] == span(second)[0]
    assert downtime.get("fill").startswith("url(#")
    pattern = figure.find(f".//{SVG}pattern[@id='{downtime.get('fill')[5:-1]}']")
    assert pattern.find(f"{SVG}path") is not None
    assert [t.text for t in marks(figure, "downtime-label")] == ["down 300 ms"]
    assert [t.text for t in marks(figure, "band-label")] == ["process 1", "process 2"]


def test_drawn_to_scale_the_restart_and_the_deadline_sit_at_their_milliseconds():
    schedule = S.PRESETS["restarted"][1]
    figure = drawn(schedule)
    (downtime,) = marks(figure, "downtime")
    left, right = span(downtime)
    # to scale: distances from the claim keep the ratios of the schedule's milliseconds
    assert ms_at(right, 1) / ms_at(left, 1) == pytest.approx(700 / 400, rel=0.01)
    (deadline,) = marks(figure, "deadline")
    assert ms_at(float(deadline.get("x1")), 1) / ms_at(left, 1) == pytest.approx(1000 / 400,
                                                                                  rel=0.01)


@pytest.mark.parametrize("restart_at_ms", [0, 5, 20, 60, 100, 400])
def test_each_band_label_fits_inside_its_band_or_sits_below_it(restart_at_ms):
    figure = drawn(S.Schedule(restart_at_ms=restart_at_ms, sweep_at_ms=1200))
    bands = {b.get("data-process"): b for b in marks(figure, "band")}
    for label in marks(figure, "band-label"):
        band = bands[label.get("data-process")]
        left, right = extent(label)
        top, bottom = float(band.get("y")), float(band.get("y")) + float(band.get("height"))
        if top < float(label.get("y")) <= bottom:
            assert span(band)[0] <= left, label.text
            assert right <= span(band)[1], label.text
        else:
            assert float(label.get("y")) > bottom + float(label.get("font-size")) / 2
            assert label.text == f"process {label.get('data-process')}"


def test_a_short_first_segment_is_labelled_below_its_band_not_across_the_downtime():
    figure = drawn(S.Schedule(restart_at_ms=20, sweep_at_ms=1200))
    first = marks(figure, "band-label")[0]
    assert first.text == "process 1"
    assert float(first.get("y")) > float(marks(figure, "band")[0].get("y")) + 30


def test_a_native_grant_is_a_filled_circle_and_a_script_grant_a_hollow_one():
    native = marks(drawn(S.PRESETS["restarted"][1]), "grant")
    assert [(g.get("class"), g.get("fill")) for g in native] == [("grant stamped", "black")]
    scripted = marks(drawn(S.PRESETS["upgrade"][1]), "grant")
    assert [(g.get("class"), g.get("fill")) for g in scripted] == [("grant hollow", "white")]
    extended = drawn(S.PRESETS["extended"][1])
    assert [t.text for t in marks(extended, "grant-label")] == [
        "EMQ.CLAIM · stamp: process 1", "EMQ.EXTEND · stamp: process 2"]


@pytest.mark.parametrize("key", S.PRESETS)
def test_the_sweep_line_carries_its_reading_and_outcome_in_words(key):
    schedule = S.PRESETS[key][1]
    d = S.decide(schedule)
    figure = drawn(schedule)
    (label,) = marks(figure, "sweep-label")
    assert label.text == f"sweep {d.sweep.at_ms} ms: {d.reading} → {d.outcome}"
    (line,) = marks(figure, "sweep")
    assert line.get("stroke-dasharray") is None  # due: a solid line; not due: dashed


def test_a_sweep_before_the_deadline_is_dashed_and_reads_not_read():
    figure = drawn(S.Schedule(restarts=False, sweep_at_ms=999))
    (line,) = marks(figure, "sweep")
    assert line.get("stroke-dasharray")
    assert marks(figure, "sweep-label")[0].text == "sweep 999 ms: not read → untouched"


@pytest.mark.parametrize("schedule", [S.PRESETS["stalled"][1], S.Schedule(sweep_at_ms=10_000),
                                      S.Schedule(worker="extend", worker_at_ms=1600),
                                      S.Schedule(restart_at_ms=9_900, sweep_at_ms=10)])
def test_no_text_runs_past_the_figures_edges(schedule):
    figure = drawn(schedule)
    for text in figure.iter(f"{SVG}text"):
        left, right = extent(text)
        assert left >= 0, text.text
        assert right <= WIDTH, text.text
