"""Every course notebook, cleared and run in JupyterLab in a real browser, shows no error."""

import pytest
from lab_pages.notebook import COURSE


@pytest.mark.parametrize("name", COURSE)
def test_the_notebook_runs_in_the_browser_without_a_traceback_stderr_or_broken_widget(
        notebooks, name):
    run = notebooks.run(name)
    counts = run.state()["counts"]
    # Cleared, then run all: each code cell ran once, in order.
    assert counts == list(range(1, len(counts) + 1))
    assert run.problems() == []
