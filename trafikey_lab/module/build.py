"""Where the native module is, and what to do when it is not there."""

import re
from pathlib import Path

from trafikey_lab.errors import ModuleNotBuilt

MODULE_DIR = Path(__file__).resolve().parent
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


def c_excerpt(function: str, start: str | None = None, through: str | None = None) -> str:
    """Lines of the module's C source, as it ships, for a notebook to show the code that runs.

    The whole definition of `function` (named as in the C: "claim_command"), from its
    signature through its closing brace. With `start`, from the first line of the function
    that contains it, together with the comment right above that line; with `through`, up to
    the next line that contains it. Both are searched in code only, never in comments, so
    rewording a comment in the C cannot move or break an excerpt.
    """
    lines = (MODULE_DIR / "trafikey.c").read_text().splitlines()
    code = [_code(line) for line in lines]
    signature = re.compile(rf"^[A-Za-z_].*\b{re.escape(function)}\(")
    try:
        first = next(i for i, line in enumerate(lines)
                     if signature.match(line) and not line.rstrip().endswith(";"))
    except StopIteration:
        raise ValueError(f"trafikey.c defines no function {function!r}: name one as the C "
                         "spells it, such as 'claim_command'") from None
    last = next(i for i in range(first, len(lines)) if lines[i] == "}")
    begin, end = first, last
    if start is not None:
        begin = _find(code, begin, last, start, function)
        while begin > first and lines[begin - 1].lstrip().startswith(("/*", "*")):
            begin -= 1
    if through is not None:
        end = _find(code, max(begin, first), last, through, function)
    return "\n".join(lines[begin:end + 1])


def _code(line: str) -> str:
    """A line with its comments blanked out, so that anchors match code alone."""
    if line.lstrip().startswith(("/*", "*", "//")):
        return ""
    return re.sub(r"/\*.*?\*/|//.*$", "", line)


def _find(code: list[str], start: int, stop: int, fragment: str, function: str) -> int:
    for index in range(start, stop + 1):
        if fragment in code[index]:
            return index
    raise ValueError(f"no code line of {function} in trafikey.c contains {fragment!r} "
                     "(comments are not searched: anchor on a line of code)")
