"""What every exercise checker of the course answers: the learner writes a few lines, a checker
says right or wrong and why.

One checker per notebook, each in the notebook's own module of this package. Each takes the
learner's attempt as it stands, finished or not, and never raises on it: whatever the attempt
does (returns the wrong thing, raises, is left blank) becomes a finding that says what happened
and what to change. A checker that can run the
attempt on the live server as well as on the model does so when it is given the live executor.
"""

from dataclasses import dataclass, field

from trafikey_lab import epoch
from trafikey_lab.errors import ReplyError
from trafikey_lab.executors import Queue
from trafikey_lab.histories import Trace
from trafikey_lab.module import native

RIGHT, WRONG, NOTE = "right", "wrong", "note"
_MARKS = {RIGHT: "✓", WRONG: "✗", NOTE: "·"}

EXERCISE_QUEUE = Queue("{exercise}")
"""The exercises' own queue, so that checking an attempt never touches a notebook's queue."""


@dataclass(frozen=True)
class Finding:
    kind: str
    """RIGHT, WRONG or NOTE (a fact that is neither, such as a step that could not run live)."""
    text: str


@dataclass(frozen=True)
class Feedback:
    """What a checker found. Prints as one verdict line, then one line per finding."""

    exercise: str
    findings: tuple[Finding, ...]
    traces: tuple[Trace, ...] = field(default=(), repr=False)
    """The histories a checker played, for a figure: notebook 04's checker fills it."""

    @property
    def right(self) -> bool:
        kinds = [f.kind for f in self.findings]
        return RIGHT in kinds and WRONG not in kinds

    def __repr__(self) -> str:
        head = f"{'RIGHT' if self.right else 'NOT YET'}: {self.exercise}"
        return "\n".join([head, *(f"  {_MARKS[f.kind]} {f.text}" for f in self.findings)])


def feedback(exercise: str, findings, traces=()) -> Feedback:
    return Feedback(exercise, tuple(findings), tuple(traces))


def on(executor_name: str) -> str:
    return "on the live server" if executor_name == "live" else f"on the {executor_name}"


def error_text(exc: BaseException) -> str:
    return exc.text if isinstance(exc, ReplyError) else f"{type(exc).__name__}: {exc}"



LIBRARY_CHECKS = {"valid_run_id", "shape_problem", "trafikey_valid_run_id", "read_value"}


def borrowed(candidate, library=None, library_names=LIBRARY_CHECKS) -> str | None:
    """The library's own answer, when the candidate hands the question to it: by being it, or
    by naming it in its code (a name the learner defined themselves does not count). The
    shape check's functions unless `library` and `library_names` name others."""
    import types

    library = library or (epoch.valid_run_id, epoch.shape_problem, native.valid_run_id)
    if any(candidate is check for check in library):
        return candidate.__name__
    code = getattr(candidate, "__code__", None)
    scope = dict(getattr(candidate, "__globals__", {}))
    cells = getattr(candidate, "__closure__", None) or ()
    for name, cell in zip(getattr(code, "co_freevars", ()), cells):
        try:
            scope[name] = cell.cell_contents
        except ValueError:  # a closure variable not yet assigned holds nothing to inspect
            pass
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


