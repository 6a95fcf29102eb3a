"""The notebooks' one setup call: checks the module and gives the kernel its live server.

One LabServer per kernel, started on first use and reused when a notebook is run again; it is
stopped when the kernel exits (and, if the kernel is killed, by its keeper). When the setup
cell finds that server unusable (killed from outside, or its scratch folder removed), it says
so and starts a new one in the same LabServer object, so the executors and widgets that
earlier cells made keep working with it.
"""

import atexit
from dataclasses import dataclass

from trafikey_lab.executors import ModelExecutor, Queue
from trafikey_lab.live.choose import choose_server
from trafikey_lab.live.executor import LiveExecutor
from trafikey_lab.live.server import LabServer
from trafikey_lab.module.build import module_path
from trafikey_lab.plots import alt

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
        version = self.live.client.info("server")["valkey_version"]
        return (
            f"valkey-server {version} with the trafikey module at {self.server.address}\n"
            f"run_id {self.server.run_id}"
        )


def lab_server() -> LabServer:
    global _server
    if _server is None:
        _server = choose_server()
        atexit.register(_server.stop)
    fault = _server.fault()
    if fault:
        print(f"The lab's server {fault}. Starting a new one: run the cells after this one "
              f"again, since the rows the old one held are gone.")
        _server.stop()
    if not _server.running:
        module_path()  # a missing build is named with its fix before a start could fail on it
    return _server.start()


def setup(queue: str = "{course}") -> Course:
    """Starts (or reuses) this kernel's server and empties the notebook's queue; figures shown
    after it carry their alt text."""
    alt.install()
    server = lab_server()
    course = Course(server, LiveExecutor(server), Queue(queue))
    course.live.clear(course.queue)
    return course
