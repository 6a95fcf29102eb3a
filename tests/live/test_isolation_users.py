"""A learner's server is theirs alone on a shared host.

Another OS user, or any client without the server's password, can neither read nor write
nor run DEBUG through any socket the server opened; the password is on no command line and
in no file another user can read; DEBUG and MODULE LOAD are off unless a server asks for
them; the workshop server prints how to connect, password included, and will not listen
beyond loopback without one; and nothing else the lab prints shows a password.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import redis
from processes import command_line, listening_sockets

from trafikey_lab import LabServer, LiveExecutor, Queue, RestartUnavailable, ServerStartError
from trafikey_lab.errors import InsecureServer
from trafikey_lab.live.choose import choose_server
from trafikey_lab.live.client import ServerGone, mask_url

ROOT = Path(__file__).resolve().parents[2]

MINE = Queue("{mine}")
ROW = "a learner's row"
SYSTEM_PYTHON = "/usr/bin/python3"

PROBE = r'''
import json, os, socket, sys

targets, paths = json.loads(sys.argv[1]), json.loads(sys.argv[2])
password = sys.stdin.read()


def command(*words):
    parts = [b"*%d\r\n" % len(words)]
    for word in words:
        word = word.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(word), word))
    return b"".join(parts)


def first_lines(kind, where, port, commands):
    """Each command's reply, its first line: an error, or an array's length."""
    family = (socket.AF_UNIX if kind == "unix"
              else socket.AF_INET6 if ":" in where else socket.AF_INET)
    with socket.socket(family) as sock:
        sock.settimeout(10)
        sock.connect(where if kind == "unix" else (where, port))
        replies = sock.makefile("rb")
        answers = []
        for words in commands:
            sock.sendall(command(*words))
            answers.append(replies.readline().decode().strip())
        return answers


def read(path):
    try:
        if os.path.isdir(path):
            return "listed: " + " ".join(sorted(os.listdir(path)))
        with open(path, "rb") as f:
            return "read: " + f.read().replace(b"\0", b" ").decode(errors="replace")
    except PermissionError:
        return "denied"
    except FileNotFoundError:
        return "missing"


report = {"uid": os.getuid(), "sockets": {}, "files": {p: read(p) for p in paths}}
for kind, where, port, row in targets:
    attempts = [
        ("HGETALL", row), ("SET", "intruder", "1"), ("DEBUG", "SLEEP", "0"),
        ("CONFIG", "GET", "dir"),
        ("EMQ.CLAIM", "{mine}:pending", "{mine}:active", "{mine}:job:", "60000"),
        ("AUTH", "a-guess"),
    ]
    name = f"{kind}:{where}:{port}"
    report["sockets"][name] = dict(zip([" ".join(a[:2]) for a in attempts],
                                       first_lines(kind, where, port, attempts)))
    if password:
        report["sockets"][name]["control"] = first_lines(
            kind, where, port, [("AUTH", password), ("HGETALL", row)])
print(json.dumps(report))
'''
"""Run as the other user with the system's Python (the project's .venv may be out of its
reach): tries every socket the server listens on, and reads what a secret could be read from."""


@pytest.fixture(scope="module")
def learner():
    """A learner's server with one row in it."""
    with choose_server() as server:
        LiveExecutor(server).add(MINE, "job-1", ROW.encode())
        yield server


@pytest.fixture(scope="module")
def other_user():
    """A throwaway OS user on this machine, removed afterwards. Needs root (CI runs as root)."""
    if os.geteuid() != 0:
        pytest.skip("creating a second OS user needs root; CI runs as root, so it runs there")
    if not shutil.which("useradd") or not os.path.exists(SYSTEM_PYTHON):
        pytest.skip(f"this machine has no useradd or no {SYSTEM_PYTHON} for the other user")
    name = f"tkprobe{uuid.uuid4().hex[:8]}"
    subprocess.run(["useradd", "--system", "--user-group", "--no-create-home",
                    "--shell", "/usr/sbin/nologin", name], check=True, capture_output=True)
    try:
        import pwd

        entry = pwd.getpwnam(name)
        yield entry.pw_uid, entry.pw_gid
    finally:
        subprocess.run(["userdel", name], check=True, capture_output=True)


