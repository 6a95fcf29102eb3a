"""One lease across a restart: pick a history and a budget, see what the sweep decides and why,
then play the same history on a live server and hold the two traces side by side.

The widget only wires its controls to the library: the course logic it shows (the model's
play, the counterfactual, the comparison rows) is in `trafikey_lab.traces`.
"""

import html

import ipywidgets as widgets

from trafikey_lab.executors import Queue
from trafikey_lab.player import Trace, play, reading_line
from trafikey_lab.plots.timeline import timeline_svg
from trafikey_lab.stories import HISTORIES, LEASE_MS
from trafikey_lab.table import Table
from trafikey_lab.traces import (
    AGREE,
    MAX_STALLED,
    QUEUE,
    comparison_rows,
    counterfactual_note,
    describe_write,
    play_on_model,
)
from trafikey_lab.widgets.base import LABELS, Widget, status_line, wrapping
from trafikey_lab.widgets.live_run import LiveRun


def _list(items) -> str:
    return "<ul>" + "".join(f"<li>{html.escape(i)}</li>" for i in items) + "</ul>"


def progress_html(done: int, count: int) -> str:
    """A native progress bar inside its visible label, "live run": a screen reader announces it
    by that name as a progress bar, which the ipywidgets one (plain boxes) is not."""
    return (f'<label>live run <progress max="{count}" value="{done}"></progress> '
            f'{done} of {count} steps done</label>')


class LeaseAcrossRestart(Widget):
    """The history selector, the budget and the Run live button, over one update method.

    live is the executor the button plays on (course.live in the notebooks); None shows why
    nothing can run live. Controls: history, max_stalled (both drop-downs: an ipywidgets
    slider gives its handle no accessible name), run_live; outputs: figure (SVG in an HTML),
    reading, writes, why, counterfactual, progress (steps done of steps, drawn as a native
    progress bar), status, comparison.
    """

    def __init__(self, live=None, queue: Queue = QUEUE):
        self.live = live
        self.queue = queue
        self.history = widgets.Dropdown(
            options=[(h.title, key) for key, h in HISTORIES.items()], value="restarted",
            description="history", style=LABELS)
        self.max_stalled = widgets.Dropdown(
            options=[(str(n), n) for n in MAX_STALLED], value=1, description="max_stalled",
            style=LABELS)
        # SVG text in an HTML widget: no matplotlib, so that the book's own Python runs it too
        self.figure = widgets.HTML(layout=widgets.Layout(min_height="210px"))
        self.reading = widgets.HTML()
        self.writes = widgets.HTML()
        self.why = widgets.HTML()
        self.counterfactual = widgets.HTML()
        self.run_live = widgets.Button(description="Run live", icon="play",
                                       tooltip="play this history on the live server")
        self.steps_done = 0
        self.step_count = 1
        self.progress = widgets.HTML(progress_html(0, 1))
        self.status = status_line()
        self.comparison = widgets.HTML()
        self.live_trace: Trace | None = None
        self._one_run = LiveRun(self.run_live, self.status,
                                "press Run live to play this history again")

        self.history.observe(self._changed, names="value")
        self.max_stalled.observe(self._changed, names="value")
        self.run_live.on_click(self._run_live)
        self.lay_out(
            widgets.HBox([self.history, self.max_stalled]),
            self.figure, self.reading, self.writes, self.why, self.counterfactual,
            widgets.HBox([self.run_live, self.progress]),
            self.status,
            self.comparison,
            wrapping(),
        )
        self.update()

    def _changed(self, change) -> None:
        self.update()

    def update(self) -> None:
        """Plays the chosen history on the model and writes every output from its trace."""
        trace, plan = play_on_model(self.history.value, self.max_stalled.value, self.queue)
        self.trace, self.plan = trace, plan
        self.figure.value = timeline_svg(trace)
        self.reading.value = f"<code>{html.escape(reading_line(trace))}</code>"
        (member,) = plan
        self.writes.value = (
            f"<b>{trace.reading} → {trace.outcome}</b>: the writes the verdict implies"
            + _list(describe_write(w) for w in member.writes)
        )
        self.why.value = f"<b>why:</b> {html.escape(trace.story.why)}"
        self.counterfactual.value = ("<b>counterfactual, without the epoch:</b> "
                                     f"{html.escape(counterfactual_note(trace))}")
        self.live_trace = None
        self._show_progress(0, len(trace.steps))
        self.status.value = "not run live yet for this choice"
        self.comparison.value = ""

    def _show_progress(self, done: int, count: int) -> None:
        self.steps_done, self.step_count = done, count
        self.progress.value = progress_html(done, count)

    def _on_progress(self, index: int, count: int, action: str) -> None:
        self._show_progress(index, count)
        if action == "expire":
            self.status.value = (f"step {index + 1} of {count}: waiting until the {LEASE_MS} ms "
                                 f"lease has run out")
        else:
            self.status.value = f"step {index + 1} of {count}: {action.replace('_', ' ')}"

    def _run_live(self, _button=None) -> None:
        """Plays the chosen history on the live executor, one run at a time (`LiveRun`)."""
        self._one_run(self._play_live)

    def _play_live(self) -> None:
        self.comparison.value = ""
        self.live_trace = None
        if self.live is None:
            self.status.value = "no live server: pass live=course.live to run this history live"
            return
        live_trace = play(self.history.value, self.max_stalled.value, self.live, self.queue,
                          progress=self._on_progress)
        self.live_trace = live_trace
        self._show_progress(self.step_count, self.step_count)
        rows = comparison_rows(self.trace, live_trace)
        agreed = all(mark == AGREE for *_, mark in rows)
        stalled = live_trace.steps[-1].row.get(b"stalled")
        self.status.value = (
            f"done: {reading_line(live_trace)}, {live_trace.outcome}; the reading is the "
            f"lab's, from the row and the run_id, while the reply and stalled "
            f"{'(none)' if stalled is None else stalled.decode(errors='replace')} are the "
            "server's; "
            + ("reading and outcome included, model and live agree at every step" if agreed
               else "model and live differ")
        )
        self.comparison.value = Table(("step", "model", "live", "same?"), tuple(rows))._repr_html_()
