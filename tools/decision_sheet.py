"""The decision table as a printable one-page sheet: make book writes it into the site.

    .venv/bin/python tools/decision_sheet.py FOLDER

writes FOLDER/decision-table.html and FOLDER/decision-table.pdf: every scenario of
trafikey_lab/scenarios.py played on the model at max_stalled 1 and 2 (the table notebook 07
closes with), the line saying what played it, and what each column's words mean. The HTML is
one A4 page in landscape when printed, in black on white: every meaning is in a word, none in a
colour. Chromium prints the PDF from it (tools/chromium.py finds it): the page as printed.

`document` is the sheet from a table, a pure function the tests read; `write` is the rest.
"""

import html
import re
import sys
from importlib import metadata
from pathlib import Path

from chromium import find_chromium, launched

from trafikey_lab.course.in_production import model_table
from trafikey_lab.course.registry import notebook
from trafikey_lab.stories import BUDGETS
from trafikey_lab.table import Table

REPO = Path(__file__).resolve().parents[1]
MODULE_SOURCE = REPO / "trafikey_lab" / "module" / "trafikey.c"
HTML_NAME = "decision-table.html"
PDF_NAME = "decision-table.pdf"
TITLE = "What the sweep decides, scenario by scenario"
NOTEBOOK = notebook("07")
NOTEBOOK_PAGE = f"notebooks/{NOTEBOOK.stem}.html"
"""07's page, linked from the sheet, which is written at the site's root."""

STEP_WORDS = (
    ("add", "the job goes into pending"),
    ("claim", "EMQ.CLAIM: a lease, the row stamped with the serving process's run_id"),
    ("scripted_claim", "the claim2 Lua script: a lease, no stamp written"),
    ("extend", "EMQ.EXTEND with the claim's attempt: a new deadline, the row stamped"),
    ("scripted_extend", "the extend2 script: a new deadline, the stamp left as it was"),
    ("restart", "the server saves its data and stops; a new process loads it"),
    ("expire", "the clock passes the lease's deadline"),
    ("sweep", "EMQ.STALLED.CHECK"),
    ("failover", "a replica with the data is promoted: another process serves"),
    ("failback", "the primary hands its role to a replica and takes it back, no restart"),
    ("aof_restart", "a restart that replays the append-only file"),
    ("snapshot", "an RDB snapshot (SAVE)"),
    ("crash", "SIGKILL; the new process loads the last snapshot, what came after is lost"),
    ("foreign", "the stamp overwritten with a plain HSET: the run_id in upper case"),
)
STAMP_WORDS = (
    ("process N", "the processes numbered in the order they served the queue"),
    ("no stamp", "the row has no lease_epoch field"),
    ("foreign bytes", "a stamp that names no process of the scenario"),
)
OUTCOME_WORDS = (
    ("recovered", "back to pending: the sweep reply's first list"),
    ("dead", "dead-lettered: a counted stall made stalled reach max_stalled"),
    ("untouched", "in neither list: the sweep did not take the lease"),
)
LEGEND: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    ("scenario", "what happens to the one job, from an empty queue", ()),
    ("steps", "in order, each on the job:", STEP_WORDS),
    ("the stamp names", "the process the row's lease_epoch named just before the last sweep:",
     STAMP_WORDS),
    ("swept by", "the process that ran the last sweep", ()),
    ("reading", "how the last sweep read the stamp (two, split by /, when the budgets differ):", (
        ("counted", "the stamp is the sweeping process's run_id, byte for byte: stalled + 1 is "
                    "held against max_stalled"),
        ("exempt", "the stamp is missing or anything else: back to pending, stalled not written"),
        ("not read", "the lease was not due: the sweep left it, its stamp unread"),
    )),
    ("max_stalled 1", "the job's outcome when the sweep runs with max_stalled 1:",
     OUTCOME_WORDS),
    ("max_stalled 2", "the same, with max_stalled 2", ()),
    ("last EMQ.EXTEND", "the reply of the scenario's last EMQ.EXTEND:", (
        ("1", "the lease extended"),
        ("0", "the lease is not live; the lab's rule: the worker stops"),
        ("-", "the scenario has none"),
    )),
)

