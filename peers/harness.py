"""What every queue's play shares: the lab server it plays on (Stage), the workers it keeps
running (Crew), the log the workers' job writes (RunLog), and the loop that watches a history
until the library has decided the job's fate (watch).

A restart here is the lab's own: the server shut down with its data saved (append-only file on,
fsync always), kept down for a set time, then started on the same folder and port, so that the
data is kept and the run_id is new. Everything is on 127.0.0.1. Every wait is bounded in time,
and every process a play starts is stopped when the play ends, however it ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from peers.record import PlayError
from trafikey_lab.live.client import free_port
from trafikey_lab.live.owned import OwnedServer

DRIVER_NAME = "peers-driver"
"""The client name of the driver's own connections (and of each inspector's), so that a look
at CLIENT LIST can tell the workers' connections from the harness's."""
TICK_S = 0.2
"""How often the watch loop looks at the workers, the run log and the library's view."""
RESPAWN_S = 1.0
"""How long the crew waits before it starts a new worker in place of one that exited, as a
process supervisor (systemd's Restart=, supervisord) would."""


SESSIONS: list[int] = []
"""Every worker session a Crew of this process has started (each worker leads its own): what
a test checks is gone once the plays are over."""


INTERRUPTED = threading.Event()
"""Set when a play is interrupted (Ctrl-C, a notebook's stop button): every wait of every play
then ends at once, so that each stops what it started and returns."""


def pause(seconds: float) -> None:
    """Sleeps, unless the plays are interrupted: then raises PlayError."""
    if INTERRUPTED.wait(max(0.0, seconds)):
        raise PlayError("interrupted: the play stopped its workers and its server")


# -- the server ---------------------------------------------------------------------------------

@dataclass
class Bounce:
    """One restart as played: when the server stopped and came back (seconds on the play's
    clock), and the run_ids on either side."""

    stopped_s: float
    back_s: float
    run_id_before: str
    run_id_after: str


class Stage:
    """A lab server for one play, on 127.0.0.1, with the trafikey module loaded: append-only
    file with fsync always, on a port and in a folder of its own that a restart keeps.

    bounce(down_s) is the lab's restart with the server kept down for down_s seconds.
    """

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="trafikey-peers-"))
        self.server = OwnedServer(persistence="aof", data_dir=self.folder / "data",
                                  port=free_port())
        self.t0 = time.monotonic()
        self._driver: redis.Redis | None = None

    def __enter__(self) -> Stage:
        try:
            self.server.start()
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self._name_lab_client()
        return self

    def _name_lab_client(self) -> None:
        """Names the connections of the lab's own client (the server's), so that they are not
        taken for a worker's."""
        if self.server.client is not None:
            self.server.client.connection_pool.connection_kwargs["client_name"] = "peers-lab"
            self.server.client.connection_pool.disconnect()

    def __exit__(self, *exc: object) -> None:
        try:
            if self._driver is not None:
                self._driver.close()
            self.server.stop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def clock(self) -> float:
        """Seconds since the play's clock was last set (start_clock)."""
        return time.monotonic() - self.t0

    def start_clock(self) -> None:
        self.t0 = time.monotonic()

    @property
    def url(self) -> str:
        """redis://:password@127.0.0.1:port: handed to workers in their environment only."""
        return self.server.connection_url

    @property
    def driver(self) -> redis.Redis:
        """The harness's own client: named, with a short timeout, and no retries of its own
        (the watch loop is the retry)."""
        if self._driver is None:
            self._driver = redis.Redis.from_url(self.url, client_name=DRIVER_NAME,
                                                socket_timeout=2, socket_connect_timeout=2,
                                                retry=None)
        return self._driver

    @property
    def run_id(self) -> str:
        return str(self.driver.info("server")["run_id"])

    def bounce(self, down_s: float) -> Bounce:
        """The lab's restart, the server down for down_s seconds: data kept, run_id new."""
        before = self.run_id
        self.driver.connection_pool.disconnect()
        self.server.stop()
        stopped = self.clock()
        try:
            pause(down_s - (self.clock() - stopped))
        finally:
            self.server.start()
        back = self.clock()
        self._name_lab_client()
        return Bounce(stopped, back, before, self.run_id)

    def worker_clients(self) -> int:
        """How many connections the server holds that are not the harness's own."""
        clients = self.driver.client_list()
        return sum(1 for c in clients if not c.get("name", "").startswith("peers-"))

    def version(self) -> str:
        info = self.driver.info("server")
        return str(info.get("valkey_version", info["redis_version"]))


