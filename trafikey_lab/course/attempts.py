"""The one safe run of a learner's attempt, for every checker of the course.

An attempt is whatever the learner's cell left: a function, or `...`, None or anything else
while it is not finished. `run` never raises on it. It says what the attempt did as one of a
few typed outcomes, so that a checker matches the outcome's type, never the words of a
message: not a function, handed to the library's own answer, returned a value, raised, or ran
past the time limit.

The attempt runs in a thread of its own, joined with a timeout. Python cannot stop a thread, so
an attempt that runs past the limit is left running as a daemon thread: its result, if it ever
comes, is dropped, it never holds the kernel open when the kernel exits, and the checker says
the attempt took too long, so that the learner restarts the kernel if it is still busy.
In a browser page (the book, in Pyodide) there are no threads: the attempt runs in the page's
own Python, with no time limit, as any cell does there.
"""

import contextlib
import threading
import types
from dataclasses import dataclass

from trafikey_lab import epoch
from trafikey_lab.course.feedback import error_text
from trafikey_lab.module import native

LIMIT_S = 30.0
"""How long an attempt may run: a live exercise waits for leases of a few hundred ms and for a
server to restart, never for this long."""


@dataclass(frozen=True)
class NotAFunction:
    attempt: object


@dataclass(frozen=True)
class Borrowed:
    name: str
    """The library function the attempt hands the question to."""


@dataclass(frozen=True)
class Returned:
    value: object


@dataclass(frozen=True)
class Raised:
    error: BaseException

    @property
    def text(self) -> str:
        return error_text(self.error)


@dataclass(frozen=True)
class TimedOut:
    limit_s: float


Outcome = NotAFunction | Borrowed | Returned | Raised | TimedOut


def failed(outcome: Outcome) -> str | None:
    """What an attempt did instead of returning, in the words every checker uses after "your
    function" (or "your check"): "raised <the error>" or "ran for more than N s"; None when it
    returned, or was never run."""
    match outcome:
        case Raised():
            return f"raised {outcome.text}"
        case TimedOut(limit_s):
            return f"ran for more than {limit_s:g} s"
    return None


def screen(attempt, library=None, library_names=None) -> NotAFunction | Borrowed | None:
    """Why the attempt cannot be run as an answer, before it runs: it is not a function, or it
    hands the question to the library's own answer (`borrowed`); None when it can be run."""
    if not callable(attempt):
        return NotAFunction(attempt)
    if (name := borrowed(attempt, library, library_names)) is not None:
        return Borrowed(name)
    return None


def run(attempt, *args, limit_s: float | None = None, library=None, library_names=None,
        call=None) -> Outcome:
    """attempt(*args), as an Outcome, once `screen` lets it run. `library` and `library_names`
    name the library's own answers the attempt must not hand the question to; `call`, when
    given, is called as call(attempt, *args) in the attempt's thread instead, for a checker
    that watches the attempt as it runs."""
    return run_each(attempt, [args], limit_s=limit_s, library=library,
                    library_names=library_names, call=call)[0]


def run_each(attempt, calls, *, limit_s: float | None = None, library=None,
             library_names=None, call=None) -> list[Outcome]:
    """attempt(*args) for each args of `calls`, in order, as `run` runs one, in one thread:
    a checker that tries thousands of values (the near misses) would spend far longer starting
    a thread for each. The time limit is the whole run's; a call it did not reach is
    TimedOut."""
    if (refused := screen(attempt, library, library_names)) is not None:
        return [refused] * len(calls)
    limit_s = LIMIT_S if limit_s is None else limit_s
    done: list[Outcome] = []

    def target() -> None:
        for args in calls:
            try:
                value = call(attempt, *args) if call is not None else attempt(*args)
                done.append(Returned(value))
            except BaseException as exc:  # the learner's code may raise anything: say what
                done.append(Raised(exc))

    if native.in_page():
        target()
        return done
    thread = threading.Thread(target=target, name="trafikey-lab attempt", daemon=True)
    thread.start()
    thread.join(limit_s)
    reached = done[:]  # a copy: a runaway thread may still be appending to `done`
    return reached + [TimedOut(limit_s)] * (len(calls) - len(reached))


LIBRARY_CHECKS = {"valid_run_id", "shape_problem", "trafikey_valid_run_id", "read_value"}


def borrowed(candidate, library=None, library_names=None) -> str | None:
    """The library's own answer, when the candidate hands the question to it: by being it, or
    by naming it in its code (a name the learner defined themselves does not count). The
    shape check's functions unless `library` and `library_names` name others."""
    if library is None:
        library = (epoch.valid_run_id, epoch.shape_problem, native.valid_run_id)
    library_names = LIBRARY_CHECKS if library_names is None else library_names
    if any(candidate is check for check in library):
        return candidate.__name__
    code = getattr(candidate, "__code__", None)
    scope = dict(getattr(candidate, "__globals__", {}))
    cells = getattr(candidate, "__closure__", None) or ()
    # strict=False: a callable that is not a plain function may carry a code without cells
    for name, cell in zip(getattr(code, "co_freevars", ()), cells, strict=False):
        # a closure variable not yet assigned holds nothing to inspect
        with contextlib.suppress(ValueError):
            scope[name] = cell.cell_contents
    codes, names = ([code] if code is not None else []), set()
    while codes:
        code = codes.pop()
        names |= {*code.co_names, *code.co_freevars}
        codes += [const for const in code.co_consts if isinstance(const, types.CodeType)]
    for name in sorted(names):
        value = scope.get(name)
        if value is not None and any(value is check for check in library):
            return value.__name__
        if name in library_names and value is None:
            return name
    return None


