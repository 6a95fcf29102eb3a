"""One lease's history as a timeline: the server processes, the stamps, the deadline, the sweep.

The x axis is the history's steps in order, not clock time: on the model the clock does not
move between a claim and a restart, so a time axis would draw them on top of each other. Two
lanes: the server processes above (one band per process, labelled with its run_id), the
lease below (its grant and extensions, each marked with the stamp it wrote, its deadline and
the sweep's reading and outcome). The figure carries alt text (`alt_text`) that tells the same
story in words, its processes named by number so that a live run_id never reaches a stored
notebook.

Drawn two ways: `timeline_svg`, the SVG text the history player redraws on every choice (in any
page, the book's own Python included, which has no matplotlib), and `draw_timeline`, the
matplotlib figure of the notebooks' static cells. Only the second needs matplotlib, so it
imports it itself: importing this module does not.
"""

from trafikey_lab.player import Trace
from trafikey_lab.plots.palette import OKABE_ITO
from trafikey_lab.plots.svg import DIAGONAL_HATCH, Drawing, fitting
from trafikey_lab.stories import GRANTS
from trafikey_lab.text import reply, short

FIGSIZE = (8.0, 2.8)

PROCESS_COLOURS = ("orange", "sky blue", "reddish purple", "yellow")
EXEMPT_COLOUR = "bluish green"
COUNTED_COLOUR = "vermillion"

SERVER_Y = 1.0
LEASE_Y = 0.0
SCRIPTED = ("scripted_claim", "scripted_extend")
"""Grants made by a script: they write no stamp, so their marker is hollow."""


def process_colour(index: int) -> str:
    # Okabe and Ito are two people: their names are joined by an en dash, not a hyphen.
    """The Okabe–Ito colour of the index-th process of a history (0 is the first)."""  # noqa: RUF002
    return OKABE_ITO[PROCESS_COLOURS[index % len(PROCESS_COLOURS)]]


SVG_WIDTH, SVG_HEIGHT = 720, 206
SVG_LEFT, SVG_RIGHT = 56, 12
SVG_SERVER_TOP, SVG_SERVER_HEIGHT = 46, 30
SVG_LEASE_Y = 118
SVG_FONT = 11
PAD = 4
"""Between a band's edge and its label."""


def title(trace: Trace) -> str:
    return f"{trace.story.title} · max_stalled {trace.max_stalled} · {trace.executor}"


def _svg_grant(fig: Drawing, step, processes: list[str], at: float, below: float) -> None:
    """One grant's marker on the lease line, and its stamp written below it: hollow for a
    grant that wrote no stamp, else in the colour of the process whose stamp it wrote."""
    stamp = step.row.get(b"lease_epoch")
    if step.action in SCRIPTED or stamp is None:
        fig.circle(at, SVG_LEASE_Y, 7, fill="white", stroke="black", stroke_width=1.5,
                   class_="grant hollow")
        text = "no stamp" if stamp is None else f"no new stamp ({short(stamp)} stays)"
    else:
        owner = processes.index(stamp.decode()) if stamp.decode() in processes else None
        fill = process_colour(owner) if owner is not None else OKABE_ITO["black"]
        fig.circle(at, SVG_LEASE_Y, 7, fill=fill, stroke="black", stroke_width=1.5,
                   class_="grant stamped")
        text = f"stamp {short(stamp)}"
    fig.text(at, below, text, "middle", SVG_FONT, class_="grant-label")


def _svg_sweep(fig: Drawing, trace: Trace, at: float) -> None:
    """The sweep's verdict by shape as well as colour: a diamond for exempt, a square for
    counted, and the reading and outcome beside it."""
    fill = OKABE_ITO[EXEMPT_COLOUR if trace.exempt else COUNTED_COLOUR]
    if trace.exempt:
        fig.polygon([(at, SVG_LEASE_Y - 8), (at + 8, SVG_LEASE_Y), (at, SVG_LEASE_Y + 8),
                     (at - 8, SVG_LEASE_Y)], fill=fill, stroke="black", class_="sweep exempt")
    else:
        fig.rect(at - 7, SVG_LEASE_Y - 7, 14, 14, fill=fill, stroke="black",
                 class_="sweep counted")
    fig.text(at + 8, SVG_LEASE_Y - 14, f"sweep: {trace.reading} → {trace.outcome}", "end",
             SVG_FONT, class_="sweep-label")


