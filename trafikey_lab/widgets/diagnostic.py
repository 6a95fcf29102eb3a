"""Diagnostic: one multiple-choice question laid out as a radio group, answered with the
keyboard or the mouse.

The question's content (its prompt, its options, the misconception each wrong option names) is
data in `trafikey_lab.questions`; this class only lays it out and answers a choice.
"""

import html

import ipywidgets as widgets

from trafikey_lab.questions import Question
from trafikey_lab.widgets.base import LABELS, Widget


class Diagnostic(Widget):
    """`choice` is a radio group (arrow keys move and choose); `answer` (HTML) says whether the
    chosen option is right, names its misconception when it is not, and explains."""

    def __init__(self, question: Question):
        self.question = question
        self.heading = widgets.HTML(
            f"<p><strong>Check yourself.</strong> {html.escape(question.prompt)}</p>")
        self.choice = widgets.RadioButtons(
            options=question.labels(), value=None, description="your answer", style=LABELS,
            layout=widgets.Layout(width="auto"),
        )
        self.answer = widgets.HTML("<p><em>Choose an option to see whether it holds.</em></p>")
        self.choice.observe(self._chosen, names="value")
        self.lay_out(self.heading, self.choice, self.answer)

    def choose(self, letter: str) -> None:
        """Chooses option `letter` ("A", "B", ...), as a click on it does."""
        self.choice.value = self.choice.options[self.question.options.index(
            self.question.option(letter))]

    def _chosen(self, change) -> None:
        if change["new"] is None:
            return
        option = self.question.options[self.choice.options.index(change["new"])]
        mark = "✓" if option.right else "✗"
        self.answer.value = f"<p>{mark} {html.escape(self.question.feedback(option))}</p>"

    def __repr__(self) -> str:
        return repr(self.question)
