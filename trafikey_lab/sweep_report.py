"""Notebook 03's library side: one expired member of each kind, and what the sweep did with it.

`lay_out` builds the same small dataset on any executor, through `call` alone, so the model's
plan and the live server's reply can be held side by side. `plan_table` turns the model's
read pass (`ModelServer.plan_sweep`) into rows a reader can follow: the reads each verdict
asked for, in order, where it stopped, and the writes it implies. `spoil` adds what makes the
whole sweep refuse; `question` is the notebook's diagnostic question.
"""

from dataclasses import dataclass

from . import epoch
from .errors import ReplyError
from .executors import Executor, Queue
from .table import Table
from .text import plain, short

MAX_STALLED = 3
"""The budget the layout is built for: the dead member's stalled 2 becomes 3 and reaches it."""

KINDS = ("ghost", "lane", "exempt", "recovered", "dead")
"""The members of the layout, in deadline order (so in sweep order); each id names its verdict."""

REFUSALS = {
    "not_integer": "the counted member that would die stores stalled 'two'",
    "wrongtype": "one more expired member whose row is a string, not a hash",
    "pending_wrongtype": "the pending key the sweep is given is a string, not a sorted set",
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


def lay_out(executor: Executor, queue: Queue) -> list[Planted]:
    """Empties the queue and plants one expired member of each kind in its active set.

    Deadlines are one millisecond apart from the executor's now, in the order of KINDS, and
    the call returns once the last has passed, so a sweep that follows sees all five expired
    and takes them in that order.
    """
    executor.clear(queue)
    base = executor.now_ms()
    planted = []
    for offset, (kind, row) in enumerate(rows_for(executor.run_id.encode()).items(), 1):
        member = kind.encode()
        if row is not None:
            fields = [part for item in row.items() for part in item]
            executor.call("HSET", queue.row(member), *fields)
        executor.call("ZADD", queue.active, base + offset, member)
        planted.append(Planted(member, kind, row, base + offset))
    executor.wait_until(planted[-1].deadline)
    return planted


def spoil(executor: Executor, queue: Queue, how: str) -> None:
    """Adds one thing to a laid-out queue that makes the whole sweep refuse (see REFUSALS)."""
    if how == "not_integer":
        executor.call("HSET", queue.row(b"dead"), b"stalled", b"two")
    elif how == "wrongtype":
        executor.call("SET", queue.row(b"wrong"), b"a string")
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


def describe_write(write: tuple[bytes, ...]) -> str:
    """One write as a command line: `ZADD {q}:pending 0 exempt`."""
    return " ".join(plain(part) for part in write)


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
    state = {}
    for key, (kind, value) in executor.dataset().items():
        if key not in queue.keys and not key.startswith(queue.prefix):
            continue
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
        row = state.get(plain(queue.row(member)))
        if row is None:
            fields = "(no row)"
        elif isinstance(row, tuple):
            fields = f"({row[0]})"
        else:
            fields = ", ".join(f"{f}={v}" for f, v in row.items())
        rows.append((member, ", ".join(where) or "nowhere", fields))
    return Table(("member", "in", "row"), tuple(rows))


def question():
    """03's diagnostic question: what this module's sweep fetches of an exempt member's row,
    what its decision is shown, and what it writes."""
    from .widgets.diagnostic import Option, Question

    return Question(
        "An expired member of active has a row with no group field, a lease_epoch written by "
        "another process, and stalled 2. What does this module's EMQ.STALLED.CHECK do with it, "
        "with max_stalled 3?", [
            Option("It fetches group and lease_epoch only: stalled is fetched only for a "
                   "counted lease.", misconception="the sweep reads stalled only for counted "
                                                   "leases",
                   why="that is the dive's Rust sweep, which reads one field per question. This "
                       "module fetches all three fields with one HashGet for every hash row; "
                       "what is lazy is the decision, which is never shown stalled here."),
            Option("It checks that lease_epoch is 40 lowercase hex characters before it "
                   "compares it with the run_id.",
                   misconception="the sweep re-checks the stamp's shape",
                   why="trafikey_exempt compares bytes only: the lengths, then memcmp. The shape "
                       "check runs once, at load, on the server's own run_id."),
            Option("It fetches group, lease_epoch and stalled in one hash read, shows its "
                   "decision only the type, group and lease_epoch, and sends the job back to "
                   "pending with stalled still 2.", right=True,
                   why="decide_row calls ValkeyModule_HashGet for the three fields of every "
                       "hash row. The step machine asks for the type, group, then lease_epoch, "
                       "and the foreign stamp settles the verdict: exempt. The write pass sets "
                       "state pending and does not write stalled."),
            Option("It leaves the job in active: for this process the lease has not expired.",
                   misconception="exempt means not expired",
                   why="the member was picked because its deadline is past. Exempt means its "
                       "expiry is not counted as a stall: the job goes back to pending and is "
                       "listed among the recovered ids."),
            Option("It sends the job back to pending with stalled 0: the restart cleared the "
                   "old process's stalls.", misconception="a restart resets stalled",
                   why="nothing resets stalled. The exempt member's one row write is HSET state "
                       "pending, so stalled stays 2."),
        ])
