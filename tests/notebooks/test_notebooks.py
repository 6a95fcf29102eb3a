"""What nbval cannot check about the notebooks: the sanitize rules they rely on (that they mask
what differs between runs and nothing the model fixes), their shape, and that each one runs
twice in a row in one kernel."""

import re
import secrets
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from itertools import islice
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbval.plugin import get_sanitize_patterns

import peers
from trafikey_lab import epoch, model
from trafikey_lab.course import minutes

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
MINE = tuple(sorted(path.stem for path in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")))
NBVAL_TAGS = {"nbval-ignore-output"}
WIDGETS = ("RunIdChecker(", "LeaseAcrossRestart(")
"""The cells that show a live widget: the only ones whose output nbval may be told to skip."""


def sanitize(text: str) -> str:
    for regex, replace in get_sanitize_patterns((NOTEBOOKS / "sanitize.cfg").read_text()):
        text = re.sub(regex, replace, text)
    return text


def test_the_doctors_machine_specific_details_are_sanitized_but_a_failure_is_not():
    lines = (
        "[ok  ] Python: 3.11.7\n"
        "[ok  ] module built: /home/someone/lab/trafikey_lab/module/trafikey.so\n"
        "[ok  ] server starts: redis://127.0.0.1:40123, run_id "
        "9a41c07e5d3b2f18a6c4e0d9b7f5a3c1e8d6b4f2\n"
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


@pytest.mark.parametrize(("volatile", "steady"), [
    ("run_id 094c1e5f0d6b2a7c8e9f00112233445566775cdb", "run_id <run_id>"),
    ("redis://127.0.0.1:40123", "redis://127.0.0.1:<port>"),
    ("data in /tmp/trafikey-lab-x1_y2z3", "data in <data_dir>"),
    ("deadline 1795981575111", "deadline <ms>"),
    ("<Output at 0x7f3a2b1c0d90>", "<Output at 0x<address>>"),
    ("stalled2           2000 expired leases in 7.88 ms of server time",
     "stalled2           2000 expired leases in <server time>"),
])
def test_each_volatile_value_is_sanitized(volatile, steady):
    assert sanitize(volatile) == steady


def live_run_id() -> str:
    """A run_id as a server draws it: 40 random hex characters."""
    return secrets.token_hex(20)


def live_ms() -> int:
    return time.time_ns() // 1_000_000


def test_live_run_ids_and_clock_readings_are_masked_wherever_they_appear():
    for _ in range(50):
        run_id, now = live_run_id(), live_ms()
        assert sanitize(f"run_id {run_id}") == "run_id <run_id>"
        assert sanitize(f"lease_epoch={run_id}, deadline={now}") == \
            "lease_epoch=<run_id>, deadline=<ms>"


MODEL_RUN_IDS = [run_id.decode() for run_id in islice(model.run_ids(), 12)]
"""What the model draws: NOW, forty 0s, then 000…001, 000…002 and so on."""
MODEL_CLOCK = [model.START_MS + ms for ms in (0, 1, 6, 251, 5_000, 600_000)]
"""The model clock's readings in a notebook: its start plus the few ms or s a history takes."""


@pytest.mark.parametrize("value", MODEL_RUN_IDS + [str(ms) for ms in MODEL_CLOCK])
def test_the_models_fixed_run_ids_and_clock_are_left_for_nbval_to_compare(value):
    assert sanitize(f"stamp {value} end") == f"stamp {value} end"


def test_a_model_value_off_by_one_character_or_millisecond_still_differs_after_sanitizing():
    wrong_now = epoch.NOW.decode()[:-1] + "3"
    assert sanitize(wrong_now) != sanitize(epoch.NOW.decode())
    assert sanitize(str(model.START_MS + 7)) != sanitize(str(model.START_MS + 6))


def nbval_outcomes(tmp_path: Path, cells: list[tuple[str, str]]) -> list[str]:
    """Runs strict nbval with the course's sanitize file over one notebook whose code cells
    are (source, the stdout stored for it); returns each cell's outcome."""
    notebook = nbformat.v4.new_notebook()
    for count, (source, stored) in enumerate(cells, 1):
        cell = nbformat.v4.new_code_cell(source, execution_count=count)
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=stored)]
        notebook.cells.append(cell)
    path = tmp_path / "stored.ipynb"
    nbformat.write(notebook, path)
    report = tmp_path / "report.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
         "--nbval-sanitize-with", str(NOTEBOOKS / "sanitize.cfg"), f"--junitxml={report}",
         "-q", path.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    cases = ET.parse(report).getroot().iter("testcase")
    return ["failed" if case.find("failure") is not None else "passed" for case in cases]


MODEL_DEAD_SCORE = """\
from trafikey_lab import ModelExecutor, Queue
m, q = ModelExecutor(), Queue()
m.add(q, "a"); m.claim(q, 5); m.advance(6); m.sweep(q, 1)
print("dead at", int(m.dataset()[q.dead][1][0][1]))
"""


def test_nbval_fails_a_wrong_model_stamp_or_score_and_passes_another_live_run_id(tmp_path):
    """The proof on nbval itself: stored outputs that name the model's NOW or its dead-letter
    score wrongly fail, the right ones pass, and a live run_id and clock reading stored from
    another run pass."""
    now = epoch.NOW.decode()
    score = model.START_MS + 6
    outcomes = nbval_outcomes(tmp_path, [
        ("from trafikey_lab.epoch import NOW\nprint('stamp', NOW.decode())",
         f"stamp {now[:-1]}3\n"),
        (MODEL_DEAD_SCORE, f"dead at {score + 1}\n"),
        ("print('stamp', NOW.decode())", f"stamp {now}\n"),
        (MODEL_DEAD_SCORE, f"dead at {score}\n"),
        ("import secrets, time\n"
         "print('run_id', secrets.token_hex(20), 'at', time.time_ns() // 10**6)",
         f"run_id {live_run_id()} at {live_ms() - 86_400_000}\n"),
    ])
    assert outcomes == ["failed", "failed", "passed", "passed", "passed"]


def load(name: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


@pytest.mark.parametrize("name", MINE)
def test_each_notebook_has_one_setup_cell_and_a_folded_answer(name):
    nb = load(name)
    code = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    markdown = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    assert code[0] == "import trafikey_lab.course\ncourse = trafikey_lab.course.setup()"
    assert sum("course.setup()" in source for source in code) == 1
    assert nb.cells[0].source.startswith("# ")
    assert "**Time:**" in nb.cells[0].source
    assert "<details><summary>" in markdown
    assert "## Summary" in markdown


@pytest.mark.parametrize("name", MINE)
def test_each_notebook_is_stored_run_in_order_without_errors(name):
    cells = [cell for cell in load(name).cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1))
    assert not [o for cell in cells for o in cell.outputs if o.output_type == "error"]


def test_only_cells_showing_a_widget_may_skip_the_output_comparison():
    """A widget cell whose text nbval can compare (no Output area redrawn) may keep its
    output compared; any other cell must always be."""
    for name in MINE:
        for cell in load(name).cells:
            ignored = "nbval-ignore-output" in cell.metadata.get("tags", [])
            shows_widget = any(widget in cell.source for widget in WIDGETS)
            assert shows_widget or not ignored, (name, cell.source)


def cell_timeout(cell) -> int:
    """A minute a cell; 05's live RQ play takes its own time besides (peers.RQ_LIVE_WHY)."""
    return 60 + (peers.RQ_LIVE_SECONDS if "play_rq(" in cell.source else 0)


@pytest.mark.parametrize("name", MINE)
def test_each_notebook_runs_twice_in_a_row_in_one_kernel(name):
    sources = [cell.source for cell in load(name).cells if cell.cell_type == "code"] * 2
    twice = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    NotebookClient(twice, timeout_func=cell_timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    assert not [o for cell in twice.cells for o in cell.outputs if o.output_type == "error"]


# -- the workshop plan, the names table, the exercises and the references --------------------

MODULE_SOURCE = NOTEBOOKS.parent / "trafikey_lab" / "module" / "trafikey.c"


def stated_minutes(name: str) -> int:
    """The minutes a notebook's header states, in the one form they all use."""
    match = re.search(r"\*\*Time:\*\* about (\d+) minutes\.", load(name).cells[0].source)
    assert match, f"{name}: the first cell must state its time as '**Time:** about N minutes.'"
    return int(match.group(1))


def markdown_section(name: str, heading: str) -> str:
    return next(cell.source for cell in load(name).cells
                if cell.cell_type == "markdown" and heading in cell.source)


def exercise_headings_name_their_minutes(name: str) -> bool:
    headings = [line for cell in load(name).cells if cell.cell_type == "markdown"
                for line in cell.source.splitlines() if line.startswith("## Exercise")]
    return bool(headings) and all(minutes.EXERCISE.fullmatch(line) for line in headings)


@pytest.mark.parametrize("name", MINE)
def test_each_notebook_has_an_exercise_whose_heading_names_its_minutes(name):
    assert exercise_headings_name_their_minutes(name), (
        f"{name}: name each exercise's minutes: '## Exercise: <title> (about N minutes)'")


@pytest.mark.parametrize("name", MINE)
def test_each_notebook_states_the_minutes_its_reading_and_tasks_take(name):
    part = minutes.cells(NOTEBOOKS / f"{name}.ipynb")
    tasks = ", ".join(f"{tag} {minutes.tagged(part, tag)}" for tag in minutes.TAG_MINUTES)
    to_state = minutes.stated(NOTEBOOKS / f"{name}.ipynb")
    assert stated_minutes(name) == to_state, (
        f"{name} states {stated_minutes(name)} minutes; its {minutes.prose_words(part)} words "
        f"of prose, {minutes.output_words(part)} of stored output, {minutes.figures(part)} "
        f"figures, code cells, tasks ({tasks}) and exercise take {minutes.count(part):.1f}: "
        f"state {to_state} in its header and in trafikey_lab/course/registry.py")


@pytest.mark.parametrize("name", MINE)
def test_every_tag_a_cell_carries_is_one_the_minutes_or_nbval_read(name):
    for cell in load(name).cells:
        unknown = set(cell.metadata.get("tags", [])) - set(minutes.TAG_MINUTES) - NBVAL_TAGS
        assert not unknown, (f"{name}: a cell carries {unknown}, which nothing reads: "
                             f"{cell.source[:60]!r}")


def test_the_minutes_count_words_outputs_figures_tasks_and_exercise(tmp_path):
    printed = nbformat.v4.new_code_cell("1", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="ten words " * 5)])
    drawn = nbformat.v4.new_code_cell("2", outputs=[nbformat.v4.new_output(
        "display_data", data={"image/png": "", "text/plain": "<Figure of many words here>"})])
    widget = nbformat.v4.new_code_cell("3", outputs=[nbformat.v4.new_output(
        "display_data", data={minutes.WIDGET_VIEW: {}, "text/plain": "VBox(children=(...))"})])
    widget.metadata["tags"] = ["widget-explore", "live-replay"]
    predict = nbformat.v4.new_markdown_cell("## Predict ![a figure](x.png)")
    predict.metadata["tags"] = ["prediction"]
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# T\n\n**Time:** about 9 minutes. " + "word " * 285),
        nbformat.v4.new_markdown_cell(
            "## Exercise: try [it](https://valkey.io/x) (about 4 minutes)"),
        printed, drawn, widget, predict,
    ])
    path = tmp_path / "99_t.ipynb"
    nbformat.write(notebook, path)
    part = minutes.cells(path)
    assert minutes.prose_words(part) == 6 + 285 + 7 + 4
    assert minutes.output_words(part) == 10
    assert minutes.figures(part) == 2
    assert minutes.count(part) == pytest.approx(
        (302 + 10) / minutes.WORDS_PER_MINUTE + 3 * 0.5 + 2 * 0.5 + 3 + 2 + 1 + 4)
    assert minutes.WORDS_PER_MINUTE == 110
    assert minutes.stated(path) == 20  # 15.3 minutes, rounded up to a multiple of 5
    # A part runs from its heading up to the next one asked for, that one left out.
    assert minutes.count(minutes.cells(path, "## Exercise", "## Predict")) == pytest.approx(
        (7 + 10) / minutes.WORDS_PER_MINUTE + 3 * 0.5 + 0.5 + 3 + 2 + 4)
    with pytest.raises(minutes.NoSuchPart, match="no markdown cell opening with '## Nowhere'"):
        minutes.cells(path, "## Nowhere")


