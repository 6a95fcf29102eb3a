"""The restart-cost model's figure: a bar per queue of the healthy jobs restarts alone
dead-letter in a week, with its alt text, drawn onto a matplotlib axes (05's stored figure)
or as SVG text by the library (the widget's, which moves)."""

from trafikey_lab.plots import alt
from trafikey_lab.plots.palette import colour
from trafikey_lab.plots.svg import CROSS_HATCH, DIAGONAL_HATCH, Drawing, text_width
from trafikey_lab.restart_costs import dead_text, footnotes, marked


def dead_letter_alt(rows: list[dict]) -> str:
    """The figure's alt text: what each bar shows, in the table's words, and its notes."""
    bars = "; ".join(f"{marked(r)} {dead_text(r)}" for r in rows)
    notes = "".join(f" {note}" for note in footnotes(rows))
    return (f"Horizontal bars, one per queue, of the healthy jobs that restarts alone "
            f"dead-letter in a week, in the model: {bars}.{notes}")


# Each bar also carries its queue's name, its value and a hatch of its own.
_COLOURS = tuple(colour(name) for name in ("blue", "orange", "bluish green", "reddish purple",
                                           "sky blue", "vermillion"))


def plot_dead_letters(rows: list[dict], ax=None):
    """A bar per queue: healthy jobs dead-lettered a week by restarts. Returns the bars."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3))
    names = [marked(r) for r in rows]
    values = [r["dead_per_week"] for r in rows]
    bars = ax.barh(names, values, color=_COLOURS[:len(rows)],
                   hatch=["", "//", "..", "xx", "\\\\", "oo"][:len(rows)], edgecolor="black")
    for bar, row in zip(bars, rows, strict=True):
        ax.annotate(dead_text(row), (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                    xytext=(4, 0), textcoords="offset points", va="center")
    ax.set_xlabel("healthy jobs dead-lettered a week by restarts (model)")
    ax.invert_yaxis()
    # Room on the right for the longest label, "fewer than one job in a billion".
    ax.set_xlim(0, max([*values, 1.0]) * 2.2)
    alt.describe(ax.figure, dead_letter_alt(rows))
    return bars


# One hatch a bar beside its colour, so that no bar is told from another by colour alone
# (the first bar, plain, is the only one without).
_HATCHES = ("", DIAGONAL_HATCH, "M1,1 h1.5 M5,5 h1.5", CROSS_HATCH, "M0,4 H8", "M4,0 V8")
BAR, GAP, TOP, WIDTH = 22, 12, 10, 700


def figure_svg(rows: list[dict]) -> str:
    """The same bars as SVG text built by the library (no matplotlib), so that the widget
    draws them alike in JupyterLab, in Voila and in the book's page, which has no matplotlib:
    a bar per queue, its name on the left, its value to the right of its end."""
    names = [marked(r) for r in rows]
    values = [r["dead_per_week"] for r in rows]
    labels = [dead_text(r) for r in rows]
    left = max(text_width(n) for n in names) + 16
    span = WIDTH - left - max(text_width(label) for label in labels) - 20
    scale = span / max([*values, 1.0])
    axis = TOP + len(rows) * (BAR + GAP)
    drawing = Drawing(WIDTH, axis + 34, "Healthy jobs that restarts alone dead-letter in a "
                      "week, one bar per queue, in the model", dead_letter_alt(rows))
    for i, (name, value, label) in enumerate(zip(names, values, labels, strict=True)):
        y = TOP + i * (BAR + GAP)
        hatch = _HATCHES[i % len(_HATCHES)]
        colour_ = _COLOURS[i % len(_COLOURS)]
        fill = drawing.hatch(f"bar{i}", hatch, "#000000", colour_) if hatch else colour_
        drawing.text(left - 8, y + BAR * 0.7, name, anchor="end", class_="queue")
        drawing.rect(left, y, value * scale, BAR, fill=fill, stroke="#000000", class_="bar")
        drawing.text(left + value * scale + 6, y + BAR * 0.7, label, class_="value")
    drawing.line(left, TOP - 4, left, axis, stroke="#000000")
    drawing.text(left + span / 2, axis + 22, "healthy jobs dead-lettered a week by restarts "
                 "(model)", anchor="middle", class_="axis-label")
    return drawing.svg()
