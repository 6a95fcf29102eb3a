"""The lease epoch's limits beyond one server, each one shown on a real server: what the stamp
cannot tell apart.

The stamp names a process, nothing more. So it exempts every lease a promoted replica inherits,
and counts again the leases of a primary that failed back without a restart. Each function here
plays one of these on the lab's server and returns a Shown: lines a notebook prints, with no
live run_id or clock reading in them.
"""

from __future__ import annotations

from dataclasses import dataclass

from trafikey_lab import live as servers
from trafikey_lab.course.feedback import not_ours
from trafikey_lab.executors import Executor, Queue
from trafikey_lab.stories import JOB, LEASE_MS
from trafikey_lab.text import plain


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


def _row_line(row: dict) -> str:
    return f"stalled {plain(row.get(b'stalled'))} · state {plain(row.get(b'state'))}"
