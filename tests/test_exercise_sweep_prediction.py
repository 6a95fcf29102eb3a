"""Notebook 00's exercise checker, tested like a verb: the wrong predictions it must reject, each
with a message that names the case, and the right variants it must accept."""

import pytest

from trafikey_lab import epoch
from trafikey_lab.exercises import _sweep_cases, check_sweep_prediction


def right(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch != run_id:
        return "exempt"
    return "dead" if (stalled or 0) + 1 >= max_stalled else "recovered"


def right_with_the_library(lease_epoch, run_id, stalled, max_stalled):
    if epoch.exempt(lease_epoch, run_id):
        return "exempt"
    count = 0 if stalled is None else stalled
    return "recovered" if count + 1 < max_stalled else "dead"


def right_in_one_expression(lease_epoch, run_id, stalled, max_stalled):
    return ("exempt" if lease_epoch is None or lease_epoch != run_id
            else ["recovered", "dead"][(stalled or 0) >= max_stalled - 1])


RIGHT_VARIANTS = [right, right_with_the_library, right_in_one_expression]


def off_by_one(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch != run_id:
        return "exempt"
    return "dead" if (stalled or 0) + 1 > max_stalled else "recovered"


def compares_the_old_count(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch != run_id:
        return "exempt"
    return "dead" if (stalled or 0) >= max_stalled else "recovered"


def absent_stamp_counts(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch is not None and lease_epoch != run_id:
        return "exempt"
    return right(run_id, run_id, stalled, max_stalled)


def ignores_case(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch is None or lease_epoch.lower() != run_id.lower():
        return "exempt"
    return right(run_id, run_id, stalled, max_stalled)


def compares_a_prefix(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch is None or not run_id.startswith(lease_epoch):
        return "exempt"
    return right(run_id, run_id, stalled, max_stalled)


def checks_the_shape_instead(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch is None or not epoch.valid_run_id(lease_epoch):
        return "exempt"
    return right(run_id, run_id, stalled, max_stalled)


def absent_stalled_raises(lease_epoch, run_id, stalled, max_stalled):
    if lease_epoch != run_id:
        return "exempt"
    return "dead" if stalled + 1 >= max_stalled else "recovered"


def says_pending(lease_epoch, run_id, stalled, max_stalled):
    answer = right(lease_epoch, run_id, stalled, max_stalled)
    return "pending" if answer == "recovered" else answer


def always_exempt(*_):
    return "exempt"


TABLE = {(c[1], c[2], c[3], c[4]): right(*c[1:]) for c in _sweep_cases(7)}


def a_table_of_one_runs_answers(lease_epoch, run_id, stalled, max_stalled):
    return TABLE.get((lease_epoch, run_id, stalled, max_stalled), "exempt")


WRONG_ANSWERS = [
    (off_by_one, "stalled 1, max_stalled 2: you said recovered, the sweep says dead"),
    (compares_the_old_count, "no stalled field, max_stalled 1: you said recovered"),
    (absent_stamp_counts, "no lease_epoch field, max_stalled 1: you said dead, the sweep says exempt"),
    (ignores_case, "in upper case: you said dead, the sweep says exempt"),
    (compares_a_prefix, "the first 39 bytes of the sweeper's run_id: you said dead"),
    (checks_the_shape_instead, "another process's stamp, stalled 0, max_stalled 1: you said dead"),
    (absent_stalled_raises, "your function raised TypeError"),
    (says_pending, "it answered 'pending'"),
    (always_exempt, "the stamp is the sweeper's, no stalled field, max_stalled 1: you said exempt"),
    (a_table_of_one_runs_answers, "you said exempt, the sweep says dead"),
]


@pytest.mark.parametrize("predict", RIGHT_VARIANTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_right_variant_is_accepted_on_any_draw(predict, seed):
    feedback = check_sweep_prediction(predict, seed=seed)
    assert feedback.right, feedback
    assert "all 24 cases answered as the sweep answers them" in repr(feedback)
    assert len(feedback.findings) == 1


@pytest.mark.parametrize("predict,message", WRONG_ANSWERS,
                         ids=lambda p: getattr(p, "__name__", "msg"))
def test_each_wrong_answer_is_rejected_with_the_case_it_got_wrong(predict, message):
    feedback = check_sweep_prediction(predict, seed=11)
    assert not feedback.right
    assert message in repr(feedback)


def test_a_table_of_answers_from_one_draw_fails_on_the_next():
    assert check_sweep_prediction(a_table_of_one_runs_answers, seed=7).right
    assert not check_sweep_prediction(a_table_of_one_runs_answers, seed=8).right


def test_many_wrong_boundary_cases_are_summed_up_after_four_and_the_feedback_is_the_same_on_any_draw():
    """The notebook stores this feedback: it must not change from one run to the next."""
    texts = {repr(check_sweep_prediction(lambda *_: "dead", seed=seed)) for seed in range(20)}
    assert len(texts) == 1
    feedback = check_sweep_prediction(lambda *_: "dead", seed=3)
    assert [f.kind for f in feedback.findings] == ["wrong"] * 5 + ["note"]
    assert feedback.findings[4].text == "and 5 more of the 12 boundary cases"
    assert "drawn at random are checked once the boundary cases are right" in feedback.findings[5].text


def test_something_that_is_not_a_function_is_told_to_be_one():
    feedback = check_sweep_prediction("exempt")
    assert not feedback.right and "is not a function" in repr(feedback)


def test_the_boundary_cases_cover_both_rules_and_every_verdict():
    cases = _sweep_cases(4)
    from trafikey_lab.exercises import _module_verdict
    verdicts = [_module_verdict(*case[1:]) for case in cases[:12]]
    assert verdicts == ["dead", "recovered", "dead", "recovered", "dead", "exempt", "exempt",
                        "exempt", "exempt", "exempt", "exempt", "exempt"]
