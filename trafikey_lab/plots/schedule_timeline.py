"""One schedule on a millisecond axis: the processes and the restart's downtime above, the
lease below (its grant, its extension, its deadline), the sweep across both.

Drawn to scale, so that the distances the sentence names are the distances on the page. Every
cue is also a word or a shape: the bands are labelled with their process, the downtime is
hatched and labelled, a grant that stamps is a filled circle and one that does not is hollow,
and the sweep carries its reading and outcome. The figure's alt text is the schedule's
sentence, with what each band and marker stands for.
"""

import matplotlib.pyplot as plt

from trafikey_lab.plots.alt import describe
from trafikey_lab.plots.palette import GREY, OKABE_ITO
from trafikey_lab.plots.timeline import COUNTED_COLOUR, EXEMPT_COLOUR, process_colour
from trafikey_lab.schedule import EXTENSIONS, WORKERS, Decision, Schedule, sentence

FIGSIZE = (8.0, 2.6)
DPI = 80
"""Small enough that a redraw on every move of a control stays quick."""
SERVER_Y, LEASE_Y = 1.0, 0.0


def draw_schedule(schedule: Schedule, decision: Decision, ax=None) -> dict:
    """Draws the schedule on ax (a new figure when None); returns the figure, the ax and the
    artists a test looks at: bands, downtime, leases, deadline, sweep, sweep_label."""
    if ax is None:
        _, ax = plt.subplots(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    # a process is named by its number here: a live run_id must not reach a stored notebook
    d = decision
    end = max(d.sweep.at_ms, d.deadline_ms, *(m.at_ms for m in d.moments)) * 1.08 + 50
    down, up = schedule.restart_at_ms, schedule.restart_at_ms + schedule.restart_ms
    spans = [(0, down), (up, end)] if schedule.restarts else [(0, end)]
    bands = []
    for k, (left, right) in enumerate(spans):
        bands.append(ax.barh(SERVER_Y, right - left, left=left, height=0.45,
                             color=process_colour(k), alpha=0.45, edgecolor="black")[0])
        ax.text(left + 8, SERVER_Y, f"process {k + 1}", va="center", fontsize=8)
    downtime = None
    if schedule.restarts:
        downtime = ax.barh(SERVER_Y, max(up - down, end / 400), left=down, height=0.45,
                           color="white", hatch="xx", edgecolor=GREY)[0]
        ax.annotate(f"down {schedule.restart_ms} ms" if schedule.restart_ms else "restart",
                    (down, SERVER_Y + 0.3), fontsize=8)

    leases = []
    worker = next((m for m in d.moments if m.action in EXTENSIONS), None)
    first_end = schedule.lease_ms
    extended = None
    if worker is not None and d.extension in ("stamped", "moved") \
            and worker.at_ms <= d.sweep.at_ms:
        extended = worker
        first_end = worker.at_ms
    native = schedule.claim == "claim"
    leases.append(_lease(ax, 0, first_end, native, "EMQ.CLAIM · stamp: process 1" if native
                         else "claim2 · no stamp"))
    if extended is not None:
        stamp = extended.action == "extend"
        kept = "no stamp" if d.stamp is None else f"stamp stays process {d.stamp}"
        leases.append(_lease(ax, extended.at_ms, d.deadline_ms, stamp,
                             f"{WORKERS[extended.action]} · "
                             + (f"stamp: process {extended.process}" if stamp else kept)))
    elif worker is not None:
        ax.plot([worker.at_ms], [LEASE_Y], marker="v", color="black", linestyle="none")
        ax.annotate(f"{WORKERS[worker.action]}: " + ("replied 0" if d.extension == "not live"
                                                     else "after the sweep"),
                    (worker.at_ms, LEASE_Y - 0.35), fontsize=8)
    elif schedule.worker == "stops":
        ax.plot([schedule.worker_at_ms], [LEASE_Y], marker="|", markersize=14, color="black",
                linestyle="none")
        ax.annotate(f"worker stops ({schedule.worker_at_ms} ms)",
                    (schedule.worker_at_ms, LEASE_Y - 0.35), fontsize=8)

    deadline = ax.axvline(d.deadline_ms, ymax=0.45, color="black", linestyle=":", linewidth=1.5)
    ax.annotate(f"deadline {d.deadline_ms} ms ", (d.deadline_ms, LEASE_Y - 0.5), fontsize=8,
                ha="right")
    colour = {"exempt": EXEMPT_COLOUR, "counted": COUNTED_COLOUR}.get(d.reading)
    sweep = ax.axvline(d.sweep.at_ms, color=OKABE_ITO[colour] if colour else GREY,
                       linestyle="-" if d.due else "--", linewidth=2.5)
    sweep_label = ax.annotate(f"sweep {d.sweep.at_ms} ms: {d.reading} → {d.outcome}",
                              (d.sweep.at_ms, 1.45), fontsize=8,
                              ha="right" if d.sweep.at_ms > end / 2 else "left")
    ax.set_xlim(0, end)
    ax.set_ylim(-0.7, 1.65)
    ax.set_yticks([LEASE_Y, SERVER_Y], ["lease", "server"])
    ax.set_xlabel("ms after the claim (to scale)", fontsize=8)
    ax.tick_params(labelsize=8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    describe(ax.figure, alt_text(schedule, d))
    return {"figure": ax.figure, "ax": ax, "bands": bands, "downtime": downtime,
            "leases": leases, "deadline": deadline, "sweep": sweep, "sweep_label": sweep_label}


def _lease(ax, start: int, end: int, stamps: bool, label: str):
    (line,) = ax.plot([start, end], [LEASE_Y, LEASE_Y], color="black", linewidth=3)
    ax.plot([start], [LEASE_Y], marker="o", markersize=9, linestyle="none", color="black",
            markerfacecolor="black" if stamps else "white")
    ax.annotate(label, (start, LEASE_Y + 0.2), fontsize=8)
    return line


def alt_text(schedule: Schedule, decision: Decision) -> str:
    """The figure in words: what it draws, then the schedule's sentence."""
    if not schedule.restarts:
        restart = "one process throughout; "
    elif schedule.restart_ms == 0:
        restart = (f"the server restarts at {schedule.restart_at_ms} ms with no downtime, "
                   "process 1 before and process 2 after; ")
    else:
        restart = (f"the server is down from {schedule.restart_at_ms} to "
                   f"{schedule.restart_at_ms + schedule.restart_ms} ms, process 1 before and "
                   "process 2 after; ")
    return (f"Timeline to scale, in ms after the claim, of a {schedule.lease_ms} ms lease at "
            f"max_stalled {schedule.max_stalled}: {restart}the sweep at "
            f"{decision.sweep.at_ms} ms. {sentence(schedule, decision)[0].upper()}"
            f"{sentence(schedule, decision)[1:]}.")
