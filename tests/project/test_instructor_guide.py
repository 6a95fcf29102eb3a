"""docs/instructor-guide.md stays true to the course: its plan to the notebooks' own minutes,
its commands to the Makefile, its troubleshooting table to the doctor's checks."""

import re
from pathlib import Path

import pytest

from trafikey_lab.course import minutes
from trafikey_lab.course.registry import NOTEBOOKS

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "instructor-guide.md"
# | slot | start | minutes | part |: the slot a number; start H:MM in a slot, empty for a
# slot's total
PLAN_ROW = re.compile(r"^\| (\d+) \| (\d+:\d\d)? *\| (?:\*\*)?(\d+)(?:\*\*)? \| (.*?) \|")
CORE_SLOT_MINUTES = 120
"""The dive, notebooks 00 to 04, in one workshop slot of two hours."""


def plan() -> list[tuple[str, str | None, int, str]]:
    """The plan table's rows: slot, start ("H:MM", or None), minutes, part."""
    section = GUIDE.read_text().split("## The plan", 1)[1].split("\n## ", 1)[0]
    return [(m.group(1), m.group(2), int(m.group(3)), m.group(4)) for line in section.splitlines()
            if (m := PLAN_ROW.match(line))]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda entry: entry.stem)
def test_the_plan_gives_each_notebook_the_minutes_the_registry_states(notebook):
    """The registry's minutes are the notebook's header's (tests/notebooks/test_notebooks.py holds
    the two together)."""
    rows = [minutes for _, start, minutes, part in plan()
            if start is not None and f"`{notebook.stem}`" in part]
    assert rows == [notebook.minutes], (
        f"the guide's plan gives {notebook.stem} {rows} minutes; the course registry and its "
        f"header state {notebook.minutes}. Change one so they agree.")


def test_the_plan_covers_every_notebook_in_course_order_and_nothing_else_named_like_one():
    named = re.findall(r"`(\d\d_\w+)`", "".join(part for *_, part in plan()))
    assert named == [notebook.stem for notebook in NOTEBOOKS]


def test_each_slot_runs_without_gaps_to_its_total():
    slots = sorted({slot for slot, *_ in plan()}, key=int)
    for slot in slots:
        *parts, (_, total_start, total, _) = [row for row in plan() if row[0] == slot]
        assert total_start is None
        clock = 0
        for _, start, minutes_given, part in parts:
            hours, mins = map(int, start.split(":"))
            assert hours * 60 + mins == clock, f"{part} starts at {start}, not at minute {clock}"
            clock += minutes_given
        assert clock == total


def test_the_dive_00_to_04_is_the_first_slot_of_two_hours_and_each_later_notebook_a_slot():
    first = [part for slot, start, _, part in plan() if slot == "1" and start is not None]
    core = [entry for entry in NOTEBOOKS if entry.number <= "04"]
    assert first == [f"`{entry.stem}`" for entry in core]
    assert sum(entry.minutes for entry in core) <= CORE_SLOT_MINUTES
    later = [part for slot, start, _, part in plan() if slot != "1" and start is not None]
    assert later == [f"`{entry.stem}`" for entry in NOTEBOOKS if entry.number > "04"]


def test_the_90_minute_slot_takes_out_an_exercise_that_brings_01_to_04_within_90():
    text = GUIDE.read_text()
    found = re.search(r"Notebooks 01 to 04 then need (\d+) minutes\.\s+Give (\d\d)'s exercise "
                      r"\((\d+) minutes\)", text)
    assert found, "the guide says how 01-04 fit a 90-minute slot with 00 done beforehand"
    need, number, exercise = int(found[1]), found[2], int(found[3])
    assert need == sum(entry.minutes for entry in NOTEBOOKS if "01" <= entry.number <= "04")
    stem = next(entry for entry in NOTEBOOKS if entry.number == number)
    assert exercise in minutes.exercise_minutes(minutes.cells(stem.path))
    assert need - exercise <= 90


def make_targets() -> set[str]:
    return set(re.findall(r"^([a-z][\w-]*):", (REPO / "Makefile").read_text(), re.MULTILINE))


def test_every_make_command_the_guide_gives_exists():
    named = set(re.findall(r"`make ([a-z][\w-]*)", GUIDE.read_text()))
    assert named, "the guide names no make command"
    assert named <= make_targets(), f"no such make target: {sorted(named - make_targets())}"


def test_the_troubleshooting_table_covers_every_check_the_doctor_makes():
    doctor = (REPO / "trafikey_lab" / "doctor.py").read_text()
    checks = set(re.findall(r'Check\("([^"]+)"', doctor))
    assert {"Python", "C compiler", "server binary", "one sweep"} <= checks
    table = GUIDE.read_text().split("## What goes wrong on learners' machines", 1)[1]
    first_column = "\n".join(line.split("|")[1] for line in table.splitlines()
                             if line.startswith("| "))
    missing = [name for name in sorted(checks) if f"`{name}`" not in first_column]
    assert not missing, f"the guide's troubleshooting table has no row for {missing}"


def anchors(markdown: Path) -> set[str]:
    """The anchors a code host gives a Markdown file's headings."""
    return {re.sub(r"[^\w\- ]", "", heading).strip().lower().replace(" ", "-")
            for heading in re.findall(r"^#+ (.+)$", markdown.read_text(), re.MULTILINE)}


def test_the_guides_links_lead_to_files_and_headings_that_exist():
    for target in re.findall(r"\]\(([^)\s]+)\)", GUIDE.read_text()):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (GUIDE.parent / path).resolve() if path else GUIDE
        assert linked.exists(), f"the guide links to {path}, which does not exist"
        if anchor:
            assert anchor in anchors(linked), f"{target}: no such heading in {linked.name}"
