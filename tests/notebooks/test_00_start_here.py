"""Notebook 00's exercise checker, tested like a verb: the wrong predictions it must reject, each
with a message that names the case and not its answer, and the right variants it must accept."""

import pytest

from trafikey_lab import epoch, sweep
from trafikey_lab.course.start_here import _module_answer, _sweep_cases, check_sweep_prediction


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


RIGHT_VARIANTS = [right, right_as_a_list, right_in_one_expression]


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
    (off_by_one, "stalled 1, max_stalled 2: the job does not end recovered"),
    (compares_the_old_count, "no stalled field, max_stalled 1: the job does not end recovered"),
    (dead_only_at_exactly_the_budget, "stalled 4, max_stalled 3: the job does not end recovered"),
    (absent_stamp_counts, "no lease_epoch field, max_stalled 1: this lease is not counted"),
    (ignores_case, "in upper case: this lease is not counted"),
    (compares_a_prefix, "the first 39 bytes of the sweeper's run_id: this lease is not counted"),
    (checks_the_shape_instead, "another process's stamp, stalled 0, max_stalled 1: this lease is not counted"),
    (exempt_jobs_die_too, "no lease_epoch field, max_stalled 1: the job does not end dead"),
    (absent_stalled_raises, "your function raised TypeError"),
    (says_pending, "it answered ('counted', 'pending')"),
    (one_word, "it answered 'dead'; answer a pair"),
    (hands_it_to_the_library, "hands the question to the library's own exempt"),
    (asks_the_step_machine, "hands the question to the library's own count_stall"),
    (the_notebooks_stub, "it answered None; answer a pair"),
    (a_table_of_one_runs_answers, "this lease is not exempt"),
]


@pytest.mark.parametrize("predict", RIGHT_VARIANTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_right_variant_is_accepted_on_any_draw(predict, seed):
    feedback = check_sweep_prediction(predict, seed=seed)
    assert feedback.right, feedback
    assert "all 24 cases answered as the sweep answers them" in repr(feedback)
    assert len(feedback.findings) == 1


@pytest.mark.parametrize("predict,message", WRONG_ANSWERS, ids=[w[0].__name__ for w in WRONG_ANSWERS])
def test_each_wrong_answer_is_rejected_with_the_case_it_got_wrong(predict, message):
    feedback = check_sweep_prediction(predict, seed=11)
    assert not feedback.right
    assert message in repr(feedback)


@pytest.mark.parametrize("predict", [w[0] for w in WRONG_ANSWERS], ids=[w[0].__name__ for w in WRONG_ANSWERS])
def test_no_message_says_what_the_right_answer_was(predict):
    for finding in check_sweep_prediction(predict, seed=11).findings:
        assert "the sweep says" not in finding.text and "should" not in finding.text


def test_the_notebooks_stub_gets_feedback_that_names_no_reading_nor_outcome():
    text = "\n".join(f.text for f in check_sweep_prediction(the_notebooks_stub, seed=2).findings)
    for word in ("counted", "dead", "this lease is", "does not end"):
        assert word not in text.replace('("exempt", "recovered")', "")


def test_a_table_of_answers_from_one_draw_fails_on_the_next():
    assert check_sweep_prediction(a_table_of_one_runs_answers, seed=7).right
    assert not check_sweep_prediction(a_table_of_one_runs_answers, seed=8).right


def test_the_feedback_on_a_wrong_answer_is_the_same_on_any_draw():
    """The notebook stores this feedback: it must not change from one run to the next."""
    texts = {repr(check_sweep_prediction(the_notebooks_stub, seed=seed)) for seed in range(20)}
    assert len(texts) == 1
    feedback = check_sweep_prediction(the_notebooks_stub, seed=3)
    assert [f.kind for f in feedback.findings] == ["wrong"] * 5 + ["note"]
    assert feedback.findings[4].text == "and 8 more of the 12 boundary cases"


def test_something_that_is_not_a_function_is_told_to_be_one():
    feedback = check_sweep_prediction("exempt")
    assert not feedback.right and "is not a function" in repr(feedback)


def test_the_boundary_cases_cover_both_rules_and_every_answer():
    answers = [_module_answer(*case[1:]) for case in _sweep_cases(4)[:12]]
    dead, recovered, exempt = ("counted", "dead"), ("counted", "recovered"), ("exempt", "recovered")
    assert answers == [dead, recovered, dead, recovered, dead] + [exempt] * 7
