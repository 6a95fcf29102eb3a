"""The live server: the kinds of LabServer, the keeper that never lets one outlive its owner.

The names below are this package's face. Each is loaded from its module the first time it is
asked for (PEP 562), so that importing the package loads no redis: a course module imports it
at its top, as `from trafikey_lab import live as servers` (the course names its live executors
`live`), and reaches a server kind only in a live call. So the course imports in a page with
no redis (the book, in Pyodide), where a live call refuses before it gets here. Two ways to
ask at once, and load redis on import: `from trafikey_lab.live import OwnedServer`, and an
annotation `servers.LabServer` in a module without `from __future__ import annotations`.
"""

from typing import TYPE_CHECKING

from trafikey_lab.faces import lazy

if TYPE_CHECKING:  # the same names, eagerly, for the type checker only
    from redis import ConnectionError, ResponseError

    from trafikey_lab.live.attached import AttachedServer
    from trafikey_lab.live.choose import choose_server
    from trafikey_lab.live.executor import LiveExecutor
    from trafikey_lab.live.owned import SERVER_ENV, OwnedServer, owner_secret, server_binary
    from trafikey_lab.live.replicas import failed_over, replica_of
    from trafikey_lab.live.server import LabServer, client_of

_HOMES = {
    "AttachedServer": "trafikey_lab.live.attached",
    "LabServer": "trafikey_lab.live.server",
    "LiveExecutor": "trafikey_lab.live.executor",
    "OwnedServer": "trafikey_lab.live.owned",
    "SERVER_ENV": "trafikey_lab.live.owned",
    "choose_server": "trafikey_lab.live.choose",
    "client_of": "trafikey_lab.live.server",
    "failed_over": "trafikey_lab.live.replicas",
    "owner_secret": "trafikey_lab.live.owned",
    "replica_of": "trafikey_lab.live.replicas",
    "server_binary": "trafikey_lab.live.owned",
    # redis-py's own, as a client of these servers raises them: a refusal, a lost connection
    "ConnectionError": "redis",
    "ResponseError": "redis",
}

__all__ = [
    "SERVER_ENV",
    "AttachedServer",
    "ConnectionError",
    "LabServer",
    "LiveExecutor",
    "OwnedServer",
    "ResponseError",
    "choose_server",
    "client_of",
    "failed_over",
    "owner_secret",
    "replica_of",
    "server_binary",
]


__getattr__, __dir__ = lazy(__name__, _HOMES)
