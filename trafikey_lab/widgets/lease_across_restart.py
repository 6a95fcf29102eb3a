"""One lease across a restart: pick a history and a budget, see what the sweep decides and why,
then play the same history on a live server and hold the two traces side by side.

The pure parts (`play_on_model`, `without_epoch`, `outcome_table`, `comparison_rows`) are
module functions, so the notebook's static table and the widget use the same code, and tests
can pin them without a browser.
"""

import html
import threading

import ipywidgets as widgets
import matplotlib.pyplot as plt
import redis
from IPython.display import clear_output, display

from .. import epoch
from ..errors import LabError, ReplyError
from ..executors import ModelExecutor, Queue
from ..histories import HISTORIES, LEASE_MS, Trace, compare, play, verdict_line
from ..plots.timeline import draw_timeline
from ..sweep_report import describe_write
from ..table import Table
from ..text import reply, short

QUEUE = Queue("{lease}")
MAX_STALLED = (1, 2, 3, 4, 5)
AGREE = "✓ agree"
DIFFER = "✗ differ"


def play_on_model(history, max_stalled: int, queue: Queue = QUEUE):
    """Plays the history on a fresh model and returns (trace, plan): the plan is the model's
    read pass over the queue just before the sweep ran (`ModelServer.plan_sweep`)."""
    model = ModelExecutor()
    plans = []

    def before(index, count, action):
        if action == "sweep":
            plans.append(model.plan_sweep(queue, max_stalled))

    trace = play(history, max_stalled, model, queue, progress=before)
    return trace, plans[0]


def without_epoch(trace: Trace) -> str:
    """The counterfactual: the outcome had the sweep counted this lease whatever its stamp
    (exempt always false), as a sweep with no lease_epoch would have to. The row as it stood
    before the sweep gives stalled; a count that reaches max_stalled is a death."""
    before = trace.steps[-2].row
    stalled = epoch.counter(before.get(b"stalled"))
    if stalled is None:
        return "refused"
    return "dead" if stalled + 1 >= trace.max_stalled else "recovered"


def counterfactual_note(trace: Trace) -> str:
    """What the sweep would have done without the epoch, beside what it did (HTML)."""
    other = without_epoch(trace)
    if not trace.exempt:
        return f"the same: a counted lease is counted with or without the epoch (<b>{other}</b>)."
    counted = (epoch.counter(trace.steps[-2].row.get(b"stalled")) or 0) + 1
    if other != trace.outcome:
        return (f"without the epoch this lease would have been counted: stalled {counted} "
                f"against max_stalled {trace.max_stalled}, so <b>{other}</b> instead of "
                f"{trace.outcome}.")
    return (f"without the epoch this lease would have been counted (stalled {counted}): still "
            f"<b>{other}</b> at max_stalled {trace.max_stalled}, but with one stall of its "
            f"budget spent on a restart.")


def outcome_table(max_stalled_values=(1, 2)) -> Table:
    """Every history x max_stalled on the model: what the sweep saw, its verdict, the outcome,
    and the outcome without the epoch."""
    rows = []
    for key, history in HISTORIES.items():
        for max_stalled in max_stalled_values:
            trace, _ = play_on_model(key, max_stalled)
            rows.append((
                history.title, str(max_stalled), short(trace.lease_epoch),
                short(trace.sweep_run_id), trace.verdict, trace.outcome, without_epoch(trace),
            ))
    return Table(("history", "max_stalled", "lease_epoch", "run_id at the sweep", "verdict",
                  "outcome", "without the epoch (counterfactual)"), tuple(rows))


def step_summary(step) -> str:
    """A step as one line: its reply and the stamp on the row after it."""
    stamp = step.row.get(b"lease_epoch")
    state = reply(step.row.get(b"state"))
    return f"→ {reply(step.reply)} · stamp {short(stamp)} · state {state}"


def comparison_rows(model_trace: Trace, live_trace: Trace) -> list[tuple[str, str, str, str]]:
    """Step by step: (step, model, live, mark). The mark is AGREE or DIFFER with what differs;
    run_ids are compared by which process of the history they belong to (`compare`)."""
    rows = []
    verdicts = compare(model_trace, live_trace)
    for (action, agree, detail), m, live in zip(verdicts, model_trace.steps, live_trace.steps):
        rows.append((action, step_summary(m), step_summary(live),
                     AGREE if agree else f"{DIFFER}: {detail}"))
    action, agree, detail = verdicts[-1]
    rows.append((action, f"{model_trace.verdict} → {model_trace.outcome}",
                 f"{live_trace.verdict} → {live_trace.outcome}",
                 AGREE if agree else f"{DIFFER}: {detail}"))
    return rows


def _list(items) -> str:
    return "<ul>" + "".join(f"<li>{html.escape(i)}</li>" for i in items) + "</ul>"