# -- the run log ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    pid: int
    start: float
    end: float | None
    """Wall-clock seconds (time.time()) as the job wrote them; end None: not finished."""


class RunLog:
    """The file the job appends one JSON line to when it starts and when it ends, whatever the
    worker's language: {"job": id, "pid": pid, "event": "start" | "end", "t": time.time()}."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.touch()

    def runs(self, job: str) -> list[Run]:
        starts: dict[int, float] = {}
        order: list[tuple[int, float]] = []
        ends: dict[int, float] = {}
        for line in self.path.read_text().splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line being written
            if str(entry.get("job")) != job:
                continue
            pid, t = int(entry["pid"]), float(entry["t"])
            if entry["event"] == "start":
                starts[pid] = t
                order.append((pid, t))
            else:
                ends[pid] = t
        return [Run(pid, t, ends.get(pid) if ends.get(pid, 0) >= t else None)
                for pid, t in order]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie has exited: only its parent has not reaped it yet.
    with contextlib.suppress(OSError):
        if _stat(pid)[0] == "Z":
            return False
    return True


def _stat(pid: int) -> list[str]:
    """/proc/pid/stat's fields after the command name (which may hold spaces)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2:].split()


def session_of(pid: int) -> int | None:
    try:
        return int(_stat(pid)[3])
    except (OSError, ValueError, IndexError):
        return None


