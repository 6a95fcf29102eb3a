"""One course notebook open in JupyterLab: run it as a learner would and read what it shows.

Execution state (kernel status, each cell's execution count, the outputs) is read from the
application (`window.jupyterapp`, exposed by --LabApp.expose_app_in_browser), never from the
page: JupyterLab may skip rendering the cells out of view. What a learner sees on a widget
(its "Loading widget..." or "Error displaying widget" placeholder) is read from the page.
"""

import time
from pathlib import Path

from playwright.sync_api import BrowserContext, Page

from .lab import JupyterLab

OPEN_TIMEOUT = 120
RUN_TIMEOUT = 240
"""Seconds for a whole notebook to run; most take well under a minute even on a busy machine."""
WIDGET_TIMEOUT = 60
STOPPED_AFTER = 5
"""Seconds of an idle kernel with cells still uncounted after which a run has stopped: run all
queues every cell at once, so the kernel is idle between two of them only for a moment."""
REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "tests" / "browser" / "screenshots"
"""Where a page is photographed when a check of it fails: beside the browser suite (git ignores
it), whoever drives the page."""
NOTEBOOKS = REPO / "notebooks"
COURSE = tuple(sorted(path.stem for path in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")))
"""The course's notebooks by name (00_start_here, ...): the ids of their tests."""


def course_notebook(number: str) -> str:
    """The name of the course notebook numbered `number` ("01")."""
    found = [name for name in COURSE if name.startswith(f"{number}_")]
    if len(found) != 1:
        raise LookupError(f"expected one notebook {number}_*.ipynb in {NOTEBOOKS}, found {found}")
    return found[0]

_PANEL = """
const panel = [...window.jupyterapp.shell.widgets('main')]
  .find(w => w.context && w.context.path === path);
"""

_STATE = "(path) => {" + _PANEL + """
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const code = [...panel.content.model.cells].filter(c => c.type === 'code');
  return {status: kernel ? kernel.status : 'no kernel',
          counts: code.map(c => c.executionCount)};
}"""

# Outputs as the notebook's model holds them, without the figures' image bytes.
_OUTPUTS = "(path) => {" + _PANEL + """
  const code = [...panel.content.model.cells].filter(c => c.type === 'code');
  return code.map((cell, index) => ({
    index, source: cell.sharedModel.getSource().split('\\n')[0],
    outputs: cell.outputs.toJSON().map(o => ({
      output_type: o.output_type, name: o.name || null, ename: o.ename || null,
      evalue: o.evalue || null, text: typeof o.text === 'string' ? o.text : (o.text || []).join(''),
    })),
  }));
}"""

_PAGE_TEXT = "(path) => {" + _PANEL + """
  const node = panel.content.node;
  return {text: node.textContent,
          stderr: node.querySelectorAll(
            '[data-mime-type="application/vnd.jupyter.stderr"]').length};
}"""

ERROR_WIDGET = "Error displaying widget"
LOADING_WIDGET = "Loading widget..."


class NotebookRun:
    """A notebook the suite opened (a copy of the course's, see JupyterLab.copy) in its own page."""

    def __init__(self, lab: JupyterLab, page: Page, name: str, path: str):
        self.lab = lab
        self.page = page
        self.name = name
        self.path = path

    @classmethod
    def open(cls, lab: JupyterLab, context: BrowserContext, name: str,
             folder: str = "notebooks") -> "NotebookRun":
        path = lab.copy(f"{folder}/{name}.ipynb")
        page = context.new_page()
        run = cls(lab, page, name, path)
        try:
            run._load()
        except BaseException:
            run.close()
            raise
        return run

    def _load(self) -> None:
        page, path = self.page, self.path
        # A workspace of the suite's own, reset on load: no tab of an earlier session reopens.
        page.goto(self.lab.url(f"lab/workspaces/trafikey-suite/tree/{path}", reset=""),
                  timeout=OPEN_TIMEOUT * 1000)
        page.wait_for_selector(".jp-LabShell", timeout=OPEN_TIMEOUT * 1000)
        if not page.evaluate("() => Boolean(window.jupyterapp)"):
            raise AssertionError(
                f"the JupyterLab at {self.lab.base_url} does not expose its application to "
                f"the page, and the suite reads execution state from it: start that server "
                f"with --LabApp.expose_app_in_browser=True")
        page.wait_for_function(
            "(path) => [...window.jupyterapp.shell.widgets('main')]"
            ".some(w => w.context && w.context.path === path)",
            arg=path, timeout=OPEN_TIMEOUT * 1000)
        page.evaluate("async (path) => {" + _PANEL + """
            await panel.context.ready;
            await panel.sessionContext.ready;
            window.jupyterapp.shell.collapseLeft();
            window.jupyterapp.shell.activateById(panel.id);
        }""", path)

    def run_all(self) -> None:
        """Clears the stored outputs, runs every cell, and waits until the kernel is idle with
        an execution count on every code cell; then until no widget is still loading."""
        self.page.evaluate("async (path) => {" + _PANEL + """
            const app = window.jupyterapp;
            app.shell.activateById(panel.id);
            await app.commands.execute('notebook:clear-all-cell-outputs');
            // Not awaited: the suite polls the application instead, with its own deadline.
            app.commands.execute('notebook:run-all-cells');
        }""", self.path)
        self.wait_until_idle(counted=True)
        self.wait_for_widgets()

    def wait_until_idle(self, counted: bool = False, timeout: float = RUN_TIMEOUT) -> None:
        """Waits until the kernel is idle (and, if counted, every code cell has an execution
        count), seen twice in a row: between two queued messages the kernel is idle briefly.

        A run that stopped early (a cell raised, and the kernel dropped the cells queued
        after it) leaves cells without a count under an idle kernel: that fails at once."""
        deadline = time.monotonic() + timeout
        state = self.state()
        settled, idle_since = 0, 0.0
        while settled < 2:
            now = time.monotonic()
            if now > deadline:
                raise AssertionError(self._stuck(state, f"did not finish within {timeout} s"))
            time.sleep(0.25)
            state = self.state()
            idle = state["status"] == "idle"
            done = idle and not (counted and None in state["counts"])
            settled = settled + 1 if done else 0
            idle_since = (idle_since or now) if idle else 0
            if counted and idle and not done and now - idle_since > STOPPED_AFTER:
                raise AssertionError(self._stuck(state, "stopped before its last cell"))

    def state(self) -> dict:
        return self.page.evaluate(_STATE, self.path)

    def outputs(self) -> list[dict]:
        return self.page.evaluate(_OUTPUTS, self.path)

    def _stuck(self, state: dict, what: str) -> str:
        missing = [i + 1 for i, count in enumerate(state["counts"]) if count is None]
        errors = [f"code cell {c['index'] + 1} ({c['source']}): {o['ename']}: {o['evalue']}"
                  for c in self.outputs() for o in c["outputs"] if o["output_type"] == "error"]
        return (f"{self.name} {what}: kernel {state['status']}, "
                f"code cells without an execution count: {missing}; errors: {errors or 'none'}")

    def wait_for_widgets(self) -> None:
        """Waits until no widget in the notebook shows its loading placeholder (or the
        deadline passes: problems() then reports the placeholder)."""
        deadline = time.monotonic() + WIDGET_TIMEOUT
        while LOADING_WIDGET in self.page.evaluate(_PAGE_TEXT, self.path)["text"]:
            if time.monotonic() > deadline:
                return
            time.sleep(0.25)

    def problems(self) -> list[str]:
        """Everything a learner would see go wrong: a traceback, a stderr block, a widget that
        failed to display or never finished loading."""
        found = []
        for cell in self.outputs():
            where = f"code cell {cell['index'] + 1} ({cell['source']})"
            for output in cell["outputs"]:
                if output["output_type"] == "error":
                    found.append(f"{where}: traceback {output['ename']}: {output['evalue']}")
                elif output["output_type"] == "stream" and output["name"] == "stderr":
                    found.append(f"{where}: stderr {output['text'][:300]!r}")
        shown = self.page.evaluate(_PAGE_TEXT, self.path)
        for placeholder in (ERROR_WIDGET, LOADING_WIDGET):
            if placeholder in shown["text"]:
                at = shown["text"].index(placeholder)
                found.append(f"the page shows {shown['text'][at:at + 80]!r}")
        if shown["stderr"]:
            found.append(f"the page shows {shown['stderr']} stderr or traceback block(s)")
        return found

    def screenshot(self, label: str = "") -> Path:
        SCREENSHOTS.mkdir(exist_ok=True)
        path = SCREENSHOTS / f"{self.name}{'-' + label if label else ''}.png"
        self.page.screenshot(path=path)
        return path

    def close(self) -> None:
        """Closes the page, shuts the notebook's kernel down (and with it the kernel's own
        server) and deletes the copy; also after an open that failed halfway."""
        if not self.page.is_closed():
            self.page.close()
        self.lab.shutdown_sessions(self.path)
        self.lab.delete(self.path)
