"""An explorable lease: move the claim's lease, the worker, the restart and the sweep in
milliseconds, see at once what the sweep decides and why, then replay that timing live.

The rule is `schedule.decide` and the drawing `plots.schedule_timeline` (SVG text, in an HTML
widget: no matplotlib, so that the book's own Python runs it too); this class only lays them
out. The controls are labelled number fields that answer as they change: the arrow keys
and the field's spin buttons move them by a step (10 ms for a time, 1 for a count), and any
value can be typed. (An
ipywidgets slider gives its handle no accessible name, so a screen reader could not tell one
slider from another.)
"""

import html

import ipywidgets as widgets

from trafikey_lab.executors import ModelExecutor, Queue
from trafikey_lab.player import Trace
from trafikey_lab.plots.schedule_timeline import schedule_svg
from trafikey_lab.schedule import (
    MOST_MS,
    PRESETS,
    Decision,
    LivePlan,
    Schedule,
    decide,
    play,
    play_live,
    problems,
    sentence,
)
from trafikey_lab.table import Table
from trafikey_lab.traces import AGREE, QUEUE, comparison_rows, counterfactual, describe_write
from trafikey_lab.widgets.base import LABELS, Widget, status_line, wrapping
from trafikey_lab.widgets.live_run import LiveRun

OWN, OWN_TITLE = "own", "your own schedule"
"""What the preset drop-down shows once the fields hold no preset's schedule."""
TIMES = ("lease_ms", "worker_at_ms", "restart_at_ms", "restart_ms", "sweep_at_ms")
DESCRIPTIONS = {
    "lease_ms": "lease (ms)",
    "worker_at_ms": "worker acts at (ms)",
    "restart_at_ms": "restart at (ms)",
    "restart_ms": "downtime (ms)",
    "sweep_at_ms": "sweep at (ms)",
    "max_stalled": "max_stalled",
    "stalled_before": "stalled before",
}


def _capital(text: str) -> str:
    """A sentence's first letter in upper case, unless it starts with a verb's own name."""
    if text.startswith(("extend2", "claim2")):
        return text
    return text[0].upper() + text[1:]