class LeaseAcrossRestart:
    """The history selector, the budget and the Run live button, over one update method.

    live is the executor the button plays on (course.live in the notebooks); None shows why
    nothing can run live. Controls: history, max_stalled, run_live; outputs: figure (an
    Output), verdict, writes, why, counterfactual, progress, status, comparison.
    """

    def __init__(self, live=None, queue: Queue = QUEUE):
        self.live = live
        self.queue = queue
        self.history = widgets.Dropdown(
            options=[(h.title, key) for key, h in HISTORIES.items()], value="restarted",
            description="history")
        self.max_stalled = widgets.IntSlider(value=1, min=MAX_STALLED[0], max=MAX_STALLED[-1],
                                             description="max_stalled")
        self.figure = widgets.Output(layout=widgets.Layout(min_height="290px"))
        self.verdict = widgets.HTML()
        self.writes = widgets.HTML()
        self.why = widgets.HTML()
        self.counterfactual = widgets.HTML()
        self.run_live = widgets.Button(description="Run live", icon="play",
                                       tooltip="play this history on the live server")
        self.progress = widgets.IntProgress(value=0, min=0, max=1, description="live")
        self.status = widgets.Label()
        self.comparison = widgets.HTML()
        self.trace: Trace | None = None
        self.plan = None
        self.live_trace: Trace | None = None
        self.drawn: dict | None = None
        self._live_lock = threading.Lock()

        self.history.observe(self._changed, names="value")
        self.max_stalled.observe(self._changed, names="value")
        self.run_live.on_click(self._run_live)
        self.box = widgets.VBox([
            widgets.HBox([self.history, self.max_stalled]),
            self.figure, self.verdict, self.writes, self.why, self.counterfactual,
            widgets.HBox([self.run_live, self.progress]),
            self.status,
            self.comparison,
        ])
        self.update()

    def _repr_mimebundle_(self, **kwargs):
        return self.box._repr_mimebundle_(**kwargs)

    def _changed(self, change) -> None:
        self.update()

    def update(self) -> None:
        """Plays the chosen history on the model and writes every output from its trace."""
        self.trace, self.plan = play_on_model(self.history.value, self.max_stalled.value,
                                              self.queue)
        trace = self.trace
        with self.figure:
            clear_output(wait=True)
            self.drawn = draw_timeline(trace)
            display(self.drawn["figure"])
            plt.close(self.drawn["figure"])
        self.verdict.value = f"<code>{html.escape(verdict_line(trace))}</code>"
        (member,) = self.plan
        self.writes.value = (
            f"<b>{trace.verdict} → {trace.outcome}</b>: the sweep wrote"
            + _list(describe_write(w) for w in member.writes)
        )
        self.why.value = f"<b>why:</b> {html.escape(trace.history.why)}"
        self.counterfactual.value = (f"<b>counterfactual, exempt always false:</b> "
                                     f"{counterfactual_note(trace)}")
        self.live_trace = None
        self.progress.value = 0
        self.status.value = "not run live yet for this choice"
        self.comparison.value = ""

    def _on_progress(self, index: int, count: int, action: str) -> None:
        self.progress.max = count
        self.progress.value = index
        if action == "expire":
            self.status.value = (f"step {index + 1} of {count}: waiting {LEASE_MS} ms for the "
                                 f"lease to run out")
        else:
            self.status.value = f"step {index + 1} of {count}: {action.replace('_', ' ')}"

    def _run_live(self, _button=None) -> None:
        """Plays the chosen history on the live executor, one run at a time.

        A press during a run is ignored: the page can send a second quick press before it
        shows the button disabled, and the kernel may handle that press while the first run
        is still playing (ipykernel dispatches widget messages alongside a running handler).
        Two runs at once would clear, claim and restart under each other."""
        if not self._live_lock.acquire(blocking=False):
            return
        try:
            self._play_live()
        finally:
            self._live_lock.release()

    def _play_live(self) -> None:
        """Any failure of the live run is shown, not raised."""
        self.comparison.value = ""
        self.live_trace = None
        if self.live is None:
            self.status.value = "no live server: pass live=course.live to run this history live"
            return
        self.run_live.disabled = True
        try:
            live_trace = play(self.history.value, self.max_stalled.value, self.live, self.queue,
                              progress=self._on_progress)
        except (LabError, ReplyError, redis.RedisError, OSError) as exc:
            self.status.value = f"the live run stopped: {exc}"
            return
        except Exception as exc:  # a callback has no caller to raise to: show it instead
            self.status.value = f"the live run stopped: {type(exc).__name__}: {exc}"
            return
        except KeyboardInterrupt:
            # The kernel's interrupt must still reach the kernel; the label must not go on
            # naming the step the run was at.
            self.status.value = "interrupted: press Run live to play this history again"
            raise
        finally:
            self.run_live.disabled = False
        self.live_trace = live_trace
        self.progress.value = self.progress.max
        rows = comparison_rows(self.trace, live_trace)
        agreed = all(mark == AGREE for *_, mark in rows)
        self.status.value = (
            f"done: {verdict_line(live_trace)}, {live_trace.outcome}; "
            + ("model and live agree at every step" if agreed else "model and live differ")
        )
        self.comparison.value = Table(("step", "model", "live", "same?"), tuple(rows))._repr_html_()
