"""LabServer: a real server, real restarts, clear errors, and no leftovers.

Crashes, AOF replay, replicas, ACL and owners killed with SIGKILL are in tests/reliability."""

import errno
import socket
import time

import pytest

# Whether a pid still runs is read one way everywhere: tools/processes.py.
from processes import alive

from trafikey_lab import (
    AttachedServer,
    LabServer,
    LiveExecutor,
    OwnedServer,
    Queue,
    RestartUnavailable,
    ServerNotFound,
    ServerStartError,
    choose_server,
)
from trafikey_lab.errors import ServerStopped
from trafikey_lab.live.client import free_port


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
    assert second != first
    assert second == server.client.info("server")["run_id"]
    assert (server.port, server.data_dir) == (port, folder)
    assert server.client.get("kept") == b"yes"


def take_the_port_once_stopped(server, monkeypatch) -> socket.socket:
    """Makes the server's next shutdown end with another process listening on its port, as a
    process that drew that port as free would while a restart is between its two servers."""
    squatter = socket.socket()
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    shutdown = server._shutdown

    def shutdown_then_take_the_port(save):
        shutdown(save)
        squatter.bind(("127.0.0.1", server.port))
        squatter.listen()

    monkeypatch.setattr(server, "_shutdown", shutdown_then_take_the_port)
    return squatter


def test_a_restart_that_finds_its_port_taken_says_so_and_moves_to_a_free_one(servers, monkeypatch):
    server = servers()
    server.client.set("kept", "yes")
    first, port, folder = server.run_id, server.port, server.data_dir
    with take_the_port_once_stopped(server, monkeypatch) as squatter:
        with pytest.warns(UserWarning, match="was taken by another process") as warned:
            second = server.restart()
        assert squatter.getsockname()[1] == port
    assert [str(w.message) for w in warned] == [
        f"port {port} was taken by another process during the restart: the server now listens "
        f"on port {server.port}, with the same data. A client connected by hand needs the new "
        f"address, {server.address}."
    ]
    assert server.port != port
    assert server.data_dir == folder
    assert second != first
    assert second == server.client.info("server")["run_id"]
    assert server.client.connection_pool.connection_kwargs["port"] == server.port
    assert server.client.get("kept") == b"yes"
    assert LiveExecutor(server).run_id == second


def test_a_restart_keeps_a_port_it_was_given_and_says_how_to_free_it(servers, monkeypatch):
    port = free_port()
    server = servers(port=port)
    with take_the_port_once_stopped(server, monkeypatch), \
            pytest.raises(ServerStartError) as caught:
        server.restart()
    message = str(caught.value)
    assert f"port {port} was taken by another process during the restart" in message
    assert "port= so that a restart can move" in message
    assert server.port == port


def test_stop_ends_the_process_and_removes_the_scratch_folder():
    server = choose_server().start()
    pid, folder = server.pid, server.data_dir
    server.stop()
    assert gone_within(pid, 10)
    assert not folder.exists()


def test_a_server_that_cannot_start_quotes_its_log(tmp_path):
    server = choose_server(extra_args=("--no-such-option", "1"), data_dir=tmp_path)
    with pytest.raises(ServerStartError) as caught:
        server.start()
    message = str(caught.value)
    assert "no-such-option" in message
    assert "doctor" in message


def test_a_missing_server_binary_says_how_to_fix_it_and_leaves_no_folder(monkeypatch):
    monkeypatch.setenv("TRAFIKEY_VALKEY_SERVER", "/nonexistent/valkey-server")
    server = choose_server()
    with pytest.raises(ServerNotFound) as caught:
        server.start()
    assert "unset it" in str(caught.value)
    assert server.data_dir is None


def test_an_existing_server_is_used_as_it_is_and_never_restarted(lab, monkeypatch):
    monkeypatch.setenv("TRAFIKEY_VALKEY_URL", lab.connection_url)
    with choose_server() as borrowed:
        assert not borrowed.started_by_lab
        assert borrowed.run_id == lab.run_id
        with pytest.raises(RestartUnavailable) as caught:
            borrowed.restart()
        assert "unset TRAFIKEY_VALKEY_URL" in str(caught.value)
    assert lab.client.ping()


