"""The sweep's decision for one expired member of active, as a step machine.

Three words, one for each thing, in the C, the model, the scripted peer, the widgets and the
notebooks alike:

    reading   how the sweep reads a lease's stamp: exempt (missing, or not byte for byte the
              sweeping process's run_id) or counted. epoch.exempt gives it; a Trace's
              `reading` is it.
    verdict   what the decision gives one member: ghost, lane, exempt, recovered or dead, or a
              refusal (wrongtype, not_integer). A counted lease's verdict is recovered or dead
              (COUNTING); VERDICT_* in trafikey.c, Verdict.kind here.
    outcome   what becomes of the job: recovered (back to pending, the first list of the
              reply: the exempt and the counted below the budget, RECOVERING) or dead (the
              second list). A ghost is dropped and a lane row left where it is: no outcome.

A lease whose deadline is still ahead of the sweep's now is not a member the sweep takes: no
reading ("not read", as a Trace and schedule.decide say) and the job stays in active
("untouched").

`decide_member` is pure: given what it has been shown of the member's row so far, it either
names the next read it needs or gives the verdict. It asks lazily, one field at a time, and
stops as soon as a verdict is possible: a ghost's verdict asks for one read (the type), a lane
row's for two, an exempt lease's for three, and only a counted lease's for `stalled`.

What a read costs differs by sweep. The dive's Rust sweep makes one server read for each field
the decision asks for. The C module's decide_row (trafikey.c) fetches group, lease_epoch and
stalled in one ValkeyModule_HashGet for every hash row, then shows the decision each field only
when it asks for it, so the decision never sees the stalled of a lane row or an exempt lease,
though the module fetched it. The model's decide_row answers each read from the stored row.
"""

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trafikey_lab import epoch


class Need(enum.Enum):
    TYPE = "type"
    GROUP = "group"
    EPOCH = "lease_epoch"
    STALLED = "stalled"


class Word(enum.StrEnum):
    """A word of the domain: equal to its string (so `kind == "dead"` holds), and printed as
    that string, repr included, so that a printed verdict or trace reads as it always has."""

    def __repr__(self) -> str:
        return repr(self.value)


class Reading(Word):
    """How the sweep reads a lease's stamp (epoch.exempt); NOT_READ for a lease not yet due."""

    EXEMPT = "exempt"
    COUNTED = "counted"
    NOT_READ = "not read"


class Kind(Word):
    """A member's verdict: VERDICT_* in trafikey.c."""

    GHOST = "ghost"
    LANE = "lane"
    EXEMPT = "exempt"
    RECOVERED = "recovered"
    DEAD = "dead"
    WRONGTYPE = "wrongtype"
    NOT_INTEGER = "not_integer"


class Outcome(Word):
    """What becomes of the job: the reply's list that names it, or neither."""

    RECOVERED = "recovered"
    DEAD = "dead"
    UNTOUCHED = "untouched"


class _NotRead(enum.Enum):
    # One member, so that a type checker narrows `is NOT_READ` as it does `is None`.
    NOT_READ = "NOT_READ"

    def __repr__(self) -> str:
        return "NOT_READ"


NOT_READ = _NotRead.NOT_READ
"""A field the decision has not asked for yet (None means it was read and is absent)."""


@dataclass(frozen=True)
class Seen:
    """What the decision has been shown of one row: the key's type, then fields, in the order
    it asked for them."""

    type: str | None = None
    group: bytes | _NotRead | None = NOT_READ
    epoch: bytes | _NotRead | None = NOT_READ
    stalled: bytes | _NotRead | None = NOT_READ


COUNTING = (Kind.RECOVERED, Kind.DEAD)
"""The verdicts of a counted lease: stalled + 1 is written either way."""

RECOVERING = (Kind.EXEMPT, Kind.RECOVERED)
"""The verdicts whose job goes back to pending: the first list of the sweep's reply."""


@dataclass(frozen=True)
class Verdict:
    """ghost, lane, exempt, recovered or dead; or a refusal: wrongtype, not_integer."""

    kind: Kind
    stalled: int | None = None

    @property
    def refusal(self) -> bool:
        return self.kind in (Kind.WRONGTYPE, Kind.NOT_INTEGER)


def decide_member(run_id: bytes, max_stalled: int, seen: Seen) -> Need | Verdict:
    if seen.type is None:
        return Need.TYPE
    if seen.type == "none":
        return Verdict(Kind.GHOST)
    if seen.type != "hash":
        return Verdict(Kind.WRONGTYPE)
    if seen.group is NOT_READ:
        return Need.GROUP
    if seen.group is not None:
        return Verdict(Kind.LANE)
    if seen.epoch is NOT_READ:
        return Need.EPOCH
    if epoch.exempt(seen.epoch, run_id):
        return Verdict(Kind.EXEMPT)
    if seen.stalled is NOT_READ:
        return Need.STALLED
    return count_stall(seen.stalled, max_stalled)


def count_stall(stalled: bytes | None, max_stalled: int) -> Verdict:
    """A counted lease: its row's stalled field plus one, and whether that spends the budget.
    The count reaching max_stalled is a death; a field that is not a counter refuses."""
    count = epoch.counter(stalled)
    if count is None:
        return Verdict(Kind.NOT_INTEGER)
    count += 1
    return Verdict(Kind.RECOVERED if count < max_stalled else Kind.DEAD, count)


StepMachine = Callable[[bytes, int, Seen], Need | Verdict]
"""A member's step machine: decide_member, or the C's (native.decide_member)."""


def decide(run_id: bytes, max_stalled: int, read: Callable[[Need], Any],
           step_machine: StepMachine | None = None) -> tuple[Verdict, list[Need]]:
    """Runs the step machine to its verdict; `read(need)` answers one read. The machine is
    decide_member unless another is given (native.decide_member, the C's, for instance).

    Returns the verdict and the reads it asked for, in order.
    """
    step_machine = step_machine or decide_member
    seen = Seen()
    asked = []
    while isinstance(step := step_machine(run_id, max_stalled, seen), Need):
        asked.append(step)
        field = "type" if step is Need.TYPE else step.name.lower()
        seen = Seen(**{**seen.__dict__, field: read(step)})
    return step, asked
