"""What a play of another queue leaves: the Recording of each history, stored as JSON in
peers/recordings/, what a re-play must reproduce of it (FACTS), and the side-by-side table
notebook 05 shows. Nothing here starts a server or imports a client library, so that a page
with no server (the book's) can read the recordings.
"""

from __future__ import annotations

import html
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

QUEUES = ("rq", "arq", "bullmq", "sidekiq")


class PlayError(Exception):
    """A play could not be carried out (the queue's runtime missing, a server or a worker that
    failed to start, an interrupt): the message says what happened and what to do."""


RECORDINGS = Path(__file__).resolve().parent / "recordings"
HISTORIES = ("stalled", "restarted", "short_restart")
TITLES = {
    "stalled": "the worker stalled",
    "restarted": "the server restarted",
    "short_restart": "a short restart",
}
FACTS = ("counted", "fate", "runs")
"""What a re-play must reproduce of a stored recording; timings vary from run to run."""


RQ_MONITORING_S = 1
"""The RQ workers' job_monitoring_interval here: their heartbeat, every second (default 30 s)."""
RQ_ENTRY_S = RQ_MONITORING_S + 60
"""How long RQ's started-registry entry outlives a heartbeat: RQ adds a fixed 60 s."""


@dataclass
class Outcome:
    """One history as the library played it. counted: the losses the library charged to the
    job, the most its count showed (counted_as says how it counts them); fate: completed,
    failed, lost (nowhere: not queued, not running, not failed), or undecided when nothing was
    decided in time; runs: how often the job started; overlap: whether two runs were in flight
    at once."""

    history: str
    counted: int
    counted_as: str
    fate: str
    runs: int
    overlap: bool
    detail: str
    settings: dict[str, Any]
    timings: dict[str, float | None]
    worker_exits: int
    counted_at_end: int | None = None
    """The library's count when the play ended, where it is lower than `counted`, the highest
    it reached (RQ: a first run that finishes after the retry writes its old count back)."""

    def facts(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in FACTS}


@dataclass
class Recording:
    """A queue's histories as played on one lab server, with trafikey's beside them."""

    queue: str
    library: str
    versions: dict[str, str]
    budget: str
    lease: str
    shortened: str
    histories: dict[str, Outcome]
    trafikey: dict[str, dict[str, Any]]
    recorded: str = ""
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Recording:
        histories = {name: Outcome(**h) for name, h in data["histories"].items()}
        return cls(**{**data, "histories": histories})


def recording(queue: str) -> Recording:
    """The stored recording of `queue` (peers/recordings/<queue>.json)."""
    if queue not in QUEUES:
        raise ValueError(f"no queue {queue!r}: choose from {', '.join(QUEUES)}")
    return Recording.from_json(json.loads((RECORDINGS / f"{queue}.json").read_text()))


def recordings() -> dict[str, Recording]:
    """Every stored recording, by queue, in QUEUES' order."""
    return {queue: recording(queue) for queue in QUEUES}


def store(played: Recording) -> Path:
    RECORDINGS.mkdir(exist_ok=True)
    path = RECORDINGS / f"{played.queue}.json"
    path.write_text(json.dumps(played.to_json(), indent=1, sort_keys=False) + "\n")
    return path


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
