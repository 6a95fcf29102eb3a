"""The library, the tools and the hub set-up read as the house style asks: ruff's pyflakes,
pycodestyle and import-sorting rules find nothing in them, and mypy finds no type error in the
library and the tools; both are configured in pyproject.toml."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing_in_the_library_the_tools_and_the_hub():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "trafikey_lab", "tools", "hub"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_no_type_error_in_the_library_and_the_tools():
    # The files it checks are pyproject.toml's [tool.mypy] files: trafikey_lab and tools.
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
