"""Notebook 03's library side: one expired member of each kind, and what the sweep did with it.

`lay_out` builds the same small dataset on any executor, through `call` alone, so the model's
plan and the live server's reply can be held side by side. `plan_table` turns the model's
read pass (`ModelServer.plan_sweep`) into rows a reader can follow: the reads each verdict
asked for, in order, where it stopped, and the writes it implies. `spoil` adds what makes the
whole sweep refuse.
"""

import contextlib
from dataclasses import dataclass

from trafikey_lab import epoch
from trafikey_lab.course.feedback import (
    EXERCISE_QUEUE,
    NOTE,
    RIGHT,
    WRONG,
    Feedback,
    Finding,
    feedback,
)
from trafikey_lab.errors import LabError, ReplyError
from trafikey_lab.executors import Executor, ModelExecutor, Queue
from trafikey_lab.model import decide_row
from trafikey_lab.module import native
from trafikey_lab.module.build import c_excerpt
from trafikey_lab.sweep import Need
from trafikey_lab.table import Table
from trafikey_lab.text import plain, short
from trafikey_lab.traces import describe_write

__all__ = ["REFUSALS", "THIS_PROCESS", "c_excerpt", "check_stops", "lay_out", "member_table",
           "plan_table", "queue_state", "spoil", "try_sweep"]

MAX_STALLED = 3
"""The budget the layout is built for: the dead member's stalled 2 becomes 3 and reaches it."""

KINDS = ("ghost", "lane", "exempt", "recovered", "dead")
"""The members of the layout, in deadline order (so in sweep order); each id names its verdict."""

REFUSALS = {
    "not_integer": "dead's stalled is 'two'",
    "wrongtype": "a sixth member's row is a string",
    "pending_wrongtype": "pending is a string",
}
"""The refusals `spoil` can add to the layout: two from the read pass (a member's row), one from
the declared keys' type check, made before the epoch is taken and before any member is read."""


@dataclass(frozen=True)
class Planted:
    """One member of the layout: its id, the verdict it is built to get, its row (None: no
    row at all) and its deadline in active."""

    id: bytes
    kind: str
    row: dict[bytes, bytes] | None
    deadline: int


def _foreign(run_id: bytes) -> bytes:
    """A stamp from another process: forty 0s, unless that happens to be the current run_id."""
    return epoch.NOW if run_id == epoch.ZERO else epoch.ZERO


def rows_for(run_id: bytes) -> dict[str, dict[bytes, bytes] | None]:
    """The rows of the layout, for a server whose current run_id is `run_id`."""
    mine = {b"state": b"active", b"attempts": b"1", b"lease_epoch": run_id}
    return {
        "ghost": None,
        "lane": {**mine, b"group": b"lane-a"},
        # stalled 2 would reach max_stalled 3 if it were counted; the stamp says it is not
        "exempt": {**mine, b"lease_epoch": _foreign(run_id), b"stalled": b"2"},
        "recovered": dict(mine),
        "dead": {**mine, b"attempts": b"3", b"stalled": b"2"},
    }


def plant_expired(executor: Executor, queue: Queue, rows: dict) -> list[Planted]:
    """Empties the queue and plants each row as an expired member of active, keyed by its
    member id: None for no row (a ghost), a dict for a hash, bytes for a string key.

    Deadlines are one millisecond apart from the executor's now, in the order given, and the
    call returns once the last has passed, so a sweep that follows sees them all expired and
    takes them in that order.
    """
    executor.clear(queue)
    base = executor.now_ms()
    planted = []
    for offset, (member, row) in enumerate(rows.items(), 1):
        member = member.encode() if isinstance(member, str) else member
        if isinstance(row, dict):
            fields = [part for item in row.items() for part in item]
            executor.call("HSET", queue.row_key(member), *fields)
        elif row is not None:
            executor.call("SET", queue.row_key(member), row)
        executor.call("ZADD", queue.active, base + offset, member)
        planted.append(Planted(member, member.decode(errors="replace"), row, base + offset))
    executor.wait_until(base + len(rows))
    return planted


