"""Notebook 01, one value per process: the run_id and the epoch. The readings of a value are
`trafikey_lab.readings`; here is the notebook's exercise, the shape check the learner writes,
and the names the notebook uses.
"""

import inspect
import os
import random
import sys

from trafikey_lab import epoch, near_misses
from trafikey_lab.course import attempts
from trafikey_lab.course.feedback import NOTE, RIGHT, WRONG, Feedback, Finding, feedback
from trafikey_lab.module import native
from trafikey_lab.module.build import c_excerpt
from trafikey_lab.readings import read_value
from trafikey_lab.widgets.run_id_checker import RunIdChecker

__all__ = ["RunIdChecker", "c_excerpt", "check_shape_check", "epoch", "native"]


# -- 01: write the shape check ---------------------------------------------------------------

SHAPE_CASES: dict[str, bytes] = {
    "NOW": epoch.NOW,
    **epoch.SHAPE_REJECTS,
    "forty 0s": epoch.ZERO,
    # What a check built on int(value, 16) lets through.
    "NOW starting 0x": b"0x" + epoch.NOW[2:],
    "NOW with an underscore": epoch.NOW[:20] + b"_" + epoch.NOW[21:],
    "NOW ending in a space": epoch.NOW[:39] + b" ",
    # The bytes just outside 0-9 and a-f, where a range test is off by one.
    "NOW starting with a slash": b"/" + epoch.NOW[1:],
    "NOW with a colon inside": epoch.NOW[:20] + b":" + epoch.NOW[21:],
    "NOW ending in a backquote": epoch.NOW[:39] + b"`",
    # What a regex ending in $ lets through: $ also matches just before a final newline.
    "NOW with a newline appended": epoch.NOW + b"\n",
    # What str.isdigit() on decoded text lets through: the digits of other scripts, counted
    # in bytes or in characters, and a byte that only some decodings read as a digit.
    "NOW ending in an Arabic-Indic 3 (40 bytes)": epoch.NOW[:38] + "٣".encode(),
    "NOW ending in a superscript 3 (40 characters)": epoch.NOW[:39] + "³".encode(),
    "NOW ending in byte 0xb2 (not UTF-8)": epoch.NOW[:39] + b"\xb2",
}
"""The dive's test values, then values that the usual shortcuts get wrong."""

MADE_UP = 3
"""How many fresh run_ids the checker makes up on each run; the near misses are of the first."""


def _as_verdict(answer) -> bool | None:
    """True or False, or the C's int 1 or 0; None for anything else."""
    if isinstance(answer, bool):
        return answer
    if type(answer) is int and answer in (0, 1):
        return bool(answer)
    return None


def _library_calls(candidate, value: bytes, used: list[str]):
    """candidate(value), with the name of every function of the trafikey_lab package that
    runs meanwhile appended to `used`, however the candidate reached it: by name, through
    getattr with a name built at run time, a default argument or a container. A generator
    or a finalizer of the package's does not count: the garbage collector may close one (an
    old model's run_ids, say) in whichever thread it runs, the candidate's included."""
    package = os.path.join(os.path.dirname(epoch.__file__), "")
    resumed = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR

    def profile(frame, event, arg):
        code = frame.f_code
        if (event == "call" and code.co_filename.startswith(package)
                and not code.co_flags & resumed and code.co_name != "__del__"):
            used.append(code.co_name)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        return candidate(value)
    finally:
        sys.setprofile(previous)


LIBRARY = (epoch.valid_run_id, epoch.shape_problem, native.valid_run_id, read_value)
"""The library's own answers to the shape check, which the learner's check must not call."""


def _ask(candidate, value: bytes, used: list[str]) -> attempts.Outcome:
    """What the candidate did with value; the library functions it called meanwhile are
    appended to `used`. The library's checks were looked for once, before the first call."""
    return attempts.run(candidate, value, library=LIBRARY,
                        call=lambda c, v: _library_calls(c, v, used))


def _as_finding(name: str, outcome: attempts.Outcome, expected: bool, why: str) -> Finding | None:
    """The finding about one named value; None when the candidate answered as the module."""
    match outcome:
        case attempts.Raised():
            return Finding(WRONG, f"{name}: your check {attempts.failed(outcome)}; it must "
                                  f"answer True or False for any bytes ({why})")
        case attempts.TimedOut():
            return Finding(WRONG, f"{name}: your check {attempts.failed(outcome)}; it must "
                                  "answer at once")
        case attempts.Returned(value) if _as_verdict(value) is None:
            return Finding(WRONG, f"{name}: your check returned {value!r}, not True or False "
                                  "(1 or 0, as the C's int, will do too); wrap the test in "
                                  "bool(...)")
        case attempts.Returned(value) if _as_verdict(value) != expected:
            return Finding(WRONG, f"{name}: your check says {_as_verdict(value)}, the module "
                                  f"says {expected}: {why}")
    return None


def _did(outcome: attempts.Outcome) -> str:
    """What the candidate did instead of answering, in a few words; "" when it answered."""
    match outcome:
        case attempts.Returned(value) if _as_verdict(value) is None:
            return f"returned {value!r}"
    return attempts.failed(outcome) or ""


