"""The restart-cost model's figure: a bar per queue of the healthy jobs restarts alone
dead-letter in a week, with its alt text, drawn onto an axes or as an SVG for an HTML area."""

import html

from trafikey_lab.plots import alt
from trafikey_lab.plots.palette import colour
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


def figure_svg(rows: list[dict]) -> str:
    import io

    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 3))
    plot_dead_letters(rows, ax=figure.add_subplot())
    figure.tight_layout()
    out = io.StringIO()
    figure.savefig(out, format="svg")
    svg = out.getvalue()
    label = html.escape(alt.required_alt_text(figure), quote=True)
    return svg[svg.index("<svg"):].replace("<svg", f'<svg role="img" aria-label="{label}"', 1)