def test_the_names_table_in_00_names_only_what_the_modules_source_has():
    table = markdown_section("00_start_here", "### The dive's names beside the course's")
    c_cells = [line.split("|")[2] for line in table.splitlines() if line.startswith("| `")]
    names = {name for cell in c_cells for span in re.findall(r"`([^`]+)`", cell)
             for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", span)}
    source = MODULE_SOURCE.read_text()
    # 00 keeps only the names the core path (01-04) uses, the fence's among them
    assert len(c_cells) >= 6
    assert {"load_epoch", "cached_run_id", "trafikey_exempt", "NEED_EPOCH",
            "caller_may_write"} <= names
    assert sorted(name for name in names if name not in source) == []


@pytest.mark.parametrize("name", MINE)
def test_each_notebook_has_an_exercise_a_library_checker_judges(name):
    cells = load(name).cells
    checked = [cell for cell in cells if cell.cell_type == "code"
               and re.search(r"from trafikey_lab\.course\.\w+ import [^\n]*\bcheck_", cell.source)]
    assert checked, f"{name} has no exercise cell"
    verdicts = [str(o.get("data", {}).get("text/plain", "")) for o in checked[0].outputs]
    assert any(v.startswith(("RIGHT: ", "NOT YET: ")) for v in verdicts)
    after = cells[cells.index(checked[0]) + 1:]
    assert any(c.cell_type == "markdown" and "<details><summary>" in c.source for c in after)


@pytest.mark.parametrize("name", MINE)
def test_each_notebook_ends_with_references_to_the_valkey_pages_it_stands_on(name):
    references = markdown_section(name, "## References")
    assert "https://valkey.io/" in references
    assert not re.search(r"\]\((?!https://)", references), "link to public pages only"


def stored_images(name: str) -> list[dict]:
    """Every stored output with a PNG: in the cells, and in the saved state of Output widgets."""
    nb = load(name)
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    for widget in state.get("state", {}).values():
        outputs += widget.get("state", {}).get("outputs", [])
    return [o for o in outputs if "image/png" in o.get("data", {})]


@pytest.mark.parametrize("name", MINE)
def test_every_stored_figure_says_what_it_shows_in_its_text_and_its_alt(name):
    for output in stored_images(name):
        text = output["data"].get("text/plain", "")
        text = "".join(text) if isinstance(text, list) else text
        assert text, f"{name}: a figure stored with no text"
        assert not text.startswith("<Figure"), f"{name}: a figure stored as {text!r}"
        img = "".join(output["data"].get("text/html", ""))
        assert re.search(r'<img [^>]*alt="[^"]{20,}"', img), f"{name}: a figure without alt text"


# -- the registry and each notebook's one face -----------------------------------------------

import ast  # noqa: E402
import importlib  # noqa: E402

from trafikey_lab.course import registry  # noqa: E402

SETUP = "trafikey_lab.course"


def test_the_registry_lists_every_notebook_in_course_order_and_nothing_else():
    assert [entry.stem for entry in registry.NOTEBOOKS] == list(MINE)
    assert [entry.number for entry in registry.NOTEBOOKS] == [stem[:2] for stem in MINE]


@pytest.mark.parametrize("entry", registry.NOTEBOOKS, ids=lambda entry: entry.stem)
def test_each_notebooks_title_and_minutes_are_its_registry_entrys(entry):
    assert load(entry.stem).cells[0].source.splitlines()[0] == f"# {entry.title}"
    assert stated_minutes(entry.stem) == entry.minutes


def lab_imports(source: str) -> list[tuple[str, str | None, str]]:
    """(module, name or None for the module itself, the name it is bound to) for each import of
    trafikey_lab in a cell."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(a.name, None, a.asname or a.name) for a in node.names
                      if a.name.split(".")[0] == "trafikey_lab"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == \
                "trafikey_lab":
            found += [(node.module, a.name, a.asname or a.name) for a in node.names]
    return found


def face_problems(entry, sources: list[str]) -> list[str]:
    """What a notebook's cells import from the lab beyond the setup module and its own module's
    public face (`__all__`), attributes of that module used through its name included."""
    face = importlib.import_module(entry.module)
    public = set(face.__all__)
    own = entry.module.rsplit(".", 1)
    problems, aliases = [], set()
    for source in sources:
        for module, name, bound in lab_imports(source):
            if module == SETUP and name is None:
                continue
            if module == own[0] and name == own[1]:
                aliases.add(bound)
            elif module != entry.module:
                problems.append(f"imports {name or module} from {module}")
            elif name not in public:
                problems.append(f"imports {name}, which {entry.module}.__all__ does not name")
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and node.attr not in public:
                problems.append(f"uses {node.value.id}.{node.attr}, which "
                                f"{entry.module}.__all__ does not name")
    return problems


@pytest.mark.parametrize("entry", registry.NOTEBOOKS, ids=lambda entry: entry.stem)
def test_each_notebook_imports_from_the_lab_only_the_setup_and_its_own_modules_face(entry):
    sources = [cell.source for cell in load(entry.stem).cells if cell.cell_type == "code"]
    assert face_problems(entry, sources) == []


def test_the_face_check_refuses_another_module_a_name_off_the_face_and_an_attribute_off_it():
    entry = registry.notebook("03")
    assert face_problems(entry, [
        "from trafikey_lab.sweep import decide_member",
        "from trafikey_lab.course.one_reader import _row_bytes",
        "from trafikey_lab.course import one_reader\none_reader.KINDS",
        "import trafikey_lab.doctor",
    ]) == [
        "imports decide_member from trafikey_lab.sweep",
        "imports _row_bytes, which trafikey_lab.course.one_reader.__all__ does not name",
        "imports trafikey_lab.doctor from trafikey_lab.doctor",
        "uses one_reader.KINDS, which trafikey_lab.course.one_reader.__all__ does not name",
    ]
    assert face_problems(entry, ["from trafikey_lab.course.one_reader import lay_out"]) == []


@pytest.mark.parametrize("entry", registry.NOTEBOOKS, ids=lambda entry: entry.stem)
def test_every_name_a_notebooks_face_promises_is_there(entry):
    face = importlib.import_module(entry.module)
    assert [name for name in face.__all__ if not hasattr(face, name)] == []


def code_names(nb: nbformat.NotebookNode) -> set[str]:
    """Every identifier a notebook's code cells use: names, attribute names, imported names."""
    found = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Name):
                found.add(node.id)
            elif isinstance(node, ast.Attribute):
                found.add(node.attr)
            elif isinstance(node, ast.alias):
                found.add(node.name)
    return found


