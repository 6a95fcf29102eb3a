"""The notebooks' one setup call: checks the module and gives the kernel its live server.

One LabServer per kernel, started on first use and reused when a notebook is run again; it is
stopped when the kernel exits (and, if the kernel is killed, by its keeper). When the setup
cell finds that server unusable (killed from outside, or its scratch folder removed), it says
so and starts a new one in the same LabServer object, so the executors and widgets that
earlier cells made keep working with it.

In a browser page that runs the course's Python (the book, in Pyodide) there is no server and
no C module: setup says so in one line and gives a course whose live parts refuse in one line
(NoServerHere), while every cell on the model runs as in JupyterLab.
"""

from __future__ import annotations

import atexit
from dataclasses import dataclass

from IPython import get_ipython

from trafikey_lab import live as servers
from trafikey_lab.errors import LabError
from trafikey_lab.executors import ModelExecutor, Queue
from trafikey_lab.module import native
from trafikey_lab.module.build import module_path
from trafikey_lab.plots import alt

_server: servers.LabServer | None = None

IN_PAGE = ("This page runs the course's Python in your browser: the model, with no server and no "
           "C module. A cell that needs the live server says so; open the notebook live "
           "(Binder or a JupyterHub, the links above) to run it.")


class NoServerHere(LabError):
    """A live step asked for in a page that has no server."""


class _Absent:
    """Stands where the live server and executor would be in a page that has none: touching it
    raises NoServerHere, which the page prints as its one line."""

    def __init__(self, what: str) -> None:
        self._what = what

    def __getattr__(self, name: str):
        raise NoServerHere(_not_here(self._what))


def _not_here(what: str) -> str:
    return (f"{what} is not in this page: the page runs the model only. Open the notebook live "
            "(Binder or a JupyterHub) to run this cell.")


def needs_servers_of_its_own(what: str) -> None:
    """Refuses in one line, in a page, a step that starts servers of its own (there are none
    to start there); does nothing elsewhere."""
    if native.in_page():
        raise NoServerHere(_not_here(what))


@dataclass
class Course:
    server: servers.LabServer
    live: servers.LiveExecutor
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


def lab_server() -> servers.LabServer:
    global _server
    if _server is None:
        _server = servers.choose_server()
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
    after it carry their alt text. In a page with no server, says so and returns a course
    whose live parts refuse in one line."""
    if native.in_page():
        return _in_page(queue)
    alt.install()
    server = lab_server()
    course = Course(server, servers.LiveExecutor(server), Queue(queue))
    course.live.clear(course.queue)
    return course


def _in_page(queue: str) -> Course:
    print(IN_PAGE)
    shell = get_ipython()
    if shell is not None:
        def one_line(shell, etype, value, tb, tb_offset=None):
            print(value)

        shell.set_custom_exc((NoServerHere,), one_line)
    absent = _Absent("the live server")
    return Course(absent, absent, Queue(queue))  # type: ignore[arg-type]
