"""tools/book.py for the tests (tools/ is not a package)."""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))

import book  # noqa: E402

__all__ = ["REPO", "book"]
