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


def c_excerpt(first: str, through: str | None = None, after: str | None = None) -> str:
    """Lines of the module's C source, as it ships, for a notebook to show the code that runs.

    From the first line containing `first` (searching below the line containing `after`, if
    given) through the next line containing `through`, or the function's closing brace.
    """
    lines = (MODULE_DIR / "trafikey.c").read_text().splitlines()
    begin = 0 if after is None else _find(lines, 0, lambda line: after in line, after)
    start = _find(lines, begin, lambda line: first in line, first)
    end = _find(lines, start, (lambda line: line == "}") if through is None
                else (lambda line: through in line), through or "}")
    return "\n".join(lines[start:end + 1])


def _find(lines: list[str], start: int, match, what: str) -> int:
    for index in range(start, len(lines)):
        if match(lines[index]):
            return index
    raise ValueError(f"trafikey.c has no line with {what!r} (below line {start + 1})")
