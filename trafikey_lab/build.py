"""Where the native module is, and what to do when it is not there."""

from pathlib import Path

from .errors import ModuleNotBuilt

MODULE_DIR = Path(__file__).resolve().parent / "module"
LIBRARY = MODULE_DIR / "trafikey.so"


def module_path() -> Path:
    """The built module's absolute path; installing the package builds it."""
    if not LIBRARY.is_file():
        raise ModuleNotBuilt(
            f"the trafikey module is not built: {LIBRARY} does not exist. "
            "Build it by installing the package from the repository root: "
            "`make lab` or `pip install -e .` (this needs a C compiler such as gcc)."
        )
    return LIBRARY