def timeline_svg(trace: Trace) -> str:
    """The trace as one `<svg role="img">`: what `draw_timeline` draws, as SVG text. Its title
    names the history, its description is `alt_text`."""
    steps = trace.steps
    processes = list(trace.run_ids)
    n = len(steps)
    slot = (SVG_WIDTH - SVG_LEFT - SVG_RIGHT) / n

    def x(position: float) -> float:
        return SVG_LEFT + (position + 0.5) * slot

    fig = Drawing(SVG_WIDTH, SVG_HEIGHT, f"Timeline of one lease: {title(trace)}",
                  alt_text(trace))
    fig.text(SVG_WIDTH / 2, 14, title(trace), "middle", class_="title")
    middle = SVG_SERVER_TOP + SVG_SERVER_HEIGHT / 2 + 4
    fig.text(SVG_LEFT - 12, middle, "server", "end", SVG_FONT, class_="lane")
    fig.text(SVG_LEFT - 12, SVG_LEASE_Y + 4, "lease", "end", SVG_FONT, class_="lane")

    # one band per process, from the step it first served to the step before the next one
    starts = [next(i for i, s in enumerate(steps) if s.run_id == rid) for rid in processes]
    edges = [-0.5, *starts[1:], n - 0.5]
    for k, rid in enumerate(processes):
        left, right = x(edges[k]), x(edges[k + 1])
        fill = process_colour(k)
        fig.rect(left, SVG_SERVER_TOP, right - left, SVG_SERVER_HEIGHT, fill=fill,
                 fill_opacity="0.45", stroke="black", class_="band", data_process=k + 1)
        if k:  # a later process is hatched as well as coloured
            fig.rect(left, SVG_SERVER_TOP, right - left, SVG_SERVER_HEIGHT,
                     fill=fig.hatch("later", DIAGONAL_HATCH), stroke="black",
                     class_="band-hatch", data_process=k + 1)
        label = fitting((f"process {k + 1} · run_id {short(rid)}", f"process {k + 1}",
                         f"p{k + 1}"), right - left - 2 * PAD, SVG_FONT)
        if label is None:
            fig.text(left, SVG_SERVER_TOP + SVG_SERVER_HEIGHT + 14, f"process {k + 1}",
                     size=SVG_FONT, class_="band-label", data_process=k + 1)
        else:
            # a white halo, so that the hatching behind the text does not cross it
            fig.text((left + right) / 2, middle, label, "middle", SVG_FONT,
                     class_="band-label", data_process=k + 1, stroke="white",
                     stroke_width=3, paint_order="stroke")

    for i, step in enumerate(steps):
        if step.action == "restart":
            fig.line(x(i), SVG_SERVER_TOP - 4, x(i), SVG_LEASE_Y + 30, stroke="black",
                     stroke_width=1.2, stroke_dasharray="5 3", class_="restart")
            fig.text(x(i), SVG_SERVER_TOP - 8, "restart", "middle", SVG_FONT,
                     class_="restart-label")

    grant = next(i for i, s in enumerate(steps) if s.action in GRANTS)
    expire = next(i for i, s in enumerate(steps) if s.action == "expire")
    fig.line(x(grant), SVG_LEASE_Y, x(expire), SVG_LEASE_Y, stroke="black", stroke_width=2,
             class_="lease")
    below = SVG_LEASE_Y + 24
    for i, step in enumerate(steps):
        if step.action in GRANTS:
            _svg_grant(fig, step, processes, x(i), below)

    at = x(expire)
    fig.line(at - 6, SVG_LEASE_Y - 6, at + 6, SVG_LEASE_Y + 6, stroke="black", stroke_width=2.5,
             class_="deadline")
    fig.line(at - 6, SVG_LEASE_Y + 6, at + 6, SVG_LEASE_Y - 6, stroke="black", stroke_width=2.5,
             class_="deadline")
    fig.text(at, below, "deadline", "middle", SVG_FONT, class_="deadline-label")

    _svg_sweep(fig, trace, x(n - 1))

    axis = SVG_LEASE_Y + 36
    fig.line(SVG_LEFT, axis, SVG_WIDTH - SVG_RIGHT, axis, stroke="black", class_="axis")
    for i, step in enumerate(steps):
        fig.line(x(i), axis, x(i), axis + 4, stroke="black", class_="tick")
        fig.text(x(i), axis + 17, step.action.replace("_", " "), "middle", SVG_FONT,
                 class_="tick-label")
    fig.text((SVG_LEFT + SVG_WIDTH - SVG_RIGHT) / 2, axis + 36,
             "the history's steps, in order (not to scale in time)", "middle", SVG_FONT,
             class_="axis-label")
    return fig.svg()


