"""The one headless Chromium of the browser suite, the book's site check and make hub-check:
which executable, which flags, and one launch that always closes it.

Debian's `chromium` at /usr/bin/chromium, or the executable that TRAFIKEY_CHROMIUM names (any
Chromium or Chrome). Playwright drives it and never downloads a browser of its own. What to do
when there is none is the caller's: the tests skip or fail, the rehearsal fails.
"""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, ViewportSize

CHROMIUM_ENV = "TRAFIKEY_CHROMIUM"
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
VIEWPORT: "ViewportSize" = {"width": 1400, "height": 1800}
ACTION_TIMEOUT = 60_000
"""Milliseconds a click or a fill waits for its element: the machine may be busy."""


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


@contextmanager
def launched(path: Path) -> Iterator["Browser"]:
    """Chromium at path, headless with CHROMIUM_FLAGS, closed however the block ends."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(path), args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def new_context(browser: "Browser") -> "BrowserContext":
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(ACTION_TIMEOUT)
    return context
