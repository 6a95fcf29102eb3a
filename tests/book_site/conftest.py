"""The book's tests: its settings always; its built site only under `make book-check`.

test_site.py, test_runtime.py and test_decision_sheet.py need a built site (`make book`: Jupyter
Book, npm for the widget renderer and the page's runtime, PyPI for its wheels) and a browser,
and test_extension.py the book's Sphinx, so they are collected only when
TRAFIKEY_BOOK_SITE names the built site's folder, as `make book-check` does after building it:
    TRAFIKEY_BOOK_SITE=book/_build/html .venv/bin/python -m pytest tests/book_site
`make test` therefore runs only test_publish_settings.py from here, which needs neither.

The browser is tests/browser's fixture (tools/chromium.py: Debian's chromium, or
TRAFIKEY_CHROMIUM, with the same launch flags); Playwright never downloads one. The site is
served on 127.0.0.1 by a server in this process, and every request to any other host is
refused and recorded. Screenshots of
every page go to tests/book_site/screenshots/ (git-ignored).

What the runtime tests time is kept in screenshots/runtime.json, begun afresh by each run;
when the run has measured every timing, its end writes them into docs/benchmarks.md's section
on the book's page (tools/book.py timings). A run of some of them (-k) leaves the page as it is.
"""

import json
import os
from pathlib import Path

import pytest
from browser import conftest as browser_suite

# The browser suite's Chromium (tools/chromium.py), skipped or failed as it says when missing.
browser = browser_suite.browser

SITE_ENV = "TRAFIKEY_BOOK_SITE"

collect_ignore = [] if os.environ.get(SITE_ENV) else [
    "test_site.py", "test_extension.py", "test_runtime.py", "test_runtime_widgets.py",
    "test_decision_sheet.py", "test_runtime_setup.py"]


def in_charge(session) -> bool:
    """The session that owns runtime.json: not a pytest-xdist worker's."""
    return bool(os.environ.get(SITE_ENV)) and not hasattr(session.config, "workerinput")


def pytest_sessionstart(session):
    if in_charge(session):
        from .page import RUNTIME_JSON

        RUNTIME_JSON.unlink(missing_ok=True)


def pytest_sessionfinish(session, exitstatus):
    if not in_charge(session) or exitstatus != 0:
        return
    from .page import RUNTIME_JSON
    from .tool import book

    measured = json.loads(RUNTIME_JSON.read_text()) if RUNTIME_JSON.exists() else {}
    if all(key in measured for key, *_ in book.TIMINGS):
        book.timings(RUNTIME_JSON)


@pytest.fixture(scope="session")
def site() -> Path:
    folder = Path(os.environ[SITE_ENV]).resolve()
    if not (folder / "index.html").is_file():
        pytest.fail(f"{SITE_ENV}={folder} holds no built site (no index.html): run `make book`"
                    " first, or `make book-check`, which builds it", pytrace=False)
    return folder


@pytest.fixture(scope="session")
def served(site):
    from .site import SiteServer

    server = SiteServer.start(site)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def visits(browser, served, site):
    """Every page of the site, each opened once with the network cut off, and what it showed."""
    from .site import visit_all

    return visit_all(browser, served, site)
