"""draw_timeline, tested on what it drew: bands, labels, markers and colours, not pixels."""

import matplotlib

matplotlib.use("Agg")

import xml.etree.ElementTree as ET

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex

from trafikey_lab import HISTORIES, ModelExecutor, play
from trafikey_lab.plots.alt import alt_text as figure_alt
from trafikey_lab.plots.alt import img_html
from trafikey_lab.plots.svg import text_width
from trafikey_lab.plots.timeline import (
    FIGSIZE,
    OKABE_ITO,
    alt_text,
    draw_timeline,
    process_colour,
    timeline_svg,
)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def drawn(history, max_stalled=1):
    trace = play(history, max_stalled, ModelExecutor())
    return trace, draw_timeline(trace)


def texts(artists):
    return [a.get_text() for a in artists]


def test_one_band_per_process_labelled_with_its_short_run_id():
    _, stayed = drawn("stalled")
    assert texts(stayed["band_labels"]) == ["process 1 · run_id 3f2c…0812"]
    _, restarted = drawn("restarted")
    assert texts(restarted["band_labels"]) == ["process 1 · run_id 3f2c…0812",
                                               "process 2 · run_id 0000…0000"]


def test_bands_meet_at_the_restart_and_cover_every_step():
    trace, d = drawn("restarted")
    first, second = d["bands"]
    restart = [s.action for s in trace.steps].index("restart")
    assert first.get_x() == -0.5
    assert first.get_x() + first.get_width() == second.get_x() == restart
    assert second.get_x() + second.get_width() == len(trace.steps) - 0.5
    assert [line.get_xdata()[0] for line in d["restarts"]] == [restart]


def test_no_restart_line_when_the_server_stayed_up():
    _, d = drawn("stalled")
    assert d["restarts"] == []


def test_each_stamp_is_labelled_and_coloured_as_the_process_it_names():
    _, d = drawn("extended")
    assert texts(d["stamp_labels"]) == ["stamp 3f2c…0812", "stamp 0000…0000"]
    colours = [to_hex(m.get_color()) for m in d["stamps"]]
    assert colours == [to_hex(process_colour(0)), to_hex(process_colour(1))]
    assert [to_hex(b.get_facecolor()[:3]) for b in d["bands"]] == colours


def test_a_scripted_claim_is_a_hollow_marker_labelled_no_stamp():
    _, d = drawn("upgrade")
    (marker,) = d["stamps"]
    assert texts(d["stamp_labels"]) == ["no stamp"]
    assert marker.get_markerfacecolor() == "white"


def test_the_lease_runs_from_its_grant_to_the_deadline_at_the_expire_step():
    trace, d = drawn("extended")
    actions = [s.action for s in trace.steps]
    assert list(d["lease"].get_xdata()) == [actions.index("claim"), actions.index("expire")]
    assert list(d["deadline"].get_xdata()) == [actions.index("expire")]
    assert d["deadline"].get_marker() == "x"


@pytest.mark.parametrize("history", sorted(HISTORIES))
def test_the_sweep_marker_names_the_verdict_and_outcome_with_shape_and_colour(history):
    trace, d = drawn(history)
    assert d["sweep_label"].get_text() == f"sweep: {trace.reading} → {trace.outcome}"
    assert list(d["sweep"].get_xdata()) == [len(trace.steps) - 1]
    expected = ("D", "bluish green") if trace.exempt else ("s", "vermillion")
    assert (d["sweep"].get_marker(), to_hex(d["sweep"].get_color())) == (
        expected[0], to_hex(OKABE_ITO[expected[1]]))


def test_the_x_axis_names_the_steps_in_order():
    _trace, d = drawn("upgrade")
    labels = [t.get_text() for t in d["ax"].get_xticklabels()]
    assert labels == ["add", "scripted claim", "restart", "expire", "sweep"]


def test_without_an_ax_it_makes_a_fixed_size_figure():
    _, d = drawn("stalled")
    assert tuple(d["figure"].get_size_inches()) == FIGSIZE


def test_with_an_ax_it_draws_there_and_makes_no_figure():
    fig, ax = plt.subplots()
    count = len(plt.get_fignums())
    d = draw_timeline(play("restarted", 2, ModelExecutor()), ax=ax)
    assert d["ax"] is ax
    assert d["figure"] is fig
    assert len(plt.get_fignums()) == count
    assert "max_stalled 2" in ax.get_title()


@pytest.mark.parametrize("history", sorted(HISTORIES))
def test_the_figure_carries_alt_text_built_from_the_trace_it_draws(history):
    trace, d = drawn(history, 2)
    text = figure_alt(d["figure"])
    assert text == alt_text(trace)
    assert text.startswith(f'Timeline of one lease, "{trace.story.title}", max_stalled 2, '
                           "played on the model.")
    assert text.endswith(f": {trace.reading}, so the job is {trace.outcome}.")
    assert 'alt="Timeline of one lease' in img_html(d["figure"])