def kill_session(sid: int) -> None:
    """SIGKILLs every process of the session sid: a worker started in a session of its own, and
    whatever it forked, even into a process group of its own (RQ's work horse does)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and session_of(int(entry.name)) == sid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)


# -- the workers ----------------------------------------------------------------------------------

@dataclass
class Crew:
    """count workers, each `argv` in a session of its own, with `env` added to the
    environment; a worker that exits is replaced after RESPAWN_S, as a supervisor would. Its
    output goes to a log file per worker in `folder`."""

    argv: list[str]
    env: dict[str, str]
    folder: Path
    count: int = 2
    cwd: Path | None = None
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    exits: int = 0
    """Workers that exited on their own (not killed by the harness)."""
    killed: set[int] = field(default_factory=set)
    killed_at: dict[int, float] = field(default_factory=dict)
    """When (time.time()) each killed run's process was killed, by pid."""
    sessions: list[int] = field(default_factory=list)
    """The sessions of workers replaced, whose children stop() also ends."""
    _gone_since: dict[int, float] = field(default_factory=dict)
    _started: int = 0

    def __enter__(self) -> Crew:
        try:
            for _ in range(self.count):
                self.workers.append(self._spawn())
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _spawn(self) -> subprocess.Popen[bytes]:
        self._started += 1
        log = open(self.folder / f"worker-{self._started}.log", "wb")  # noqa: SIM115
        try:
            # Unbuffered: a Python worker's log must hold what it said before it was killed.
            env = {**os.environ, "PYTHONUNBUFFERED": "1", **self.env}
            worker = subprocess.Popen(self.argv, env=env, cwd=self.cwd,
                                      stdin=subprocess.DEVNULL, stdout=log,
                                      stderr=subprocess.STDOUT, start_new_session=True)
            SESSIONS.append(worker.pid)
            return worker
        finally:
            log.close()

    def tick(self) -> None:
        """Replaces each worker that has been gone for RESPAWN_S."""
        now = time.monotonic()
        for index, worker in enumerate(self.workers):
            if worker.poll() is None:
                continue
            gone = self._gone_since.setdefault(worker.pid, now)
            if now - gone >= RESPAWN_S:
                if worker.pid not in self.killed:
                    self.exits += 1
                # What it forked may outlive it (RQ's work horse runs on and finishes the job),
                # as under a supervisor that restarts the main process only; stop() ends it.
                self.sessions.append(worker.pid)
                self.workers[index] = self._spawn()

    def kill_running(self, pid: int) -> None:
        """SIGKILLs the whole session of the worker whose process (or child) `pid` is."""
        sid = session_of(pid)
        if sid is None:
            raise PlayError(f"the process {pid} that ran the job is already gone")
        self.killed.add(sid)
        self.killed_at[pid] = time.time()
        kill_session(sid)

    def stop(self) -> None:
        """Asks each worker to stop (SIGTERM to its session), then kills what is left."""
        for worker in self.workers:
            if worker.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(worker.pid, signal.SIGTERM)
        deadline = time.monotonic() + 3
        for worker in self.workers:
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.wait(timeout=max(0.0, deadline - time.monotonic()))
        for sid in self.sessions:
            kill_session(sid)
        for worker in self.workers:
            kill_session(worker.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.wait(timeout=5)

    def logs(self, lines: int = 30) -> str:
        """The last lines of every worker's log, for an error message."""
        out = []
        for path in sorted(self.folder.glob("worker-*.log")):
            tail = path.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {path.name}\n" + "\n".join(tail))
        return "\n".join(out)


# -- watching a history ----------------------------------------------------------------------------

View = dict[str, Any]
"""The library's own view of the job, as its inspector reads it: at least fate (completed,
failed, lost, waiting, running), counted (an int) and counted_as (what that number is)."""

DECIDED = ("completed", "failed", "lost")


@dataclass
class Watched:
    view: View
    runs: list[Run]
    decided_s: float | None
    reconnected_s: float | None
    most_in_flight: int
    """The most runs seen in flight at once (two: the job ran on two workers at once)."""
    most_counted: int
    """The highest count the library's view showed during the watch: a count can go back down
    (RQ: a worker that finishes the job late writes back the retries it loaded)."""


def in_flight(runs: list[Run], crew: Crew) -> list[Run]:
    """Runs started and not ended whose process still lives (a killed run never ends)."""
    return [r for r in runs if r.end is None and alive(r.pid)
            and session_of(r.pid) not in crew.killed]


def wait_ready(stage: Stage, crew: Crew, within_s: float = 30) -> None:
    """Returns once the server holds a connection for each worker (and half a second more,
    for a worker to reach its queue); PlayError after within_s."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        crew.tick()
        if stage.worker_clients() >= crew.count:
            pause(0.5)
            return
        pause(TICK_S / 2)
    raise PlayError(f"the workers did not connect within {within_s:g} s. Their logs:\n"
                    f"{crew.logs()}")


def wait_for_start(stage: Stage, crew: Crew, log: RunLog, job: str, within_s: float) -> Run:
    """The job's first run, once a worker has started it; PlayError after within_s."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        crew.tick()
        runs = log.runs(job)
        if runs:
            return runs[0]
        pause(TICK_S / 2)
    raise PlayError(f"no worker started the job within {within_s:g} s. The workers' logs:\n"
                    f"{crew.logs()}")


def watch(stage: Stage, crew: Crew, log: RunLog, job: str, inspect: Callable[[], View], *,
          within_s: float, settle_s: float = 2.0, back_s: float | None = None) -> Watched:
    """Watches until the library has decided the job (its view says completed, failed or lost
    and no run is in flight) and settle_s more have passed with nothing new, or until within_s.
    back_s, for a restart, is when the server came back: the time the first worker connection
    was seen after it is returned as reconnected_s (seconds after back_s)."""
    deadline = time.monotonic() + within_s
    view: View = {"fate": "unknown", "counted": 0, "counted_as": ""}
    decided_at: float | None = None
    reconnected: float | None = None
    seen = most = most_counted = 0
    while time.monotonic() < deadline:
        crew.tick()
        with contextlib.suppress(redis.RedisError, OSError):
            if back_s is not None and reconnected is None and stage.worker_clients() > 0:
                reconnected = stage.clock() - back_s
        with contextlib.suppress(redis.RedisError, OSError, InspectError):
            view = inspect()
            most_counted = max(most_counted, int(view["counted"]))
        runs = log.runs(job)
        flying = len(in_flight(runs, crew))
        most = max(most, flying)
        quiet = view["fate"] in DECIDED and not flying
        if quiet and decided_at is None:
            decided_at, seen = stage.clock(), len(runs)
        elif not quiet or len(runs) != seen:
            decided_at = None
        if decided_at is not None and stage.clock() - decided_at >= settle_s:
            break
        pause(TICK_S)
    return Watched(view, log.runs(job), decided_at, reconnected, most, most_counted)


class InspectError(Exception):
    """An inspector could not read the job (the server down, a worker mid-write)."""


def run_json(argv: list[str], env: dict[str, str], cwd: Path | None = None,
             timeout: float = 20) -> Any:
    """Runs a peer's helper command and reads the one JSON value it prints."""
    try:
        done = subprocess.run(argv, env={**os.environ, **env}, cwd=cwd, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise InspectError(f"{' '.join(argv[:3])} ran past {timeout:g} s") from exc
    if done.returncode != 0:
        raise InspectError(f"{' '.join(argv[:3])} failed: {done.stderr.strip()[-2000:]}")
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError) as exc:
        raise InspectError(f"{' '.join(argv[:3])} printed no JSON: {done.stdout[-500:]}") from exc
