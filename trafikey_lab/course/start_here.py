"""Notebook 00, start here: its exercise, the sweep's decision on one expired lease written by
the learner, the checker that holds it against the model on boundary cases and drawn ones, and
the names the notebook uses (the preflight check, the lease's life drawn, a history played)."""

from trafikey_lab import epoch, sweep
from trafikey_lab.course import attempts
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
from trafikey_lab.doctor import run as preflight
from trafikey_lab.histories import play
from trafikey_lab.model import decide_row
from trafikey_lab.module import native
from trafikey_lab.plots.lifecycle import draw_lifecycle

__all__ = ["check_sweep_prediction", "draw_lifecycle", "play", "preflight"]

# -- 00: predict what the sweep does with one expired lease ----------------------------------

BOUNDARY_CASES = 12
_SWEEP_LIBRARY_NAMES = {"exempt", "decide_member", "decide", "decide_row", "count_stall",
                        "trafikey_exempt", "trafikey_decide_member", "plan_sweep", "sweep"}
_SWEEP_LIBRARY = (epoch.exempt, native.exempt, native.decide_member, sweep.decide_member,
                  sweep.decide, sweep.count_stall, decide_row)


def _sweep_cases(seed: int) -> list[tuple[str, bytes | None, bytes, int | None, int]]:
    """(what the case is, lease_epoch, run_id, stalled before, max_stalled): the boundaries of
    both rules, then cases drawn afresh from `seed`, so that only a rule, not a table of
    answers, gets them all right."""
    import random

    draw = random.Random(seed)
    run_id = bytes(draw.choice(epoch.HEX_DIGITS) for _ in range(epoch.RUN_ID_LEN))
    other = bytes(draw.choice(epoch.HEX_DIGITS) for _ in range(epoch.RUN_ID_LEN))
    last = b"0" if run_id[-1:] != b"0" else b"1"
    cases = [
        ("the stamp is the sweeper's, no stalled field, max_stalled 1", run_id, run_id, None, 1),
        ("the stamp is the sweeper's, no stalled field, max_stalled 2", run_id, run_id, None, 2),
        ("the stamp is the sweeper's, stalled 1, max_stalled 2", run_id, run_id, 1, 2),
        ("the stamp is the sweeper's, stalled 1, max_stalled 3", run_id, run_id, 1, 3),
        ("the stamp is the sweeper's, stalled 4, max_stalled 3", run_id, run_id, 4, 3),
        ("no lease_epoch field, max_stalled 1", None, run_id, None, 1),
        ("an empty lease_epoch, max_stalled 1", b"", run_id, 2, 1),
        ("another process's stamp, stalled 0, max_stalled 1", other, run_id, 0, 1),
        ("the sweeper's run_id with its last byte changed", run_id[:-1] + last, run_id, None, 1),
        ("the first 39 bytes of the sweeper's run_id", run_id[:-1], run_id, None, 1),
        ("the sweeper's run_id with one byte more", run_id + b"0", run_id, None, 1),
        ("the sweeper's run_id in upper case", run_id.upper(), run_id, None, 1),
    ]
    for n in range(12):
        max_stalled = draw.randint(1, 6)
        stalled = draw.choice([None, *range(0, 8)])
        stamp = draw.choice([run_id, run_id, other, None])
        cases.append((f"drawn case {n + 1}", stamp, run_id, stalled, max_stalled))
    return cases


def _module_answer(stamp: bytes | None, run_id: bytes, stalled: int | None,
                   max_stalled: int) -> tuple[str, str]:
    """What the model's sweep does with such a row: (the stamp's reading, the job's outcome)."""
    row = {b"state": b"active", b"attempts": b"1"}
    if stamp is not None:
        row[b"lease_epoch"] = stamp
    if stalled is not None:
        row[b"stalled"] = b"%d" % stalled
    kind = decide_row(run_id, max_stalled, row)[0].kind
    return ("exempt" if kind == "exempt" else "counted", "dead" if kind == "dead" else "recovered")


def check_sweep_prediction(predict, *, live=None, seed: int | None = None) -> Feedback:
    """Runs the learner's `predict(lease_epoch, run_id, stalled, max_stalled)` (lease_epoch
    bytes or None when the row has none, run_id the sweeping process's bytes, stalled the row's
    count before the sweep or None when absent) over the boundary cases and fresh random ones.
    Each answer is a pair: the stamp's reading ("exempt" or "counted") and the job's outcome
    ("recovered": back to pending, or "dead"), compared with the model's sweep. The feedback
    names the cases
    answered wrongly, never the answer they should have had. The model and the C decide:
    `live` is taken, as every checker takes it, and not needed."""
    import secrets

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
        findings.append(Finding(NOTE, f"{len(drawn)} cases drawn at random are checked once "
                                      "the boundary cases are right"))
        return feedback(exercise, findings)
    wrong = _wrong_predictions(predict, drawn)
    if wrong:
        return feedback(exercise, [Finding(WRONG, text) for text in wrong[:4]])
    return feedback(exercise, [Finding(RIGHT, f"all {len(cases)} cases answered as the sweep "
                                               "answers them: the budget's edge, the near-miss "
                                               "stamps and cases drawn at random")])


def _wrong_predictions(predict, cases) -> list[str]:
    wrong = []
    for what, stamp, run_id, stalled, max_stalled in cases:
        reading, outcome = _module_answer(stamp, run_id, stalled, max_stalled)
        outcome_of_call = attempts.run(predict, stamp, run_id, stalled, max_stalled,
                                       library=_SWEEP_LIBRARY, library_names=_SWEEP_LIBRARY_NAMES)
        if isinstance(outcome_of_call, attempts.Raised):
            wrong.append(f"{what}: your function raised {outcome_of_call.text}; it must answer "
                         "every row, an absent field included")
            continue
        if isinstance(outcome_of_call, attempts.TimedOut):
            wrong.append(f"{what}: your function ran for more than {outcome_of_call.limit_s:g} s; "
                         "it must answer at once")
            continue
        answer = getattr(outcome_of_call, "value", None)
        if (not isinstance(answer, (tuple, list)) or len(answer) != 2
                or answer[0] not in READINGS or answer[1] not in OUTCOMES):
            wrong.append(f"{what}: it answered {answer!r}; answer a pair such as "
                         "(\"exempt\", \"recovered\"): the reading, then the outcome")
        elif answer[0] != reading:
            wrong.append(f"{what}: this lease is not {answer[0]}: look again at the stamp "
                         "comparison")
        elif answer[1] != outcome:
            wrong.append(f"{what}: the job does not end {answer[1]}: look again at the count "
                         "and the budget")
    return wrong


