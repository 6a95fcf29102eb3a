"""LabClient, the client every LabServer hands out, and the addresses a client is given: a
server's URL with its password and masked for printing, and a free port on loopback."""

import re
import socket
import urllib.parse
import weakref
from typing import Protocol

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from trafikey_lab.errors import ServerStopped


class ServerGone(ServerStopped, redis.ConnectionError):
    """The server's process ended while its owner still held it: killed from outside (a
    `kill`, the out-of-memory killer) or crashed. It is also a redis ConnectionError, so code
    that already expects a dropped connection (a worker loop, a shutdown) still sees one."""


class Owner(Protocol):
    """What a client asks of the server it belongs to (a LabServer): to say, when the
    connection is lost, whether the server is gone and how to get one back."""

    def _explain_lost_connection(self, exc: redis.ConnectionError) -> None: ...


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def mask_url(url: str) -> str:
    """The URL with any password replaced by ***, for messages: redis://:***@host:port."""
    password = urllib.parse.urlsplit(url).password
    if password:
        url = url.replace(f":{password}@", ":***@", 1)
    return re.sub(r"([?&]password=)[^&#]*", r"\1***", url)


class LabClient(redis.Redis):
    """A redis-py client of one LabServer that says what happened when its server is gone.

    Every call the lab and the notebooks make goes through `execute_command`, so a server
    killed from outside turns the next call's bare `Connection refused` into a ServerGone
    that says how to get a working server back.
    """

    owner: "weakref.ref[Owner] | None" = None

    def execute_command(self, *args, **options):
        try:
            return super().execute_command(*args, **options)
        except redis.ConnectionError as exc:
            server = self.owner() if self.owner is not None else None
            if server is None or isinstance(exc, ServerGone):
                raise
            server._explain_lost_connection(exc)
            raise


def connect(host: str, port: int, password: str | None, owner: Owner) -> LabClient:
    """A client that does not retry: a lab that restarts servers wants a refusal at once."""
    client = LabClient(host=host, port=port, password=password or None, socket_timeout=30,
                       retry=Retry(NoBackoff(), 0))
    client.owner = weakref.ref(owner)
    return client


def redis_url(host: str, port: int | None, password: str | None = None) -> str:
    """redis://[:password@]host:port, the password quoted and an IPv6 host in brackets."""
    secret = f":{urllib.parse.quote(password, safe='')}@" if password else ""
    return f"redis://{secret}{url_host(host)}:{port}"


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
