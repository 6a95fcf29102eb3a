"""One schedule on a millisecond axis, as SVG: the processes and the restart's downtime above,
the lease below (its grant, its extension, its deadline), the sweep across both.

Drawn to scale, so that the distances the sentence names are the distances on the page. Every
cue is also a word or a shape: the bands are labelled with their process, the downtime is
hatched and labelled, a grant that stamps is a filled circle and one that does not is hollow,
and the sweep carries its reading and outcome. The figure's description is the schedule's
sentence, with what each band and marker stands for. Built as text (`plots.svg`), with no
matplotlib, so that the explorable lease redraws it on every move in any page.
"""

from trafikey_lab.plots.palette import GREY, OKABE_ITO
from trafikey_lab.plots.svg import CROSS_HATCH, Drawing, fitting
from trafikey_lab.plots.timeline import COUNTED_COLOUR, EXEMPT_COLOUR, PAD, process_colour
from trafikey_lab.schedule import EXTENSIONS, WORKERS, Decision, Schedule, sentence

WIDTH, HEIGHT = 640, 222
LEFT, RIGHT = 60, 16
"""Room for the lanes' names on the left, and for a label's last letters on the right."""
SERVER_TOP, SERVER_HEIGHT = 44, 30
LEASE_Y = 128
AXIS_Y = 180
TICK_STEPS = (10, 20, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000)


def schedule_svg(schedule: Schedule, decision: Decision) -> str:
    """The schedule and its decision as one `<svg role="img">`, to scale in ms."""
    d = decision
    down, up = schedule.restart_at_ms, schedule.restart_at_ms + schedule.restart_ms
    last = max(d.sweep.at_ms, d.deadline_ms, *(m.at_ms for m in d.moments),
               up if schedule.restarts else 0)
    end = last * 1.08 + 50

    def x(ms: float) -> float:
        return LEFT + ms / end * (WIDTH - LEFT - RIGHT)

    # a process is named by its number here: a live run_id must not reach a stored notebook
    fig = Drawing(WIDTH, HEIGHT, title(schedule), alt_text(schedule, d))
    fig.text(LEFT - 12, SERVER_TOP + SERVER_HEIGHT / 2 + 4, "server", "end", class_="lane")
    fig.text(LEFT - 12, LEASE_Y + 4, "lease", "end", class_="lane")
    spans = [(0, down), (up, end)] if schedule.restarts else [(0, end)]
    for k, (left, right) in enumerate(spans):
        _band(fig, x(left), x(right), k)
    if schedule.restarts:
        # at least a sliver wide, so that a restart with no downtime still shows
        fig.rect(x(down), SERVER_TOP, max(x(up) - x(down), 1.5), SERVER_HEIGHT,
                 fill=fig.hatch("down", CROSS_HATCH, GREY, "white"), stroke=GREY,
                 class_="downtime")
        fig.text(x(down), SERVER_TOP - 6,
                 f"down {schedule.restart_ms} ms" if schedule.restart_ms else "restart",
                 class_="downtime-label")

    worker = next((m for m in d.moments if m.action in EXTENSIONS), None)
    first_end = schedule.lease_ms
    extended = None
    if worker is not None and d.extension in ("stamped", "moved") \
            and worker.at_ms <= d.sweep.at_ms:
        extended = worker
        first_end = worker.at_ms
    native = schedule.claim == "claim"
    _lease(fig, x(0), x(first_end), native,
           "EMQ.CLAIM · stamp: process 1" if native else "claim2 · no stamp")
    if extended is not None:
        stamp = extended.action == "extend"
        kept = "no stamp" if d.stamp is None else f"stamp stays process {d.stamp}"
        _lease(fig, x(extended.at_ms), x(d.deadline_ms), stamp,
               f"{WORKERS[extended.action]} · "
               + (f"stamp: process {extended.process}" if stamp else kept))
    elif worker is not None:
        at = x(worker.at_ms)
        fig.polygon([(at - 6, LEASE_Y - 6), (at + 6, LEASE_Y - 6), (at, LEASE_Y + 5)],
                    fill="black", class_="worker")
        fig.text(at, LEASE_Y + 22, f"{WORKERS[worker.action]}: " + (
            "replied 0" if d.extension == "not live" else "after the sweep"),
            class_="worker-label")
    elif schedule.worker == "stops":
        at = x(schedule.worker_at_ms)
        fig.line(at, LEASE_Y - 9, at, LEASE_Y + 9, stroke="black", stroke_width=2,
                 class_="worker")
        fig.text(at, LEASE_Y + 22, f"worker stops ({schedule.worker_at_ms} ms)",
                 class_="worker-label")

    fig.line(x(d.deadline_ms), LEASE_Y - 28, x(d.deadline_ms), LEASE_Y + 12, stroke="black",
             stroke_width=1.5, stroke_dasharray="2 3", class_="deadline")
    fig.text(x(d.deadline_ms) - 3, LEASE_Y + 38, f"deadline {d.deadline_ms} ms", "end",
             class_="deadline-label")
    colour = {"exempt": EXEMPT_COLOUR, "counted": COUNTED_COLOUR}.get(d.reading)
    at = x(d.sweep.at_ms)
    fig.line(at, 20, at, AXIS_Y, stroke=OKABE_ITO[colour] if colour else GREY,
             stroke_width=2.5, stroke_dasharray=None if d.due else "6 4", class_="sweep")
    right = d.sweep.at_ms > end / 2
    fig.text(at - 4 if right else at + 4, 15,
             f"sweep {d.sweep.at_ms} ms: {d.reading} → {d.outcome}",
             "end" if right else "start", class_="sweep-label")

    fig.line(LEFT, AXIS_Y, x(end), AXIS_Y, stroke="black", class_="axis")
    step = next((s for s in TICK_STEPS if end / s <= 8), TICK_STEPS[-1])
    for ms in range(0, int(end) + 1, step):
        fig.line(x(ms), AXIS_Y, x(ms), AXIS_Y + 4, stroke="black", class_="tick")
        fig.text(x(ms), AXIS_Y + 16, str(ms), "middle", size=10, class_="tick-label")
    fig.text((LEFT + WIDTH - RIGHT) / 2, AXIS_Y + 36, "ms after the claim (to scale)",
             "middle", class_="axis-label")
    return fig.svg()


