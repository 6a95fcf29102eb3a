"""The other queues, played for real (issue 34): RQ, arq, BullMQ and Sidekiq, each run by its
own library and worker against a lab server the harness starts, through three histories (the
worker stalled, the server restarted, a short restart), with trafikey's own histories beside
them on the same server.

What notebook 05 calls:

    recordings() -> dict[str, Recording]     the stored recordings, by queue (rq, arq, bullmq,
                                             sidekiq), each with its versions and timings
    recording(queue) -> Recording            one of them
    table(recordings=None) -> list[dict]     one row a queue and one for trafikey: queue,
                                             versions, stall cost, restart cost, short-restart
                                             cost, runs of the job in each history
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

`python -m peers` (make peers) re-plays every queue and fails when what a library does no
longer matches its stored recording (counted, fate, runs; not timings); `--record` stores what
it played instead.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from peers.arq_peer import Arq
from peers.bullmq_peer import BullMQ
from peers.harness import PlayError
from peers.play import FACTS, HISTORIES, TITLES, Outcome, Peer, Progress, Recording, play
from peers.rq_peer import ENTRY_S, RQ
from peers.sidekiq_peer import Sidekiq

__all__ = [
    "FACTS", "HISTORIES", "LIVE_RQ_HISTORIES", "PEERS", "REPLAY", "RQ_LIVE_SECONDS",
    "RQ_LIVE_WHY", "TITLES", "Outcome", "PlayError", "Recording", "differences", "missing",
    "play_live", "play_rq", "recording", "recordings", "store", "table", "table_html",
    "table_text",
]

PEERS: dict[str, type[Peer]] = {"rq": RQ, "arq": Arq, "bullmq": BullMQ, "sidekiq": Sidekiq}
RECORDINGS = Path(__file__).resolve().parent / "recordings"
REPLAY = "make peers"
LIVE_RQ_HISTORIES = ("stalled", "restarted")
RQ_LIVE_SECONDS = ENTRY_S + 15
"""About how long play_rq() takes: its two histories run at once, each on a server of its own,
and each waits out RQ's started-registry entry."""
RQ_LIVE_WHY = (
    f"RQ counts a lost run only once the job's entry in its StartedJobRegistry has expired, "
    f"and the worker scores that entry 60 s past its last heartbeat (a number written into RQ, "
    f"not a setting): so the stall waits about {ENTRY_S} s after the kill, and the restart "
    f"keeps the server down {ENTRY_S + 1} s, longer than the entry. Both play at once, each on "
    f"a server of its own: about {RQ_LIVE_SECONDS} s in all."
)


def peer(queue: str) -> Peer:
    if queue not in PEERS:
        raise ValueError(f"no queue {queue!r}: choose from {', '.join(PEERS)}")
    return PEERS[queue]()


def missing(queue: str) -> str | None:
    """Why `queue` cannot be played on this machine (with the install command), or None."""
    return peer(queue).missing()


def recording(queue: str) -> Recording:
    """The stored recording of `queue` (peers/recordings/<queue>.json)."""
    peer(queue)
    return Recording.from_json(json.loads((RECORDINGS / f"{queue}.json").read_text()))


def recordings() -> dict[str, Recording]:
    """Every stored recording, by queue, in PEERS' order."""
    return {queue: recording(queue) for queue in PEERS}


def store(played: Recording) -> Path:
    RECORDINGS.mkdir(exist_ok=True)
    path = RECORDINGS / f"{played.queue}.json"
    path.write_text(json.dumps(played.to_json(), indent=1, sort_keys=False) + "\n")
    return path


def play_live(queue: str, histories: tuple[str, ...] = HISTORIES,
              progress: Progress | None = None) -> Recording:
    """Plays `queue` now, each history on a lab server of its own, trafikey's beside it.
    PlayError, saying how to install it, when the queue cannot run here."""
    return play(peer(queue), histories, progress=progress)


def play_rq(histories: tuple[str, ...] = LIVE_RQ_HISTORIES,
            progress: Progress | None = None) -> Recording:
    """RQ's stall and restart (by default) played now, with trafikey's beside them: about
    RQ_LIVE_SECONDS seconds, for the reason RQ_LIVE_WHY gives."""
    return play(RQ(), histories, progress=progress)


def differences(stored: Recording, played: Recording) -> list[str]:
    """Where `played` does not reproduce `stored`: each fact (counted, fate, runs) of each
    history the two share, trafikey's included. Timings are not compared."""
    out = []
    for history in stored.histories.keys() & played.histories.keys():
        was, now = stored.histories[history].facts(), played.histories[history].facts()
        out += [f"{stored.library}, {TITLES[history]}: {name} was {was[name]!r}, now "
                f"{now[name]!r}" for name in FACTS if was[name] != now[name]]
    for history in stored.trafikey.keys() & played.trafikey.keys():
        was, now = stored.trafikey[history], played.trafikey[history]
        out += [f"trafikey beside {stored.library}, {TITLES[history]}: {name} was "
                f"{was[name]!r}, now {now[name]!r}" for name in FACTS if was[name] != now[name]]
    return out


# -- the side-by-side table ----------------------------------------------------------------------

def _cost(outcome: Outcome | dict[str, Any] | None) -> str:
    """What a history cost the job: what was counted, and its fate."""
    if outcome is None:
        return "not played"
    facts = outcome.facts() if isinstance(outcome, Outcome) else outcome
    return f"counted {facts['counted']}, {facts['fate']}"


def _runs(outcome: Outcome | dict[str, Any] | None) -> str:
    if outcome is None:
        return "-"
    if isinstance(outcome, Outcome):
        return f"{outcome.runs}{' (at once)' if outcome.overlap else ''}"
    return str(outcome["runs"])


def _version(played: Recording) -> str:
    return played.versions.get(played.queue, played.versions.get(played.library.lower(), "?"))


def table(stored: dict[str, Recording] | None = None) -> list[dict[str, str]]:
    """One row a queue, then trafikey's (from the RQ recording's server, or the first one's):
    queue, version, budget, what the stall, the restart and the short restart cost the job
    (what was counted, and its fate), and how often the job ran in each."""
    stored = recordings() if stored is None else stored
    rows = []
    for played in stored.values():
        h = played.histories
        rows.append({
            "queue": played.library, "version": _version(played), "budget": played.budget,
            "stall": _cost(h.get("stalled")), "restart": _cost(h.get("restarted")),
            "short restart": _cost(h.get("short_restart")),
            "runs": " / ".join(_runs(h.get(name)) for name in HISTORIES),
        })
    lab = next((p.trafikey for p in (stored.get("rq"), *stored.values()) if p and p.trafikey),
               None)
    if lab:
        rows.append({
            "queue": "trafikey", "version": "this lab's module", "budget": "max_stalled 1",
            "stall": _cost(lab.get("stalled")), "restart": _cost(lab.get("restarted")),
            "short restart": _cost(lab.get("short_restart")),
            "runs": " / ".join(_runs(lab.get(name)) for name in HISTORIES),
        })
    return rows


COLUMNS = ("queue", "version", "budget", "stall", "restart", "short restart", "runs")


def table_text(rows: list[dict[str, str]]) -> str:
    """The rows as a plain text table; runs are stall / restart / short restart."""
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in COLUMNS}
    lines = ["  ".join(c.ljust(widths[c]) for c in COLUMNS)]
    lines += ["  ".join(r[c].ljust(widths[c]) for c in COLUMNS) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def table_html(rows: list[dict[str, str]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(r[c])}</td>" for c in COLUMNS) + "</tr>"
                   for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"
