"""The Lua scripts: the queue's transitions without the module (add, claim2, extend2) and the
fair scripted sweeps (stalled2, stalled2_info). Every script runs after the shared rules of
common.lua; this is the one place that reads them, so a script is sent as the lab tests it."""

from functools import cache
from importlib import resources


@cache
def text(name: str) -> str:
    """A .lua file's own text, `name` without the suffix: `text("common")` is the shared rules."""
    path = resources.files(__name__).joinpath(f"{name}.lua")
    if not path.is_file():
        raise ValueError(f"no script named {name!r} in trafikey_lab/scripts")
    return path.read_text()


def source(name: str) -> str:
    """What is sent to the server for a script: the shared rules, then the script's body."""
    return text("common") + text(name)
