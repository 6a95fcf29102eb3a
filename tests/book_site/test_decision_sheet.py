"""The decision table's sheet in the built site (make book-check): the page in Chromium, axe
clean, and the PDF Chromium printed from it, one landscape page naming every scenario.

test_site.py holds the sheet to what it holds every page to (links, headings, requests); this
file, to what a sheet to print must be. The sheet's content is tests/project/
test_decision_sheet.py's.
"""

import re
from urllib.parse import urljoin

import decision_sheet
import pytest
from browser.axe import AXE_JS
from pypdf import PdfReader

from trafikey_lab.course.in_production import model_table
from trafikey_lab.scenarios import COLUMNS
from trafikey_lab.stories import TABLE as SCENARIOS

from .site import SCREENSHOTS

A4_LANDSCAPE_PT = (842, 595)
"""A4 is 297 x 210 mm: in PDF points (1/72 inch), rounded."""
PRINTED_AREA_PX = {"width": 1054, "height": 725}
"""A4 landscape less the sheet's 9 mm margins, in CSS pixels (96 to the inch)."""


@pytest.fixture(scope="module")
def pdf_text(site):
    return " ".join(PdfReader(site / decision_sheet.PDF_NAME).pages[0].extract_text().split())


def test_the_site_holds_the_sheet_the_tool_writes_from_the_model_now(site):
    assert (site / decision_sheet.HTML_NAME).read_text() == decision_sheet.document(
        model_table(), decision_sheet.source_line())


def test_the_sheet_opens_in_chromium_axe_clean_and_prints_on_one_page(browser, served):
    context = browser.new_context(viewport=PRINTED_AREA_PX)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("console", lambda message: errors.append(message.text)
                if message.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
        page.goto(served.base + decision_sheet.HTML_NAME, wait_until="load")
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "decision-table-screen.png"), full_page=True)
        page.add_script_tag(content=AXE_JS.read_text())
        found = page.evaluate("""async () => (await window.axe.run(document,
            {resultTypes: ['violations']})).violations.flatMap(
                v => v.nodes.map(n => `${v.id}: ${n.target.join(' ')} ${n.html.slice(0, 120)}`))""")
        # As the printer lays it out: the table and its legend within one page's printed area.
        page.emulate_media(media="print")
        page.screenshot(path=str(SCREENSHOTS / "decision-table-print.png"), full_page=True)
        height = page.evaluate("() => document.documentElement.scrollHeight")
    finally:
        context.close()
    assert found == []
    assert errors == []
    assert height <= PRINTED_AREA_PX["height"]


def test_the_pdf_is_one_a4_page_in_landscape(site):
    pages = PdfReader(site / decision_sheet.PDF_NAME).pages
    assert len(pages) == 1
    box = pages[0].mediabox
    assert (round(float(box.width)), round(float(box.height))) == A4_LANDSCAPE_PT


def test_the_pdfs_text_names_every_scenario_and_every_column_in_order(pdf_text):
    at = [pdf_text.find(scenario.title) for scenario in SCENARIOS]
    assert -1 not in at, [s.title for s, found in zip(SCENARIOS, at, strict=True) if found < 0]
    assert at == sorted(at)
    assert [column for column in COLUMNS if column not in pdf_text] == []


def test_the_pdf_gives_its_source_and_leaves_out_what_is_only_for_the_screen(pdf_text):
    assert " ".join(decision_sheet.source_line().split()) in pdf_text
    assert "the same sheet as a PDF" not in pdf_text


def test_07s_page_links_to_the_sheet_and_to_its_pdf(site):
    page = f"notebooks/{decision_sheet.NOTEBOOK.stem}.html"
    links = {urljoin(page, href) for href in
             re.findall(r'<a\b[^>]*\bhref="([^"#]+)"', (site / page).read_text())}
    assert {decision_sheet.HTML_NAME, decision_sheet.PDF_NAME} <= links
