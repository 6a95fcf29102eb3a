"""trafikey lab: the lease epoch of trafikey, as a model, a native Valkey module and a course.

The names below are the package's face. Each is loaded from its module the first time it is
asked for (PEP 562), so that importing the pure core (trafikey_lab.epoch, sweep, model, stories,
player, schedule) loads neither redis nor a server kind nor a plotting library.
"""

from typing import TYPE_CHECKING

from trafikey_lab.faces import lazy

if TYPE_CHECKING:  # the same names, eagerly, for the type checker only
    from trafikey_lab.errors import (
        BadNamespace,
        InsecureServer,
        LabError,
        ModuleNotBuilt,
        PortTaken,
        ReplyError,
        RestartFailed,
        RestartUnavailable,
        ServerNotFound,
        ServerStartError,
        ServerStopped,
    )
    from trafikey_lab.executors import Executor, ModelExecutor, Queue
    from trafikey_lab.live.attached import AttachedServer
    from trafikey_lab.live.choose import choose_server
    from trafikey_lab.live.client import ServerGone
    from trafikey_lab.live.executor import LiveExecutor
    from trafikey_lab.live.owned import OwnedServer
    from trafikey_lab.live.server import LabServer
    from trafikey_lab.module.build import module_path
    from trafikey_lab.player import Trace, compare, play, reading_line
    from trafikey_lab.stories import HISTORIES

_HOMES = {
    "BadNamespace": "trafikey_lab.errors",
    "InsecureServer": "trafikey_lab.errors",
    "LabError": "trafikey_lab.errors",
    "ModuleNotBuilt": "trafikey_lab.errors",
    "PortTaken": "trafikey_lab.errors",
    "ReplyError": "trafikey_lab.errors",
    "RestartFailed": "trafikey_lab.errors",
    "RestartUnavailable": "trafikey_lab.errors",
    "ServerGone": "trafikey_lab.live.client",
    "ServerNotFound": "trafikey_lab.errors",
    "ServerStartError": "trafikey_lab.errors",
    "ServerStopped": "trafikey_lab.errors",
    "Executor": "trafikey_lab.executors",
    "ModelExecutor": "trafikey_lab.executors",
    "Queue": "trafikey_lab.executors",
    "LiveExecutor": "trafikey_lab.live.executor",
    "HISTORIES": "trafikey_lab.stories",
    "Trace": "trafikey_lab.player",
    "compare": "trafikey_lab.player",
    "play": "trafikey_lab.player",
    "reading_line": "trafikey_lab.player",
    "AttachedServer": "trafikey_lab.live.attached",
    "choose_server": "trafikey_lab.live.choose",
    "OwnedServer": "trafikey_lab.live.owned",
    "LabServer": "trafikey_lab.live.server",
    "module_path": "trafikey_lab.module.build",
}

__all__ = [
    "HISTORIES",
    "AttachedServer",
    "BadNamespace",
    "Executor",
    "InsecureServer",
    "LabError",
    "LabServer",
    "LiveExecutor",
    "ModelExecutor",
    "ModuleNotBuilt",
    "OwnedServer",
    "PortTaken",
    "Queue",
    "ReplyError",
    "RestartFailed",
    "RestartUnavailable",
    "ServerGone",
    "ServerNotFound",
    "ServerStartError",
    "ServerStopped",
    "Trace",
    "choose_server",
    "compare",
    "module_path",
    "play",
    "reading_line",
]


__getattr__, __dir__ = lazy(__name__, _HOMES)
