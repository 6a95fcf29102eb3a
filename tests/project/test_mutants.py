"""`make mutants`' catalogue kept with the code: every mutant's text is still in its file, once,
and the runner refuses an entry that is not. (Running the mutants is `make mutants`' job.)"""

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MUTANTS_DIR = ROOT / "tools" / "mutants"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"mutants_{name}", MUTANTS_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(MUTANTS_DIR))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(MUTANTS_DIR))
    return module


run = load("run")
catalogue = load("catalogue")


def test_every_mutants_text_occurs_exactly_once_in_its_file():
    assert run.catalogue_problems(ROOT, catalogue.MUTANTS) == []


def test_the_catalogue_holds_at_least_15_mutants_of_the_module_and_the_model():
    files = [m.file for m in catalogue.MUTANTS]
    assert len(catalogue.MUTANTS) >= 15
    assert files.count(catalogue.MODULE) >= 10
    assert sum(f != catalogue.MODULE for f in files) >= 5
    assert len({m.name for m in catalogue.MUTANTS}) == len(catalogue.MUTANTS)


def test_every_test_a_mutant_names_exists():
    for mutant in catalogue.MUTANTS:
        for test in mutant.tests:
            path, _, function = test.partition("::")
            source = (ROOT / path).read_text()
            assert not function or re.search(rf"^def {re.escape(function)}\(", source, re.M), (
                f"{mutant.name}: {test} does not exist")


@pytest.mark.parametrize(("text", "problem"), [
    ("return 1;", "does not occur"),
    ("int x;", "occurs 2 times"),
])
def test_a_mutant_whose_text_is_missing_or_not_unique_is_refused(tmp_path, text, problem):
    (tmp_path / "code.c").write_text("int x;\nint x;\nreturn 0;\n")
    mutant = catalogue.Mutant("a bug", "code.c", text, "return 2;", ("tests/live/test_verbs.py",))
    (found,) = run.catalogue_problems(tmp_path, [mutant])
    assert found.startswith(f"a bug: its text {problem} in code.c")


def test_a_mutant_that_changes_nothing_or_names_no_test_is_refused(tmp_path):
    (tmp_path / "code.c").write_text("return 0;\n")
    same = catalogue.Mutant("no change", "code.c", "return 0;", "return 0;", ("tests/x.py",))
    untested = catalogue.Mutant("no tests", "code.c", "return 0;", "return 1;", ())
    assert run.catalogue_problems(tmp_path, [same, untested]) == [
        "no change: its replacement is its own text",
        "no tests: it names no tests to catch it",
    ]