def _handed_over(exercise: str, name: str) -> Feedback:
    return feedback(exercise, [Finding(WRONG, f"your check hands the question to the "
                                        f"library's own {name}: write the test yourself, "
                                        "from the rule the notebook states")])


def _reference(value: bytes) -> bool:
    """The answer a learner's shape check is held to: the module's C, or in a page that runs
    the course's Python (no C module there) the model's rule, which the C's tests hold equal."""
    return epoch.valid_run_id(value) if native.in_page() else native.valid_run_id(value)


def check_shape_check(candidate, *, live=None, rng=None) -> Feedback:
    """Runs the learner's `candidate(value: bytes) -> bool` (or 1/0, as the C returns) over
    SHAPE_CASES and over values made up for this run (`rng`, a random.Random; a fresh one
    when not given): fresh run_ids and the near misses of one, every byte class at every place
    (`near_misses`), and compares each answer with the module's own C shape check,
    trafikey_valid_run_id.

    A check that hands the question to the library is wrong whatever it answers. Before it
    runs, its code is read for the library's checks (epoch's, native's, readings.read_value)
    by name or as objects in its scope; while it runs, any call into the trafikey_lab
    package is seen (sys.setprofile), so a name built at run time for getattr, or a function
    held in a default argument, is caught too. Not caught: the module's C function called
    through a ctypes handle the learner opened and named with a built string, since no Python
    code of the package runs then. The check is the module's C alone: `live` is taken, as
    every checker takes it, and not needed."""
    exercise = "the shape check, against the module's C"
    match attempts.screen(candidate, LIBRARY):
        case attempts.NotAFunction():
            return feedback(exercise, [Finding(WRONG, f"{candidate!r} is not a function: "
                                                "define one that takes bytes and returns True "
                                                "or False")])
        case attempts.Borrowed(name):
            return _handed_over(exercise, name)
    findings: list[Finding] = []
    agreed: list[str] = []
    used: list[str] = []  # the library functions the candidate called, however it reached them
    for name, value in SHAPE_CASES.items():
        why = epoch.shape_problem(value) or "40 bytes, each one of 0-9 a-f"
        found = _as_finding(name, _ask(candidate, value, used), _reference(value), why)
        if found is None:
            agreed.append(name)
        else:
            findings.append(found)
    if len(agreed) == len(SHAPE_CASES):
        findings.insert(0, Finding(RIGHT, f"all {len(SHAPE_CASES)} named values answered as the "
                                          "module answers"))
    elif agreed:
        findings.insert(0, Finding(RIGHT, f"{len(agreed)} of {len(SHAPE_CASES)} named values "
                                          "answered as the module answers"))
    findings += _made_up_findings(candidate, rng or random.Random(), used)
    if used:
        return _handed_over(exercise, used[0])
    if native.in_page():
        findings.append(Finding(NOTE, "held to the model's shape check (epoch.valid_run_id): "
                                      "the C module is not in this page"))
    return feedback(exercise, findings)


def _made_up_findings(candidate, rng: random.Random, used: list[str]) -> list[Finding]:
    """The findings for the values made up for this run: fresh run_ids, and the near misses of
    one (`near_misses`), in words that name a near miss's class and place, never the values
    drawn, so that the same attempt gets the same feedback on every run."""
    fresh = [near_misses.run_id(rng) for _ in range(MADE_UP)]
    misses = near_misses.near_misses(fresh[0])
    findings, right, instead = [], 0, ""
    for value in fresh:
        outcome = _ask(candidate, value, used)
        if isinstance(outcome, attempts.Returned):
            right += int(_as_verdict(outcome.value) == _reference(value))
        instead = instead or _did(outcome)
    if right < len(fresh):
        findings.append(Finding(WRONG, "run_ids made up for this run (new each time, so no "
                                       f"table of known values can answer them): {right} of "
                                       f"{len(fresh)} answered as the module answers"
                                       + (f"; on one, your check {instead}" if instead else "")))
    # Some two thousand values: one thread for all of them, not one each.
    outcomes = attempts.run_each(candidate, [(miss.value,) for miss in misses], library=LIBRARY,
                                 call=lambda c, v: _library_calls(c, v, used))
    wrong: dict[tuple[str, str], list[near_misses.NearMiss]] = {}
    for miss, outcome in zip(misses, outcomes, strict=True):
        verdict = _as_verdict(outcome.value) if isinstance(outcome, attempts.Returned) else None
        if verdict != _reference(miss.value):
            # An error by its type alone: its message names the byte and where it was.
            did = (f"raised {type(outcome.error).__name__}" if isinstance(outcome, attempts.Raised)
                   else _did(outcome) or f"says {verdict}")
            wrong.setdefault((miss.kind, did), []).append(miss)
    for (kind, did), missed in wrong.items():
        members = near_misses.missed_members(kind, missed)
        findings.append(Finding(WRONG, f"{kind}: your check {did} when it is "
                                       f"{near_misses.wheres(missed)} ("
                                       + (f"{members}, " if members else "")
                                       + "in a run_id made up for this run)"))
    if not findings:
        findings.append(Finding(RIGHT, f"all {len(fresh) + len(misses)} values made up for "
                                       f"this run answered as the module answers: {len(fresh)} "
                                       f"fresh run_ids and {len(misses)} near misses of one, "
                                       f"{near_misses.DESCRIBED}"))
    return findings
