"""tools/decision_sheet.py: the decision table's printable sheet holds every scenario and every
column, in SCENARIOS' order, as the model plays them, and says every meaning in words.

The sheet in a browser (axe, one PDF page, its text) is tests/book_site/test_decision_sheet.py.
"""

import re
from html.parser import HTMLParser

import decision_sheet
import pytest

from trafikey_lab.course.in_production import model_table
from trafikey_lab.player import ModelStage
from trafikey_lab.scenarios import COLUMNS, play
from trafikey_lab.stories import BUDGETS
from trafikey_lab.stories import TABLE as SCENARIOS
from trafikey_lab.table import Table

VOID = {"meta", "link", "br", "img", "hr", "input"}
"""The elements with no end tag."""


class Sheet(HTMLParser):
    """What the tests read of the sheet: its table's cells (tag, attributes, text), its
    legend's terms and words, its <html> attributes, its title, headings, styles and text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.rows: list[list[tuple[str, dict, str]]] = []
        self.terms: list[str] = []
        self.codes: list[str] = []
        self.html: dict = {}
        self.title = ""
        self.headings: list[str] = []
        self.style = ""
        self.words: list[str] = []
        self.styled: list[tuple[str, dict]] = []
        self._open: list[tuple[str, dict]] = []
        self._text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.html = attrs
        if "style" in attrs or ("class" in attrs and tag in ("tr", "th", "td")):
            self.styled.append((tag, attrs))
        if tag == "tr":
            self.rows.append([])
        if tag not in VOID:
            self._open.append((tag, attrs))
        self._text = []

    def handle_data(self, data):
        self._text.append(data)
        self.words += data.split()
        if self._open and self._open[-1][0] == "style":
            self.style += data

    def handle_endtag(self, tag):
        opened, attrs = self._open.pop()
        assert opened == tag, f"<{opened}> closed by </{tag}>"
        text = " ".join("".join(self._text).split())
        if tag in ("th", "td"):
            self.rows[-1].append((tag, attrs, text))
        elif tag == "dt":
            self.terms.append(text)
        elif tag == "code":
            self.codes.append(text)
        elif tag == "title":
            self.title = text
        elif re.fullmatch(r"h[1-6]", tag):
            self.headings.append(tag)
        self._text = []


SOURCE = decision_sheet.source_line()
SHEET = Sheet(decision_sheet.document(model_table(), SOURCE))
HEADER, *BODY = SHEET.rows


def test_the_header_names_every_column_in_order_each_a_th_scoped_to_its_column():
    assert [text for _, _, text in HEADER] == list(COLUMNS)
    assert {(tag, attrs.get("scope")) for tag, attrs, _ in HEADER} == {("th", "col")}


def test_a_row_per_scenario_in_the_order_of_scenarios_each_headed_by_its_title():
    assert [row[0] for row in BODY] == [("th", {"scope": "row"}, s.title) for s in SCENARIOS]
    assert all(len(row) == len(COLUMNS) for row in BODY)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda scenario: scenario.key)
def test_each_row_says_what_playing_its_scenario_on_the_model_gives(scenario):
    row = dict(zip(COLUMNS, (text for _, _, text in BODY[SCENARIOS.index(scenario)]),
                   strict=True))
    played = {budget: play(scenario, budget, ModelStage()) for budget in BUDGETS}
    first = played[BUDGETS[0]]
    assert row["steps"] == " → ".join(scenario.steps)
    assert (row["the stamp names"], row["swept by"]) == (first.stamp, first.swept_by)
    assert row["reading"].split(" / ") == list(dict.fromkeys(p.reading for p in played.values()))
    assert [row[f"max_stalled {budget}"] for budget in BUDGETS] == [
        played[budget].outcome for budget in BUDGETS]
    assert row["last EMQ.EXTEND"] == first.extension


def test_the_legend_explains_every_column_in_the_tables_order():
    assert SHEET.terms == list(COLUMNS)


def test_every_word_the_table_uses_is_explained_in_the_legend():
    steps, stamps, readings, outcomes, extensions = set(), set(), set(), set(), set()
    for row in BODY:
        cells = dict(zip(COLUMNS, (text for _, _, text in row), strict=True))
        steps |= set(cells["steps"].split(" → "))
        stamps |= {re.sub(r"^process \d+$", "process N", cells[column])
                   for column in ("the stamp names", "swept by")}
        readings |= set(cells["reading"].split(" / "))
        outcomes |= {cells[f"max_stalled {budget}"] for budget in BUDGETS}
        extensions.add(cells["last EMQ.EXTEND"])
    explained = set(SHEET.codes)
    assert steps | stamps | readings | outcomes | extensions <= explained
    # and the words the legend names for a column are the ones it can have, not a few
    assert {"0", "1", "-", "not read", "untouched", "no stamp", "foreign bytes"} <= explained


def test_no_meaning_is_in_a_colour_only_in_words():
    """Printed in black and white nothing is lost: the stylesheet sets no colour but black,
    white and greys, and no cell is styled or classed apart from the others."""
    declarations = re.findall(r"(?<![\w-])(color|background(?:-color)?|"
                              r"(?:border|outline)(?:-(?:top|right|bottom|left))?(?:-color)?)"
                              r"\s*:\s*([^;}]+)", SHEET.style)
    assert declarations, "the test reads no colour at all: has the style moved?"
    for prop, value in declarations:
        for token in value.lower().split():
            if re.fullmatch(r"[\d.]+(px|pt|rem|em|mm)?|solid|none|inherit|currentcolor", token):
                continue
            grey = re.fullmatch(r"#([0-9a-f])\1\1|#([0-9a-f]{2})\2\2|black|white", token)
            assert grey, f"{prop}: {value}: a colour a black-and-white print would lose"
    assert SHEET.styled == []


def test_the_sheet_is_a_document_with_a_language_a_title_and_one_h1():
    assert SHEET.html.get("lang") == "en"
    assert SHEET.title.startswith(decision_sheet.TITLE)
    assert SHEET.headings.count("h1") == 1
    assert SHEET.headings[0] == "h1"


def test_the_source_line_says_what_played_the_table_and_no_date():
    assert " ".join(SOURCE.split()) in " ".join(SHEET.words)
    assert f"trafikey module, version {decision_sheet.module_version()}" in SOURCE
    assert not re.search(r"\b(19|20)\d\d\b", SOURCE)


def test_the_sheet_names_the_version_the_loaded_module_reports(lab):
    modules = {module[b"name"]: module[b"ver"] for module in lab.client.module_list()}
    assert str(modules[b"trafikey"]) == decision_sheet.module_version()


def test_a_module_source_without_its_version_call_is_refused_saying_what_to_change(tmp_path):
    source = tmp_path / "trafikey.c"
    source.write_text('ValkeyModule_SetModuleAttribs(ctx, "trafikey", 7, VKM_APIVER_1);\n')
    assert decision_sheet.module_version(source) == "7"
    source.write_text("int ValkeyModule_OnLoad(void) { return 0; }\n")
    with pytest.raises(decision_sheet.SheetError, match="SetModuleAttribs"):
        decision_sheet.module_version(source)


def test_a_table_whose_columns_the_legend_does_not_explain_is_refused():
    table = model_table()
    renamed = Table((*table.columns[:-1], "attempts"), table.rows)
    with pytest.raises(decision_sheet.SheetError, match="give LEGEND an entry per column"):
        decision_sheet.document(renamed, SOURCE)


def test_the_cells_are_escaped():
    table = Table(COLUMNS, (("a <b> & c", *["x"] * (len(COLUMNS) - 1)),))
    assert Sheet(decision_sheet.document(table, SOURCE)).rows[1][0][2] == "a <b> & c"