def lay_out(executor: Executor, queue: Queue) -> list[Planted]:
    """One expired member of each kind, in the order of KINDS (see plant_expired)."""
    return plant_expired(executor, queue, rows_for(executor.run_id.encode()))


def spoil(executor: Executor, queue: Queue, how: str) -> None:
    """Adds one thing to a laid-out queue that makes the whole sweep refuse (see REFUSALS)."""
    if how == "not_integer":
        executor.call("HSET", queue.row_key(b"dead"), b"stalled", b"two")
    elif how == "wrongtype":
        executor.call("SET", queue.row_key(b"wrong"), b"a string")
        executor.call("ZADD", queue.active, executor.now_ms(), b"wrong")
    elif how == "pending_wrongtype":
        executor.call("SET", queue.pending, b"a string")
    else:
        raise ValueError(f"no refusal named {how!r}; choose one of {', '.join(REFUSALS)}")


def try_sweep(executor: Executor, queue: Queue, max_stalled: int = MAX_STALLED):
    """The sweep's reply, or the refusal's text when it refused."""
    try:
        return executor.sweep(queue, max_stalled)
    except ReplyError as refusal:
        return refusal.text


def plan_rows(plan) -> list[tuple[str, str, str, str, str]]:
    """The model's read pass, one row per member: (member, reads asked in order, where it
    stopped, verdict, the writes the verdict implies, member by member as the model makes them;
    the module gathers them by key). A refusal's writes read "none: the whole sweep refuses"."""
    rows = []
    for member in plan:
        verdict = member.verdict.kind
        if member.verdict.stalled is not None:
            verdict += f" (stalled {member.verdict.stalled})"
        if member.verdict.refusal:
            writes = "none: the whole sweep refuses"
        else:
            writes = "; ".join(describe_write(w) for w in member.writes) or "none"
        rows.append((
            plain(member.id),
            " → ".join(need.value for need in member.reads),
            member.reads[-1].value,
            verdict,
            writes,
        ))
    return rows


def plan_table(plan) -> Table:
    return Table(("member", "reads asked, in order", "stopped at", "verdict",
                  "writes the verdict implies"), tuple(plan_rows(plan)))


def queue_state(executor: Executor, queue: Queue) -> dict:
    """The queue's keys as comparable values: the current run_id reads "<this process>",
    another 40-character stamp its short form, and the clock readings in active and dead
    "<deadline>" and "<time of death>",
    so the model and a live server that swept the same layout compare equal."""
    current = executor.run_id.encode()
    state: dict[str, object] = {}
    for key, (kind, value) in executor.dataset(queue).items():
        name = plain(key)
        if kind == "zset":
            hidden = {queue.active: "<deadline>", queue.dead: "<time of death>"}.get(key)
            state[name] = [(plain(m), hidden or int(s)) for m, s in value]
        elif kind == "hash":
            state[name] = {
                plain(f): ("<this process>" if v == current
                           else short(v) if f == b"lease_epoch" else plain(v))
                for f, v in sorted(value.items())
            }
        else:
            state[name] = (kind, plain(value))
    return state


def member_table(executor: Executor, queue: Queue, members=KINDS) -> Table:
    """Where each member is now (active, pending, dead or nowhere) and its row, as
    `queue_state` shows it (the active scores are left out: they are clock readings)."""
    state = queue_state(executor, queue)
    rows = []
    for member in members:
        where = [name.rsplit(":", 1)[1] for name in (plain(k) for k in queue.keys)
                 if any(m == member for m, _ in state.get(name, []))]
        row = state.get(plain(queue.row_key(member)))
        if row is None:
            fields = "(no row)"
        elif isinstance(row, tuple):
            fields = f"({row[0]})"
        else:
            fields = ", ".join(f"{f}={v}" for f, v in row.items())
        rows.append((member, ", ".join(where) or "nowhere", fields))
    return Table(("member", "in", "row"), tuple(rows))