def draw_timeline(trace: Trace, ax=None) -> dict:
    """Draws the trace on ax (a new fixed-size figure when None) and returns the artists:
    bands, band_labels, restarts, lease, stamps, stamp_labels, deadline, sweep, sweep_label,
    with figure and ax."""
    import matplotlib.pyplot as plt

    from trafikey_lab.plots.alt import describe

    if ax is None:
        _, ax = plt.subplots(figsize=FIGSIZE, layout="constrained")
    steps = trace.steps
    processes = list(trace.run_ids)
    n = len(steps)

    # one band per process, from the step it first served to the step before the next one
    starts = [next(i for i, s in enumerate(steps) if s.run_id == rid) for rid in processes]
    edges = [-0.5, *starts[1:], n - 0.5]
    bands, band_labels = [], []
    for k, rid in enumerate(processes):
        left, right = edges[k], edges[k + 1]
        colour = process_colour(k)
        bands.append(ax.barh(SERVER_Y, right - left, left=left, height=0.5, color=colour,
                             alpha=0.45, edgecolor="black", hatch="//" if k else None,
                             label=f"process {k + 1}: run_id {short(rid)}")[0])
        band_labels.append(ax.text((left + right) / 2, SERVER_Y,
                                   f"process {k + 1} · run_id {short(rid)}",
                                   ha="center", va="center", fontsize=8))

    restarts = [ax.axvline(i, color="black", linestyle="--", linewidth=1.2) for i, s in
                enumerate(steps) if s.action == "restart"]
    for line in restarts:
        ax.annotate("restart", (line.get_xdata()[0], SERVER_Y + 0.3), ha="center", fontsize=8)

    grant = next(i for i, s in enumerate(steps) if s.action in GRANTS)
    expire = next(i for i, s in enumerate(steps) if s.action == "expire")
    sweep = n - 1
    (lease,) = ax.plot([grant, expire], [LEASE_Y, LEASE_Y], color="black", linewidth=2,
                       label="the lease, granted until its deadline")

    stamps, stamp_labels = [], []
    for i, step in enumerate(steps):
        if step.action not in GRANTS:
            continue
        stamp = step.row.get(b"lease_epoch")
        if step.action in SCRIPTED or stamp is None:
            (marker,) = ax.plot([i], [LEASE_Y], marker="o", markersize=10, linestyle="none",
                                markerfacecolor="white", markeredgecolor="black",
                                label="granted by a script, which writes no stamp")
            text = "no stamp" if stamp is None else f"no new stamp\n({short(stamp)} stays)"
        else:
            owner = processes.index(stamp.decode()) if stamp.decode() in processes else None
            colour = process_colour(owner) if owner is not None else OKABE_ITO["black"]
            (marker,) = ax.plot([i], [LEASE_Y], marker="o", markersize=10, linestyle="none",
                                color=colour, markeredgecolor="black",
                                label=f"stamp {short(stamp)}")
            text = f"stamp {short(stamp)}"
        stamps.append(marker)
        stamp_labels.append(ax.annotate(text, (i, LEASE_Y - 0.3), ha="center", fontsize=8))

    (deadline,) = ax.plot([expire], [LEASE_Y], marker="x", markersize=10, markeredgewidth=2,
                          color="black", linestyle="none", label="deadline")
    ax.annotate("deadline", (expire, LEASE_Y - 0.3), ha="center", fontsize=8)

    colour = OKABE_ITO[EXEMPT_COLOUR if trace.exempt else COUNTED_COLOUR]
    marker = "D" if trace.exempt else "s"
    (sweep_marker,) = ax.plot([sweep], [LEASE_Y], marker=marker, markersize=10, color=colour,
                              markeredgecolor="black", linestyle="none",
                              label=f"sweep: {trace.reading}")
    sweep_label = ax.annotate(f"sweep: {trace.reading} → {trace.outcome}",
                              (sweep, LEASE_Y + 0.3), ha="right", fontsize=8)

    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(-0.6, 1.6)
    ax.set_xticks(range(n), [s.action.replace("_", " ") for s in steps], fontsize=8)
    ax.set_xlabel("the history's steps, in order (not to scale in time)", fontsize=8)
    ax.set_yticks([LEASE_Y, SERVER_Y], ["lease", "server"])
    ax.set_title(title(trace), fontsize=9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    describe(ax.figure, alt_text(trace))
    return {
        "figure": ax.figure,
        "ax": ax,
        "bands": bands,
        "band_labels": band_labels,
        "restarts": restarts,
        "lease": lease,
        "stamps": stamps,
        "stamp_labels": stamp_labels,
        "deadline": deadline,
        "sweep": sweep_marker,
        "sweep_label": sweep_label,
    }


def alt_text(trace: Trace) -> str:
    """The timeline in words: the history, each step with the process it ran in and the stamp
    it left, then what the sweep found and decided."""
    steps = []
    for step in trace.steps:
        process = trace.process_name(step.run_id)
        stamp = step.row.get(b"lease_epoch")
        named = trace.process_name(stamp)
        name = step.action.replace("_", " ")
        if step.action == "restart":
            steps.append(f"restart, {process} takes over")
        elif step.action in GRANTS and step.reply in (None, 0):
            steps.append(f"{name} in {process}, which grants nothing (reply {reply(step.reply)})")
        elif step.action in SCRIPTED:
            kept = "has none" if stamp is None else f"keeps the stamp of {named}"
            steps.append(f"{name} in {process}, which writes no stamp: the row {kept}")
        elif step.action in GRANTS:
            steps.append(f"{name} in {process}, which writes the stamp of {named}")
        elif step.action == "expire":
            steps.append("expire, the deadline passes")
        elif step.action == "sweep":
            steps.append(f"sweep in {process}")
        else:
            steps.append(step.action)
    found = ("no stamp" if trace.lease_epoch is None
             else f"the stamp of {trace.process_name(trace.lease_epoch)}")
    where = "the live server" if trace.executor == "live" else f"the {trace.executor}"
    return (f"Timeline of one lease, \"{trace.story.title}\", max_stalled {trace.max_stalled}, "
            f"played on {where}. Steps in order: {'; '.join(steps)}. The sweep "
            f"finds {found} and runs in {trace.process_name(trace.sweep_run_id)}: "
            f"{trace.reading}, so the job is {trace.outcome}.")
