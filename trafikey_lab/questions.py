"""The course's diagnostic questions as data: a prompt, its options, the one right option, and
the misconception each wrong option names, so that a learner who picks it is told which idea to
repair and what is true instead.

Content only: `widgets.diagnostic.Diagnostic` lays a Question out and answers a choice, and the
tests hold each question here against the model and the C without a widget.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from trafikey_lab.stories import Story

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


QUESTION_HISTORY = Story(
    "counted_then_extended_by_script",
    "one stall counted, then extended by a script after a restart",
    ("add", "claim", "expire", "sweep", "claim", "restart", "scripted_extend", "expire", "sweep"),
    "the second claim stamped the row with the process before the restart and extend2 left "
    "that stamp, so the sweep after the restart finds another process's stamp",
)
"""The history 04's question is about: the first sweep counts a stall (stalled 1), the rest
is the fifth history of the exercise."""
QUESTION_MAX_STALLED = 2


ONE_LEASE_ACROSS_A_RESTART = Question(
    "A job's row already holds stalled 1 from a stall counted earlier. Its worker claims it "
    "with EMQ.CLAIM; then the server restarts; on the new process the "
    "worker extends the lease once with the script extend2, then stops. The lease runs out "
    f"and the new process sweeps with max_stalled {QUESTION_MAX_STALLED}. Which is true?",
    [
        Option(
            "The job goes back to pending uncounted, and its stalled field still holds 1.",
            right=True,
            why="EMQ.CLAIM stamped the row with the process before the restart, and extend2 "
                "moved the deadline without writing lease_epoch, so the sweep finds another "
                "process's stamp: exempt. It takes the job out of active, puts it in "
                "pending and lists it among the recovered; on the row it writes state "
                "pending and nothing else, so stalled keeps its 1.",
        ),
        Option(
            "The stall is counted: stalled becomes 2, which reaches max_stalled 2, and the "
            "job is dead-lettered.",
            misconception="extend2 moves the lease to the new process",
            why="extend2 makes EMQ.EXTEND's test (the id in active, state active, attempts "
                "equal to the worker's attempt; neither checks the deadline) and moves the "
                "deadline as EMQ.EXTEND does, but it writes no lease_epoch: the stamp still "
                "names the process before the restart. Had the worker extended with "
                "EMQ.EXTEND, this would be the answer.",
        ),
        Option(
            "The job goes back to pending with no stalled count left: the restart wiped it.",
            misconception="a restart resets stalled",
            why="A restart keeps the dataset (the lab's server saves it and the new process "
                "loads it); what changes is the run_id. No verb clears stalled, and the "
                "exempt sweep writes only state pending, so the 1 stays.",
        ),
        Option(
            "The job stays in active: exempt means its lease has not run out yet.",
            misconception="exempt means not expired",
            why="The sweep reads only leases whose deadline is at or before its now. Exempt "
                "is how it reads such an expired lease when the stamp is not its own process's: "
                "the job leaves active for pending.",
        ),
        Option(
            "Had the server handed over to a replica and been promoted back instead of "
            "restarting, the job would also go back uncounted.",
            misconception="a failback gives the server a new run_id",
            why="A run_id names one process and changes only when a process starts. A "
                "primary promoted back without restarting keeps its run_id, so the stamp "
                "its claim wrote is its own again: counted, stalled 2, dead. The failback "
                "limit shows the same rule on your server with a fresh row and max_stalled "
                "1: counted, stalled 1, dead.",
        ),
    ],
)
"""04's diagnostic question: one history, one right answer about it, and a wrong option for
each misconception about restarts, exemption, failover and the scripted extension."""