@pytest.mark.parametrize("entry", registry.NOTEBOOKS, ids=lambda entry: entry.stem)
def test_every_name_a_notebooks_face_promises_its_notebook_or_the_app_uses(entry):
    # A name left on a face once no notebook uses it is dead code that looks alive.
    app = nbformat.read(NOTEBOOKS.parent / "app" / "projector.ipynb", as_version=4)
    used = code_names(load(entry.stem)) | code_names(app)
    face = importlib.import_module(entry.module)
    assert [name for name in face.__all__ if name not in used] == []


def test_the_readmes_course_table_has_one_row_per_registered_notebook_in_order():
    readme = (NOTEBOOKS.parent / "README.md").read_text()
    table = readme.split("\n## The course\n", 1)[1].strip().split("\n\n", 1)[0]
    rows = re.findall(r"^\| `(\d\d_\w+)` \| (\d+) \|", table, re.MULTILINE)
    assert rows == [(entry.stem, str(entry.minutes)) for entry in registry.NOTEBOOKS]


# -- the floors: widgets and plots stand on the core, course/ only reaches widgets in a face --

PACKAGE = NOTEBOOKS.parent / "trafikey_lab"


def imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return found


def reaching(folder: str, into: str) -> dict[str, list[str]]:
    """Each module of `folder` that imports from `into`, with what it imports from there."""
    prefix = f"trafikey_lab.{into}"
    found = {}
    for path in sorted((PACKAGE / folder).glob("*.py")):
        hits = sorted(m for m in imported_modules(path)
                      if m == prefix or m.startswith(prefix + "."))
        if hits:
            found[path.stem] = hits
    return found


