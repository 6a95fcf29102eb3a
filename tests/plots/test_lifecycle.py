"""draw_lifecycle: the states, the lease's writers, a stall and a restart, checked on what it
drew."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import pytest

from trafikey_lab.plots import alt, lifecycle
from trafikey_lab.plots.lifecycle import STATE_AT, draw_lifecycle


@pytest.fixture
def drawn():
    result = draw_lifecycle()
    yield result
    plt.close(result.ax.figure)


def test_a_new_figure_has_a_fixed_size_and_one_axes(drawn):
    figure = drawn.ax.figure
    assert tuple(figure.get_size_inches()) == (10.0, 5.0)
    assert len(figure.axes) == 1


def test_it_draws_on_the_axes_it_is_given():
    figure, ax = plt.subplots()
    try:
        assert draw_lifecycle(ax).ax is ax
        assert len(ax.patches) == 3
    finally:
        plt.close(figure)


def test_the_three_states_are_boxes_labelled_by_name(drawn):
    assert list(drawn.states) == ["pending", "active", "dead"]
    for state, box in drawn.states.items():
        assert drawn.state_texts[state].get_text().split("\n")[0] == state
        assert box.get_label() == state
        x, _y = STATE_AT[state]
        assert box.get_x() < x < box.get_x() + box.get_width()


def test_the_claim_stamps_the_lease_with_the_run_id(drawn):
    assert drawn.labels["claim"].get_text() == (
        "EMQ.CLAIM: grants the lease,\nstamps lease_epoch = run_id"
    )
    start, end = drawn.arrows["claim"].xyann, drawn.arrows["claim"].xy
    assert start[0] < STATE_AT["active"][0] - 1
    assert end[0] == STATE_AT["active"][0]


def test_both_extension_verbs_restamp(drawn):
    text = drawn.labels["extend"].get_text()
    assert "EMQ.EXTEND" in text
    assert "EMQ.EXTENDS" in text
    assert "stamp written again" in text


def test_a_stall_and_a_restart_both_lead_back_to_pending_but_only_the_stall_counts(drawn):
    pending_x = STATE_AT["pending"][0]
    for key in ("stall", "restart"):
        start, end = drawn.arrows[key].xyann, drawn.arrows[key].xy
        assert start[0] > end[0]
        assert abs(end[0] - pending_x) < 1.3
    assert "counted, stalled + 1 still below max_stalled" in drawn.labels["stall"].get_text()
    assert "exempt, back uncounted, stalled untouched" in drawn.labels["restart"].get_text()


def test_the_stall_budget_leads_to_dead(drawn):
    assert drawn.arrows["dead"].xy[0] < STATE_AT["dead"][0]
    assert "max_stalled" in drawn.labels["dead"].get_text()


def test_counted_and_uncounted_paths_differ_in_colour_and_line_style(drawn):
    stall, restart = drawn.arrows["stall"].arrow_patch, drawn.arrows["restart"].arrow_patch
    assert stall.get_linestyle() != restart.get_linestyle()
    assert mcolors.to_hex(stall.get_edgecolor()) != mcolors.to_hex(restart.get_edgecolor())
    for key, label in drawn.labels.items():
        arrow = drawn.arrows[key].arrow_patch
        assert mcolors.to_hex(label.get_color()) == mcolors.to_hex(arrow.get_edgecolor())


def test_the_axes_shows_no_ticks_and_names_the_picture(drawn):
    assert not drawn.ax.axison
    assert drawn.ax.get_title() == "One job: the lease, a stall and a restart"


def test_its_alt_text_names_every_state_and_says_every_arrow_with_its_label(drawn):
    text = alt.alt_text(drawn.ax.figure)
    assert text == lifecycle.alt_text()
    assert text.startswith("Diagram of one job's three states, pending, active, dead,")
    for t in lifecycle.TRANSITIONS:
        assert f"{t.source} to {t.target}" in text
        assert " ".join(t.label.split()) in text
    # Every foreign stamp, not only a restart's: a promoted replica and bytes another tool wrote
    # are exempt by the same rule.
    assert ("active to pending (dashed): lease ran out with a stamp not the sweeping process's "
            "(a restart, a promoted replica, bytes another tool wrote)") in text