def _band(fig: Drawing, left: float, right: float, k: int) -> None:
    """Process k+1's band, labelled inside it when the label fits, shortened when only a
    shorter one does, and below the band when none does (a short first segment)."""
    fig.rect(left, SERVER_TOP, right - left, SERVER_HEIGHT, fill=process_colour(k),
             fill_opacity="0.45", stroke="black", class_="band", data_process=k + 1)
    label = fitting((f"process {k + 1}", f"p{k + 1}"), right - left - 2 * PAD)
    if label is not None:
        fig.text(left + PAD, SERVER_TOP + SERVER_HEIGHT / 2 + 4, label, class_="band-label",
                 data_process=k + 1)
    else:
        fig.text(left, SERVER_TOP + SERVER_HEIGHT + 14, f"process {k + 1}",
                 class_="band-label", data_process=k + 1)


def _lease(fig: Drawing, start: float, end: float, stamps: bool, label: str) -> None:
    fig.line(start, LEASE_Y, end, LEASE_Y, stroke="black", stroke_width=3, class_="lease")
    fig.circle(start, LEASE_Y, 6, fill="black" if stamps else "white", stroke="black",
               stroke_width=1.5, class_="grant stamped" if stamps else "grant hollow")
    fig.text(start, LEASE_Y - 12, label, class_="grant-label")


def title(schedule: Schedule) -> str:
    return (f"Timeline of a {schedule.lease_ms} ms lease at max_stalled "
            f"{schedule.max_stalled}, to scale in ms")


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
    told = sentence(schedule, decision)
    return (f"Timeline to scale, in ms after the claim, of a {schedule.lease_ms} ms lease at "
            f"max_stalled {schedule.max_stalled}: {restart}the sweep at "
            f"{decision.sweep.at_ms} ms. {told[0].upper()}{told[1:]}.")
