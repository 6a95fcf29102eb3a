"""What nbval cannot check about the notebooks: the sanitize rules they rely on, their shape,
and that each one runs twice in a row in one kernel."""

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbval.plugin import get_sanitize_patterns

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
MINE = tuple(sorted(path.stem for path in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")))
WIDGETS = ("RunIdChecker(", "LeaseAcrossRestart(")
"""The cells that show a live widget: the only ones whose output nbval may not compare."""


def sanitize(text: str) -> str:
    for regex, replace in get_sanitize_patterns((NOTEBOOKS / "sanitize.cfg").read_text()):
        text = re.sub(regex, replace, text)
    return text


def test_the_doctors_machine_specific_details_are_sanitized_but_a_failure_is_not():
    lines = (
        "[ok  ] Python: 3.11.7\n"
        "[ok  ] module built: /home/someone/lab/trafikey_lab/module/trafikey.so\n"
        "[ok  ] server starts: redis://127.0.0.1:40123, run_id "
        "3f2c0d8e9b1a4c5d6e7f8091a2b3c4d5e6f70812\n"
        "[FAIL] C compiler: none on PATH\n"
    )
    assert sanitize(lines) == (
        "[ok  ] Python: <machine-specific>\n"
        "[ok  ] module built: <machine-specific>\n"
        "[ok  ] server starts: redis://127.0.0.1:<port>, run_id <run_id>\n"
        "[FAIL] C compiler: none on PATH\n"
    )


def test_every_sanitize_rule_parses_as_a_regex_and_replace_pair():
    lines = (NOTEBOOKS / "sanitize.cfg").read_text().splitlines()
    assert [line.split(":")[0] for line in lines] == ["regex", "replace"] * (len(lines) // 2)
    assert all(line.startswith(("regex: ", "replace: ")) for line in lines)
    patterns = get_sanitize_patterns("\n".join(lines))
    assert len(patterns) == len(lines) // 2, "nbval dropped a rule: check its two lines"
    for regex, _ in patterns:
        re.compile(regex)


@pytest.mark.parametrize("volatile,steady", [
    ("run_id 094c1e5f0d6b2a7c8e9f00112233445566775cdb", "run_id <run_id>"),
    ("redis://127.0.0.1:40123", "redis://127.0.0.1:<port>"),
    ("data in /tmp/trafikey-lab-x1_y2z3", "data in <data_dir>"),
    ("deadline 1795981575111", "deadline <ms>"),
    ("<Output at 0x7f3a2b1c0d90>", "<Output at 0x<address>>"),
])
def test_each_volatile_value_is_sanitized(volatile, steady):
    assert sanitize(volatile) == steady


def load(name: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


@pytest.mark.parametrize("name", MINE)
def test_each_notebook_has_one_setup_cell_and_a_folded_answer(name):
    nb = load(name)
    code = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    markdown = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    assert code[0] == "import trafikey_lab.course\ncourse = trafikey_lab.course.setup()"
    assert sum("course.setup()" in source for source in code) == 1
    assert nb.cells[0].source.startswith("# ") and "**Time:**" in nb.cells[0].source
    assert "<details><summary>" in markdown and "## Summary" in markdown


@pytest.mark.parametrize("name", MINE)
def test_each_notebook_is_stored_run_in_order_without_errors(name):
    cells = [cell for cell in load(name).cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1))
    assert not [o for cell in cells for o in cell.outputs if o.output_type == "error"]


def test_only_cells_showing_a_widget_skip_the_output_comparison():
    for name in MINE:
        for cell in load(name).cells:
            ignored = "nbval-ignore-output" in cell.metadata.get("tags", [])
            shows_widget = any(widget in cell.source for widget in WIDGETS)
            assert ignored == shows_widget, (name, cell.source)


@pytest.mark.parametrize("name", MINE)
def test_each_notebook_runs_twice_in_a_row_in_one_kernel(name):
    sources = [cell.source for cell in load(name).cells if cell.cell_type == "code"] * 2
    twice = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    NotebookClient(twice, timeout=60, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    assert not [o for cell in twice.cells for o in cell.outputs if o.output_type == "error"]
