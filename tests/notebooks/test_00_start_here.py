"""Notebook 00's exercise checker, tested like a verb: the wrong predictions it must reject, each
with a message that names the case and not its answer, and the right variants it must accept."""

import pytest
from byte_classes import IN_CLASS

from trafikey_lab import epoch, near_misses, sweep
from trafikey_lab.course.feedback import WRONG
from trafikey_lab.course.start_here import (
    BOUNDARY_CASES,
    _module_answer,
    _sweep_cases,
    check_sweep_prediction,
)


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
    (off_by_one, "stalled 1, max_stalled 2: the job does not end recovered"),
    (compares_the_old_count, "no stalled field, max_stalled 1: the job does not end recovered"),
    (dead_only_at_exactly_the_budget, "stalled 4, max_stalled 3: the job does not end recovered"),
    (absent_stamp_counts, "no lease_epoch field, max_stalled 1: this lease is not counted"),
    (ignores_case, "in upper case: this lease is not counted"),
    (compares_a_prefix, "an empty lease_epoch, max_stalled 1: this lease is not counted"),
    (strips_trailing_nuls, "a NUL or another control byte in the stamp (b'\\x00' only), "
                           "appended: this lease is not counted"),
    (checks_the_shape_instead,
     "another process's stamp, stalled 0, max_stalled 1: this lease is not counted"),
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
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_each_right_variant_is_accepted_on_any_draw(predict, seed):
    feedback = check_sweep_prediction(predict, seed=seed)
    assert feedback.right, feedback
    # 11 boundary cases, 12 drawn and the 2139 near misses of the run_id
    assert "all 2162 cases answered as the sweep answers them" in repr(feedback)
    assert len(feedback.findings) == 1


@pytest.mark.parametrize(("predict", "message"), WRONG_ANSWERS,
                         ids=[w[0].__name__ for w in WRONG_ANSWERS])
def test_each_wrong_answer_is_rejected_with_the_case_it_got_wrong(predict, message):
    feedback = check_sweep_prediction(predict, seed=11)
    assert not feedback.right
    assert message in repr(feedback)


@pytest.mark.parametrize("predict", [w[0] for w in WRONG_ANSWERS],
                         ids=[w[0].__name__ for w in WRONG_ANSWERS])
def test_no_message_says_what_the_right_answer_was(predict):
    for finding in check_sweep_prediction(predict, seed=11).findings:
        assert "the sweep says" not in finding.text
        assert "should" not in finding.text


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
    assert feedback.findings[4].text == "and 7 more of the 11 boundary cases"


def test_something_that_is_not_a_function_is_told_to_be_one():
    feedback = check_sweep_prediction("exempt")
    assert not feedback.right
    assert "is not a function" in repr(feedback)


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


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("kind", BLIND)
def test_a_prediction_wrong_only_on_one_byte_class_is_rejected_naming_that_class_alone(kind, seed):
    feedback = check_sweep_prediction(BLIND[kind], seed=seed)
    assert not feedback.right
    named = [other for other in BLIND if f"{other} in the stamp, " in feedback.text]
    assert named == [kind], feedback
    assert feedback.kinds == [WRONG]
    # Where it was, in words that do not depend on the draw; and never the answer.
    assert "this lease is not counted: look again at the stamp comparison" in feedback.text
    assert "exempt" not in feedback.text
    assert str(feedback) == str(
        check_sweep_prediction(BLIND[kind], seed=seed + 100))


def test_a_stamp_stripped_before_the_comparison_is_caught_where_strip_reaches():
    text = check_sweep_prediction(strips_the_stamp, seed=3).text
    assert text == ("ASCII whitespace in the stamp, prepended, appended: this lease is not "
                    "counted: look again at the stamp comparison")
