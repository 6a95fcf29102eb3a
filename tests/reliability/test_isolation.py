"""Isolation: between queues under ACL, between servers started together, and from the owner.

- A user whose ACL covers one queue's keys (~{a}:*) cannot read or change another queue's
  rows through any verb: a row the module derives (prefix + id) or takes as an argument is
  checked before it is read, and refused with NOPERM with nothing written.
- LabServers started in parallel never share a port or a folder.
- No LabServer outlives the Python process that started it, however it ends: SIGKILL of a
  plain child process, or a Jupyter kernel restart.
"""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import redis

from trafikey_lab import LiveExecutor, Queue, ReplyError

from .conftest import FIGURES, lab_server

NOPERM = "NOPERM No permissions to access a key"
MINE, THEIRS = Queue("{a}"), Queue("{b}")
GONE_WITHIN = 5.0


# -- ACL ---------------------------------------------------------------------------------------


@pytest.fixture
def acl_server(make_server):
    server = make_server()
    server.client.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "~{a}:*", "+@all")
    admin = LiveExecutor(server)
    for queue in (MINE, THEIRS):
        for job in (b"x", b"y"):
            admin.add(queue, job, b"secret of " + queue.base.encode())
    admin.claim(THEIRS, 1)
    return server


def as_alice(server) -> LiveExecutor:
    client = redis.Redis(host="127.0.0.1", port=server.port, username="alice", password="pw")

    class Alice:
        pass

    alice = Alice()
    alice.client = client
    return LiveExecutor(alice)


def refused_with(alice, admin, text_or_prefix, *args, exact=True):
    before = admin.dataset()
    with pytest.raises(ReplyError) as caught:
        alice.call(*args)
    text = caught.value.text
    if exact:
        assert text == text_or_prefix, args
    else:
        assert text.startswith(text_or_prefix), (args, text)
    assert admin.dataset() == before, f"{args} was refused but wrote"


def test_acl_user_of_one_queue_works_on_it(acl_server):
    """The control: alice's own queue answers, so the refusals below are about the keys."""
    alice = as_alice(acl_server)
    assert alice.claim(MINE, 1000)[:2] == [b"x", 1]
    assert alice.extend(MINE, b"x", 1, 1000) == 1
    assert alice.extends(MINE, 1000, [(b"x", 1)]) == [b"x"]
    assert alice.sweep(MINE, 1) == [[], []]


@pytest.mark.parametrize("case", ["claim", "sweep", "extends", "extends-after-own"])
def test_acl_user_cannot_reach_another_queues_rows_through_a_derived_or_argument_row(
        acl_server, case):
    admin, alice = LiveExecutor(acl_server), as_alice(acl_server)
    if case == "claim":
        args = ("EMQ.CLAIM", MINE.pending, MINE.active, THEIRS.prefix, 1000)
    elif case == "sweep":
        admin.call("ZADD", MINE.active, 1, b"x")
        args = ("EMQ.STALLED.CHECK", MINE.active, MINE.pending, MINE.dead, THEIRS.prefix, 1)
    elif case == "extends":
        admin.call("ZADD", MINE.active, 1, b"x")
        args = ("EMQ.EXTENDS", MINE.active, 1000, b"x", THEIRS.row_key(b"x"), 1)
    else:
        alice.claim(MINE, 1000)
        args = ("EMQ.EXTENDS", MINE.active, 1000, b"x", MINE.row_key(b"x"), 1,
                b"x", THEIRS.row_key(b"x"), 1)
    refused_with(alice, admin, NOPERM, *args)
    FIGURES["ACL refusals checked"] += 1


@pytest.mark.parametrize("verb", ["claim", "sweep"])
def test_acl_user_allowed_another_queues_prefix_but_not_its_rows_is_refused_by_the_module(
        acl_server, verb):
    """With the prefix string itself permitted (a declared key, which the server checks), the
    rows the module derives from it are left to the module's own check: it must refuse them
    before reading or writing one."""
    acl_server.client.execute_command("ACL", "SETUSER", "alice", f"~{THEIRS.prefix.decode()}")
    admin, alice = LiveExecutor(acl_server), as_alice(acl_server)
    if verb == "claim":
        args = ("EMQ.CLAIM", MINE.pending, MINE.active, THEIRS.prefix, 1000)
    else:
        admin.call("ZADD", MINE.active, 1, b"x")
        args = ("EMQ.STALLED.CHECK", MINE.active, MINE.pending, MINE.dead, THEIRS.prefix, 1)
    refused_with(alice, admin, NOPERM, *args)
    FIGURES["ACL refusals checked"] += 1


def test_acl_refuses_a_derived_row_even_when_it_does_not_exist(acl_server):
    """The check comes before the read: a missing row of another queue is not a ghost to drop."""
    admin, alice = LiveExecutor(acl_server), as_alice(acl_server)
    admin.call("DEL", THEIRS.row_key(b"x"))
    refused_with(alice, admin, NOPERM, "EMQ.CLAIM", MINE.pending, MINE.active, THEIRS.prefix, 1000)


