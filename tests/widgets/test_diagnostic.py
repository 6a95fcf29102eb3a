"""The diagnostic question: its content is refused unless every wrong option names a
misconception, and a choice answers with the right feedback."""

import pytest

from trafikey_lab.questions import Option, Question
from trafikey_lab.widgets.diagnostic import Diagnostic

RIGHT = Option("the stamp differs", why="The sweep compares bytes.", right=True)
WRONG = Option("the sweep re-checks the shape", why="It compares bytes only.",
               misconception="the sweep re-checks the stamp's shape")


def test_a_choice_shows_its_why_and_a_wrong_one_names_its_misconception():
    question = Diagnostic(Question("Why is an upper-case stamp exempt?", [RIGHT, WRONG]))
    assert "Choose an option" in question.answer.value
    question.choose("B")
    assert "✗" in question.answer.value
    assert "the sweep re-checks the stamp&#x27;s shape" in question.answer.value
    assert "It compares bytes only." in question.answer.value
    question.choose("A")
    assert question.answer.value == "<p>✓ Right. The sweep compares bytes.</p>"


def test_its_text_lists_the_prompt_and_every_option_without_the_answer():
    question = Diagnostic(Question("Why?", [RIGHT, WRONG]))
    assert repr(question) == ("Check yourself. Why?\n  A. the stamp differs\n"
                              "  B. the sweep re-checks the shape")
    assert question._repr_mimebundle_()["text/plain"] == repr(question)
    assert question.choice.description == "your answer"


@pytest.mark.parametrize(("options", "problem"), [
    ([RIGHT], "at least two"),
    ([WRONG, WRONG], "exactly one"),
    ([RIGHT, RIGHT], "exactly one"),
    ([RIGHT, Option("b", why="w")], "must name its misconception"),
    ([RIGHT, Option("b", why="w", misconception="  ")], "must name its misconception"),
    ([Option("a", why="w", right=True, misconception="m"), WRONG], "has no misconception"),
    ([RIGHT, Option("b", why="", misconception="m")], "its text and its why"),
    ([RIGHT, Option("the stamp differs", why="w", misconception="m")], "same text"),
])
def test_content_that_would_mislead_is_refused(options, problem):
    with pytest.raises(ValueError, match=problem):
        Question("Why?", options)
