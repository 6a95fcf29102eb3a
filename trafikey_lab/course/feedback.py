"""What every exercise checker of the course answers: the learner writes a few lines, a checker
says right or wrong and why.

One checker per notebook, each in the notebook's own module of this package, each called as
check_x(attempt, *, live=None) and returning a Feedback. Each takes the learner's attempt as it
stands, finished or not, and never raises on it: whatever the attempt does (returns the wrong
thing, raises, runs too long, is left blank) becomes a finding that says what happened and what
to change; `attempts.run` is the one safe run of an attempt they share. A checker that can run
the attempt on the live server as well as on the model does so when it is given the live
executor; one that needs no server says so and ignores it.
"""

from dataclasses import dataclass, field

from trafikey_lab.errors import ReplyError
from trafikey_lab.executors import URL_ENV, Queue
from trafikey_lab.player import Trace
from trafikey_lab.sweep import Outcome, Reading

RIGHT, WRONG, NOTE = "right", "wrong", "note"
_MARKS = {RIGHT: "✓", WRONG: "✗", NOTE: "·"}

READINGS = (Reading.COUNTED, Reading.EXEMPT)
"""The words a learner's prediction gives the sweep's reading of a stamp (an expired lease's:
it is read)."""
OUTCOMES = (Outcome.RECOVERED, Outcome.DEAD)
"""The words a learner's prediction gives an expired lease's job: back to pending, or dead
(it is swept, so not untouched)."""

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

    @property
    def kinds(self) -> list[str]:
        """Each finding's kind, in order."""
        return [f.kind for f in self.findings]

    @property
    def text(self) -> str:
        """Every finding's text, one a line, without the marks."""
        return "\n".join(f.text for f in self.findings)

    def about(self, case: str) -> Finding:
        """The finding about one case: the one whose text opens with the case's name and a
        colon, as a checker names a case it judged."""
        found = [f for f in self.findings if f.text.startswith(f"{case}: ")]
        if len(found) != 1:
            raise LookupError(f"{len(found)} findings about {case!r} in {self!r}: a case has one")
        return found[0]

    def __repr__(self) -> str:
        head = f"{'RIGHT' if self.right else 'NOT YET'}: {self.exercise}"
        return "\n".join([head, *(f"  {_MARKS[f.kind]} {f.text}" for f in self.findings)])


def feedback(exercise: str, findings, traces=()) -> Feedback:
    return Feedback(exercise, tuple(findings), tuple(traces))


def not_ours(said: str, server, why: str) -> str:
    """Why a part that needs a server of the lab's own did not run on an attached one, and the
    fix: `said` ("not run live"), then the server's address and `why` it may not be used."""
    return (f"{said}: the lab is using a server it did not start ({server.address}), and "
            f"{why}. Unset {URL_ENV} to let the lab run its own.")


def error_text(exc: BaseException) -> str:
    return exc.text if isinstance(exc, ReplyError) else f"{type(exc).__name__}: {exc}"
