"""The course in a browser page that runs its Python with no server, no C module, no redis and
no matplotlib (the book, in Pyodide): the faces of 00 to 05 import there (04's explorable lease
and history player, 02's question, 05's recordings), setup says in one
line that the page runs the model only, a live step refuses in one line, the run_id checker
answers on the model and says the C module is not there, and 05's recordings read there while
its RQ play refuses."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import trafikey_lab.course as course
from trafikey_lab import epoch
from trafikey_lab.module import native
from trafikey_lab.readings import read_value
from trafikey_lab.widgets.explorable_lease import ExplorableLease
from trafikey_lab.widgets.run_id_checker import RunIdChecker

HEAVY = """
heavy = ("redis", "matplotlib", "numpy")
print(sorted(name for name in sys.modules if name.split(".")[0] in heavy))
"""
IMPORT_FACES = """
import sys
import trafikey_lab.course
from trafikey_lab.course.start_here import check_sweep_prediction
from trafikey_lab.course.one_value_per_process import RunIdChecker, check_shape_check
""" + HEAVY
# What the model-side widgets of 01 to 04 do in the page, each built as its cell builds it
# and moved once: the explorable lease, the history player, 02's diagnostic question.
MODEL_SIDE_WIDGETS = """
import sys
from trafikey_lab.course import one_lease_across_a_restart as f04
from trafikey_lab.course import one_value_per_process as f01, three_writers as f02
from trafikey_lab.course import one_reader as f03
lease = f04.ExplorableLease()
lease.fields["sweep_at_ms"].value = 990
player = f04.LeaseAcrossRestart()
player.history.value = "extended"
f02.stamp_question().choose("A")
""" + HEAVY


def run_fresh(code: str) -> subprocess.CompletedProcess:
    # a fresh interpreter: this one has imported redis and matplotlib for other tests
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


def test_the_faces_of_00_and_01_import_with_no_redis_matplotlib_or_numpy():
    run = run_fresh(IMPORT_FACES)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", f"imported: {run.stdout}"


def test_the_model_side_widgets_of_01_to_04_build_and_move_with_no_redis_matplotlib_or_numpy():
    run = run_fresh("from trafikey_lab.module import native\nnative.in_page = lambda: True\n"
                    + MODEL_SIDE_WIDGETS)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", f"imported: {run.stdout}"


COURSE = Path(course.__file__).parent

def _imports_inside_functions(path: Path) -> set[tuple[str, str, str]]:
    found = set()
    for function in ast.walk(ast.parse(path.read_text())):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom):
                    found.add((path.name, function.name, node.module or "."))
                elif isinstance(node, ast.Import):
                    found.update((path.name, function.name, alias.name) for alias in node.names)
    return found


def test_no_course_module_imports_inside_a_function_to_stay_importable_in_the_page():
    # The live package loads redis only when a name of it is asked for, and the plots load
    # matplotlib when they draw: a course module imports at its top, where a reader looks.
    found = set().union(*(_imports_inside_functions(path) for path in COURSE.glob("*.py")))
    assert found == set()


def test_the_live_package_loads_redis_only_when_one_of_its_names_is_asked_for():
    run = run_fresh("import sys\nfrom trafikey_lab import live as servers\n"
                    "print('redis' in sys.modules)\nservers.LiveExecutor\n"
                    "print('redis' in sys.modules)\n")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "True"]


def test_every_name_the_live_package_offers_is_its_modules_own():
    from trafikey_lab import live as servers
    from trafikey_lab.live.executor import LiveExecutor

    assert servers.LiveExecutor is LiveExecutor  # the class itself, not a stand-in for it
    assert [name for name in servers.__all__ if not hasattr(servers, name)] == []


def test_a_static_timeline_still_loads_matplotlib_when_drawn():
    # the lazy imports load it where a stored figure is drawn, outside the page as before
    run = run_fresh("import sys\nfrom trafikey_lab.plots.timeline import draw_timeline\n"
                    "from trafikey_lab.player import play\n"
                    "from trafikey_lab.executors import ModelExecutor, Queue\n"
                    "draw_timeline(play('stalled', 1, ModelExecutor(), Queue('{t}')))\n" + HEAVY)
    assert run.returncode == 0, run.stderr
    assert "matplotlib" in run.stdout


@pytest.fixture
def in_page(monkeypatch):
    monkeypatch.setattr(native, "in_page", lambda: True)


def test_setup_in_a_page_says_so_in_one_line_and_a_live_step_refuses_in_one(in_page, capsys):
    c = course.setup()
    assert capsys.readouterr().out.strip() == course.IN_PAGE
    with pytest.raises(course.NoServerHere, match="not in this page: the page runs the model"):
        c.live.claim(c.queue, 1000)
    model = c.model()
    model.add(c.queue, b"1")
    assert model.claim(c.queue, 1000)[0] == b"1"


def test_a_reading_in_a_page_has_the_models_checks_and_no_c_answers(in_page):
    r = read_value(epoch.NOW[:39])
    assert (r.valid, r.exempt) == (False, True)
    assert r.native_absent
    assert r.native_valid is None


def test_the_run_id_checker_in_a_page_says_the_c_module_is_not_there(in_page):
    checker = RunIdChecker()
    checker.typed.value = "3F2C0D8E9B1A4C5D6E7F8091A2B3C4D5E6F70812"
    assert checker.shape.value.startswith("valid_run_id → false")
    assert checker.native.value.startswith("the C module is not in this page")


def test_outside_a_page_the_c_module_answers_as_before():
    assert not native.in_page()
    assert read_value(epoch.NOW).native_agrees
    assert not read_value(epoch.NOW).native_absent


def test_an_attempt_in_a_page_runs_in_the_pages_own_thread_since_it_has_no_other(in_page):
    import threading

    from trafikey_lab.course import attempts

    seen = []
    outcome = attempts.run(lambda: seen.append(threading.current_thread()) or 7)
    assert isinstance(outcome, attempts.Returned)
    assert outcome.value == 7
    assert seen == [threading.main_thread()]


def test_05s_recordings_read_in_a_page_with_no_redis_and_rq_refuses_before_loading_it():
    run = run_fresh("import sys\nfrom trafikey_lab.module import native\n"
                    "native.in_page = lambda: True\nimport trafikey_lab.course as tc\n"
                    "from trafikey_lab.course import beyond_one_server as f05\n"
                    "print(len(f05.other_queues().rows), f05.bullmq_backoff().lines[0][:6])\n"
                    "try:\n    f05.play_rq()\nexcept tc.NoServerHere as refusal:\n"
                    "    print(refusal)\n" + HEAVY)
    assert run.returncode == 0, run.stderr
    table, refusal, heavy = run.stdout.strip().splitlines()
    assert table == "5 BullMQ"
    assert refusal.startswith("RQ's play, on servers of its own, is not in this page")
    assert heavy == "[]"


def test_a_live_run_in_a_page_stops_in_one_line_on_the_widget(in_page):
    c = course.setup()
    lease = ExplorableLease(live=c.live, queue=c.queue)
    lease.run_live.click()
    assert lease.status.value.startswith(
        "the live run stopped: the live server is not in this page: the page runs the model")
    assert not lease.run_live.disabled


def test_a_live_part_of_05_in_a_page_refuses_before_it_loads_redis():
    # redis does not import in the page (its Pyodide has no ssl): the refusal must come first
    run = run_fresh("import sys\nfrom trafikey_lab.module import native\n"
                    "native.in_page = lambda: True\nimport trafikey_lab.course as tc\n"
                    "from trafikey_lab.course import beyond_one_server as f05\nc = tc.setup()\n"
                    "try:\n    f05.replica_copy(c.server, c.queue)\n"
                    "except tc.NoServerHere as refusal:\n    print(refusal)\n" + HEAVY)
    assert run.returncode == 0, run.stderr
    *_, refusal, heavy = run.stdout.strip().splitlines()
    assert refusal.startswith("the live server is not in this page")
    assert heavy == "[]"


def test_the_preflight_check_in_a_page_refuses_in_one_line(in_page):
    from trafikey_lab.course.start_here import preflight

    with pytest.raises(course.NoServerHere):
        preflight()


def test_05s_parts_that_start_servers_of_their_own_refuse_in_one_line_in_a_page(in_page):
    from trafikey_lab.course import beyond_one_server as f05

    for step in (lambda: f05.aof_claim(f05.PROMOTE_QUEUE),
                 f05.play_rq,
                 lambda: f05.check_promotion(lambda primary, replica: None)):
        with pytest.raises(course.NoServerHere, match=r"of its own.* is not in this page"):
            step()


# 01's and 03's checkers in a page: no C module was built there, so the library cannot open.
CHECKERS_WITHOUT_THE_C = """
from pathlib import Path
from trafikey_lab.module import build, native
native.in_page = lambda: True
build.module_path = lambda: Path("/nowhere/trafikey.so")
from trafikey_lab.course.one_reader import THIS_PROCESS, check_stops
from trafikey_lab.course.one_value_per_process import check_shape_check
shape = check_shape_check(lambda v: len(v) == 40 and all(c in b"0123456789abcdef" for c in v))
short = check_shape_check(lambda v: len(v) == 40)
rows = {"type": None, "group": {"state": "active", "group": "lane-a"},
        "lease_epoch": {"state": "active"},
        "stalled": {"state": "active", "lease_epoch": THIS_PROCESS}}
stops = check_stops(rows)
print(shape.right, short.right, stops.right)
print(shape.text)
print(stops.text)
"""


def test_01s_and_03s_checkers_answer_in_a_page_from_the_model_and_say_so():
    run = run_fresh(CHECKERS_WITHOUT_THE_C)
    assert run.returncode == 0, run.stderr
    verdicts, *text = run.stdout.splitlines()
    assert verdicts == "True False True"
    text = "\n".join(text)
    assert "held to the model's shape check (epoch.valid_run_id): the C module is not in" in text
    assert "decided by the model alone: the C module is not in this page" in text
