"""Notebook 00's exercise checker, tested like a verb: the wrong predictions it must reject, each
flagged on a case it gets wrong, with what it answered there and never the case's answer, and
the right variants it must accept after putting every case to them. The findings are read by
their case and the values in them (answers, counts, byte classes, places), not by sentence."""

import re

import pytest
from byte_classes import IN_CLASS

from trafikey_lab import epoch, near_misses, sweep
from trafikey_lab.course.feedback import OUTCOMES, READINGS, RIGHT, WRONG
from trafikey_lab.course.start_here import (
    BOUNDARY_CASES,
    DRAWN_CASES,
    _module_answer,
    _sweep_cases,
    check_sweep_prediction,
)

SEED = 11


def right(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch != run_id:
        return ("exempt", "recovered")
    return ("counted", "dead" if (stalled or 0) + 1 >= max_stalled else "recovered")


def right_as_a_list(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch is None or lease_epoch != run_id:
        return ["exempt", "recovered"]
    count = 0 if stalled is None else stalled
    return ["counted", "recovered" if count + 1 < max_stalled else "dead"]


def right_in_one_expression(lease_epoch, run_id, stalled, max_stalled):
    counted = lease_epoch == run_id
    return ("counted" if counted else "exempt",
            "dead" if counted and (stalled or 0) >= max_stalled - 1 else "recovered")


def right_by_set_membership(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch not in {run_id}:
        return ("exempt", "recovered")
    return ("counted", "dead" if max_stalled - (stalled or 0) <= 1 else "recovered")


def right_by_a_regex(lease_epoch, run_id, stalled, max_stalled):
    import re

    if lease_epoch is None or re.fullmatch(re.escape(run_id), lease_epoch) is None:
        return ("exempt", "recovered")
    return right(run_id, run_id, stalled, max_stalled)


def right_in_constant_time(lease_epoch, run_id, stalled, max_stalled):
    import hmac

    if not hmac.compare_digest(lease_epoch or b"", run_id):
        return ("exempt", "recovered")
    return right(run_id, run_id, stalled, max_stalled)


RIGHT_VARIANTS = [right, right_as_a_list, right_in_one_expression, right_by_set_membership,
                  right_by_a_regex, right_in_constant_time]


def off_by_one(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch != run_id:
        return ("exempt", "recovered")
    return ("counted", "dead" if (stalled or 0) + 1 > max_stalled else "recovered")


def compares_the_old_count(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch != run_id:
        return ("exempt", "recovered")
    return ("counted", "dead" if (stalled or 0) >= max_stalled else "recovered")


def dead_only_at_exactly_the_budget(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch != run_id:
        return ("exempt", "recovered")
    return ("counted", "dead" if (stalled or 0) + 1 == max_stalled else "recovered")


def absent_stamp_counts(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch is not None and lease_epoch != run_id:
        return ("exempt", "recovered")
    return right(run_id, run_id, stalled, max_stalled)


def ignores_case(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch is None or lease_epoch.lower() != run_id.lower():
        return ("exempt", "recovered")
    return right(run_id, run_id, stalled, max_stalled)


def compares_a_prefix(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch is None or not run_id.startswith(lease_epoch):
        return ("exempt", "recovered")
    return right(run_id, run_id, stalled, max_stalled)


def strips_trailing_nuls(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch is None or lease_epoch.rstrip(b"\0") != run_id:
        return ("exempt", "recovered")
    return right(run_id, run_id, stalled, max_stalled)


def checks_the_shape_instead(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch is None or not epoch.valid_run_id(lease_epoch):
        return ("exempt", "recovered")
    return right(run_id, run_id, stalled, max_stalled)


def exempt_jobs_die_too(lease_epoch, run_id, stalled, max_stalled):
    reading, outcome = right(run_id, run_id, stalled, max_stalled)
    return ("exempt" if lease_epoch != run_id else reading, outcome)


def absent_stalled_raises(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch != run_id:
        return ("exempt", "recovered")
    return ("counted", "dead" if stalled + 1 >= max_stalled else "recovered")


def says_pending(lease_epoch, run_id, stalled, max_stalled):
    reading, outcome = right(lease_epoch, run_id, stalled, max_stalled)
    return (reading, "pending" if outcome == "recovered" else outcome)


def one_word(lease_epoch, run_id, stalled, max_stalled):
    return right(lease_epoch, run_id, stalled, max_stalled)[1]


def hands_it_to_the_library(lease_epoch, run_id, stalled, max_stalled):
    if epoch.exempt(lease_epoch, run_id):
        return ("exempt", "recovered")
    return right(lease_epoch, run_id, stalled, max_stalled)


def asks_the_step_machine(lease_epoch, run_id, stalled, max_stalled):
    verdict = sweep.count_stall(None if stalled is None else b"%d" % stalled, max_stalled)
    return right(lease_epoch, run_id, stalled, max_stalled) if verdict else None


def the_notebooks_stub(lease_epoch, run_id, stalled, max_stalled):
    ...


TABLE = {(c[1], c[2], c[3], c[4]): right(*c[1:]) for c in _sweep_cases(7)}


def a_table_of_one_runs_answers(lease_epoch, run_id, stalled, max_stalled):
    return TABLE.get((lease_epoch, run_id, stalled, max_stalled), ("exempt", "recovered"))


WRONG_ANSWERS = [
    # (the prediction, a case it gets wrong, what it answered there)
    (off_by_one, "the stamp is the sweeper's, stalled 1, max_stalled 2", "recovered"),
    (compares_the_old_count, "the stamp is the sweeper's, no stalled field, max_stalled 1",
     "recovered"),
    (dead_only_at_exactly_the_budget, "the stamp is the sweeper's, stalled 4, max_stalled 3",
     "recovered"),
    (absent_stamp_counts, "no lease_epoch field, max_stalled 1", "counted"),
    (ignores_case, "the sweeper's run_id in upper case", "counted"),
    (compares_a_prefix, "an empty lease_epoch, max_stalled 1", "counted"),
    (strips_trailing_nuls, "a NUL or another control byte in the stamp (b'\\x00' only), appended",
     "counted"),
    (checks_the_shape_instead, "another process's stamp, stalled 0, max_stalled 1", "counted"),
    (exempt_jobs_die_too, "no lease_epoch field, max_stalled 1", "dead"),
    (absent_stalled_raises, "the stamp is the sweeper's, no stalled field, max_stalled 1",
     "TypeError"),
    (says_pending, "the stamp is the sweeper's, no stalled field, max_stalled 2",
     "('counted', 'pending')"),
    (one_word, "the stamp is the sweeper's, no stalled field, max_stalled 1", "'dead'"),
    (the_notebooks_stub, "the stamp is the sweeper's, no stalled field, max_stalled 1", "None"),
    (a_table_of_one_runs_answers, "the stamp is the sweeper's, no stalled field, max_stalled 1",
     "exempt"),
]
BORROWED = [(hands_it_to_the_library, "exempt"), (asks_the_step_machine, "count_stall")]
"""A prediction that hands the question to the library, and the library function it names."""


def problem(finding_text: str, case: str) -> str:
    """What a finding about `case` says is wrong, after the case's name."""
    assert finding_text.startswith(f"{case}: "), finding_text
    return finding_text[len(case) + 2:]


@pytest.mark.parametrize("predict", RIGHT_VARIANTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_each_right_variant_is_accepted_on_any_draw_after_every_case_is_put_to_it(predict, seed):
    asked = []

    def recorded(lease_epoch, run_id, stalled, max_stalled):
        asked.append((lease_epoch, run_id, stalled, max_stalled))
        return predict(lease_epoch, run_id, stalled, max_stalled)

    feedback = check_sweep_prediction(recorded, seed=seed)
    assert feedback.right, feedback
    assert feedback.kinds == [RIGHT]
    # the boundary cases, the drawn ones and every near miss of the run_id, in that order
    assert asked == [tuple(case[1:]) for case in _sweep_cases(seed)]


@pytest.mark.parametrize(("predict", "case", "answered"), WRONG_ANSWERS,
                         ids=[w[0].__name__ for w in WRONG_ANSWERS])
def test_each_wrong_answer_is_flagged_on_a_case_it_gets_wrong_with_what_it_answered(
        predict, case, answered):
    feedback = check_sweep_prediction(predict, seed=SEED)
    assert not feedback.right
    finding = feedback.about(case)
    assert finding.kind == WRONG
    assert answered in problem(finding.text, case)


@pytest.mark.parametrize(("predict", "name"), BORROWED, ids=[b[0].__name__ for b in BORROWED])
def test_a_prediction_that_hands_the_question_to_the_library_is_refused_naming_it(predict, name):
    feedback = check_sweep_prediction(predict, seed=SEED)
    assert feedback.kinds == [WRONG]
    assert re.search(rf"\b{name}\b", feedback.text)


def given_words(predict, args) -> set:
    """The words the prediction itself answers for one case (none when it raises)."""
    try:
        given = predict(*args)
    except Exception:
        return set()
    return set(given) if isinstance(given, (tuple, list)) else {given}


@pytest.mark.parametrize("predict", [w[0] for w in WRONG_ANSWERS],
                         ids=[w[0].__name__ for w in WRONG_ANSWERS])
def test_no_finding_names_a_reading_or_outcome_its_case_has_that_the_prediction_did_not_give(
        predict):
    cases = {str(what): case for what, *case in _sweep_cases(SEED)}
    flagged = 0
    for finding in check_sweep_prediction(predict, seed=SEED).findings:
        case, _, said = finding.text.partition(": ")
        if case in cases:
            answer = _module_answer(*cases[case])
            given = given_words(predict, cases[case])
        elif " in the stamp" in case:  # near misses: never the run_id, so always exempt
            answer, given = ("exempt", "recovered"), set()
        else:
            continue
        flagged += 1
        assert [word for word in answer if word not in given and word in said] == [], finding
    assert flagged


def test_the_notebooks_stub_gets_feedback_that_names_no_reading_nor_outcome():
    """What 00 stores under its exercise: the cases the stub missed, no answer among them."""
    text = check_sweep_prediction(the_notebooks_stub, seed=2).text
    assert [word for word in (*READINGS, *OUTCOMES) if word in text] == []


def test_a_table_of_answers_from_one_draw_fails_on_the_next():
    assert check_sweep_prediction(a_table_of_one_runs_answers, seed=7).right
    assert not check_sweep_prediction(a_table_of_one_runs_answers, seed=8).right


def test_the_feedback_on_a_wrong_answer_is_the_same_on_any_draw():
    """The notebook stores this feedback: it must not change from one run to the next."""
    texts = {repr(check_sweep_prediction(the_notebooks_stub, seed=seed)) for seed in range(20)}
    assert len(texts) == 1
    feedback = check_sweep_prediction(the_notebooks_stub, seed=3)
    # four boundary cases named, how many more of them, then what is checked after them
    assert feedback.kinds == [WRONG] * 5 + ["note"]
    near = len(_sweep_cases(3)) - BOUNDARY_CASES - DRAWN_CASES
    assert re.findall(r"\d+", feedback.findings[4].text) == [str(BOUNDARY_CASES - 4),
                                                               str(BOUNDARY_CASES)]
    assert re.findall(r"\d+", feedback.findings[5].text) == [str(DRAWN_CASES), str(near)]


def test_something_that_is_not_a_function_is_refused_naming_it():
    feedback = check_sweep_prediction("exempt")
    assert feedback.kinds == [WRONG]
    assert repr("exempt") in feedback.text


def test_the_boundary_cases_cover_both_rules_and_every_answer():
    answers = [_module_answer(*case[1:]) for case in _sweep_cases(4)[:BOUNDARY_CASES]]
    dead, recovered, exempt = ("counted", "dead"), ("counted", "recovered"), ("exempt", "recovered")
    assert answers == [dead, recovered, dead, recovered, dead] + [exempt] * 6


# -- the near misses: each byte class caught, alone ----------------------------------------------



def blind_to(kind):
    """A prediction right on every stamp but those holding a member of `kind`: it drops them
    before it compares, as a learner who cleans the stamp first would."""
    def predict(lease_epoch, run_id, stalled, max_stalled):
        if lease_epoch is not None:
            text = lease_epoch.decode("utf-8", "surrogateescape")
            lease_epoch = "".join(c for c in text if not IN_CLASS[kind](c)).encode(
                "utf-8", "surrogateescape")
        return right(lease_epoch, run_id, stalled, max_stalled)
    return predict


def blind_to_a_byte_removed(lease_epoch, run_id, stalled, max_stalled):
    """Takes a stamp one byte short of the run_id at either end for the run_id."""
    if lease_epoch is not None and len(lease_epoch) == len(run_id) - 1 and (
            run_id.startswith(lease_epoch) or run_id.endswith(lease_epoch)):
        lease_epoch = run_id
    return right(lease_epoch, run_id, stalled, max_stalled)


def strips_the_stamp(lease_epoch, run_id, stalled, max_stalled):
    return right(None if lease_epoch is None else lease_epoch.strip(), run_id, stalled,
                 max_stalled)


BLIND = {**{kind: blind_to(kind) for kind in near_misses.CLASSES},
         near_misses.REMOVED: blind_to_a_byte_removed}


def test_every_class_of_the_near_misses_has_a_prediction_blind_to_it_alone():
    assert set(IN_CLASS) == set(near_misses.CLASSES)


def near_miss_findings(feedback) -> list[tuple[str, str]]:
    """(the byte class, what is said wrong) of each finding about near misses."""
    found = []
    for finding in feedback.findings:
        case, _, said = finding.text.partition(": ")
        kind, sep, _ = case.partition(" in the stamp")
        if sep:
            found.append((kind, said))
    return found


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("kind", BLIND)
def test_a_prediction_wrong_only_on_one_byte_class_is_rejected_naming_that_class_alone(kind, seed):
    feedback = check_sweep_prediction(BLIND[kind], seed=seed)
    assert not feedback.right
    assert feedback.kinds == [WRONG]
    found = near_miss_findings(feedback)
    assert {named for named, _ in found} == {kind}, feedback
    # it counted what is another process's stamp, and is not told it is exempt
    assert all("counted" in said and "exempt" not in said for _, said in found), feedback
    assert str(feedback) == str(check_sweep_prediction(BLIND[kind], seed=seed + 100))


def test_a_stamp_stripped_before_the_comparison_is_caught_where_strip_reaches():
    feedback = check_sweep_prediction(strips_the_stamp, seed=3)
    # strip reaches only a member put before or after the run_id, not one in its place
    ends = near_misses.wheres([miss for miss in near_misses.near_misses(b"0" * 40)
                               if miss.operation in (near_misses.Operation.PREPENDED,
                                                     near_misses.Operation.APPENDED)])
    case = f"ASCII whitespace in the stamp, {ends}"
    assert feedback.kinds == [WRONG]
    assert "counted" in problem(feedback.about(case).text, case)
