"""Question: one diagnostic multiple-choice question, answered with the keyboard or the mouse.

Each wrong option names the misconception that leads to it, so a learner who picks it is told
which idea to repair and what is true instead. The content lives with the notebook's own module
(a function that returns the Question), where a test holds it against the model and the C; this
class only lays it out and answers a choice.
"""

import html
from dataclasses import dataclass

import ipywidgets as widgets


@dataclass(frozen=True)
class Option:
    text: str
    why: str
    """What is true, and why: shown when the option is chosen."""
    right: bool = False
    misconception: str | None = None
    """For a wrong option: the mistaken idea behind it, in a few words."""


def check_options(options) -> None:
    """Exactly one right option; every wrong one names its misconception; no two alike."""
    options = list(options)
    if len(options) < 2:
        raise ValueError("a question needs at least two options")
    if sum(option.right for option in options) != 1:
        raise ValueError("exactly one option must be right=True")
    for option in options:
        if not option.text.strip() or not option.why.strip():
            raise ValueError(f"{option.text!r}: every option needs its text and its why")
        if option.right and option.misconception:
            raise ValueError(f"{option.text!r}: the right option has no misconception")
        if not option.right and not (option.misconception or "").strip():
            raise ValueError(f"{option.text!r}: a wrong option must name its misconception")
    if len({option.text for option in options}) != len(options):
        raise ValueError("two options have the same text")


LETTERS = "ABCDEFGH"


class Question:
    """`choice` is a radio group (arrow keys move and choose); `answer` (HTML) says whether the
    chosen option is right, names its misconception when it is not, and explains."""

    def __init__(self, prompt: str, options):
        check_options(options)
        self.prompt = prompt
        self.options = tuple(options)
        labels = [f"{LETTERS[i]}. {option.text}" for i, option in enumerate(self.options)]
        self.heading = widgets.HTML(
            f"<p><strong>Check yourself.</strong> {html.escape(prompt)}</p>")
        self.choice = widgets.RadioButtons(
            options=labels, value=None, description="your answer",
            style={"description_width": "initial"}, layout=widgets.Layout(width="auto"),
        )
        self.answer = widgets.HTML("<p><em>Choose an option to see whether it holds.</em></p>")
        self.choice.observe(self._chosen, names="value")
        self.box = widgets.VBox([self.heading, self.choice, self.answer])

    @property
    def right(self) -> Option:
        return next(option for option in self.options if option.right)

    def choose(self, letter: str) -> None:
        """Chooses option `letter` ("A", "B", ...), as a click on it does."""
        self.choice.value = self.choice.options[LETTERS.index(letter.upper())]

    def feedback(self, option: Option) -> str:
        if option.right:
            return f"Right. {option.why}"
        return f"Not this one: it rests on the idea that {option.misconception}. {option.why}"

    def _chosen(self, change) -> None:
        if change["new"] is None:
            return
        option = self.options[self.choice.options.index(change["new"])]
        mark = "✓" if option.right else "✗"
        self.answer.value = f"<p>{mark} {html.escape(self.feedback(option))}</p>"

    def __repr__(self) -> str:
        lines = [f"Check yourself. {self.prompt}"]
        lines += [f"  {LETTERS[i]}. {option.text}" for i, option in enumerate(self.options)]
        return "\n".join(lines)

    def _repr_mimebundle_(self, **kwargs):
        data = self.box._repr_mimebundle_(**kwargs)
        data["text/plain"] = repr(self)
        return data
