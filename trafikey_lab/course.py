"""The notebooks' one setup call: checks the module and gives the kernel its live server.

One LabServer per kernel, started on first use and reused when a notebook is run again; it is
stopped when the kernel exits (and, if the kernel is killed, by its keeper).
"""

import atexit
from dataclasses import dataclass

from .build import module_path
from .executors import LiveExecutor, ModelExecutor, Queue
from .server import LabServer

_server: LabServer | None = None


@dataclass
class Course:
    server: LabServer
    live: LiveExecutor
    queue: Queue

    @staticmethod
    def model() -> ModelExecutor:
        """A fresh model: run_id NOW, an empty dataset, the clock at its start."""
        return ModelExecutor()

    def summary(self) -> str:
        version = self.server.client.info("server")["valkey_version"]
        return (
            f"valkey-server {version} with the trafikey module at {self.server.address}\n"
            f"run_id {self.server.run_id}"
        )


def lab_server() -> LabServer:
    global _server
    if _server is None or not _server.running:
        module_path()
        _server = LabServer().start()
        atexit.register(_server.stop)
    return _server


def setup(queue: str = "{course}") -> Course:
    """Starts (or reuses) this kernel's server and empties the notebook's queue."""
    server = lab_server()
    course = Course(server, LiveExecutor(server), Queue(queue))
    course.live.clear(course.queue)
    return course
