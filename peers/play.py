"""How a history is played on any queue, and on trafikey beside it on the same server.

A Peer says how to run its library: the workers' command, how to enqueue the one job, how to
read the library's own view of it, its versions and the settings the play shortens. play()
plays the histories a Peer is asked for on one Stage (one lab server), then trafikey's own
histories on that same server, and returns a Recording.

The three histories, each from one job a worker has started:
  stalled        the worker running the job is killed (SIGKILL, its whole session), the
                 server stays up; a supervisor starts a new worker in its place.
  restarted      the workers stay healthy; the server restarts, down longer than the lease.
  short_restart  the same with the server down for less than the lease, the library's default
                 reconnect settings.
The job writes each start and end into a run log: the runs counted are those starts, whichever
worker made them. Its first run lasts as long as the history needs (it spans the event),
counted from its own start; a later run, which it tells by the run log, lasts one second.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from peers.harness import (
    INTERRUPTED,
    Bounce,
    Crew,
    PlayError,
    Run,
    RunLog,
    Stage,
    View,
    Watched,
    pause,
    wait_for_start,
    wait_ready,
)
from peers.harness import watch as watch_job
from peers.record import HISTORIES, TITLES, Outcome, Recording
from trafikey_lab.executors import Queue
from trafikey_lab.live.executor import LiveExecutor
from trafikey_lab.player import play as play_lab_history
from trafikey_lab.stories import JOB

EVENT_AFTER_S = 1.0
"""How long into the job's first run the event (the kill, the restart) comes."""
RESTART_TAIL_S = 2.0
"""How long after the server is back the first run of a restart history is set to end."""


@dataclass(frozen=True)
class Plan:
    """How one history is played on one queue: the server's downtime (0 for the stall), the
    first run's length, how long the library may take to decide once the event is over,
    and any settings this history alone changes (for the workers' environment)."""

    down_s: float = 0.0
    first_run_s: float = 3.0
    within_s: float = 30.0
    settle_s: float = 2.0
    env: dict[str, str] = field(default_factory=dict)
    note: str = ""


class Peer(abc.ABC):
    """One other queue, as the harness runs it."""

    key: str
    library: str
    budget: str
    """The setting that makes one counted loss decide, as the library names it."""
    lease: str
    """What runs out when a worker goes away, and how long it lasts here."""
    shortened: str
    """Which of the library's real settings the play shortens, and to what."""
    workers = 2

    @abc.abstractmethod
    def missing(self) -> str | None:
        """Why this queue cannot be played here, with the command that installs what is
        missing; None when it can."""

    @abc.abstractmethod
    def versions(self) -> dict[str, str]:
        """The library's version and its runtime's."""

    @abc.abstractmethod
    def plan(self, history: str) -> Plan: ...

    @abc.abstractmethod
    def crew(self, stage: Stage, folder: Path, runlog: Path, plan: Plan) -> Crew: ...

    @abc.abstractmethod
    def enqueue(self, stage: Stage, folder: Path, first_s: float) -> str:
        """Adds the one job, with the budget: its first run to last first_s seconds, a later
        one 1 s. Returns its id."""

    @abc.abstractmethod
    def inspect(self, stage: Stage, folder: Path, job: str) -> View:
        """The library's own view of the job (harness.View)."""

    def describe(self, view: View, plan: Plan) -> str:
        """What the library said, for the recording's detail."""
        reason = view.get("reason")
        return f"{view.get('state', view['fate'])}" + (f": {reason}" if reason else "")


def play_history(peer: Peer, stage: Stage, history: str) -> Outcome:
    """One history of `peer` on `stage`'s server, from a fresh crew of workers."""
    plan = peer.plan(history)
    folder = stage.folder / f"{peer.key}-{history}"
    folder.mkdir()
    log = RunLog(folder / "runs.jsonl")
    with peer.crew(stage, folder, log.path, plan) as crew:
        wait_ready(stage, crew)
        stage.start_clock()
        job = peer.enqueue(stage, folder, plan.first_run_s)
        first = wait_for_start(stage, crew, log, job, within_s=30)
        started = stage.clock()
        pause(EVENT_AFTER_S - (time.time() - first.start))
        bounce: Bounce | None = None
        if history == "stalled":
            crew.kill_running(first.pid)
            event = stage.clock()
        else:
            bounce = stage.bounce(plan.down_s)
            event = bounce.stopped_s
        watched = watch_job(stage, crew, log, job, lambda: peer.inspect(stage, folder, job),
                            within_s=plan.within_s, settle_s=plan.settle_s,
                            back_s=bounce.back_s if bounce else None)
        exits, killed_at = crew.exits, dict(crew.killed_at)
    overlap = overlapped(watched.runs, killed_at) or watched.most_in_flight > 1
    return _outcome(peer, plan, history, watched, started, event, bounce, exits, overlap)


def overlapped(runs: list[Run], killed_at: dict[int, float]) -> bool:
    """Whether two runs were in flight at once: a run ends when it wrote its end, or when its
    process was killed; one that did neither runs on past the play."""
    spans = [(r.start, r.end if r.end is not None else killed_at.get(r.pid, float("inf")))
             for r in runs]
    return any(a[0] < b[1] and b[0] < a[1] for i, a in enumerate(spans) for b in spans[i + 1:])