STYLE = """
@page { size: A4 landscape; margin: 9mm; }
html { color: #000; background: #fff; font: 10pt/1.3 system-ui, sans-serif;
       font-variant-ligatures: none; }
body { margin: 1rem auto; padding: 0 1rem; max-width: 100rem; }
h1 { font-size: 1.35rem; margin: 0 0 0.2rem; }
h2 { font-size: 1rem; margin: 0.6rem 0 0.2rem; }
p { margin: 0 0 0.4rem; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #000; padding: 0.15rem 0.3rem; text-align: left;
         vertical-align: top; }
thead th { border-bottom-width: 2px; }
td + td { white-space: nowrap; }
dl { columns: 2; column-gap: 1.5rem; margin: 0; }
dt { font-weight: bold; break-after: avoid; }
dd { margin: 0 0 0.3rem 0.8rem; break-inside: avoid; }
dd ul { margin: 0; padding-left: 1rem; }
code { font-size: 0.95em; }
a { color: #000; }
@media print {
  html { font-size: 7.2pt; }
  body { margin: 0; padding: 0; max-width: none; }
  dl { columns: 3; }
  .screen { display: none; }
}
"""
"""Black on white, and no colour anywhere: printed in black and white, nothing is lost."""


class SheetError(Exception):
    """The sheet cannot be written; the message says how to fix it."""


def module_version(source: Path = MODULE_SOURCE) -> str:
    """The version the module gives Valkey when it loads (ValkeyModule_SetModuleAttribs)."""
    found = re.search(r'SetModuleAttribs\(ctx, "trafikey", (\d+),', source.read_text())
    if found is None:
        raise SheetError(f"{source} does not set the module's version as "
                         '`ValkeyModule_SetModuleAttribs(ctx, "trafikey", N, ...)`: the '
                         "sheet names it; change module_version here to read it as it is")
    return found.group(1)


def source_line() -> str:
    """What played the table, with no date: it changes when what played it does."""
    return (f"Played on the model (trafikey_lab/model.py, trafikey-lab "
            f"{metadata.version('trafikey-lab')}) of the trafikey module, version "
            f"{module_version()} (trafikey_lab/module/trafikey.c), one job at a time, at "
            f"max_stalled {' and '.join(map(str, BUDGETS))}. The course's tests play every row "
            "on live Valkey servers (a real replica, a real SIGKILL, a real replay of the "
            "append-only file) and find the same.")


def _words(words: tuple[tuple[str, str], ...]) -> str:
    if not words:
        return ""
    items = "".join(f"<li><code>{html.escape(word)}</code>: {html.escape(meaning)}</li>"
                    for word, meaning in words)
    return f"<ul>{items}</ul>"


def document(table: Table, source: str) -> str:
    """The sheet: a title, the source line, the table whole, and the legend of its words."""
    if tuple(column for column, *_ in LEGEND) != table.columns:
        raise SheetError(f"the legend explains the columns {[c for c, *_ in LEGEND]}, the "
                         f"table has {list(table.columns)}: give LEGEND an entry per column, "
                         "in the table's order")
    head = "".join(f'<th scope="col">{html.escape(column)}</th>' for column in table.columns)
    body = "".join(
        f'<tr><th scope="row">{html.escape(first)}</th>'
        + "".join(f"<td>{html.escape(cell)}</td>" for cell in rest) + "</tr>"
        for first, *rest in table.rows)
    legend = "".join(f"<dt>{html.escape(column)}</dt><dd>{html.escape(meaning)}"
                     f"{_words(words)}</dd>" for column, meaning, words in LEGEND)
    # An empty icon, so that a browser asks the site for no favicon.ico, which it does not have.
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{html.escape(TITLE)} · trafikey lab</title>
<style>{STYLE}</style>
</head>
<body>
<main>
<h1>{html.escape(TITLE)}</h1>
<p>The decision table of <a href="{NOTEBOOK_PAGE}">{html.escape(NOTEBOOK.title)}</a>:
the sweep's reading of one job's lease, and the job's outcome, in every scenario the course
plays. {html.escape(source)}</p>
<p class="screen">Print this page (one A4 page, landscape), or take
<a href="{PDF_NAME}">the same sheet as a PDF</a>.</p>
<table>
<thead><tr>{head}</tr></thead>
<tbody>{body}</tbody>
</table>
<h2>The columns and their words</h2>
<dl>{legend}</dl>
</main>
</body>
</html>
"""


def write(folder: Path) -> tuple[Path, Path]:
    """The sheet as HTML and as the PDF Chromium prints from it, in folder."""
    chromium, why = find_chromium()
    if chromium is None:
        raise SheetError(f"the decision table's PDF is printed by Chromium: {why}")
    sheet = folder / HTML_NAME
    pdf = folder / PDF_NAME
    folder.mkdir(parents=True, exist_ok=True)
    sheet.write_text(document(model_table(), source_line()))
    with launched(chromium) as browser:
        page = browser.new_page()
        page.goto(sheet.resolve().as_uri())
        page.pdf(path=str(pdf), prefer_css_page_size=True)
    return sheet, pdf


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        for path in write(Path(argv[0])):
            print(f"decision sheet: wrote {path}")
    except SheetError as exc:
        print(f"decision sheet: FAILED: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
