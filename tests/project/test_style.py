"""The code reads as the house style asks, by the gates configured in pyproject.toml.

ruff's full selection (pycodestyle, pyflakes, import order, bugbear, pyupgrade, simplify, ruff's
own rules, comprehensions, pytest style, and a complexity limit) holds for every folder in HELD,
with nothing in them exempt.

mypy, which also checks the bodies of unannotated functions everywhere and holds the pure core
to strict's per-module flags, finds no type error in the library, the tools and the hub set-up."""

import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HELD = ["hub", "book/_ext", "tools", "trafikey_lab", "tests", "peers"]


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_ruff_selects_every_family_and_a_complexity_limit_of_at_most_ten():
    lint = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]
    assert set(lint["select"]) == {"E", "F", "W", "I", "B", "UP", "SIM", "RUF", "C4", "PT",
                                   "C90"}
    assert lint["mccabe"]["max-complexity"] <= 10


def test_ruff_finds_nothing_in_the_folders_held_to_every_rule():
    done = ruff(*HELD)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_no_type_error_in_the_library_the_tools_and_the_hub():
    # The files it checks are pyproject.toml's [tool.mypy] files.
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
