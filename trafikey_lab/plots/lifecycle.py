"""The one picture of notebook 00: a job's states, its lease, a stall and a restart.

Three states (pending, active, dead) and the transitions between them that the dive is about:
a claim grants a lease and stamps it, an extension pushes the deadline and re-stamps it, and
when a lease runs out the sweep either counts a stall (back to pending, or dead once the stall
budget max_stalled is spent) or, when the stamp is not the sweeping process's (the lease
crossed a restart, a replica was promoted, another tool wrote the field, or no native verb ever
stamped the row), sends the job back to pending uncounted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from trafikey_lab.plots.alt import describe
from trafikey_lab.plots.palette import GREY, colour

# matplotlib is loaded when the figure is drawn, as dead_letters.py and timeline.py load it: so
# notebook 00's face, which names draw_lifecycle, imports in a page with no matplotlib (the
# book, in Pyodide).
if TYPE_CHECKING:
    from matplotlib.axes import Axes

FIGSIZE = (10.0, 5.0)

# Each colour also has a label, and the counted and uncounted paths differ in line style too.
STATE_COLOURS = {"pending": colour("sky blue"), "active": colour("orange"), "dead": GREY}
WRITER = colour("bluish green")
COUNTED = colour("vermillion")
UNCOUNTED = colour("blue")

STATE_AT = {"pending": (1.5, 3.0), "active": (5.5, 3.0), "dead": (9.5, 3.0)}
BOX_W, BOX_H = 2.6, 1.0

STATE_TEXT = {
    "pending": "pending\nwaiting to be claimed",
    "active": "active\nleased until a deadline",
    "dead": "dead\nstall budget spent",
}


@dataclass(frozen=True)
class Transition:
    key: str
    source: str
    target: str
    label: str
    colour: str
    style: str
    rad: float
    label_at: tuple[float, float]


TRANSITIONS = (
    Transition("claim", "pending", "active",
               "EMQ.CLAIM: grants the lease,\nstamps lease_epoch = run_id",
               WRITER, "-", -0.35, (3.1, 4.6)),
    Transition("extend", "active", "active",
               "EMQ.EXTEND / EMQ.EXTENDS:\nnew deadline, stamp written again",
               WRITER, "-", 1.8, (5.5, 5.45)),
    Transition("stall", "active", "pending",
               "lease ran out, stamped by the sweeping process:\n"
               "counted, stalled + 1 still below max_stalled",
               COUNTED, "-", -0.5, (3.5, 1.55)),
    Transition("restart", "active", "pending",
               "lease ran out with a stamp not the sweeping process's (a restart, a promoted "
               "replica,\nbytes another tool wrote) or with no stamp (no native verb ever "
               "stamped the row):\nexempt, back uncounted, stalled untouched",
               UNCOUNTED, "--", -1.0, (3.5, -0.15)),
    Transition("dead", "active", "dead",
               "a counted stall whose count\nreaches max_stalled or more",
               COUNTED, "-", 0.0, (7.5, 3.85)),
)


@dataclass
class Lifecycle:
    """What draw_lifecycle drew: the axes, a box and its text per state, an arrow and its
    label per transition (keyed as in TRANSITIONS), and the title."""

    ax: Axes
    states: dict = field(default_factory=dict)
    state_texts: dict = field(default_factory=dict)
    arrows: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)


def _edge(state: str, side: str) -> tuple[float, float]:
    x, y = STATE_AT[state]
    return {
        "left": (x - BOX_W / 2, y), "right": (x + BOX_W / 2, y),
        "top": (x, y + BOX_H / 2), "bottom": (x, y - BOX_H / 2),
    }[side]


def _ends(t: Transition) -> tuple[tuple[float, float], tuple[float, float]]:
    """Where an arrow leaves its source box and enters its target box."""
    if t.key == "extend":
        x, top = _edge("active", "top")
        return (x + 0.4, top), (x - 0.4, top)
    if t.key == "claim":
        return _edge("pending", "top"), _edge("active", "top")
    if t.key == "stall":
        (x0, y0), (x1, y1) = _edge("active", "bottom"), _edge("pending", "bottom")
        return (x0 - BOX_W / 2 + 0.3, y0), (x1 + BOX_W / 2 - 0.3, y1)
    if t.key == "restart":
        return _edge("active", "bottom"), _edge("pending", "bottom")
    return _edge(t.source, "right"), _edge(t.target, "left")


def draw_lifecycle(ax=None) -> Lifecycle:
    """Draws the job lifecycle on `ax` (a new 10 x 5 in figure when None) and returns what it
    drew. Showing the figure is left to the caller."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    if ax is None:
        _, ax = plt.subplots(figsize=FIGSIZE)
    drawn = Lifecycle(ax)
    for state, (x, y) in STATE_AT.items():
        box = FancyBboxPatch((x - BOX_W / 2, y - BOX_H / 2), BOX_W, BOX_H,
                             boxstyle="round,pad=0.05", facecolor=STATE_COLOURS[state],
                             edgecolor="black", linewidth=1.2, label=state)
        ax.add_patch(box)
        drawn.states[state] = box
        drawn.state_texts[state] = ax.text(x, y, STATE_TEXT[state], ha="center",
                                           va="center", fontsize=10)
    for t in TRANSITIONS:
        start, end = _ends(t)
        arrow = ax.annotate(
            "", xy=end, xytext=start,
            arrowprops={"arrowstyle": "-|>", "color": t.colour, "linestyle": t.style,
                        "linewidth": 1.8, "connectionstyle": f"arc3,rad={t.rad}",
                        "shrinkA": 2, "shrinkB": 2},
        )
        drawn.arrows[t.key] = arrow
        drawn.labels[t.key] = ax.text(*t.label_at, t.label, ha="center", va="center",
                                      fontsize=8.5, color=t.colour,
                                      bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
    ax.set_xlim(0, 11)
    ax.set_ylim(-0.7, 6.0)
    ax.set_axis_off()
    ax.set_title("One job: the lease, a stall and a restart")
    describe(ax.figure, alt_text())
    return drawn


def alt_text() -> str:
    """The diagram in words: its states, then each arrow as source, target and label."""
    arrows = "; ".join(
        f"{t.source} to {t.target}" + (" (dashed)" if t.style == "--" else "")
        + f": {' '.join(t.label.split())}" for t in TRANSITIONS)
    return (f"Diagram of one job's three states, {', '.join(STATE_AT)}, and the arrows between "
            f"them. {arrows}.")