class ExplorableLease(Widget):
    """Controls: preset, claim, worker, restarts and one number field per time and count
    (`fields`); outputs: figure, sentence, reading_outcome (the reading and outcome, and the
    writes the sweep makes), the counterfactual, Run live, status (what the live sweep found),
    replay (how the live run kept time), comparison.

    live is the executor Run live plays on (course.live in the notebooks); None says why
    nothing can run live."""

    def __init__(self, live=None, queue: Queue = QUEUE, preset: str = "restarted"):
        self.live = live
        self.queue = queue
        self.preset = widgets.Dropdown(
            options=[*((title, key) for key, (title, _) in PRESETS.items()),
                     (OWN_TITLE, OWN)], value=preset, description="start from", style=LABELS)
        self.claim = widgets.Dropdown(
            options=[("EMQ.CLAIM (stamps)", "claim"), ("claim2 script (no stamp)",
                                                        "scripted_claim")],
            description="claim", style=LABELS)
        self.worker = widgets.Dropdown(
            options=[("stops", "stops"), ("extends with EMQ.EXTEND (stamps)", "extend"),
                     ("extends with extend2 (no stamp)", "scripted_extend")],
            description="worker", style=LABELS)
        self.restarts = widgets.Checkbox(description="the server restarts", indent=False)
        self.fields = {}
        for name in DESCRIPTIONS:
            low = 1 if name in ("lease_ms", "max_stalled") else 0
            high = MOST_MS if name in TIMES else 100
            step = 10 if name in TIMES else 1
            self.fields[name] = widgets.BoundedIntText(
                min=low, max=high, step=step, description=DESCRIPTIONS[name], style=LABELS,
                continuous_update=True, layout=widgets.Layout(width="210px"))
        self.figure = widgets.HTML(layout=widgets.Layout(min_height="210px"))
        self.sentence = widgets.HTML()
        self.reading_outcome = widgets.HTML()
        self.counterfactual = widgets.HTML()
        self.run_live = widgets.Button(description="Run live at this timing", icon="play",
                                       tooltip="replay this schedule on the live server",
                                       layout=widgets.Layout(width="max-content"))
        self.status = status_line()
        self.replay = widgets.HTML()
        self.comparison = widgets.HTML()
        self.decision: Decision | None = None
        self.live_trace: Trace | None = None
        self.plan: LivePlan | None = None
        self._quiet = False
        self._one_run = LiveRun(self.run_live, self.status,
                                "press Run live at this timing to replay this schedule again")

        self.preset.observe(self._preset_changed, names="value")
        for control in (self.claim, self.worker, self.restarts, *self.fields.values()):
            control.observe(self._changed, names="value")
        self.run_live.on_click(self._run_live)
        f = self.fields
        self.lay_out(
            self.preset,
            widgets.HBox([self.claim, f["lease_ms"]]),
            widgets.HBox([self.worker, f["worker_at_ms"]]),
            widgets.HBox([self.restarts, f["restart_at_ms"], f["restart_ms"]]),
            widgets.HBox([f["sweep_at_ms"], f["max_stalled"], f["stalled_before"]]),
            self.figure, self.sentence, self.reading_outcome, self.counterfactual,
            self.run_live, self.status, self.replay, self.comparison, wrapping(),
        )
        self.show(PRESETS[preset][1])

    @property
    def schedule(self) -> Schedule:
        """The schedule the controls hold."""
        return Schedule(claim=self.claim.value, worker=self.worker.value,
                        restarts=self.restarts.value,
                        **{name: field.value for name, field in self.fields.items()})

    def show(self, schedule: Schedule) -> None:
        """Sets every control to the schedule, then updates once."""
        self._quiet = True
        try:
            self.claim.value, self.worker.value = schedule.claim, schedule.worker
            self.restarts.value = schedule.restarts
            for name, field in self.fields.items():
                field.value = getattr(schedule, name)
        finally:
            self._quiet = False
        self.update()

    def _preset_changed(self, change) -> None:
        if not self._quiet and change["new"] in PRESETS:
            self.show(PRESETS[change["new"]][1])

    def _changed(self, change) -> None:
        if not self._quiet:
            self.update()

    def update(self) -> None:
        """Decides the schedule the controls hold and writes every output from it."""
        schedule = self.schedule
        if found := problems(schedule):  # a field mid-edit: its bounds keep it in range once set
            self.status.value = "cannot draw this schedule: " + "; ".join(found)
            return
        d = self.decision = decide(schedule)
        self._name_preset(schedule)
        for name in ("restart_at_ms", "restart_ms"):
            self.fields[name].disabled = not schedule.restarts
        self.figure.value = schedule_svg(schedule, d)
        self.sentence.value = f"<p><b>{html.escape(_capital(sentence(schedule, d)))}.</b></p>"
        self.reading_outcome.value = (f"<b>reading → outcome:</b> {d.reading} → {d.outcome}. "
                              f"<b>The sweep's writes:</b> {self._writes(schedule)}")
        other = counterfactual(d.reading, d.outcome, d.without_epoch, schedule.stalled_before + 1,
                               schedule.max_stalled)
        self.counterfactual.value = ("<b>counterfactual, without the epoch:</b> "
                                     f"{html.escape(other)}")
        self.live_trace = self.plan = None
        self.status.value = "not run live yet at this timing"
        self.replay.value = self.comparison.value = ""

    def _name_preset(self, schedule: Schedule) -> None:
        """Shows the preset the fields hold, or "your own schedule" once they hold none."""
        named = next((key for key, (_, preset) in PRESETS.items() if preset == schedule), OWN)
        self._quiet, quiet = True, self._quiet
        try:
            self.preset.value = named
        finally:
            self._quiet = quiet

    def _writes(self, schedule: Schedule) -> str:
        """The model's read pass just before the sweep: the writes the verdict implies."""
        plans = []
        play(schedule, ModelExecutor(), self.queue,
               before_sweep=lambda model: plans.append(model.plan_sweep(self.queue,
                                                                        schedule.max_stalled)))
        writes = [describe_write(w) for member in plans[0] for w in member.writes]
        if not writes:
            return "none (it finds no expired lease)"
        return "<ul>" + "".join(f"<li><code>{html.escape(w)}</code></li>" for w in writes) + \
            "</ul>"

    def _run_live(self, _button=None) -> None:
        """Replays the schedule on the live executor, one replay at a time (`LiveRun`)."""
        self._one_run(self._play_live)

    def _play_live(self) -> None:
        self.comparison.value = self.replay.value = ""
        if self.live is None:
            self.status.value = "no live server: pass live=course.live to replay this schedule"
            return
        schedule = self.schedule
        self.status.value = "replaying on the live server…"
        trace, plan = play_live(schedule, self.live, self.queue)
        self.live_trace, self.plan = trace, plan
        model = play(schedule, ModelExecutor(), self.queue)
        rows = comparison_rows(model, trace)
        agreed = all(mark == AGREE for *_, mark in rows)
        found = ("the sweep found the lease not due: its reply names the job in neither list "
                 f"({trace.outcome})" if not trace.due else
                 f"the lab reads the stamp as {trace.reading}, and the sweep's reply lists the "
                 f"job as {trace.outcome}")
        self.status.value = (
            f"done: live, {found}; "
            + ("model and live agree at every step, reading and outcome included" if agreed
               else "model and live differ"))
        self.replay.value = f"<b>how the replay kept time:</b> {html.escape(plan.report())}"
        self.comparison.value = Table(("step", "model", "live", "same?"),
                                      tuple(rows))._repr_html_()
