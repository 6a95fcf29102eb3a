"""The other queues, played for real (issue 34): RQ, arq, BullMQ and Sidekiq, each run by its
own library and worker against a lab server the harness starts, through three histories (the
worker stalled, the server restarted, a short restart), with trafikey's own histories beside
them on the same server.

What notebook 05 calls:

    recordings() -> dict[str, Recording]     the stored recordings, by queue (rq, arq, bullmq,
                                             sidekiq), each with its versions and timings
    recording(queue) -> Recording            one of them
    table(stored=None) -> list[dict[str, str]]
                                             one row a queue and one for trafikey, keyed by
                                             COLUMNS: queue, version, budget, what the stall,
                                             the restart and the short restart cost (counted N,
                                             fate), runs (stall / restart / short restart)
    table_text(rows) / table_html(rows)      those rows as a text table / an HTML table
    missing(queue) -> str | None             why a queue cannot be played here (with the
                                             command that installs what is missing), or None
    play_rq(histories=LIVE_RQ_HISTORIES, progress=None) -> Recording
                                             RQ's stall and restart played live on servers of
                                             their own, trafikey's beside them: about
                                             RQ_LIVE_SECONDS seconds, see RQ_LIVE_WHY
    play_live(queue, histories=HISTORIES, progress=None) -> Recording
                                             any queue played live, where it can run here
    REPLAY                                   the command that re-plays all four and checks them
    PlayError                                what a live play raises when it cannot run here

Importing peers loads no client library and starts nothing: the recordings and the table read
in a page with no server; the plays load redis, rq and the lab's server when called.

`python -m peers` (make peers) re-plays every queue and fails when what a library does no
longer matches its stored recording (counted, fate, runs; not timings); `--record` stores what
it played instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from peers.record import (
    COLUMNS,
    FACTS,
    HISTORIES,
    QUEUES,
    RECORDINGS,
    RQ_ENTRY_S,
    TITLES,
    Outcome,
    PlayError,
    Recording,
    differences,
    recording,
    recordings,
    store,
    table,
    table_html,
    table_text,
)

# The live parts load redis, rq and the lab's server when called, so that the recordings and
# the table read in a page with no server (the book's).
if TYPE_CHECKING:
    from peers.play import Peer, Progress

__all__ = [
    "COLUMNS", "FACTS", "HISTORIES", "LIVE_RQ_HISTORIES", "QUEUES", "RECORDINGS", "REPLAY",
    "RQ_LIVE_SECONDS", "RQ_LIVE_WHY", "TITLES", "Outcome", "PlayError", "Recording", "differences",
    "missing", "play_live", "play_rq", "recording", "recordings", "store", "table",
    "table_html", "table_text",
]

REPLAY = "make peers"
LIVE_RQ_HISTORIES = ("stalled", "restarted")
RQ_LIVE_SECONDS = RQ_ENTRY_S + 15
"""About how long play_rq() takes: its two histories run at once, each on a server of its own,
and each waits out RQ's started-registry entry."""
RQ_LIVE_WHY = (
    f"RQ counts a lost run only once the job's entry in its StartedJobRegistry has expired, "
    f"and the worker scores that entry its monitoring interval plus 60 s past its last "
    f"heartbeat (the 60 is written into RQ, not a setting): so the stall waits about "
    f"{RQ_ENTRY_S} s after the kill, and the restart "
    f"keeps the server down {RQ_ENTRY_S + 1} s, longer than the entry. Both play at once, each "
    f"on a server of its own: about {RQ_LIVE_SECONDS} s in all."
)


def peer(queue: str) -> Peer:
    """The harness's Peer for `queue`."""
    from peers.arq_peer import Arq
    from peers.bullmq_peer import BullMQ
    from peers.rq_peer import RQ
    from peers.sidekiq_peer import Sidekiq

    kinds: dict[str, type[Peer]] = {"rq": RQ, "arq": Arq, "bullmq": BullMQ, "sidekiq": Sidekiq}
    if queue not in kinds:
        raise ValueError(f"no queue {queue!r}: choose from {', '.join(QUEUES)}")
    return kinds[queue]()


def missing(queue: str) -> str | None:
    """Why `queue` cannot be played on this machine (with the install command), or None."""
    return peer(queue).missing()


def play_live(queue: str, histories: tuple[str, ...] = HISTORIES,
              progress: Progress | None = None) -> Recording:
    """Plays `queue` now, each history on a lab server of its own, trafikey's beside it.
    PlayError (peers.harness), saying how to install it, when the queue cannot run here."""
    from peers.play import play

    return play(peer(queue), histories, progress=progress)


def play_rq(histories: tuple[str, ...] = LIVE_RQ_HISTORIES,
            progress: Progress | None = None) -> Recording:
    """RQ's stall and restart (by default) played now, with trafikey's beside them: about
    RQ_LIVE_SECONDS seconds, for the reason RQ_LIVE_WHY gives."""
    return play_live("rq", histories, progress)
