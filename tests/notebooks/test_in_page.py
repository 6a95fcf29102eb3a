"""The course in a browser page that runs its Python with no server, no C module, no redis and
no matplotlib (the book, in Pyodide): the faces of 00 and 01 import there, setup says in one
line that the page runs the model only, a live step refuses in one line, and the run_id checker
answers on the model and says the C module is not there."""

import subprocess
import sys

import pytest

import trafikey_lab.course as course
from trafikey_lab import epoch
from trafikey_lab.module import native
from trafikey_lab.readings import read_value
from trafikey_lab.widgets.run_id_checker import RunIdChecker

IMPORT_FACES = """
import sys
import trafikey_lab.course
from trafikey_lab.course.start_here import check_sweep_prediction
from trafikey_lab.course.one_value_per_process import RunIdChecker, check_shape_check
heavy = ("redis", "matplotlib", "numpy")
print(sorted(name for name in sys.modules if name.split(".")[0] in heavy))
"""


def test_the_faces_of_00_and_01_import_with_no_redis_matplotlib_or_numpy():
    run = subprocess.run([sys.executable, "-c", IMPORT_FACES], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", f"imported: {run.stdout}"


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
