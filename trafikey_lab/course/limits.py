"""The lease epoch's limits, each one shown on a real server: what the stamp cannot tell apart.

The stamp names a process, nothing more, and it is a field of the row, not of one lease. So
it counts nothing on a row no native verb ever stamped, counts a script's lease on a row this
process stamped before, keeps an old stamp that a script extended, exempts every lease a
promoted replica inherits, counts again the leases of a primary that failed back without a
restart, and compares whatever bytes a row holds, whoever wrote them. Each function here plays
one of these on an executor and returns a Shown: lines a notebook prints, with no live run_id or
clock reading in them.
"""

from __future__ import annotations

from dataclasses import dataclass

from trafikey_lab import live as servers
from trafikey_lab.course.feedback import not_ours
from trafikey_lab.executors import Executor, ModelExecutor, Queue
from trafikey_lab.player import Trace, compare, play
from trafikey_lab.stories import JOB, LEASE_MS, STORIES
from trafikey_lab.text import plain

SCRIPTS_ONLY = STORIES["scripts_only"]
STAMP_OUTLIVES_MAX_STALLED = 2
"""A budget the first counted stall does not spend, so that the job comes back for claim2."""

@dataclass(frozen=True)
class Shown:
    """What one limit's run showed, as lines to print."""

    lines: tuple[str, ...]

    def __repr__(self) -> str:
        return "\n".join(self.lines)


def unavailable(server: servers.LabServer, what: str) -> Shown | None:
    """Why a limit that needs a replica beside `server` cannot run on it; None when it can."""
    if not server.can_take_replica:
        return Shown((not_ours("not run", server, f"{what} would need a second server beside "
                               "it or would take that one's role away"),))
    return None


def _claim_one(live: Executor, queue: Queue) -> int:
    """JOB added and claimed on an empty queue: its lease's deadline."""
    live.clear(queue)
    live.add(queue, JOB, b"hello")
    return live.claim(queue, LEASE_MS)[2]


def _sweep_once_expired(live: Executor, queue: Queue, deadline: int, facts: tuple[str, ...],
                        conclusion: str, clear: Executor) -> Shown:
    """Waits until JOB's lease (to `deadline`) has run out, sweeps with max_stalled 1 and clears
    the queue on `clear` (the server the lease was granted on): the facts, the sweep and JOB's
    row, and the conclusion."""
    live.wait_until(deadline)
    reply = live.sweep(queue, 1)
    row = live.row(queue, JOB)
    clear.clear(queue)
    return Shown((*facts, f"its sweep, max_stalled 1: {reply!r} · {_row_line(row)}", conclusion))


def promoted_replica(server: servers.LabServer, queue: Queue) -> Shown:
    """A lease granted on `server`, then a replica promoted (REPLICAOF NO ONE) sweeps it: the
    stamp names the old primary, so the lease is exempt whatever its worker did."""
    if (refused := unavailable(server, "a replica")) is not None:
        return refused
    primary = servers.LiveExecutor(server)
    deadline = _claim_one(primary, queue)
    with servers.replica_of(server) as replica:
        promoted = servers.LiveExecutor(replica)
        primarys = promoted.stamped_by(queue, JOB, primary.run_id)
        promoted.client.execute_command("REPLICAOF", "NO", "ONE")
        return _sweep_once_expired(promoted, queue, deadline, (
            f"the replica holds the lease stamped by the primary: {primarys}",
            f"the promoted replica's run_id is its own: {replica.run_id != server.run_id}",
        ), "→ exempt: to the stamp, a failover looks like a restart", clear=primary)


def failback(server: servers.LabServer, queue: Queue) -> Shown:
    """A lease granted on `server`; a replica takes over (`server` becomes its replica), then
    `server` is promoted back without restarting. Its run_id never changed, so the lease it
    granted before the failover is counted."""
    if (refused := unavailable(server, "a failover")) is not None:
        return refused
    live = servers.LiveExecutor(server)
    deadline = _claim_one(live, queue)
    stamp = live.row(queue, JOB).get(b"lease_epoch")
    with servers.failed_over(server):
        pass
    same_process = live.run_id == server.run_id
    kept = live.row(queue, JOB).get(b"lease_epoch") == stamp
    return _sweep_once_expired(live, queue, deadline, (
        f"the failed-back primary is the same process (same run_id): {same_process}",
        f"the lease still carries its stamp: {kept}",
    ), "→ counted: the worker may only have lost the server during the failover", clear=live)


def unchecked_stamp(live: Executor, queue: Queue) -> Shown:
    """Three expired leases whose stamps were written with a plain HSET, not by a native verb:
    the current run_id in upper case, the text banana, and the current run_id's exact bytes.
    The sweep compares bytes: it exempts the first two and counts the third."""
    live.clear(queue)
    current = live.run_id.encode()
    stamps = {"upper": current.upper(), "banana": b"banana", "exact": current}
    now = live.now_ms()
    for member, stamp in stamps.items():
        live.call("HSET", queue.row_key(member), "state", "active", "attempts", "1",
                  "lease_epoch", stamp)
        live.call("ZADD", queue.active, now - 1, member)
    reply = live.sweep(queue, 1)
    rows = {member: live.row(queue, member) for member in stamps}
    live.clear(queue)
    return Shown((
        ("stamps, each written with a plain HSET: the current run_id in upper case, the text "
         "'banana', and the current run_id's exact bytes"),
        f"sweep, max_stalled 1: {reply!r}",
        *(f"{member}: {_row_line(row)}" for member, row in rows.items()),
        ("→ upper and banana exempt, exact counted: the sweep never checks a stored stamp's "
         "shape nor who wrote it, it only compares bytes"),
    ))


def stamp_outlives_the_lease(live: Executor, queue: Queue) -> Shown:
    """A job claimed natively, its stall counted and the job swept back to pending, then claimed
    by claim2 under the same process: the row keeps the first lease's stamp, so the script's
    lease is counted. Played on a fresh model and on `live`, then held side by side."""
    traces = [play("claim2_on_stamped_row", STAMP_OUTLIVES_MAX_STALLED, executor, queue)
              for executor in (ModelExecutor(), live)]
    live.clear(queue)
    lines = []
    for trace in traces:
        swept, claimed = trace.steps[3], trace.steps[4]
        stamp = trace.process_name(claimed.row.get(b"lease_epoch"))
        lines.append(f"{trace.executor}: the first sweep leaves {_row_line(swept.row)}; claim2 "
                     f"grants attempt {plain(claimed.row.get(b'attempts'))} and the row keeps a "
                     f"stamp of {stamp}")
        lines.append(describe(trace))
    agree = all(same for _, same, _ in compare(*traces))
    conclusion = (f"→ counted at max_stalled {STAMP_OUTLIVES_MAX_STALLED}: the stamp is a field "
                  "of the row, and it outlives the lease that wrote it")
    return Shown((*lines, f"model and live agree at every step: {agree}", conclusion))


def describe(trace: Trace) -> str:
    """A played history in one line, its processes named by number, never by run_id."""
    stamp = ("no stamp" if trace.lease_epoch is None
             else f"a stamp of {trace.process_name(trace.lease_epoch)}")
    return (f"{trace.story.title} ({trace.executor}): {stamp}, swept by "
            f"{trace.process_name(trace.sweep_run_id)} → {trace.reading}, {trace.outcome}, "
            f"stalled {plain(trace.steps[-1].row.get(b'stalled'))}")


def _row_line(row: dict) -> str:
    return f"stalled {plain(row.get(b'stalled'))} · state {plain(row.get(b'state'))}"
