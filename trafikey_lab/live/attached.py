"""AttachedServer: a module-loaded server that someone else runs, at a URL, used as it is."""

import urllib.parse
import weakref

import redis

from trafikey_lab.errors import RestartUnavailable, ServerStartError
from trafikey_lab.live.client import LabClient, ServerGone, mask_url
from trafikey_lab.live.server import LOG_LINES_QUOTED, URL_ENV, LabServer


class AttachedServer(LabServer):
    """A module-loaded server at a URL that something else started and owns, used as it is.

    choose_server(...) builds one when url= is given or TRAFIKEY_VALKEY_URL is set: a room's
    learners share the server that `python -m trafikey_lab server` runs and whose URL it
    prints. They do not share keys: with TRAFIKEY_VALKEY_URL set, every queue name carries the
    learner's namespace (TRAFIKEY_NAMESPACE, or else the OS user's name) inside its hash tag,
    `{alice:jobs}:active`, chosen when each key is built (executors.namespace), so two
    learners on one server run the same notebook on keys of their own. The lab holds no
    process of it, so it cannot restart or kill it (both refuse with RestartUnavailable),
    wait() and fault() have nothing to watch, and stop() only disconnects. host, port and
    password are the URL's.
    """

    started_by_lab = False
    can_restart = False
    can_take_replica = False

    def __init__(self, url: str):
        if not url:
            raise ValueError("an AttachedServer needs the URL of a running server, such as "
                             "redis://:password@host:port")
        self.url = url

    @property
    def running(self) -> bool:
        return self.client is not None

    def _start(self) -> None:
        client = LabClient.from_url(self.url)
        assert isinstance(client, LabClient), "from_url builds its class, though typed Redis"
        try:
            modules = client.module_list()
        except redis.AuthenticationError:
            raise ServerStartError(
                f"the server at {self.address} ({URL_ENV}) asks for a password that the URL does "
                f"not give, or gives wrong. Put it in the URL: redis://:password@host:port (a "
                f"workshop server prints this URL when it starts), or unset {URL_ENV}."
            ) from None
        except redis.RedisError as exc:
            raise ServerStartError(
                f"cannot use the server at {self.address} ({URL_ENV}): {self._scrub(str(exc))}. "
                f"Check that it is running and reachable and that the URL carries its password "
                f"(redis://:password@host:port), or unset {URL_ENV}."
            ) from None
        if b"trafikey" not in {module[b"name"] for module in modules}:
            raise ServerStartError(
                f"the server at {self.address} ({URL_ENV}) has no trafikey module loaded. Start "
                f"it with --loadmodule $(python -m trafikey_lab module-path), or unset {URL_ENV}."
            )
        client.owner = weakref.ref(self)
        self.client = client
        self.run_id = client.info("server")["run_id"]

    def stop(self) -> None:
        """Disconnects; the server runs on for whoever runs it."""
        self._close_client()

    def restart(self) -> str:
        raise RestartUnavailable(self._not_ours("restart", "Restart that server yourself"))

    def kill(self) -> None:
        raise RestartUnavailable(self._not_ours("kill", "Stop that server where it runs"))

    def wait(self) -> None:
        """Returns at once: the lab has no process of this server to wait for."""

    def fault(self) -> None:
        """None: whether the server still runs is its owner's to watch; a call that finds it
        gone raises ServerGone."""
        return None

    def log_tail(self, lines: int = LOG_LINES_QUOTED) -> str:
        return "(the lab did not start this server, so it cannot read its log)"

    @property
    def host(self) -> str | None:
        return urllib.parse.urlsplit(self.url).hostname

    @property
    def port(self) -> int | None:
        return urllib.parse.urlsplit(self.url).port

    @property
    def password(self) -> str | None:
        return urllib.parse.urlsplit(self.url).password or None

    @property
    def address(self) -> str:
        """Where the server is, without its password: for messages and notebook outputs."""
        return mask_url(self.url)

    @property
    def connection_url(self) -> str:
        """The URL it was attached by, password included: never for printing."""
        return self.url

    def _not_ours(self, what: str, fix: str) -> str:
        return (f"the lab is using the server at {self.address} ({URL_ENV}), which it did not "
                f"start, so it cannot {what} it. {fix}, or unset {URL_ENV} to let the lab run "
                f"its own.")

    def _explain_lost_connection(self, exc: redis.ConnectionError) -> None:
        """Called by LabClient when a call found no server: raises ServerGone naming it."""
        raise ServerGone(
            f"the server at {self.address} ({URL_ENV}) does not answer "
            f"({self._scrub(str(exc))}). Start it again, or unset {URL_ENV} and run the "
            f"notebook's setup cell again so that the lab runs its own."
        ) from None
