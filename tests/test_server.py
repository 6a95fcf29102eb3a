"""LabServer: a real server, real restarts, persistence, replication, ACL, and no leftovers."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import redis

from trafikey_lab import (
    LabServer, LiveExecutor, Queue, ReplyError, RestartUnavailable, ServerNotFound,
    ServerStartError,
)
from trafikey_lab.errors import ServerStopped


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split()[2] != "Z"


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_server_runs_on_loopback_with_the_module_listed(lab):
    modules = {module[b"name"]: module for module in lab.client.module_list()}
    assert modules[b"trafikey"][b"path"].endswith(b"trafikey_lab/module/trafikey.so")
    assert lab.client.config_get("bind")["bind"] == "127.0.0.1"
    assert len(lab.run_id) == 40


def test_restart_gives_a_new_run_id_over_the_same_data(servers):
    server = servers()
    server.client.set("kept", "yes")
    first, port, folder = server.run_id, server.port, server.data_dir
    second = server.restart()
    assert second != first and second == server.client.info("server")["run_id"]
    assert (server.port, server.data_dir) == (port, folder)
    assert server.client.get("kept") == b"yes"


def test_aof_replay_keeps_the_granting_stamp_and_deadline(servers):
    server = servers(persistence="aof")
    live, queue = LiveExecutor(server), Queue()
    live.add(queue, "a")
    _, _, deadline = live.claim(queue, 10**9)
    granted = server.run_id
    server.kill()
    server.start()
    assert server.run_id != granted and server.client.ping()
    assert live.row(queue, "a")[b"lease_epoch"] == granted.encode()
    assert live.deadline(queue, "a") == deadline


def test_replica_holds_the_primary_stamp_and_refuses_the_verbs(servers):
    primary = servers()
    replica = servers(extra_args=("--replicaof", "127.0.0.1", str(primary.port),
                                  "--propagation-error-behavior", "panic"))
    deadline = time.monotonic() + 10
    while replica.client.info("replication")["master_link_status"] != "up":
        assert time.monotonic() < deadline, "the replica did not connect"
        time.sleep(0.05)
    queue = Queue()
    live = LiveExecutor(primary)
    live.add(queue, "a")
    live.claim(queue, 10**9)
    assert primary.client.wait(1, 5000) == 1
    copy = LiveExecutor(replica)
    assert copy.row(queue, "a") == live.row(queue, "a")
    assert copy.row(queue, "a")[b"lease_epoch"] == primary.run_id.encode() != replica.run_id.encode()
    with pytest.raises(ReplyError) as caught:
        copy.claim(queue, 1000)
    assert caught.value.text.startswith("READONLY")


def test_a_user_without_access_to_a_row_gets_noperm_and_nothing_is_written(lab):
    lab.client.flushall()
    mine, theirs = Queue("{mine}"), Queue("{theirs}")
    owner = LiveExecutor(lab)
    owner.add(theirs, "t")
    lab.client.execute_command("ACL", "SETUSER", "narrow", "on", "nopass", "+@all",
                               "~{mine}:*", "~{theirs}:pending", "~{theirs}:active",
                               "~{theirs}:dead", "~{theirs}:job:")
    narrow = redis.Redis(port=lab.port, username="narrow", password="x")
    before = owner.dataset()
    try:
        with pytest.raises(redis.exceptions.NoPermissionError):
            narrow.execute_command("EMQ.CLAIM", theirs.pending, theirs.active, theirs.prefix, 1000)
        assert owner.dataset() == before
        narrow.execute_command("EVAL", "return 1", 0)
        with pytest.raises(redis.exceptions.NoPermissionError):
            narrow.execute_command("EMQ.EXTENDS", mine.active, 1000, "t", theirs.row("t"), 1)
        assert owner.dataset() == before
    finally:
        narrow.close()
        lab.client.execute_command("ACL", "DELUSER", "narrow")


OWNER = textwrap.dedent("""
    import sys, time
    from trafikey_lab import LabServer
    server = LabServer().start()
    print(server.pid, server.data_dir, flush=True)
    time.sleep(60)
""")


def test_sigkill_of_the_owner_leaves_no_server_and_no_folder():
    owner = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True)
    pid, folder = owner.stdout.readline().split()
    assert alive(int(pid))
    owner.send_signal(signal.SIGKILL)
    owner.wait()
    assert gone_within(int(pid), 10)
    assert gone_within_folder(folder, 10)


def gone_within_folder(folder: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while os.path.exists(folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not os.path.exists(folder)


def test_stop_ends_the_process_and_removes_the_scratch_folder():
    server = LabServer().start()
    pid, folder = server.pid, server.data_dir
    server.stop()
    assert gone_within(pid, 10)
    assert not folder.exists()


def test_a_server_that_cannot_start_quotes_its_log(tmp_path):
    server = LabServer(extra_args=("--no-such-option", "1"), data_dir=tmp_path)
    with pytest.raises(ServerStartError) as caught:
        server.start()
    message = str(caught.value)
    assert "no-such-option" in message and "doctor" in message


def test_a_missing_server_binary_says_how_to_fix_it(monkeypatch):
    monkeypatch.setenv("TRAFIKEY_VALKEY_SERVER", "/nonexistent/valkey-server")
    with pytest.raises(ServerNotFound) as caught:
        LabServer().start()
    assert "unset it" in str(caught.value)


def test_an_existing_server_is_used_as_it_is_and_never_restarted(lab, monkeypatch):
    monkeypatch.setenv("TRAFIKEY_VALKEY_URL", lab.address)
    with LabServer() as borrowed:
        assert borrowed.external and borrowed.run_id == lab.run_id
        with pytest.raises(RestartUnavailable) as caught:
            borrowed.restart()
        assert "unset TRAFIKEY_VALKEY_URL" in str(caught.value)
    assert lab.client.ping()


def test_an_existing_server_without_the_module_is_refused(servers, monkeypatch):
    plain = servers(module=False)
    monkeypatch.setenv("TRAFIKEY_VALKEY_URL", plain.address)
    with pytest.raises(ServerStartError) as caught:
        LabServer().start()
    assert "--loadmodule" in str(caught.value)


def test_a_call_on_a_stopped_server_says_how_to_start_it():
    server = LabServer().start()
    live = LiveExecutor(server)
    server.stop()
    with pytest.raises(ServerStopped, match="start it with server.start"):
        live.claim(Queue(), 1000)