def _outcome(peer: Peer, plan: Plan, history: str, watched: Watched, started: float,
             event: float, bounce: Bounce | None, exits: int, overlap: bool) -> Outcome:
    view = watched.view
    fate = view["fate"] if watched.decided_s is not None else f"undecided ({view['fate']})"
    timings: dict[str, float | None] = {
        "started_s": round(started, 2),
        "event_s": round(event, 2),
        "down_s": round(bounce.back_s - bounce.stopped_s, 2) if bounce else None,
        "workers_back_s": (round(watched.reconnected_s, 2)
                           if watched.reconnected_s is not None else None),
        "decided_s": round(watched.decided_s, 2) if watched.decided_s is not None else None,
    }
    if bounce is not None and bounce.run_id_before == bounce.run_id_after:
        raise PlayError("the restart kept the run_id: it was not a new process")
    return Outcome(
        history=history,
        counted=max(watched.most_counted, int(view["counted"])),
        counted_as=str(view["counted_as"]),
        fate=fate,
        runs=len(watched.runs),
        overlap=overlap,
        detail=peer.describe(view, plan) + (
            f"; the count had gone back to {int(view['counted'])} when the play ended"
            if int(view["counted"]) < watched.most_counted else ""),
        settings={"down_s": plan.down_s, **plan.env} | ({"note": plan.note} if plan.note else {}),
        timings=timings,
        worker_exits=exits,
        counted_at_end=(int(view["counted"]) if int(view["counted"]) < watched.most_counted
                        else None),
    )


# -- trafikey on the same server -----------------------------------------------------------------

TRAFIKEY_LEASE_MS = 1000
TRAFIKEY_DOWN_S = {"stalled": 0.0, "restarted": 2.0, "short_restart": 0.2}
"""trafikey's restarts: down twice its 1 s lease, and down a fifth of it."""
TRAFIKEY_QUEUE = Queue("{peers}")


class Bouncing(LiveExecutor):
    """The lab's LiveExecutor whose restart is the stage's, the server down for down_s."""

    def __init__(self, stage: Stage, down_s: float) -> None:
        super().__init__(stage.server)
        self.stage, self.down_s = stage, down_s

    def restart(self) -> str:
        return self.stage.bounce(self.down_s).run_id_after


def play_trafikey(stage: Stage, history: str) -> dict[str, Any]:
    """trafikey's own history on `stage`'s server, max_stalled 1 and a 1 s lease, played by the
    lab's histories.play: the worker stalled, or the server restarted, down 2 s (restarted) or
    0.2 s (short_restart)."""
    live = Bouncing(stage, TRAFIKEY_DOWN_S[history])
    began = time.monotonic()
    trace = play_lab_history("stalled" if history == "stalled" else "restarted", 1, live,
                             TRAFIKEY_QUEUE, lease_ms=TRAFIKEY_LEASE_MS)
    row = live.row(TRAFIKEY_QUEUE, JOB)
    live.clear(TRAFIKEY_QUEUE)
    return {
        "history": history,
        "counted": int(row.get(b"stalled", b"0")),
        "counted_as": "the row's stalled count: the sweep counts a lease its own process "
                      "stamped, and exempts one another process stamped",
        "fate": {"dead": "dead-lettered", "recovered": "back to pending"}.get(
            str(trace.outcome), str(trace.outcome)),
        "reading": str(trace.reading),
        "runs": 1,
        "settings": {"max_stalled": 1, "lease_ms": TRAFIKEY_LEASE_MS, "down_s": live.down_s},
        "seconds": round(time.monotonic() - began, 2),
    }


# -- a whole queue ------------------------------------------------------------------------------

Progress = Callable[[str], object]


def play_on_own_server(peer: Peer, history: str, trafikey: bool,
                       progress: Progress | None) -> tuple[Outcome, dict[str, Any] | None, str]:
    """One history of `peer` on a new lab server, then trafikey's on the same server; with the
    server's version."""
    with Stage() as stage:
        if progress is not None:
            progress(f"{peer.library}: {TITLES[history]}, on a server of its own")
        outcome = play_history(peer, stage, history)
        beside = play_trafikey(stage, history) if trafikey else None
        if progress is not None:
            progress(f"{peer.library}: {TITLES[history]}: {outcome.fate}, {outcome.runs} "
                     f"run(s), counted {outcome.counted}")
        return outcome, beside, stage.version()


def play(peer: Peer, histories: tuple[str, ...] = HISTORIES, *,
         progress: Progress | None = None, trafikey: bool = True) -> Recording:
    """Plays each of `histories` of `peer` on a lab server of its own, all at once (each a
    thread; the processes they start are the work), trafikey's same history after it on the
    same server (unless trafikey=False), and returns the Recording. PlayError when the queue
    cannot run here, or a history could not be played."""
    if (why := peer.missing()) is not None:
        raise PlayError(why)
    unknown = set(histories) - set(HISTORIES)
    if unknown:
        raise ValueError(f"no history {sorted(unknown)}: choose from {', '.join(HISTORIES)}")
    began = time.monotonic()
    INTERRUPTED.clear()
    with ThreadPoolExecutor(max_workers=len(histories)) as pool:
        futures = {h: pool.submit(play_on_own_server, peer, h, trafikey, progress)
                   for h in histories}
        try:
            done = {h: future.result() for h, future in futures.items()}
        except BaseException:
            # Ctrl-C, or one history failed: the others stop at their next wait, and the pool
            # waits for each to stop its workers and its server.
            INTERRUPTED.set()
            raise
    played = {h: outcome for h, (outcome, _, _) in done.items()}
    beside = {h: lab for h, (_, lab, _) in done.items() if lab is not None}
    versions = {**peer.versions(), "valkey-server": next(iter(done.values()))[2]}
    return Recording(
        queue=peer.key, library=peer.library, versions=versions, budget=peer.budget,
        lease=peer.lease, shortened=peer.shortened, histories=played, trafikey=beside,
        recorded=time.strftime("%Y-%m-%d"), seconds=round(time.monotonic() - began, 1),
    )