def test_lab_server_attaches_to_a_url_given_or_named_by_the_variable_and_else_owns_one(
        monkeypatch):
    monkeypatch.delenv("TRAFIKEY_VALKEY_URL", raising=False)
    owned = choose_server(persistence="aof")
    assert type(owned) is OwnedServer
    assert owned.started_by_lab
    assert owned.persistence == "aof"
    given = choose_server(url="redis://:s3cret@127.0.0.1:1")
    assert type(given) is AttachedServer
    assert not given.started_by_lab
    assert given.connection_url == "redis://:s3cret@127.0.0.1:1"
    monkeypatch.setenv("TRAFIKEY_VALKEY_URL", "redis://:s3cret@127.0.0.1:2")
    named = choose_server()
    assert type(named) is AttachedServer
    assert named.connection_url.endswith(":2")
    # The options of a server the lab would start go unused: the named server is used as it is.
    assert type(choose_server(persistence="aof", port=1)) is AttachedServer
    assert type(choose_server(url="")) is OwnedServer, 'url="" is how to ignore the variable'
    assert all(isinstance(server, LabServer) for server in (owned, given, named))


def test_an_attached_server_needs_a_url_and_reads_where_it_is_from_it():
    with pytest.raises(ValueError, match="needs the URL of a running server"):
        AttachedServer("")
    attached = AttachedServer("redis://:s3cret@127.0.0.5:6390")
    assert (attached.host, attached.port, attached.password) == ("127.0.0.5", 6390, "s3cret")
    assert attached.address == "redis://:***@127.0.0.5:6390"
    assert attached.client is None
    assert attached.pid is None
    assert not attached.running


def test_an_attached_server_refuses_restart_and_kill_and_its_stop_only_disconnects(lab):
    attached = AttachedServer(lab.connection_url).start()
    assert attached.running
    assert attached.run_id == lab.run_id
    assert attached.pid is None
    assert (attached.host, attached.port, attached.password) == (lab.host, lab.port, lab.password)
    assert attached.address == f"redis://:***@127.0.0.1:{lab.port}"
    for refused, what in ((attached.restart, "restart"), (attached.kill, "kill")):
        with pytest.raises(RestartUnavailable) as caught:
            refused()
        message = str(caught.value)
        assert f"which it did not start, so it cannot {what} it" in message
        assert "unset TRAFIKEY_VALKEY_URL" in message
        assert lab.password not in message
    attached.wait()
    assert attached.fault() is None
    attached.stop()
    assert attached.client is None
    assert not attached.running
    assert lab.client.info("server")["run_id"] == lab.run_id, "the attached server was touched"


def test_an_existing_server_without_the_module_is_refused(servers, monkeypatch):
    plain = servers(module=False)
    monkeypatch.setenv("TRAFIKEY_VALKEY_URL", plain.connection_url)
    with pytest.raises(ServerStartError) as caught:
        choose_server().start()
    assert "--loadmodule" in str(caught.value)


def test_a_call_on_a_stopped_server_says_how_to_start_it():
    server = choose_server().start()
    live = LiveExecutor(server)
    server.stop()
    with pytest.raises(ServerStopped, match=r"start it with server\.start"):
        live.claim(Queue(), 1000)


def test_a_restart_failure_is_told_apart_by_its_cause_not_by_its_words():
    """Which fix a failed restart names comes from the kind of problem, so rewording the
    problem cannot change the advice."""
    from trafikey_lab.live.owned import SaveProblem

    server = OwnedServer()
    server.run_id = "r"
    gone = server._restart_failed(SaveProblem("it vanished", folder_gone=True))
    full = server._restart_failed(SaveProblem("no room", errno=errno.ENOSPC))
    other = server._restart_failed(SaveProblem("the disk says no space left, in other words"))
    assert "setup cell again: it starts a new server in a new folder" in gone
    assert "Free some space on that disk" in full
    assert "python -m trafikey_lab doctor" in other
    assert "Free some space" not in other


def test_labserver_is_the_interface_both_kinds_implement_and_choose_server_picks():
    import inspect

    with pytest.raises(TypeError, match="abstract"):
        LabServer()
    for kind in (OwnedServer, AttachedServer):
        assert not inspect.isabstract(kind), kind
    assert isinstance(choose_server(url="redis://127.0.0.1:1"), AttachedServer)
    assert isinstance(choose_server(url=""), OwnedServer)


def test_each_kind_of_server_declares_what_the_lab_can_do_with_it(lab):
    attached = AttachedServer(lab.connection_url)
    assert (lab.started_by_lab, lab.can_restart, lab.can_take_replica) == (True, True, True)
    assert (attached.started_by_lab, attached.can_restart, attached.can_take_replica) == (
        False, False, False)