def test_the_alt_text_tells_each_step_and_which_process_each_stamp_names():
    _, d = drawn("extended")
    assert figure_alt(d["figure"]) == (
        'Timeline of one lease, "extended after the restart", max_stalled 1, played on the '
        "model. Steps in order: add; claim in process 1, which writes the stamp of process 1; "
        "restart, process 2 takes over; extend in process 2, which writes the stamp of process "
        "2; expire, the deadline passes; sweep in process 2. The sweep finds the stamp of "
        "process 2 and runs in process 2: counted, so the job is dead.")


def test_the_alt_text_says_a_script_writes_no_stamp_and_what_the_row_keeps():
    assert "scripted claim in process 1, which writes no stamp: the row has none" in \
        figure_alt(drawn("upgrade")[1]["figure"])
    extension = alt_text(play("fifth", 1, ModelExecutor()))
    assert "scripted extend in process 2, which writes no stamp: the row keeps the stamp of " \
           "process 1" in extension
    assert "The sweep finds the stamp of process 1 and runs in process 2: exempt" in extension


def test_the_alt_text_names_processes_by_number_never_by_run_id(live):
    trace = play("restarted", 1, live)
    text = alt_text(trace)
    assert "played on the live server." in text
    assert "finds the stamp of process 1 and runs in process 2: exempt" in text
    for run_id in trace.run_ids:
        assert run_id not in text
        assert f"{run_id[:4]}…{run_id[-4:]}" not in text


# -- the same timeline as SVG text, as the history player shows it -----------------------------

SVG = "{http://www.w3.org/2000/svg}"


def svg_of(history, max_stalled=1):
    trace = play(history, max_stalled, ModelExecutor())
    return trace, ET.fromstring(timeline_svg(trace))


def marks(figure, kind):
    return [e for e in figure.iter() if kind in (e.get("class") or "").split()]


def words(figure, kind):
    return [e.text for e in marks(figure, kind)]


@pytest.mark.parametrize("history", sorted(HISTORIES))
def test_the_svg_is_an_image_titled_by_the_history_and_described_by_its_alt_text(history):
    trace, figure = svg_of(history, 2)
    assert figure.get("role") == "img"
    title, desc = figure.find(f"{SVG}title"), figure.find(f"{SVG}desc")
    assert figure.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    assert title.text == f"Timeline of one lease: {trace.story.title} · max_stalled 2 · model"
    assert desc.text == alt_text(trace)


def test_the_svg_has_one_band_per_process_each_label_inside_its_band():
    _, figure = svg_of("restarted")
    bands = marks(figure, "band")
    assert [b.get("data-process") for b in bands] == ["1", "2"]
    assert words(figure, "band-label") == ["process 1 · run_id 3f2c…0812",
                                           "process 2 · run_id 0000…0000"]
    for band, label in zip(bands, marks(figure, "band-label"), strict=True):
        width = text_width(label.text, float(label.get("font-size")))
        left, right = float(band.get("x")), float(band.get("x")) + float(band.get("width"))
        assert left <= float(label.get("x")) - width / 2
        assert float(label.get("x")) + width / 2 <= right
    # the later process is hatched as well as coloured
    assert [h.get("data-process") for h in marks(figure, "band-hatch")] == ["2"]
    assert words(figure, "restart-label") == ["restart"]


def test_the_svg_marks_each_grant_filled_in_its_process_colour_or_hollow_for_a_script():
    _, extended = svg_of("extended")
    grants = marks(extended, "grant")
    assert [g.get("fill") for g in grants] == [process_colour(0), process_colour(1)]
    assert words(extended, "grant-label") == ["stamp 3f2c…0812", "stamp 0000…0000"]
    _, upgrade = svg_of("upgrade")
    assert [(g.get("class"), g.get("fill")) for g in marks(upgrade, "grant")] == [
        ("grant hollow", "white")]
    assert words(upgrade, "grant-label") == ["no stamp"]


@pytest.mark.parametrize("history", sorted(HISTORIES))
def test_the_svg_sweep_says_its_reading_and_outcome_by_words_shape_and_colour(history):
    trace, figure = svg_of(history)
    assert words(figure, "sweep-label") == [f"sweep: {trace.reading} → {trace.outcome}"]
    (sweep,) = marks(figure, "sweep")
    shape = "polygon" if trace.exempt else "rect"  # a diamond, or a square
    colour = OKABE_ITO["bluish green" if trace.exempt else "vermillion"]
    assert (sweep.tag, sweep.get("fill")) == (f"{SVG}{shape}", colour)
    assert len(marks(figure, "deadline")) == 2  # the two strokes of an x
    assert words(figure, "tick-label") == [s.action.replace("_", " ") for s in trace.steps]
