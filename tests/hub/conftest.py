"""The JupyterHub set-up's tests: its modules live in hub/ and tools/, which are not packages."""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for folder in (REPO / "hub", REPO / "tools"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
