"""The course reads in plain sentences and fits its time: each notebook's prose meets the
sentence goals, the course stays under its word goal, and the core path (00-04) fits one
workshop slot. Counted from the stored notebooks by course/minutes.py."""

from pathlib import Path

import nbformat
import pytest

from trafikey_lab.course import minutes
from trafikey_lab.course.registry import NOTEBOOKS

CORE = tuple(entry for entry in NOTEBOOKS if entry.number <= "04")
CORE_MINUTES = 120
"""The dive in one sitting: 00-04, exercises included, in one two-hour workshop slot."""
START_MINUTES = 20
"""00 on its own: the idea, for a visitor who clicked through from the dive."""


def measured(entry) -> minutes.Prose:
    return minutes.prose(minutes.cells(entry.path))


@pytest.mark.parametrize("entry", NOTEBOOKS, ids=lambda entry: entry.stem)
def test_each_notebook_reads_in_plain_sentences(entry):
    prose = measured(entry)
    assert prose.misses() == [], (
        f"{entry.stem}: {prose.words} words in {prose.sentences} sentences, {prose.long} over "
        f"{minutes.LONG_SENTENCE} words, {prose.parentheses} parentheses; misses "
        + "; ".join(prose.misses()))


def test_the_course_stays_under_its_word_goal():
    counts = {entry.stem: measured(entry).words for entry in NOTEBOOKS}
    assert sum(counts.values()) <= minutes.COURSE_WORD_GOAL, counts


def test_the_core_path_fits_one_workshop_slot_and_00_gives_the_idea_alone():
    stated = {entry.stem: minutes.stated(entry.path) for entry in CORE}
    assert sum(stated.values()) <= CORE_MINUTES, stated
    assert stated["00_start_here"] <= START_MINUTES, stated


def test_a_sentence_ends_at_a_stop_before_a_capital_digit_quote_or_parenthesis():
    # the rule and no looser: a stop inside a parenthesis, or before a code span, ends
    # nothing
    assert minutes.sentences("One. Two! 3 is next? (Four. \"Five.\" six.) `seven` e.g. Eight") == [
        "One.", "Two!", "3 is next?", "(Four.", "\"Five.\" six.) `seven` e.g.", "Eight"]


def test_code_tables_and_headings_are_not_prose_and_a_list_item_is_a_sentence():
    text = ("# A heading. Not read\n\nA paragraph runs\nover two lines.\n\n"
            "| a | table. |\n|---|---|\n\n```python\nprint('code. Not read')\n```\n"
            "- one item\n- two. Three\n1. four\n\n"
            "<details><summary>Precisely</summary>\n\nA folded note is read.\n</details>")
    assert minutes.sentences(text) == [
        "A paragraph runs over two lines.", "one item", "two.", "Three", "four",
        "Precisely", "A folded note is read."]


def test_the_measure_counts_words_long_sentences_and_parentheses(tmp_path: Path):
    long = "Long " + " ".join(["word"] * 40) + "."
    cell = nbformat.v4.new_markdown_cell(f"Short one (aside). {long} Third [link](x.md) here.")
    path = tmp_path / "99_t.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    prose = minutes.prose(minutes.cells(path))
    assert (prose.words, prose.sentences, prose.long, prose.parentheses) == (3 + 41 + 3, 3, 1, 1)
    assert prose.misses() == [
        "share over 40 words 0.33 (goal at most 0.02)",
        "parentheses a sentence 0.33 (goal at most 0.12)"]
