"""LiveStage: the scenarios' stage (scenarios.py) on real servers.

Its worker and its sweeper are two connections of their own, made again after every event
that brings another process, as two clients reconnecting in production would be. The events
are the real ones: a replica started and promoted (a failover), the primary handed to a
replica and back (a failback), a restart of a server whose data is its append-only file, SAVE
(a snapshot), and SIGKILL followed by a start on the same folder (a crash). The failover's
choreography is course/limits.py's, written once there.
"""

import contextlib
from dataclasses import dataclass

import redis

from trafikey_lab.errors import LabError
from trafikey_lab.live.executor import LiveExecutor
from trafikey_lab.live.owned import OwnedServer
from trafikey_lab.live.replicas import failed_over, replica_of
from trafikey_lab.live.server import LabServer, client_of
from trafikey_lab.player import Stage
from trafikey_lab.stories import Event


@dataclass
class Connection:
    """One client of a server, as LiveExecutor takes it (anything with a `client`)."""

    client: redis.Redis


def connect(server: LabServer) -> LiveExecutor:
    """A LiveExecutor over a connection of its own to the server."""
    return LiveExecutor(Connection(redis.Redis.from_url(server.connection_url)))


class LiveStage(Stage):
    """A scenario's stage on `server`, or, when none is given, on an OwnedServer of its own
    started with these settings (OwnedServer's: persistence, save, appendfsync). close()
    stops a server the stage started, or one handed to it with owns=True."""

    def __init__(self, server: LabServer | None = None, *, owns: bool = False, **settings):
        self._owned = owns or server is None
        self.server = OwnedServer(**settings).start() if server is None else server
        self.serving = self.server
        """The server that serves the queue now: the promoted replica after a failover."""
        self._stack = contextlib.ExitStack()
        self._clients: list[LiveExecutor] = []
        self._connect()

    def _connect(self) -> None:
        """Two new clients of the serving process, the old ones closed."""
        self._close_clients()
        self._clients = [connect(self.serving), connect(self.serving)]
        self.worker, self.sweeper = self._clients

    def _close_clients(self) -> None:
        for executor in self._clients:
            executor.client.close()

    def restart(self) -> None:
        self.serving.restart()
        self._connect()

    def event(self, event: Event) -> None:
        if event == Event.FAILOVER:
            replica = self._stack.enter_context(replica_of(self.server))
            client_of(replica).execute_command("REPLICAOF", "NO", "ONE")
            self.serving = replica
            self._connect()
        elif event == Event.FAILBACK:
            with failed_over(self.server):
                pass
        elif event == Event.AOF_RESTART:
            if getattr(self.serving, "persistence", None) != "aof":
                raise LabError("an append-only file's replay needs a server started with "
                               "persistence='aof': give LiveStage(persistence='aof')")
            self.restart()
        elif event == Event.SNAPSHOT:
            self.worker.call("SAVE")
        elif event == Event.CRASH:
            self.serving.kill()
            self.serving.start()
            self._connect()
        else:
            raise ValueError(f"the live stage has no event {event!r}")

    def close(self) -> None:
        self._close_clients()
        self._stack.close()
        if self._owned:
            self.server.stop()


def stage_for(scenario) -> LiveStage:
    """A stage of its own for each scenario: an append-only server for the AOF's replay."""
    aof = Event.AOF_RESTART in scenario.steps
    return LiveStage(persistence="aof" if aof else "rdb")
