"""The course's diagnostic questions, every one of them: a learner who guesses the longest
option must not be right by that alone."""

import pytest

from trafikey_lab import questions
from trafikey_lab.questions import Question

QUESTIONS = {name: value for name, value in vars(questions).items()
             if isinstance(value, Question)}


def test_the_course_has_its_questions_to_hold():
    assert {"THREE_WRITERS"} <= set(QUESTIONS)


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_the_right_option_is_not_the_longest(name):
    question = QUESTIONS[name]
    longest_wrong = max(len(option.text) for option in question.options if not option.right)
    assert len(question.right.text) < longest_wrong, (
        f"{name}: the right option ({len(question.right.text)} characters) is the longest; "
        f"the longest wrong one has {longest_wrong}. Shorten it, or say a wrong one in full.")