@pytest.mark.parametrize("verb", ["claim", "extend", "extends", "sweep"])
def test_acl_user_cannot_name_another_queues_keys(acl_server, verb):
    """Declared keys are the server's to check: its own NOPERM text, and nothing written."""
    admin, alice = LiveExecutor(acl_server), as_alice(acl_server)
    args = {
        "claim": ("EMQ.CLAIM", THEIRS.pending, THEIRS.active, THEIRS.prefix, 1000),
        "extend": ("EMQ.EXTEND", THEIRS.active, THEIRS.row_key(b"x"), b"x", 1, 1000),
        "extends": ("EMQ.EXTENDS", THEIRS.active, 1000, b"x", THEIRS.row_key(b"x"), 1),
        "sweep": ("EMQ.STALLED.CHECK", THEIRS.active, THEIRS.pending, THEIRS.dead, THEIRS.prefix,
                  1),
    }[verb]
    refused_with(alice, admin, "NOPERM", *args, exact=False)


# -- servers side by side ------------------------------------------------------------------


def test_eight_servers_started_in_parallel_share_no_port_and_no_folder():
    servers = [lab_server() for _ in range(8)]
    errors = []

    def start(server):
        try:
            server.start()
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(s,)) for s in servers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    try:
        assert not errors, errors
        assert len({s.port for s in servers}) == 8
        assert len({s.data_dir for s in servers}) == 8
        assert len({s.pid for s in servers}) == 8
        for server in servers:
            server.client.set("owner", str(server.port))
        for server in servers:
            assert server.client.get("owner") == str(server.port).encode()
            assert server.client.info("server")["run_id"] == server.run_id
        folders = [s.data_dir for s in servers]
    finally:
        for server in servers:
            server.stop()
    assert not any(folder.exists() for folder in folders)


# -- no server outlives its owner -----------------------------------------------------------


def running(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def wait_gone(pid: int, folder: Path, what: str) -> None:
    """Waits up to GONE_WITHIN for the server process (what="server") or its scratch folder
    (what="folder") to be gone, and fails if it is not."""
    deadline = time.monotonic() + GONE_WITHIN
    while time.monotonic() < deadline and (running(pid) if what == "server" else folder.exists()):
        time.sleep(0.05)
    try:
        if what == "server":
            assert not running(pid), f"valkey-server {pid} outlived its owner by {GONE_WITHIN} s"
        else:
            assert not folder.exists(), f"the scratch folder {folder} outlived its owner"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


WHAT_IS_GONE = ["server", "folder"]


OWNER = textwrap.dedent("""
    import sys, time
    sys.path[:0] = {path!r}
    from tests.reliability.conftest import lab_server
    server = lab_server().start()
    print(server.pid, server.data_dir, flush=True)
    time.sleep(600)
""")


def owner_code() -> str:
    root = str(Path(__file__).resolve().parents[2])
    return OWNER.format(path=[root])


def owner_killed(group: bool):
    """Starts an owner process with a LabServer, SIGKILLs it (or its whole process group)."""
    child = subprocess.Popen([sys.executable, "-c", owner_code()], stdout=subprocess.PIPE,
                             text=True, start_new_session=group)
    try:
        pid, folder = child.stdout.readline().split()
        pid, folder = int(pid), Path(folder)
        assert running(pid)
        if group:
            os.killpg(child.pid, signal.SIGKILL)
        else:
            child.kill()
        child.wait(10)
        FIGURES["faults injected (owner SIGKILLed)"] += 1
        return pid, folder
    finally:
        if child.poll() is None:
            child.kill()


@pytest.mark.parametrize("what", ["server", "folder"])
def test_nothing_outlives_a_sigkilled_owner_process(what):
    wait_gone(*owner_killed(group=False), what)


@pytest.mark.parametrize("what", WHAT_IS_GONE)
def test_nothing_outlives_an_owner_whose_process_group_is_sigkilled(what):
    wait_gone(*owner_killed(group=True), what)


@pytest.mark.parametrize("what", WHAT_IS_GONE)
def test_nothing_outlives_a_jupyter_kernel_restart(what):
    jupyter_client = pytest.importorskip("jupyter_client")
    manager = jupyter_client.KernelManager(kernel_name="python3")
    manager.start_kernel(env={**os.environ})
    try:
        client = manager.client()
        client.start_channels()
        client.wait_for_ready(timeout=60)
        lines = []
        reply = client.execute_interactive(
            owner_code().replace("time.sleep(600)", ""),
            output_hook=lambda msg: lines.append(msg["content"].get("text", "")),
            timeout=60,
        )
        assert reply["content"]["status"] == "ok", reply["content"]
        pid, folder = "".join(lines).split()
        pid, folder = int(pid), Path(folder)
        assert running(pid)
        client.stop_channels()
        manager.restart_kernel(now=True)
        FIGURES["faults injected (kernel restarted)"] += 1
        wait_gone(pid, folder, what)
    finally:
        manager.shutdown_kernel(now=True)
