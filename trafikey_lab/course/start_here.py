"""Notebook 00, start here: its exercise, the sweep's decision on one expired lease written by
the learner, the checker that holds it against the model on boundary cases, drawn ones and
near misses of the run_id, and the names the notebook uses (the preflight check, a history
played)."""

import random
import secrets
from dataclasses import dataclass

from trafikey_lab import doctor, epoch, near_misses, sweep
from trafikey_lab.course import attempts, needs_servers_of_its_own
from trafikey_lab.course.feedback import (
    NOTE,
    OUTCOMES,
    READINGS,
    RIGHT,
    WRONG,
    Feedback,
    Finding,
    feedback,
)
from trafikey_lab.model import decide_row
from trafikey_lab.module import native
from trafikey_lab.player import play
from trafikey_lab.sweep import Outcome, Reading

__all__ = ["check_sweep_prediction", "play", "preflight"]


def preflight() -> list[doctor.Check]:
    """The doctor's checks, in the order the setup needs them (doctor.run). A page has no
    server, no C module and no redis to check: there it refuses in one line."""
    needs_servers_of_its_own("The preflight check")
    return doctor.run()


# -- 00: predict what the sweep does with one expired lease ----------------------------------

BOUNDARY_CASES = 11
"""The boundaries of both rules; a stamp that misses the run_id by a byte is a near miss."""
DRAWN_CASES = 12
_SWEEP_LIBRARY_NAMES = {"exempt", "decide_member", "decide", "decide_row", "count_stall",
                        "trafikey_exempt", "trafikey_decide_member", "plan_sweep", "sweep"}
_SWEEP_LIBRARY = (epoch.exempt, native.exempt, native.decide_member, sweep.decide_member,
                  sweep.decide, sweep.count_stall, decide_row)


def _sweep_cases(seed: int) -> list["Case"]:
    """(what the case is, lease_epoch, run_id, stalled before, max_stalled): the boundaries of
    both rules, then cases drawn afresh from `seed`, then the run_id's near misses as stamps
    (`near_misses`), so that only a rule, not a table of answers, gets them all right."""
    draw = random.Random(seed)
    run_id, other = near_misses.run_id(draw), near_misses.run_id(draw)
    last = b"0" if run_id[-1:] != b"0" else b"1"
    cases: list[Case] = [
        ("the stamp is the sweeper's, no stalled field, max_stalled 1", run_id, run_id, None, 1),
        ("the stamp is the sweeper's, no stalled field, max_stalled 2", run_id, run_id, None, 2),
        ("the stamp is the sweeper's, stalled 1, max_stalled 2", run_id, run_id, 1, 2),
        ("the stamp is the sweeper's, stalled 1, max_stalled 3", run_id, run_id, 1, 3),
        ("the stamp is the sweeper's, stalled 4, max_stalled 3", run_id, run_id, 4, 3),
        ("no lease_epoch field, max_stalled 1", None, run_id, None, 1),
        ("an empty lease_epoch, max_stalled 1", b"", run_id, 2, 1),
        ("another process's stamp, stalled 0, max_stalled 1", other, run_id, 0, 1),
        ("the sweeper's run_id with its last byte changed", run_id[:-1] + last, run_id, None, 1),
        ("the sweeper's run_id with one byte more", run_id + b"0", run_id, None, 1),
        ("the sweeper's run_id in upper case", run_id.upper(), run_id, None, 1),
    ]
    for n in range(DRAWN_CASES):
        max_stalled = draw.randint(1, 6)
        stalled = draw.choice([None, *range(0, 8)])
        stamp = draw.choice([run_id, run_id, other, None])
        cases.append((f"drawn case {n + 1}", stamp, run_id, stalled, max_stalled))
    for miss in near_misses.near_misses(run_id):
        cases.append((NearMissStamp(miss), miss.value, run_id, draw.choice([None, 0, 1]),
                      draw.randint(1, 3)))
    return cases


@dataclass(frozen=True)
class NearMissStamp:
    """What a near-miss case is: the stamp is the sweeper's run_id but for one byte class at
    one place; named by the class and the place alone, so that feedback stays the same on any
    draw."""

    miss: near_misses.NearMiss

    def __str__(self) -> str:
        return f"{self.miss.kind} in the stamp, {self.miss.where}"


Case = tuple[str | NearMissStamp, bytes | None, bytes, int | None, int]
"""(what the case is, lease_epoch, run_id, stalled before, max_stalled)."""


def _module_answer(stamp: bytes | None, run_id: bytes, stalled: int | None,
                   max_stalled: int) -> tuple[Reading, Outcome]:
    """What the model's sweep does with such a row: (the stamp's reading, the job's outcome)."""
    row = {b"state": b"active", b"attempts": b"1"}
    if stamp is not None:
        row[b"lease_epoch"] = stamp
    if stalled is not None:
        row[b"stalled"] = b"%d" % stalled
    kind = decide_row(run_id, max_stalled, row)[0].kind
    return (Reading.EXEMPT if kind == "exempt" else Reading.COUNTED,
            Outcome.DEAD if kind == "dead" else Outcome.RECOVERED)


