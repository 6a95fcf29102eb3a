"""Where the tests that drive a learner's kernel from outside find what they use: the kernel
driver is tools/kernels.py and the /proc readings tools/processes.py, since tools/sizing.py
uses them too and a tool does not import the tests. (This module only names them for the
tests written before the move: new ones import kernels and processes themselves.)"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from kernels import Kernel, Reply  # noqa: E402
from processes import (  # noqa: E402
    command_line,
    lab_processes,
    listening_sockets,
)
from processes import descriptors as open_descriptors  # noqa: E402

__all__ = ["ROOT", "Kernel", "Reply", "command_line", "lab_processes", "listening_sockets",
           "open_descriptors"]