# -- 03: a row that stops the sweep's decision at each read -----------------------------------


class _ThisProcess:
    def __repr__(self) -> str:
        return "THIS_PROCESS"


THIS_PROCESS = _ThisProcess()
"""Stands for the run_id of the server that sweeps; the checker writes the real one."""

READS = tuple(need.value for need in Need)
"""type, group, lease_epoch, stalled: the reads in the order the decision asks for them."""

STOP_MAX_STALLED = 3


def _row_bytes(row, run_id: bytes):
    """A learner's row as the executors store it: None (no key), bytes (a string key) or a
    hash of bytes; THIS_PROCESS becomes run_id. Raises ValueError saying what is wrong."""
    if row is None:
        return None
    if isinstance(row, (bytes, str)):
        return row.encode() if isinstance(row, str) else row

    def b(value):
        if value is THIS_PROCESS:
            return run_id
        if isinstance(value, bytes):
            return value
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return str(value).encode()
        raise ValueError(f"{value!r} cannot be stored in a hash: use text, bytes or an integer")

    if not isinstance(row, dict):
        raise ValueError(f"{row!r} is not a row: give None (no row), a dict (a hash) or text "
                         "(a string key)")
    if not row:
        raise ValueError("a hash with no fields cannot exist in Valkey: give it at least one "
                         "field (state, say)")
    return {b(k): b(v) for k, v in row.items()}


# Where to look, as a hint: the branches of the step machine after each read, never which row
# to write or what it must hold, so that the feedback on a wrong row does not hand over the
# right one (the notebook's list of refusals would turn "the case that does not refuse" into
# a recipe).
_STOP_ADVICE = {
    "type": ("Only what the type read finds can stop it at type: see the branches after "
             "NEED_TYPE in trafikey_decide_member"),
    "group": "Only what the group read finds can stop it there: see the branches after NEED_GROUP",
    "lease_epoch": ("Only the stamp comparison can stop it there, before any stall is counted: "
                    "see the branches after NEED_EPOCH"),
    "stalled": "The decision asks for stalled only for a lease it counts",
}


def _stop_finding(read: str, stopped: str, verdict: str) -> Finding:
    if verdict in ("wrongtype", "not_integer"):
        refusal = "WRONGTYPE" if verdict == "wrongtype" else "ERR EMQ row field is not an integer"
        if stopped == read:
            return Finding(WRONG, f"{read}: it stops at {stopped}, but as a refusal ({refusal}): "
                                  "the whole sweep refuses and no row is swept. "
                                  + _STOP_ADVICE[read])
        return Finding(WRONG, f"{read}: it refuses the whole sweep at {stopped} ({refusal}). "
                              + _STOP_ADVICE[read])
    if stopped == read:
        return Finding(RIGHT, f"{read}: the decision stops at {stopped} with the verdict "
                              f"{verdict}")
    why = {
        "type": "there is no row",
        "group": "the row has a group field: a lane row",
        "lease_epoch": "the stamp comparison settled it",
        "stalled": "its lease_epoch is this process's, so the lease is counted and stalled "
                   "is read",
    }[stopped]
    return Finding(WRONG, f"{read}: it stops at {stopped} instead ({verdict}): {why}. "
                          + _STOP_ADVICE[read])


