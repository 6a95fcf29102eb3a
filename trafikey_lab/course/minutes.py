"""The minutes a learner needs for a notebook, or for a part of one, counted from the file.

What a learner reads and does: the prose and the stored outputs that must be read (printed
text, tables, results) at 110 words a minute, a careful reader's pace; half a minute for
each code cell and for each figure to look at, and for each cell the tag of what it asks the
learner to do: a prediction to commit to (`prediction`, on the markdown cell that asks it),
a diagnostic question to answer (`question`), a widget to explore (`widget-explore`), a live
replay to run and compare (`live-replay`; a widget's live button counts as one), plus the
minutes each exercise heading names ("## Exercise: <title> (about N minutes)"). Each
notebook states its total rounded up to a multiple of five; the instructor guide plans from
the same counts (tests hold both).
"""

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

WORDS_PER_MINUTE = 110
CODE_CELL_MINUTES = 0.5
FIGURE_MINUTES = 0.5
TAG_MINUTES = {"prediction": 1, "question": 1, "widget-explore": 3, "live-replay": 2}
STEP = 5
"""A stated time is the count rounded up to a multiple of this: "about N minutes"."""
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
EXERCISE = re.compile(r"## Exercise: .+ \(about (\d+) minutes\)")


class NoSuchPart(ValueError):
    """A part of a notebook was asked for by a heading the notebook does not have."""


def cells(path: Path, start: str | None = None, stop: str | None = None) -> list[dict]:
    """The notebook's cells, or those from the markdown cell that opens with `start` (a
    heading, "## On a time axis") up to the one that opens with `stop`, not included."""
    found = json.loads(Path(path).read_text())["cells"]
    opens = [("".join(cell["source"]) if cell["cell_type"] == "markdown" else "")
             for cell in found]

    def at(heading: str) -> int:
        for index, text in enumerate(opens):
            if text.startswith(heading):
                return index
        raise NoSuchPart(f"{Path(path).name} has no markdown cell opening with {heading!r}: "
                         "name a part by the first words of its heading, as the notebook "
                         "writes them")

    return found[at(start) if start else 0:at(stop) if stop else len(found)]


def words(text: str) -> int:
    """The words a reader reads: link targets and HTML tags left out."""
    text = re.sub(r"\]\([^)]*\)", "]", text)
    return len(re.sub(r"<[^>]+>", " ", text).split())


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value


def prose_words(part: list[dict]) -> int:
    return words("\n".join(_text(cell["source"]) for cell in part
                           if cell["cell_type"] == "markdown"))


def output_words(part: list[dict]) -> int:
    """The words of the stored outputs: printed text, and a result's HTML when it has one (a
    table), else its text. A widget is counted by its tag and a figure as a figure, not by
    the words of their placeholders."""
    count = 0
    for cell in part:
        for output in cell.get("outputs", []):
            if output["output_type"] == "stream":
                count += words(_text(output["text"]))
                continue
            data = output.get("data", {})
            if WIDGET_VIEW in data or "image/png" in data:
                continue
            count += words(_text(data.get("text/html") or data.get("text/plain", "")))
    return count


def figures(part: list[dict]) -> int:
    """Images in the markdown, and drawn outputs."""
    return (sum(_text(cell["source"]).count("![") for cell in part
                if cell["cell_type"] == "markdown")
            + sum("image/png" in output.get("data", {})
                  for cell in part for output in cell.get("outputs", [])))


def tagged(part: list[dict], tag: str) -> int:
    return sum(tag in cell.get("metadata", {}).get("tags", []) for cell in part)


def exercise_minutes(part: list[dict]) -> list[int]:
    """The minutes each exercise heading in the part names."""
    return [int(match.group(1)) for cell in part if cell["cell_type"] == "markdown"
            for line in _text(cell["source"]).splitlines()
            if (match := EXERCISE.fullmatch(line))]


def count(part: list[dict]) -> float:
    """The minutes the part takes, unrounded."""
    code_cells = sum(cell["cell_type"] == "code" for cell in part)
    return ((prose_words(part) + output_words(part)) / WORDS_PER_MINUTE
            + CODE_CELL_MINUTES * code_cells + FIGURE_MINUTES * figures(part)
            + sum(minutes * tagged(part, tag) for tag, minutes in TAG_MINUTES.items())
            + sum(exercise_minutes(part)))


def stated(path: Path, start: str | None = None, stop: str | None = None) -> int:
    """The minutes to state for the notebook, or for the part from `start` to `stop`: the
    count rounded up to a multiple of STEP."""
    return STEP * math.ceil(count(cells(path, start, stop)) / STEP)


# The plain-sentence goals of the course ("Clear and short" in the house style), measured on
# the prose a learner reads: markdown cells, with fenced code, tables and headings left out.
SENTENCE_GOALS = {"mean words a sentence": 16, "share over 40 words": 0.02,
                  "parentheses a sentence": 0.12}
LONG_SENTENCE = 40
COURSE_WORD_GOAL = 12_000
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'\u201c\u2018(])")
"""A sentence ends at `.`, `!` or `?` followed by white space and a capital letter, a digit, a
quote or a parenthesis: the issue's rule, no looser."""
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def reading_lines(text: str) -> list[str]:
    """The paragraphs and list items of a markdown cell, one string each: fenced code, table
    rows and headings left out, HTML tags read as spaces (a folded note's summary included)."""
    kept: list[str] = []
    in_fence = False
    paragraph: list[str] = []

    def close() -> None:
        if paragraph:
            kept.append(" ".join(paragraph))
            paragraph.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            close()
            continue
        if in_fence or stripped.startswith(("#", "|")) or not stripped:
            close()
            continue
        stripped = re.sub(r"<[^>]+>", " ", stripped).strip()
        if not stripped:
            close()
            continue
        if LIST_ITEM.match(line):
            close()
            stripped = LIST_ITEM.sub("", line).strip()
        paragraph.append(stripped)
    close()
    return kept


def sentences(text: str) -> list[str]:
    """The sentences of a markdown cell's prose: each list item at least one."""
    return [piece for line in reading_lines(text)
            for piece in SENTENCE_END.split(re.sub(r"\]\([^)]*\)", "]", line)) if piece.strip()]


@dataclass(frozen=True)
class Prose:
    """How a part's prose reads: its words, sentences, long sentences and parentheses."""
    words: int
    sentences: int
    long: int
    parentheses: int

    @property
    def mean(self) -> float:
        return self.words / self.sentences if self.sentences else 0.0

    @property
    def long_share(self) -> float:
        return self.long / self.sentences if self.sentences else 0.0

    @property
    def parentheses_a_sentence(self) -> float:
        return self.parentheses / self.sentences if self.sentences else 0.0

    def misses(self) -> list[str]:
        """The goals this prose misses, each said with its number and the goal."""
        found = {"mean words a sentence": self.mean, "share over 40 words": self.long_share,
                 "parentheses a sentence": self.parentheses_a_sentence}
        return [f"{name} {found[name]:.2f} (goal at most {goal})"
                for name, goal in SENTENCE_GOALS.items() if found[name] > goal]


def prose(part: list[dict]) -> Prose:
    """The part's prose, measured sentence by sentence (markdown cells only)."""
    said = [sentence for cell in part if cell["cell_type"] == "markdown"
            for sentence in sentences(_text(cell["source"]))]
    counts = [words(sentence) for sentence in said]
    return Prose(words=sum(counts), sentences=len(said),
                 long=sum(count > LONG_SENTENCE for count in counts),
                 parentheses=sum(sentence.count("(") for sentence in said))