def test_no_widget_and_no_plot_imports_anything_of_the_course():
    assert reaching("widgets", "course") == {}
    assert reaching("plots", "course") == {}
    assert reaching("plots", "widgets") == {}


def test_in_the_course_only_a_notebooks_own_module_imports_a_widget():
    faces = {entry.module.rsplit(".", 1)[1] for entry in registry.NOTEBOOKS}
    assert set(reaching("course", "widgets")) <= faces


def test_the_pure_modules_the_course_added_import_no_floor_above_the_core():
    for name in ("questions", "readings", "traces"):
        modules = imported_modules(PACKAGE / f"{name}.py")
        above = sorted(m for m in modules if m.startswith(("trafikey_lab.course",
                                                            "trafikey_lab.widgets",
                                                            "trafikey_lab.plots", "ipywidgets",
                                                            "matplotlib")))
        assert above == [], name


def test_the_projector_app_shows_widgets_only_from_the_faces_of_registered_notebooks():
    app = nbformat.read(NOTEBOOKS.parent / "app" / "projector.ipynb", as_version=4)
    faces = {entry.module: importlib.import_module(entry.module) for entry in registry.NOTEBOOKS}
    imports = [found for cell in app.cells if cell.cell_type == "code"
               for found in lab_imports(cell.source) if found[0] != SETUP]
    assert len(imports) == 3
    assert [(module, name) for module, name, _ in imports
            if module not in faces or name not in faces[module].__all__] == []
