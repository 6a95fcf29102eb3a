"""choose_server: which kind of LabServer the lab uses, an attached or an owned one.

A module of its own because it names both kinds: owned.py and attached.py import server.py for
the interface, so server.py cannot import them back; and in live/__init__.py it would make
importing any one module of live/ (client.py, say) load both kinds.
"""

import os

from trafikey_lab.live.attached import AttachedServer
from trafikey_lab.live.owned import OwnedServer
from trafikey_lab.live.server import URL_ENV, LabServer


def choose_server(url: str | None = None, **options) -> LabServer:
    """The lab's live server of the right kind: an AttachedServer when url= is given or
    TRAFIKEY_VALKEY_URL is set (url="" ignores the variable), otherwise an OwnedServer built
    with the keyword options given. A server at a URL is used as it is, so the options go
    unused there: choose_server(persistence="aof") attaches all the same."""
    if url is None:
        url = os.environ.get(URL_ENV)
    return AttachedServer(url) if url else OwnedServer(**options)