def check_sweep_prediction(predict, *, live=None, seed: int | None = None) -> Feedback:
    """Runs the learner's `predict(lease_epoch, run_id, stalled, max_stalled)` (lease_epoch
    bytes or None when the row has none, run_id the sweeping process's bytes, stalled the row's
    count before the sweep or None when absent) over the boundary cases, then over cases drawn
    afresh and stamps that miss the run_id by one byte class at one place (`near_misses`).
    Each answer is a pair: the stamp's reading ("exempt" or "counted") and the job's outcome
    ("recovered": back to pending, or "dead"), compared with the model's sweep. The feedback
    names the cases answered wrongly (a near miss by its class and place), never the answer
    they should have had. The model and the C decide: `live` is taken, as every checker takes
    it, and not needed."""
    exercise = "predict what the sweep does with one expired lease"
    match attempts.screen(predict, _SWEEP_LIBRARY, _SWEEP_LIBRARY_NAMES):
        case attempts.NotAFunction():
            return feedback(exercise, [Finding(WRONG, f"{predict!r} is not a function: define "
                                                "predict(lease_epoch, run_id, stalled, "
                                                "max_stalled)")])
        case attempts.Borrowed(name):
            return feedback(exercise, [Finding(WRONG, f"your function hands the question to "
                                                       f"the library's own {name}: compare the "
                                                       "stamp and count the stall yourself")])
    cases = _sweep_cases(secrets.randbits(32) if seed is None else seed)
    boundary, drawn = cases[:BOUNDARY_CASES], cases[BOUNDARY_CASES:]
    wrong = _wrong_predictions(predict, boundary)
    if wrong:
        findings = [Finding(WRONG, text) for text in wrong[:4]]
        if len(wrong) > 4:
            findings.append(Finding(WRONG, f"and {len(wrong) - 4} more of the "
                                           f"{BOUNDARY_CASES} boundary cases"))
        findings.append(Finding(NOTE, f"{DRAWN_CASES} cases drawn at random and "
                                      f"{len(drawn) - DRAWN_CASES} near misses of the run_id are "
                                      "checked once the boundary cases are right"))
        return feedback(exercise, findings)
    wrong = _wrong_predictions(predict, drawn)
    if wrong:
        return feedback(exercise, [Finding(WRONG, text) for text in wrong[:6]])
    return feedback(exercise, [Finding(RIGHT, f"all {len(cases)} cases answered as the sweep "
                                               "answers them: the budget's edge, cases drawn at "
                                               "random and the run_id's near misses, "
                                               f"{near_misses.DESCRIBED}")])


def _wrong_predictions(predict, cases) -> list[str]:
    """One text per case answered wrongly, "what the case is: what is wrong"; the near misses
    of one byte class answered wrongly the same way share one text, which names their
    places (and their members, when not all of the class's)."""
    wrong: list[str | tuple[str, str]] = []
    missed: dict[tuple[str, str], list[near_misses.NearMiss]] = {}
    # Some two thousand cases: one thread for all of them, not one each.
    outcomes = attempts.run_each(predict, [case[1:] for case in cases], library=_SWEEP_LIBRARY,
                                 library_names=_SWEEP_LIBRARY_NAMES)
    for (what, *case), outcome_of_call in zip(cases, outcomes, strict=True):
        problem = _problem(outcome_of_call, *case, about_a_near_miss=isinstance(
            what, NearMissStamp))
        if problem is None:
            continue
        if isinstance(what, NearMissStamp):
            key = (what.miss.kind, problem)
            if key not in missed:
                missed[key] = []
                wrong.append(key)
            missed[key].append(what.miss)
        else:
            wrong.append(f"{what}: {problem}")
    return [text if isinstance(text, str) else _near_miss_text(*text, missed[text])
            for text in wrong]


def _near_miss_text(kind: str, problem: str, missed: list[near_misses.NearMiss]) -> str:
    members = near_misses.missed_members(kind, missed)
    return (f"{kind} in the stamp{f' ({members})' if members else ''}, "
            f"{near_misses.wheres(missed)}: {problem}")


def _problem(outcome_of_call: attempts.Outcome, stamp, run_id, stalled, max_stalled, *,
             about_a_near_miss: bool = False) -> str | None:
    """What is wrong with the prediction for one case, never what it should have been; None
    when it is the sweep's. An error on a near miss is named by its type alone: its message
    may name the byte, and the near misses of one class share one text."""
    reading, outcome = _module_answer(stamp, run_id, stalled, max_stalled)
    if isinstance(outcome_of_call, attempts.Raised):
        raised = (type(outcome_of_call.error).__name__ if about_a_near_miss
                  else outcome_of_call.text)
        return (f"your function raised {raised}; it must answer every row, an absent field "
                "included")
    if isinstance(outcome_of_call, attempts.TimedOut):
        return f"your function {attempts.failed(outcome_of_call)}; it must answer at once"
    answer = getattr(outcome_of_call, "value", None)
    if (not isinstance(answer, (tuple, list)) or len(answer) != 2
            or answer[0] not in READINGS or answer[1] not in OUTCOMES):
        return f"it answered {answer!r}, not a reading and an outcome"
    if answer[0] != reading:
        return f"this lease is not {answer[0]}: look again at the stamp comparison"
    if answer[1] != outcome:
        return f"the job does not end {answer[1]}: look again at the count and the budget"
    return None


