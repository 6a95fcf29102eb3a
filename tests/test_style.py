"""The library, the tools and the hub set-up read as the house style asks: ruff's pyflakes, pycodestyle and
import-sorting rules, configured in pyproject.toml, find nothing."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing_in_the_library_the_tools_and_the_hub():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "trafikey_lab", "tools"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
