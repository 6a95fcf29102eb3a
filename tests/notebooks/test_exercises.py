"""The exercise checkers: a right answer is called right, each kind of wrong one is called wrong
with the reason the learner needs, and no attempt makes a checker raise."""

import importlib
import inspect
import re
import threading

import pytest

from trafikey_lab import near_misses
from trafikey_lab.course import attempts
from trafikey_lab.course.feedback import RIGHT, WRONG, Feedback, Finding
from trafikey_lab.course.one_value_per_process import SHAPE_CASES, check_shape_check
from trafikey_lab.course.registry import NOTEBOOKS

# -- 01: the shape check ----------------------------------------------------------------------


def test_a_correct_shape_check_agrees_with_the_module_on_every_value():
    feedback = check_shape_check(
        lambda value: len(value) == 40 and all(b in b"0123456789abcdef" for b in value))
    assert feedback.right
    assert feedback.kinds == [RIGHT, RIGHT]
    assert f"all {len(SHAPE_CASES)} named values" in feedback.text
    assert repr(feedback).startswith("RIGHT: ")


def test_a_length_only_check_is_wrong_on_each_value_of_the_right_length_and_says_why():
    feedback = check_shape_check(lambda value: len(value) == 40)
    assert not feedback.right
    assert repr(feedback).startswith("NOT YET: ")
    wrong = [f.text for f in feedback.findings if f.kind == WRONG]
    assert [text.split(":")[0] for text in wrong] == [
        "NOW in upper case", "NOW ending in g", "NOW starting 0x", "NOW with an underscore",
        "NOW ending in a space", "NOW starting with a slash", "NOW with a colon inside",
        "NOW ending in a backquote", "NOW ending in an Arabic-Indic 3 (40 bytes)",
        "NOW ending in byte 0xb2 (not UTF-8)", *near_misses.CLASSES]
    assert "your check says True, the module says False: byte 2 is b'F'" in wrong[0]


def test_a_check_built_on_int_base_16_lets_through_what_int_accepts():
    def by_int(value):
        try:
            int(value, 16)
        except ValueError:
            return False
        return len(value) == 40

    wrong = [f.text.split(":")[0] for f in check_shape_check(by_int).findings if f.kind == WRONG]
    # A made-up value may break it too (a bad byte that int() reads: upper case, a space...).
    assert [name for name in wrong if name not in near_misses.CLASSES] == [
        "NOW in upper case", "NOW starting 0x", "NOW with an underscore", "NOW ending in a space"]


def test_a_check_that_raises_or_returns_no_bool_is_wrong_without_raising():
    raising = check_shape_check(lambda value: value.decode("ascii")[39] in "0123456789abcdef")
    assert "b\"\": your check raised IndexError" in raising.text
    matching = check_shape_check(lambda value: re.fullmatch(rb"[0-9a-f]{40}", value))
    assert "NOW: your check returned <re.Match" in matching.text
    assert "wrap the test in bool(...)" in matching.text
    assert not raising.right
    assert not matching.right


def test_something_that_is_not_a_function_is_told_to_be_one():
    feedback = check_shape_check(None)
    assert feedback.kinds == [WRONG]
    assert "is not a function" in feedback.text


# -- 02 and 03: their catalogues are in test_02_three_writers.py and test_03_one_reader.py


# -- 04: its catalogue is in test_04_one_lease_across_a_restart.py ---------------------------


# -- 05: its catalogue is in test_05_beyond_one_server.py -------------------------------------


# -- one checker contract, one safe run of an attempt ------------------------------------------

def checkers():
    for entry in NOTEBOOKS:
        face = importlib.import_module(entry.module)
        yield from ((entry.stem, getattr(face, name)) for name in face.__all__
                    if name.startswith("check_"))


def test_every_checker_takes_the_attempt_then_the_live_executor_by_keyword_only():
    found = list(checkers())
    assert len(found) == 8, [stem for stem, _ in found]
    for stem, checker in found:
        first, *rest = inspect.signature(checker).parameters.values()
        assert first.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, (stem, first)
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in rest), (stem, rest)
        live = inspect.signature(checker).parameters.get("live")
        assert live is not None, stem
        assert live.default is None, stem
        assert inspect.signature(checker, eval_str=True).return_annotation is Feedback, stem


def test_the_runner_says_what_an_attempt_did_and_never_raises():
    assert attempts.run(...) == attempts.NotAFunction(...)
    assert attempts.run(lambda x: x + 1, 1) == attempts.Returned(2)
    raised = attempts.run(lambda: 1 / 0)
    assert isinstance(raised, attempts.Raised)
    assert raised.text == "ZeroDivisionError: division by zero"
    exited = attempts.run(lambda: exit(3))  # even what a plain except would let through
    assert isinstance(exited, attempts.Raised)
    assert isinstance(exited.error, SystemExit)


def test_an_attempt_that_hands_the_question_to_the_library_is_not_run():
    ran = []

    def my_check(value):
        ran.append(value)
        return valid_run_id(value)  # noqa: F821 - read from the code, never run

    assert attempts.run(my_check, b"x") == attempts.Borrowed("valid_run_id")
    assert ran == []


def test_an_attempt_past_the_time_limit_is_left_running_and_told_it_ran_too_long():
    release = threading.Event()
    outcome = attempts.run(release.wait, 5, limit_s=0.05)
    assert outcome == attempts.TimedOut(0.05)
    runaway = [t for t in threading.enumerate() if t.name == "trafikey-lab attempt"]
    assert runaway
    assert all(t.daemon for t in runaway)
    release.set()


def test_feedback_answers_its_kinds_its_text_and_the_finding_about_a_case():
    feedback = Feedback("x", (Finding(RIGHT, "NOW: right"), Finding(WRONG, "ZERO: wrong")))
    assert feedback.kinds == [RIGHT, WRONG]
    assert feedback.text == "NOW: right\nZERO: wrong"
    assert feedback.about("ZERO") == Finding(WRONG, "ZERO: wrong")
    with pytest.raises(LookupError, match="0 findings about 'ONE'"):
        feedback.about("ONE")
