"""Notebook 07 in the browser: every live part agrees with the model on the kernel's own server,
the exercise's checker answers, and the decision table arrives as a table with a row per
scenario, read from the application's model of the notebook (JupyterLab renders only the cells
in view)."""

import re

import pytest
from lab_pages.notebook import _PANEL, course_notebook

from trafikey_lab.scenarios import COLUMNS
from trafikey_lab.stories import TABLE as SCENARIOS

# Each code cell's result as the notebook's model holds it: its text/plain and text/html.
_RESULTS = "(path) => {" + _PANEL + """
  const code = [...panel.content.model.cells].filter(c => c.type === 'code');
  const join = value => [].concat(value || []).join('');
  return code.flatMap(cell => cell.outputs.toJSON()
    .filter(o => o.output_type === 'execute_result')
    .map(o => ({plain: join(o.data['text/plain']), html: join(o.data['text/html'])})));
}"""


@pytest.fixture(scope="module", params=[course_notebook("07")])
def notebook(request, notebooks):
    """Notebook 07, run; the id names the notebook, so -k "07" selects these tests."""
    return notebooks.run(request.param)


def streams(notebook) -> str:
    return "".join(o["text"] for cell in notebook.outputs() for o in cell["outputs"]
                   if o["output_type"] == "stream")


def test_every_live_part_of_07_agrees_with_the_model_on_the_kernels_own_server(notebook):
    text = streams(notebook)
    agreed = [line for line in text.splitlines() if line.startswith("model and live agree")]
    assert len(agreed) == 7  # the race twice, the job run twice three times, the crash, INFO
    assert all(line.endswith(": True") for line in agreed)
    # How many claims the replay keeps is a measurement (a slow fsync makes the server hold
    # writes back, and the kill loses them): the notebook says so, and so does this test.
    kept = re.search(r"^after kill -9, the replay holds (\d+) of the 200 claims$", text, re.M)
    assert kept is not None
    assert 0 <= int(kept.group(1)) <= 200


def test_07s_checker_answers_and_its_table_has_a_row_per_scenario(notebook):
    results = notebook.page.evaluate(_RESULTS, notebook.path)
    verdicts = [r["plain"] for r in results if r["plain"].startswith(("RIGHT: ", "NOT YET: "))]
    # The stored attempt reads, then writes: the interleaved newer writer beats it.
    assert len(verdicts) == 1
    assert verdicts[0].startswith("NOT YET: a fenced write")
    assert "the stale write won" in verdicts[0]
    tables = [r["html"] for r in results if "<table>" in r["html"]]
    assert len(tables) == 1
    assert tables[0].count("<tr>") == 1 + len(SCENARIOS)
    assert all(f">{column}</th>" in tables[0] for column in COLUMNS)
