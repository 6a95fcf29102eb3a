"""The course's notebooks, in order: each one's number, file stem, title, stated minutes and
its own module, the one face the notebook imports from besides the setup call.

The book's table of contents (tools/book.py) is written from this list; tests hold the
README's course table, the instructor guide's plan and each notebook (its title, its minutes,
what it imports) to it, and the projector app to the faces of the notebooks it lists. Adding a
notebook is adding its entry (and the notebook, and its module).
"""

from dataclasses import dataclass
from pathlib import Path

NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"
"""Where the notebooks are, in a checkout of the repository."""


@dataclass(frozen=True)
class Notebook:
    number: str
    """Two digits: the notebook's place in the course."""
    stem: str
    """The file's name without .ipynb: the number, then the module's name."""
    title: str
    """The notebook's `# ` heading."""
    minutes: int
    """What its header states: "**Time:** about N minutes", the count of course/minutes.py."""

    @property
    def module(self) -> str:
        """The notebook's own module: `trafikey_lab.course.` and the stem after the number."""
        return f"trafikey_lab.course.{self.stem[3:]}"

    @property
    def file(self) -> str:
        return f"{self.stem}.ipynb"

    @property
    def path(self) -> Path:
        return NOTEBOOKS_DIR / self.file


NOTEBOOKS = (
    Notebook("00", "00_start_here",
             "00 · Start here: jobs, leases and the process that granted them", 20),
    Notebook("01", "01_one_value_per_process",
             "01 · One value per process: the run_id and the epoch", 20),
    Notebook("02", "02_three_writers", "02 · Three writers: the verbs that stamp a lease", 25),
    Notebook("03", "03_one_reader", "03 · One reader: the sweep and its lazy decision", 25),
    Notebook("04", "04_one_lease_across_a_restart", "04 · One lease across a restart", 30),
    Notebook("05", "05_beyond_one_server", "05 · Beyond one server", 50),
    Notebook("06", "06_why_natively",
             "06 · Why natively: the race a script can lose, and a sweep's server time, native "
             "and scripted", 30),
    Notebook("07", "07_in_production",
             "07 · In production: what the lease epoch asks of workers, operators and "
             "persistence", 55),
)


def notebook(stem_or_number: str) -> Notebook:
    """The entry for a stem ("03_one_reader") or a number ("03")."""
    for entry in NOTEBOOKS:
        if stem_or_number in (entry.stem, entry.number):
            return entry
    raise KeyError(f"no notebook {stem_or_number!r} in the course: its notebooks are "
                   f"{', '.join(entry.stem for entry in NOTEBOOKS)}")
