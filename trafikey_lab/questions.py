"""The course's diagnostic questions as data: a prompt, its options, the one right option, and
the misconception each wrong option names, so that a learner who picks it is told which idea to
repair and what is true instead.

Content only: `widgets.diagnostic.Diagnostic` lays a Question out and answers a choice, and the
tests hold each question here against the model and the C without a widget.
"""

from collections.abc import Iterable
from dataclasses import dataclass

LETTERS = "ABCDEFGH"


@dataclass(frozen=True)
class Option:
    text: str
    why: str
    """What is true, and why: shown when the option is chosen."""
    right: bool = False
    misconception: str | None = None
    """For a wrong option: the mistaken idea behind it, in a few words."""


def check_options(options: Iterable[Option]) -> None:
    """Exactly one right option; every wrong one names its misconception; no two alike."""
    options = list(options)
    if len(options) < 2:
        raise ValueError("a question needs at least two options")
    if sum(option.right for option in options) != 1:
        raise ValueError("exactly one option must be right=True")
    for option in options:
        if not option.text.strip() or not option.why.strip():
            raise ValueError(f"{option.text!r}: every option needs its text and its why")
        if option.right and option.misconception:
            raise ValueError(f"{option.text!r}: the right option has no misconception")
        if not option.right and not (option.misconception or "").strip():
            raise ValueError(f"{option.text!r}: a wrong option must name its misconception")
    if len({option.text for option in options}) != len(options):
        raise ValueError("two options have the same text")


@dataclass(frozen=True)
class Question:
    """One multiple-choice question; its options are refused unless they can teach."""

    prompt: str
    options: tuple[Option, ...]

    def __init__(self, prompt: str, options: Iterable[Option]):
        check_options(options)
        object.__setattr__(self, "prompt", prompt)
        object.__setattr__(self, "options", tuple(options))

    @property
    def right(self) -> Option:
        return next(option for option in self.options if option.right)

    def option(self, letter: str) -> Option:
        """The option a letter ("A", "B", ...) labels."""
        return self.options[LETTERS.index(letter.upper())]

    def labels(self) -> list[str]:
        return [f"{LETTERS[i]}. {option.text}" for i, option in enumerate(self.options)]

    @staticmethod
    def feedback(option: Option) -> str:
        if option.right:
            return f"Right. {option.why}"
        return f"Not this one: it rests on the idea that {option.misconception}. {option.why}"

    def __repr__(self) -> str:
        lines = [f"Check yourself. {self.prompt}", *(f"  {label}" for label in self.labels())]
        return "\n".join(lines)


THREE_WRITERS = Question(
    "job-4 was claimed with EMQ.CLAIM; its lease ran out and the sweep (max_stalled 2) sent "
    "it back to pending with stalled 1. In the same server process a worker then claims "
    "it with the script claim2, and that lease runs out too. What does the next sweep, "
    "max_stalled 2, do with job-4?", [
        Option("It sends job-4 back to pending uncounted: a lease a script granted carries "
               "no stamp.", misconception="claim2 removes the stamp",
               why="claim2's one write to the row is HSET state active attempts <n>; "
                   "lease_epoch stays as the native claim wrote it. Only a row with no "
                   "stamp, or another process's, is never charged."),
        Option("It dead-letters job-4 with stalled 2: the row still carries the stamp the "
               "native claim wrote, this process's.", right=True,
               why="claim2 writes only state and attempts, and neither it nor the sweep "
                   "removes lease_epoch. The row still carries the stamp the native claim "
                   "wrote, this process's, so the stall is counted: 1 + 1 = 2 reaches "
                   "max_stalled."),
        Option("It sends job-4 back to pending uncounted: the first sweep cleared the stamp "
               "when it sent the job back.",
               misconception="the sweep removes the stamp of a lease it ends",
               why="the sweep writes state, and stalled for a counted lease; it never "
                   "writes lease_epoch."),
        Option("It sends job-4 back to pending with stalled 1: the new claim started the "
               "count again.", misconception="a new claim resets stalled",
               why="no claim writes stalled: EMQ.CLAIM writes state, attempts and "
                   "lease_epoch, claim2 state and attempts. The count goes on from 1 to 2."),
        Option("It dead-letters job-4 with stalled still 1: the scripted lease is not "
               "counted, but a job claimed twice has used up max_stalled 2.",
               misconception="max_stalled counts claims",
               why="max_stalled is held against stalled, the counted stalls, not against "
                   "attempts: the sweep dead-letters a job only on a counted stall, when "
                   "stalled + 1 reaches max_stalled, and writes that stalled with it. Here "
                   "the stall is counted, on the stamp the native claim left, so the job "
                   "dies with stalled 2."),
    ])
"""02's diagnostic question: what a scripted claim leaves of an earlier native stamp."""
