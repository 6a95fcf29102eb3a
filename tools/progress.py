"""How the scripts of the make targets (tools/ and hub/) say what they are doing: one line an
event, named after the script's target ("lock: ..."), printed at once rather than buffered, so
that a long target shows where it is while it runs. Standard library only: hub/workshop.py
imports it under Debian's own Python, before any environment of the lab exists.

    say = functools.partial(progress.say, "lock")
"""

import time
from collections.abc import Iterator
from contextlib import contextmanager


def say(name: str, message: str) -> None:
    print(f"{name}: {message}", flush=True)


@contextmanager
def step(name: str, what: str) -> Iterator[None]:
    """Says `what` is starting, then, once the block is through, how long it took."""
    say(name, f"{what} ...")
    began = time.monotonic()
    yield
    say(name, f"{what}: done in {time.monotonic() - began:.0f} s")
