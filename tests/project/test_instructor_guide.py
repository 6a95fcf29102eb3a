"""docs/instructor-guide.md stays true to the course: its plan to the notebooks' own minutes,
its commands to the Makefile, its troubleshooting table to the doctor's checks."""

import re
from pathlib import Path

import pytest

from trafikey_lab.course import minutes
from trafikey_lab.course.registry import NOTEBOOKS

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "instructor-guide.md"
# | session | start | minutes | part |: session "before", "after" or a number; start H:MM in a
# session, empty for "before", "after" and a session's total
PLAN_ROW = re.compile(r"^\| (before|after|\d+) \| (\d+:\d\d)? *\| "
                      r"(?:\*\*)?(\d+)(?:\*\*)? \| (.*?) \|")
SESSION_MINUTES = 90
# a notebook split between sessions: "`04_...`, up to *<heading>*", then "`04_...`, from *...*"
UP_TO = re.compile(r", up to \*([^*]+)\*")


def plan() -> list[tuple[str, str | None, int, str]]:
    """The plan table's rows: session, start ("H:MM", or None), minutes, part."""
    section = GUIDE.read_text().split("## The plan", 1)[1].split("\n## ", 1)[0]
    return [(m.group(1), m.group(2), int(m.group(3)), m.group(4)) for line in section.splitlines()
            if (m := PLAN_ROW.match(line))]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda entry: entry.stem)
def test_the_plan_gives_each_notebook_the_minutes_the_registry_states(notebook):
    """The registry's minutes are the notebook's header's (tests/notebooks/test_notebooks.py holds
    the two together); a notebook split between sessions has them in its rows' sum."""
    rows = [minutes for _, _, minutes, part in plan() if f"`{notebook.stem}`" in part]
    assert sum(rows) == notebook.minutes, (
        f"the guide's plan gives {notebook.stem} {rows} minutes; the course registry and its "
        f"header state {notebook.minutes}. Change one so they agree.")


def test_a_notebook_split_between_sessions_gives_its_first_part_the_minutes_counted_for_it():
    split = [(part, given) for _, _, given, part in plan() if UP_TO.search(part)]
    assert split, "the plan splits no notebook; drop this test if that is meant"
    for part, given in split:
        stem = re.search(r"`(\d\d_\w+)`", part).group(1)
        heading = UP_TO.search(part).group(1)
        counted = minutes.stated(REPO / "notebooks" / f"{stem}.ipynb", stop=f"## {heading}")
        assert given == counted, (
            f"the plan gives {stem} up to '{heading}' {given} minutes; its count is {counted}")


def test_the_plan_covers_every_notebook_in_course_order_and_nothing_else_named_like_one():
    named = re.findall(r"`(\d\d_\w+)`", "".join(part for *_, part in plan()))
    once = [stem for index, stem in enumerate(named) if index == 0 or named[index - 1] != stem]
    assert once == [notebook.stem for notebook in NOTEBOOKS]


def test_each_session_runs_without_gaps_to_its_total_of_90_minutes():
    sessions = sorted({session for session, *_ in plan() if session.isdigit()})
    assert sessions == ["1", "2", "3"]
    for session in sessions:
        *parts, (_, total_start, total, _) = [row for row in plan() if row[0] == session]
        assert total_start is None
        assert total == SESSION_MINUTES
        clock = 0
        for _, start, minutes_given, part in parts:
            hours, mins = map(int, start.split(":"))
            assert hours * 60 + mins == clock, f"{part} starts at {start}, not at minute {clock}"
            clock += minutes_given
        assert clock == total


def test_only_notebook_00_comes_before_and_only_06_and_07_after():
    before = [part for session, _, _, part in plan() if session == "before"]
    after = [part for session, _, _, part in plan() if session == "after"]
    assert before == ["`00_start_here`"]
    assert after == ["`06_why_natively`", "`07_in_production`"]


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
