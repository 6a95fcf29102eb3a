"""trafikey lab: the lease epoch of trafikey, as a model, a native Valkey module and a course."""

from .build import module_path
from .errors import (
    InsecureServer,
    LabError,
    ModuleNotBuilt,
    ReplyError,
    RestartFailed,
    RestartUnavailable,
    ServerGone,
    ServerNotFound,
    ServerStartError,
    ServerStopped,
)
from .executors import Executor, LiveExecutor, ModelExecutor, Queue
from .histories import HISTORIES, Trace, compare, play, verdict_line
from .server import AttachedServer, LabServer, OwnedServer

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
    "verdict_line",
]