def check_stops(rows, *, live: Executor | None = None,
                queue: Queue = EXERCISE_QUEUE) -> Feedback:
    """rows maps each read (type, group, lease_epoch, stalled) to a row meant to stop the
    sweep's decision there: None for no row, a dict for a hash (THIS_PROCESS for the sweeping
    server's run_id), text for a string key. Each row is decided by the model's step machine
    and by the module's C one under max_stalled 3; then, on a fresh model and on `live` when
    given, the four rows are swept together and the two replies compared."""
    exercise = "a row for each read"
    if not isinstance(rows, dict):
        return feedback(exercise, [Finding(WRONG, f"rows is {type(rows).__name__}: make it a "
                                            f"dict with the keys {', '.join(READS)}")])
    findings = [Finding(WRONG, f"{read}: no row given; add rows[{read!r}]")
                for read in READS if read not in rows]
    findings += [Finding(NOTE, f"{key!r} is not one of the reads and is not checked")
                 for key in rows if key not in READS]
    model = ModelExecutor()
    run_id = model.run_id.encode()
    # A run_id typed out names one process: the checker sweeps on two, so only THIS_PROCESS
    # means "the server that sweeps" on both.
    typed = {epoch.NOW: "NOW is the model's run_id"}
    if live is not None:
        with contextlib.suppress(LabError):
            typed[live.run_id.encode()] = "that is your live server's run_id"
    stored = {}
    for read in READS:
        if read not in rows:
            continue
        try:
            stored[read] = _row_bytes(rows[read], run_id)
        except ValueError as exc:
            findings.append(Finding(WRONG, f"{read}: {exc}"))
            continue
        named = [typed[v] for v in _typed_values(rows[read]) if v in typed]
        if named:
            findings.append(Finding(WRONG, f"{read}: {named[0]}, not every server's: write "
                                           "THIS_PROCESS for the run_id of the server that "
                                           "sweeps"))
            del stored[read]
            continue
        verdict, asked = decide_row(run_id, STOP_MAX_STALLED, stored[read])
        findings.append(_against_the_c(read, run_id, stored[read], verdict.kind,
                                       _stop_finding(read, asked[-1].value, verdict.kind)))
    if len(stored) == len(READS):
        findings += _swept_together(stored, rows, model, live, queue)
    if native.in_page():
        findings.append(Finding(NOTE, "decided by the model alone: the C module is not in this "
                                      "page"))
    return feedback(exercise, findings)


def _typed_values(row) -> list[bytes]:
    """The values of a learner's hash row as bytes, THIS_PROCESS left out."""
    if not isinstance(row, dict):
        return []
    return [v.encode() if isinstance(v, str) else v for v in row.values()
            if isinstance(v, (bytes, str))]


def _against_the_c(read: str, run_id: bytes, row, model_kind: str, finding: Finding) -> Finding:
    """The finding, unless the module's C decides the row otherwise than the model. A page
    that runs the course's Python has no C module: there the model's decision stands alone."""
    if native.in_page():
        return finding
    native_kind = _native_decision(run_id, row)
    if native_kind == model_kind:
        return finding
    return Finding(WRONG, f"{read}: the model says {model_kind}, the C module says "
                          f"{native_kind}: report this as a bug")


def _native_decision(run_id: bytes, row) -> str:
    """The C step machine's verdict on a stored row, fed the same reads the model makes."""
    return decide_row(run_id, STOP_MAX_STALLED, row, native.decide_member)[0].kind


def _swept_together(stored, rows, model, live, queue) -> list[Finding]:
    plant_expired(model, queue, stored)
    expected = try_sweep(model, queue, STOP_MAX_STALLED)
    findings = [Finding(NOTE, f"the four rows swept together on the model: {expected!r}")]
    if live is None:
        return findings
    try:
        live_rows = {read: _row_bytes(rows[read], live.run_id.encode()) for read in READS}
        plant_expired(live, queue, live_rows)
        reply = try_sweep(live, queue, STOP_MAX_STALLED)
        live.clear(queue)
    except LabError as exc:
        return [*findings, Finding(NOTE, f"not swept live: {exc}")]
    if reply == expected:
        findings.append(Finding(NOTE, "your server's sweep gave the same reply"))
    else:
        findings.append(Finding(WRONG, f"the live server answered {reply!r}, the model "
                                       f"{expected!r}: report this as a bug"))
    return findings


