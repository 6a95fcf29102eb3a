"""LabServer: the lab's live server, one interface over two kinds.

OwnedServer (owned.py) is a real valkey-server with the trafikey module, on loopback, that this
process starts and owns. AttachedServer (attached.py) is a module-loaded server someone else
runs, at a URL (TRAFIKEY_VALKEY_URL), which the lab uses as it is and cannot restart.
choose_server(...) (choose.py) picks. Either hands out a LabClient (client.py).
"""

import abc
from typing import Self

import redis

from trafikey_lab.errors import ServerStopped
from trafikey_lab.executors import URL_ENV
from trafikey_lab.live.client import LabClient

__all__ = ["LOG_LINES_QUOTED", "URL_ENV", "LabServer", "client_of"]
LOG_LINES_QUOTED = 15


class LabServer(abc.ABC):
    """The lab's live server, as the library, the notebooks and the tests use it. Two kinds:

    OwnedServer     a module-loaded valkey-server this process starts, restarts and stops:
                    a learner's own server, a test's, a replica, or the one a workshop's
                    `python -m trafikey_lab server` runs for a room.
    AttachedServer  a module-loaded server someone else runs, at a URL (TRAFIKEY_VALKEY_URL):
                    a room's shared server. Learners who share it each write under a
                    namespace of their own, the OS user's name or TRAFIKEY_NAMESPACE, inside
                    every queue name (executors.namespace), so that one learner's calls never
                    touch another's keys; what would stop or restart the server, or give it a
                    replica, is refused or skipped, since every learner on it would feel it.

    choose_server(...) picks the kind; this class declares what both offer, as Executor does
    for the model and a live server.

    What either kind offers: client (None until started), run_id, pid (None when attached),
    host, port, password, address (for printing: no password), connection_url (with it),
    what it can do (started_by_lab, can_restart, can_take_replica), running; start() (returns
    the server) and stop(), or `with`; restart() (returns the new run_id), kill(), wait(),
    fault(), log_tail(). An attached server refuses restart() and kill() with
    RestartUnavailable, saying how to get a server the lab can restart.
    """

    started_by_lab: bool
    """The lab started this process and holds it: it can read its log and watch it end."""
    can_restart: bool
    """restart() and kill() work: a lesson that restarts the server can run on it."""
    can_take_replica: bool
    """The lab can start a replica of it beside it and hand its role over (notebook 05)."""

    client: LabClient | None = None
    run_id: str | None = None
    pid: int | None = None

    @property
    @abc.abstractmethod
    def host(self) -> str | None:
        """The address a client on this machine connects to."""

    @property
    @abc.abstractmethod
    def port(self) -> int | None:
        """The port it listens on; None before an owned server first starts."""

    @property
    @abc.abstractmethod
    def password(self) -> str | None:
        """What a client must give, or None for a server that asks for none."""

    @property
    @abc.abstractmethod
    def running(self) -> bool:
        """A server is there to use: started and not stopped."""

    @property
    @abc.abstractmethod
    def address(self) -> str:
        """Where the server listens, for printing: never the password."""

    @property
    @abc.abstractmethod
    def connection_url(self) -> str:
        """A redis:// URL with the password, for a client that must connect."""

    @abc.abstractmethod
    def _start(self) -> None:
        """Starts or connects; called by start() when the server is not running."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stops the server (or, when attached, only disconnects)."""

    @abc.abstractmethod
    def restart(self) -> str:
        """A new process over the same data; returns its run_id."""

    @abc.abstractmethod
    def kill(self) -> None:
        """Kills the process as a crash would, keeping its folder."""

    @abc.abstractmethod
    def wait(self) -> None:
        """Waits for the process to end."""

    @abc.abstractmethod
    def fault(self) -> str | None:
        """Why the server is no longer usable, or None while it is."""

    @abc.abstractmethod
    def log_tail(self, lines: int = LOG_LINES_QUOTED) -> str:
        """The last lines the server printed or logged, password masked, for a message."""

    @abc.abstractmethod
    def _explain_lost_connection(self, exc: redis.ConnectionError) -> None:
        """Raises ServerGone, saying how to recover, when a lost connection is a lost server."""

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> Self:
        """Starts (or connects to) the server; one already running is returned as it is."""
        if not self.running:
            self._start()
        return self

    def _close_client(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

    def _scrub(self, text: str) -> str:
        """The text with this server's password masked: a server that quotes a bad config
        line quotes it whole, and a message is no place for a secret."""
        return text.replace(self.password, "***") if self.password else text


def client_of(server: LabServer) -> LabClient:
    """The client of a server that is running: ServerStopped, saying how to start it, if not."""
    if server.client is None:
        raise ServerStopped(
            "the lab's server is not running: start it with server.start(), or in a "
            "notebook run its setup cell again"
        )
    return server.client
