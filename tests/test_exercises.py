"""The exercise checkers: a right answer is called right, each kind of wrong one is called wrong
with the reason the learner needs, and no attempt makes a checker raise."""

import re

from trafikey_lab.course.feedback import RIGHT, WRONG
from trafikey_lab.course.one_value_per_process import SHAPE_CASES, check_shape_check


# -- 01: the shape check ----------------------------------------------------------------------


def test_a_correct_shape_check_agrees_with_the_module_on_every_value():
    feedback = check_shape_check(
        lambda value: len(value) == 40 and all(b in b"0123456789abcdef" for b in value))
    assert feedback.right and feedback.kinds == [RIGHT, RIGHT]
    assert f"all {len(SHAPE_CASES)} named values" in feedback.text
    assert repr(feedback).startswith("RIGHT: ")


def test_a_length_only_check_is_wrong_on_each_value_of_the_right_length_and_says_why():
    feedback = check_shape_check(lambda value: len(value) == 40)
    assert not feedback.right and repr(feedback).startswith("NOT YET: ")
    wrong = [f.text for f in feedback.findings if f.kind == WRONG]
    assert [text.split(":")[0] for text in wrong] == [
        "NOW in upper case", "NOW ending in g", "NOW starting 0x", "NOW with an underscore",
        "NOW ending in a space", "NOW starting with a slash", "NOW with a colon inside",
        "NOW ending in a backquote", "NOW ending in an Arabic-Indic 3 (40 bytes)",
        "NOW ending in byte 0xb2 (not UTF-8)",
        "values made up for this run (new each time, so no table of known values can answer "
        "them)"]
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
    assert [name for name in wrong if not name.startswith("values made up")] == [
        "NOW in upper case", "NOW starting 0x", "NOW with an underscore", "NOW ending in a space"]


def test_a_check_that_raises_or_returns_no_bool_is_wrong_without_raising():
    raising = check_shape_check(lambda value: value.decode("ascii")[39] in "0123456789abcdef")
    assert "b\"\": your check raised IndexError" in raising.text
    matching = check_shape_check(lambda value: re.fullmatch(rb"[0-9a-f]{40}", value))
    assert "NOW: your check returned <re.Match" in matching.text
    assert "wrap the test in bool(...)" in matching.text
    assert not raising.right and not matching.right


def test_something_that_is_not_a_function_is_told_to_be_one():
    feedback = check_shape_check(None)
    assert feedback.kinds == [WRONG] and "is not a function" in feedback.text


# -- 02 and 03: their catalogues are in test_exercise_lease_move.py and test_exercise_stops.py


# -- 04: its catalogue is in test_exercise_history.py ----------------------------------------


# -- 05: its catalogue is in test_exercise_promotion.py --------------------------------------
