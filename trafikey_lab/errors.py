"""The lab's errors. Each message says what went wrong and how to put it right.

    LabError                 the lab's own setup went wrong: fix the setup, then retry
      ModuleNotBuilt
      ServerNotFound
      ServerStartError
        PortTaken
      ServerStopped
        ServerGone           (also a redis ConnectionError)
      RestartFailed
      InsecureServer
      RestartUnavailable
      BadNamespace
    ReplyError               a verb was refused: the course's expected answer, not a fault

ReplyError stands apart from LabError on purpose. A refusal (a wrong type, a bad argument)
is something the course makes happen and shows, the same text from the model and from the
server; code that catches LabError to report a broken setup must not swallow it.

ServerGone is defined in live/client.py, beside the client that raises it, because it is also a
redis ConnectionError: importing this module loads no redis. It is found here all the same.
"""

from typing import TYPE_CHECKING


class LabError(Exception):
    """Base of every error the lab raises about its own setup."""


class ModuleNotBuilt(LabError):
    """The native module's shared library is missing."""


class ServerNotFound(LabError):
    """No valkey-server binary could be found."""


class ServerStartError(LabError):
    """A valkey-server was started but did not come up."""


class PortTaken(ServerStartError):
    """The server could not listen on its port: another process holds it. A new server draws
    another port and tries again; a restart moves unless its port was fixed."""


class ServerStopped(LabError):
    """A call was made on a LabServer that is not running."""


class RestartFailed(LabError):
    """A restart could not stop the server with its data saved; the server runs on as before."""


class InsecureServer(LabError):
    """A server would be reachable from other machines without a password."""


class RestartUnavailable(LabError):
    """The lab is using a server it did not start, so it cannot restart it."""


class BadNamespace(LabError):
    """The namespace chosen for the queue names would break their keys' hash tag."""


class ReplyError(Exception):
    """A command was refused. `text` is the server's whole error line, code first."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text

    @property
    def code(self) -> str:
        """The error's code, the first word of its line: ERR, WRONGTYPE, NOSCRIPT..."""
        return self.text.split(" ", 1)[0]


if TYPE_CHECKING:
    from trafikey_lab.live.client import ServerGone as ServerGone


def __getattr__(name: str) -> type[LabError]:
    # PEP 562: ServerGone, loaded (with redis) only when asked for.
    if name == "ServerGone":
        from trafikey_lab.live.client import ServerGone as ServerGone

        return ServerGone
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
