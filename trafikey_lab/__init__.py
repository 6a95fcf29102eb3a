"""trafikey lab: the lease epoch of trafikey, as a model, a native Valkey module and a course."""

from trafikey_lab.errors import (
    InsecureServer,
    LabError,
    ModuleNotBuilt,
    PortTaken,
    ReplyError,
    RestartFailed,
    RestartUnavailable,
    ServerGone,
    ServerNotFound,
    ServerStartError,
    ServerStopped,
)
from trafikey_lab.executors import Executor, LiveExecutor, ModelExecutor, Queue
from trafikey_lab.histories import HISTORIES, Trace, compare, play, reading_line
from trafikey_lab.live.attached import AttachedServer
from trafikey_lab.live.choose import choose_server
from trafikey_lab.live.owned import OwnedServer
from trafikey_lab.live.server import LabServer
from trafikey_lab.module.build import module_path

__all__ = [
    "HISTORIES",
    "AttachedServer",
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
    "compare",
    "module_path",
    "play",
    "reading_line",
    "choose_server",
]
