"""Fixtures of the real-browser suite: one headless Chromium and one JupyterLab per session.

The browser
    tools/chromium.py's: Debian's `chromium` at /usr/bin/chromium, or the executable that
    TRAFIKEY_CHROMIUM names (any Chromium or Chrome); Playwright never downloads one.
    With no browser found every test here is skipped, and the reason names the install
    command; with TRAFIKEY_REQUIRE_BROWSER=1 (.ci/run sets it) a missing browser fails them.

The server
    By default the suite starts its own JupyterLab on 127.0.0.1: a free port, a random token,
    a scratch root holding copies of notebooks/ and app/, scratch workspaces, settings and
    Jupyter folders, --allow-root only when running as root. Afterwards it shuts every kernel
    down through the REST API, then terminates the server.

    TRAFIKEY_LAB_URL points the suite at a JupyterLab that is already running instead: its
    base URL with the token as a query, for example
        TRAFIKEY_LAB_URL='http://127.0.0.1:8888/?token=abc' pytest tests/browser -k "00 or 04"
    That server must serve the course from its root (notebooks/, and app/ for the app's
    tests) and run with --LabApp.expose_app_in_browser=True. The suite runs copies of the
    notebooks made beside them, deletes the copies afterwards, and shuts down only the
    kernels it started.

Selecting
    Every test of a notebook carries the notebook's name in its id, so
    `pytest tests/browser -k "00 or 04"` runs exactly the tests of notebooks 00 and 04.
    `make test` runs the whole-notebook checks (test_notebooks_in_lab.py: the run and axe) for
    00 and 04 only, which keeps it within its time; every notebook is run under nbval there
    all the same. TRAFIKEY_BROWSER=all (`make browser`) runs them for every notebook, and
    TRAFIKEY_BROWSER=rest runs those of the other notebooks alone (.ci/run, right after make
    test, so that nothing runs twice).

Screenshots of each notebook after its run are written to tests/browser/screenshots/
(git-ignored), so a failing run can be looked at.
"""

import os
import sys
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

QUICK = ("00_start_here", "04_one_lease_across_a_restart")
"""The notebooks whose whole-notebook browser checks make test runs (binder-check's two)."""


def _left_out_of_make_test(item) -> bool:
    """A whole-notebook check (the run, or axe) of a notebook other than QUICK's."""
    return (item.path.name == "test_notebooks_in_lab.py"
            and getattr(item, "callspec", None) is not None
            and item.callspec.params.get("name") not in QUICK)


def pytest_collection_modifyitems(config, items):
    chosen = os.environ.get("TRAFIKEY_BROWSER")
    if chosen == "all":
        return
    if chosen == "rest":  # the rest of this suite; a test outside it is not make test's to say
        dropped = [item for item in items if item.path.is_relative_to(Path(__file__).parent)
                   and not _left_out_of_make_test(item)]
    else:
        dropped = [item for item in items if _left_out_of_make_test(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]

import chromium  # noqa: E402  (tools/ is not a package)
from chromium import new_context  # noqa: E402
from lab_pages.lab import JupyterLab  # noqa: E402
from lab_pages.notebook import NotebookRun  # noqa: E402

REQUIRE_ENV = "TRAFIKEY_REQUIRE_BROWSER"
LAB_URL_ENV = "TRAFIKEY_LAB_URL"


def missing(reason: str) -> NoReturn:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: a missing browser is a failure)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser():
    path, reason = chromium.find_chromium()
    if path is None:
        missing(reason)
    try:
        import playwright.sync_api  # noqa: F401  (only whether it is installed)
    except ImportError:
        missing("Playwright for Python is not installed: `pip install -e '.[test]'` "
                "(make test installs it)")
    with chromium.launched(path) as launched:
        yield launched


@pytest.fixture(scope="session")
def jupyterlab(browser):
    """The JupyterLab under test: TRAFIKEY_LAB_URL's, or one the suite starts and stops.
    (Named apart from the tests' `lab`, the valkey-server of tests/conftest.py.)"""
    url = os.environ.get(LAB_URL_ENV)
    if url:
        server = JupyterLab.attach(url)
    else:
        server = JupyterLab.start({"notebooks": ROOT / "notebooks", "app": ROOT / "app"})
    yield server
    server.stop()


@pytest.fixture(scope="session")
def context(browser):
    """One browser context (cookies, storage) for every page of the session."""
    context = new_context(browser)
    yield context
    context.close()


class Notebooks:
    """Each course notebook opened and run once per session; its page stays open for the
    tests that then drive its widgets."""

    def __init__(self, lab: JupyterLab, context):
        self.lab = lab
        self.context = context
        self.runs: dict[str, NotebookRun] = {}
        self.failed: dict[str, Exception] = {}

    def run(self, name: str) -> NotebookRun:
        """The notebook, run once; a run that failed fails every test that asks for it."""
        if name in self.failed:
            raise AssertionError(f"{name} did not run in the browser: {self.failed[name]}")
        if name not in self.runs:
            try:
                run = NotebookRun.open(self.lab, self.context, name)
            except Exception as exc:
                self.failed[name] = exc
                raise
            self.runs[name] = run
            try:
                run.run_all()
            except Exception as exc:
                self.failed[name] = exc
                raise
            finally:
                run.screenshot()
        return self.runs[name]

    def release(self, name: str) -> None:
        run = self.runs.pop(name, None)
        if run is not None:
            run.close()

    def close(self) -> None:
        for name in list(self.runs):
            self.release(name)


@pytest.fixture(scope="session")
def notebooks(jupyterlab, context):
    runs = Notebooks(jupyterlab, context)
    yield runs
    runs.close()
