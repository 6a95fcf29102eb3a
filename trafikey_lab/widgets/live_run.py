"""One live run at a time behind a widget's button, its failures shown on the widget.

A press during a run is ignored: the page can send a second quick press before it shows the
button disabled, and the kernel may handle that press while the first run is still playing
(ipykernel dispatches widget messages alongside a running handler). Two runs at once would
clear, claim and restart under each other. A callback has no caller to raise to, so a failure
is written on the status label instead; the kernel's interrupt is written there too, and still
raised, so that it reaches the kernel.
"""

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

import ipywidgets as widgets

from trafikey_lab.errors import LabError, ReplyError

T = TypeVar("T")


class LiveRun:
    def __init__(self, button: widgets.Button, status: widgets.Label, again: str):
        """again: what the status says after an interrupt, e.g. "press Run live to ...". """
        self.button, self.status, self.again = button, status, again
        self._lock = threading.Lock()

    def __call__(self, run: Callable[[], T]) -> T | None:
        """run's result, or None when a run was already going or this one failed."""
        if not self._lock.acquire(blocking=False):
            return None
        self.button.disabled = True
        try:
            return run()
        except Exception as exc:
            self.status.value = f"the live run stopped: {_described(exc)}"
        except KeyboardInterrupt:
            # the label must not go on naming the step the run was at
            self.status.value = f"interrupted: {self.again}"
            raise
        finally:
            self.button.disabled = False
            self._lock.release()
        return None


def _described(exc: Exception) -> str:
    """The lab's and the client's failures as their message says them, any other with its type.

    redis is looked up, not imported: an error of its kind exists only once it is loaded, and
    the widgets load in a page that has no redis (the book, in Pyodide)."""
    redis = sys.modules.get("redis")
    said = (LabError, ReplyError, OSError, *((redis.RedisError,) if redis else ()))
    return str(exc) if isinstance(exc, said) else f"{type(exc).__name__}: {exc}"
