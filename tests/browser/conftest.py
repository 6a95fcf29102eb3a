"""Fixtures of the real-browser suite: one headless Chromium and one JupyterLab per session.

The browser
    Debian's `chromium` at /usr/bin/chromium, or the executable that TRAFIKEY_CHROMIUM names
    (any Chromium or Chrome). Playwright drives it and never downloads a browser of its own.
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

Screenshots of each notebook after its run are written to tests/browser/screenshots/
(git-ignored), so a failing run can be looked at.
"""

import os
from pathlib import Path

import pytest

from .lab import JupyterLab
from .notebook import NotebookRun

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ENV = "TRAFIKEY_CHROMIUM"
REQUIRE_ENV = "TRAFIKEY_REQUIRE_BROWSER"
LAB_URL_ENV = "TRAFIKEY_LAB_URL"
DEBIAN_CHROMIUM = Path("/usr/bin/chromium")
INSTALL = "sudo apt-get install chromium"

CHROMIUM_FLAGS = [
    "--no-sandbox",  # Chromium's sandbox refuses to start as root, as in CI containers
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 1800}
ACTION_TIMEOUT = 60_000


def missing(reason: str):
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: a missing browser is a failure)", pytrace=False)
    pytest.skip(reason)


def find_chromium() -> tuple[Path | None, str]:
    """The browser to drive, or None and why there is none (with the fix)."""
    named = os.environ.get(CHROMIUM_ENV)
    if named:
        path = Path(named)
        if path.is_file() and os.access(path, os.X_OK):
            return path, ""
        return None, (f"{CHROMIUM_ENV}={named} is not an executable file: point it at a "
                      f"Chromium or Chrome binary, or unset it and `{INSTALL}`")
    if DEBIAN_CHROMIUM.is_file() and os.access(DEBIAN_CHROMIUM, os.X_OK):
        return DEBIAN_CHROMIUM, ""
    return None, (f"no browser for the browser tests: {DEBIAN_CHROMIUM} is missing. Install "
                  f"it (`{INSTALL}` on Debian/Ubuntu) or set {CHROMIUM_ENV} to a Chromium "
                  f"or Chrome binary")


@pytest.fixture(scope="session")
def browser():
    path, reason = find_chromium()
    if path is None:
        missing(reason)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("Playwright for Python is not installed: `pip install -e '.[test]'` "
                 "(make test installs it)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(path), args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


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


def new_context(browser):
    context = browser.new_context(viewport=VIEWPORT)
    # Clicks and fills wait for their element this long: the machine may be busy.
    context.set_default_timeout(ACTION_TIMEOUT)
    return context


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
