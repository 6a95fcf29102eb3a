"""python -m trafikey_lab: module-path, doctor and server, as a learner runs them."""

import os
import signal
import subprocess
import sys
import time

import redis

from trafikey_lab.module.build import LIBRARY


def run(*args, env=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "trafikey_lab", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def test_module_path_prints_the_built_module():
    result = run("module-path")
    assert result.returncode == 0
    assert result.stdout.strip() == str(LIBRARY)
    assert os.path.isabs(result.stdout.strip())


def test_doctor_passes_every_step_on_a_working_setup():
    result = run("doctor")
    assert result.returncode == 0, result.stdout
    lines = result.stdout.splitlines()
    assert [line.split("]")[0] for line in lines[:-1]] == ["[ok  "] * 8
    assert lines[-1] == "all checks passed"


def test_doctor_names_the_fix_for_a_missing_server_binary():
    result = run("doctor", env={"TRAFIKEY_VALKEY_SERVER": "/nonexistent/valkey-server"})
    assert result.returncode == 1
    assert "[FAIL] server binary: not found" in result.stdout
    assert ("fix: TRAFIKEY_VALKEY_SERVER=/nonexistent/valkey-server is not an executable"
            in result.stdout)


def test_server_command_serves_until_interrupted():
    # SIG_DFL for SIGINT: a suite run as a background job inherits it ignored.
    server = subprocess.Popen([sys.executable, "-m", "trafikey_lab", "server"],
                              stdout=subprocess.PIPE, text=True,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        first = server.stdout.readline()
        assert first.startswith("valkey-server with the trafikey module on redis://127.0.0.1:")
        port = int(first.rsplit(":", 1)[1])
        server.stdout.readline()  # the run_id and the data folder
        secret = server.stdout.readline().removeprefix("password: ").strip()
        client = redis.Redis(port=port, password=secret)
        claimed = client.execute_command("EMQ.CLAIM", "{w}:pending", "{w}:active", "{w}:job:", 100)
        assert claimed is None
        client.close()
        time.sleep(0.2)
        server.send_signal(signal.SIGINT)
        out, _ = server.communicate(timeout=30)
        assert out.rstrip().endswith("stopped")
        assert server.returncode == 0
    finally:
        if server.poll() is None:
            server.kill()


def test_module_path_without_a_build_says_how_to_build(monkeypatch, tmp_path, capsys):
    from trafikey_lab import __main__
    from trafikey_lab.module import build

    monkeypatch.setattr(build, "LIBRARY", tmp_path / "trafikey.so")
    assert __main__.main(["module-path"]) == 1
    error = capsys.readouterr().err
    assert "the trafikey module is not built" in error
    assert "pip install -e ." in error
