"""Every course notebook, cleared and run in JupyterLab in a real browser: it shows no error, and
axe-core over its outputs finds no violation of the course's own (figures, tables, text,
widgets), and none elsewhere but the ones JupyterLab's own markup is listed for in axe.py. (The
projector app's are checked in test_projector_app.py.) Both checks are in this one file so that
pytest-xdist's --dist loadfile gives them one worker, and each notebook is run once."""

import pytest
from lab_pages.notebook import COURSE

from .axe import violations

OUTPUTS = ".jp-OutputArea-output"


@pytest.mark.parametrize("name", COURSE)
def test_the_notebook_runs_in_the_browser_without_a_traceback_stderr_or_broken_widget(
        notebooks, name):
    run = notebooks.run(name)
    counts = run.state()["counts"]
    # Cleared, then run all: each code cell ran once, in order.
    assert counts == list(range(1, len(counts) + 1))
    assert run.problems() == []


@pytest.mark.parametrize("name", COURSE)
def test_the_notebook_as_run_has_no_accessibility_violation_of_the_courses(notebooks, name):
    run = notebooks.run(name)
    assert run.page.locator(OUTPUTS).count() > 0
    assert violations(run.page, OUTPUTS) == []


def test_an_image_without_alt_in_an_output_is_found(notebooks):
    """The check itself: an <img> with no alt put into a rendered output is a violation."""
    run = notebooks.run("00_start_here")
    run.page.evaluate("""() => {
        const img = document.createElement('img');
        img.src = 'data:,'; img.id = 'no-alt-probe';
        document.querySelector('.jp-OutputArea-output').appendChild(img);
    }""")
    try:
        found = violations(run.page, OUTPUTS)
        assert [v for v in found if v.startswith("image-alt: #no-alt-probe")]
    finally:
        run.page.evaluate("() => document.getElementById('no-alt-probe').remove()")