def probe(server: LabServer, user=None, password: str = "") -> dict:
    targets = [[kind, where, port, MINE.row_key("job-1").decode()]
               for kind, where, port in listening_sockets(server.pid)]
    paths = [str(server.data_dir), str(server.log_path), str(server.config_path),
             f"/proc/{server.pid}/environ", f"/proc/{server.pid}/cmdline"]
    ids = {} if user is None else {"user": user[0], "group": user[1], "extra_groups": []}
    done = subprocess.run(
        [SYSTEM_PYTHON if user else sys.executable, "-I", "-c", PROBE,
         json.dumps(targets), json.dumps(paths)],
        input=password, capture_output=True, text=True, timeout=60, cwd="/",
        env={"PATH": "/usr/bin:/bin"}, **ids,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def refused_everything(report: dict, server: LabServer) -> None:
    assert report["sockets"], "the probe found no socket to try"
    for name, answers in report["sockets"].items():
        control = answers.pop("control", None)
        for attempt, answer in answers.items():
            expected = "-WRONGPASS" if attempt.startswith("AUTH") else "-NOAUTH"
            assert answer.startswith(expected), f"{name} answered {attempt!r} with {answer!r}"
        if control is not None:
            # The same socket with the password answers: the refusals above are the password's.
            assert control == ["+OK", "*6"], control
    assert server.client.hgetall(MINE.row_key("job-1"))[b"payload"] == ROW.encode()
    assert server.client.exists("intruder") == 0


def test_the_server_listens_on_one_loopback_port_and_no_other_socket(learner):
    assert listening_sockets(learner.pid) == [("tcp", "127.0.0.1", learner.port)]


def test_a_client_of_the_same_user_without_the_password_cannot_read_write_or_debug(learner):
    refused_everything(probe(learner, password=learner.password), learner)


def test_a_second_os_user_cannot_read_write_or_debug_through_any_socket_the_server_opened(
        learner, other_user):
    report = probe(learner, user=other_user, password=learner.password)
    assert report["uid"] == other_user[0]
    refused_everything(report, learner)
    files = report["files"]
    assert files[str(learner.data_dir)] == "denied", "another user could list the scratch folder"
    assert files[str(learner.log_path)] == "denied", "another user could read the server's log"
    assert files[f"/proc/{learner.pid}/environ"] == "denied"
    assert learner.password not in json.dumps(files), "another user read the password"
    assert learner.pid == learner.client.info("server")["process_id"], "DEBUG reached the server"


def test_the_password_is_on_no_command_line_and_its_file_is_gone_once_read(learner):
    keeper = learner._keeper.pid
    for pid in (learner.pid, keeper):
        assert command_line(pid), f"process {pid} not found"
        assert learner.password not in command_line(pid)
    assert not learner.config_path.exists()
    assert os.stat(learner.data_dir).st_mode & 0o777 == 0o700
    assert learner.password not in learner.log_path.read_text()


def test_debug_and_module_load_are_off_and_only_a_server_that_asks_gets_them(learner):
    with pytest.raises(redis.ResponseError, match="DEBUG command not allowed"):
        learner.client.execute_command("DEBUG", "SLEEP", "0")
    with pytest.raises(redis.ResponseError, match="MODULE command not allowed"):
        learner.client.execute_command("MODULE", "LOAD", "/nonexistent.so")
    assert b"trafikey" in {m[b"name"] for m in learner.client.module_list()}
    with choose_server(admin_commands=True) as test_server:
        assert test_server.client.execute_command("DEBUG", "SLEEP", "0") in (b"OK", "OK", True)
        with pytest.raises(redis.ResponseError, match="DEBUG command not allowed"):
            learner.client.execute_command("DEBUG", "SLEEP", "0")


# -- what the lab prints --------------------------------------------------------------------


def test_mask_url_hides_the_password_and_keeps_the_rest():
    assert mask_url("redis://:s3cret@127.0.0.1:6379") == "redis://:***@127.0.0.1:6379"
    assert mask_url("redis://alice:s3cret@host:1/0") == "redis://alice:***@host:1/0"
    assert (mask_url("unix:///run/v.sock?db=0&password=s3cret")
            == "unix:///run/v.sock?db=0&password=***")
    assert mask_url("redis://127.0.0.1:6379") == "redis://127.0.0.1:6379"


def test_a_url_with_credentials_is_used_and_its_password_never_printed(learner):
    url = learner.connection_url
    assert learner.password in url, "the control: connection_url carries the password"
    assert learner.password not in learner.address
    with choose_server(url=url) as borrowed:
        assert borrowed.run_id == learner.run_id
        assert borrowed.address == f"redis://:***@127.0.0.1:{learner.port}"
        with pytest.raises(RestartUnavailable) as caught:
            borrowed.restart()
        assert learner.password not in str(caught.value)
    wrong = url.replace(learner.password, "not-the-password")
    with pytest.raises(ServerStartError) as caught:
        choose_server(url=wrong).start()
    assert "asks for a password" in str(caught.value)
    assert "not-the-password" not in str(caught.value)


def test_a_server_gone_from_under_a_url_is_named_without_its_password():
    server = choose_server().start()
    borrowed = choose_server(url=server.connection_url).start()
    server.stop()
    with pytest.raises(ServerGone) as caught:
        LiveExecutor(borrowed).claim(MINE, 1000)
    assert "does not answer" in str(caught.value)
    assert "***" in str(caught.value)
    assert server.password not in str(caught.value)


def test_a_start_that_fails_on_a_line_holding_the_password_quotes_it_masked(tmp_path):
    """The server quotes a bad config line whole; here the bad line holds the password."""
    server = choose_server(data_dir=tmp_path, password="line-secret-1",
                       extra_args=("--requirepass", "line-secret-1", "one-word-too-many"))
    with pytest.raises(ServerStartError) as caught:
        server.start()
    message = str(caught.value)
    assert "requirepass" in message, message
    assert "***" in message, message
    assert "line-secret-1" not in message


def test_no_stored_notebook_output_holds_a_password():
    credentials = re.compile(r"redis://[^\s/@]*:[^\s/@]+@|requirepass|REDISCLI_AUTH|password: ")
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            for output in cell.get("outputs", []):
                text = json.dumps(output)
                assert not credentials.search(text), f"{path.name}: {text[:200]}"


# -- the workshop server ----------------------------------------------------------------------


def workshop(*args):
    # Ctrl-C must reach it even when this suite runs as a background job, whose shell has
    # set SIGINT to be ignored, a setting children inherit.
    return subprocess.Popen([sys.executable, "-m", "trafikey_lab", "server", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def printed_until_ready(process) -> list[str]:
    lines = []
    while not lines or lines[-1] != "Ctrl-C stops it.":
        line = process.stdout.readline()
        assert line, f"the server exited: {process.stderr.read()}"
        lines.append(line.rstrip("\n"))
    return lines


def stop(process) -> str:
    process.send_signal(2)
    try:
        out, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()  # a server left running would outlive the suite
        process.communicate()
        raise
    return out


def test_the_workshop_server_refuses_to_listen_beyond_loopback_without_a_password():
    refused = subprocess.run(
        [sys.executable, "-m", "trafikey_lab", "server", "--bind", "0.0.0.0", "--no-password"],
        capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1
    assert "refusing to listen on 0.0.0.0 without a password" in refused.stderr
    assert "drop --no-password" in refused.stderr
    assert refused.stdout == ""
    with pytest.raises(InsecureServer):
        choose_server(bind="0.0.0.0", password=False)


def test_the_workshop_server_beyond_loopback_prints_its_password_and_a_url_the_lab_accepts():
    process = workshop("--bind", "0.0.0.0")
    try:
        lines = printed_until_ready(process)
        port = int(lines[0].rsplit(":", 1)[1])
        (secret,) = [line.removeprefix("password: ") for line in lines
                     if line.startswith("password: ")]
        (url,) = [re.search(r"TRAFIKEY_VALKEY_URL=(\S+)", line)[1] for line in lines
                  if "TRAFIKEY_VALKEY_URL=" in line]
        assert url.startswith(f"redis://:{secret}@")
        assert url.endswith(f":{port}")
        assert any(f"REDISCLI_AUTH={secret} redis-cli" in line for line in lines)
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=port).ping()
        # The URL names this machine for the learners; here it is reached on loopback.
        local = re.sub(r"@[^:]+:", "@127.0.0.1:", url)
        with choose_server(url=local) as borrowed:
            assert borrowed.client.config_get("bind")["bind"] == "0.0.0.0"
            assert secret not in borrowed.address
    finally:
        stop(process)


def test_the_workshop_server_without_a_password_on_loopback_says_who_can_use_it():
    process = workshop("--no-password")
    try:
        lines = printed_until_ready(process)
        assert "no password: every user of this machine can read and change its rows" in lines
        port = int(lines[0].rsplit(":", 1)[1])
        assert redis.Redis(port=port).ping()
    finally:
        stop(process)
