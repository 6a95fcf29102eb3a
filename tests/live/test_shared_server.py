"""A server shared by a room: each learner's queues under a namespace of their own, and a test
suite that never writes to a server it did not start."""

import getpass
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trafikey_lab import BadNamespace, OwnedServer, Queue
from trafikey_lab.executors import NAMESPACE_ENV, URL_ENV

ROOT = Path(__file__).resolve().parents[2]

LEARNER = """
import json, sys
from trafikey_lab import HISTORIES, LiveExecutor, Queue, choose_server, play
with choose_server() as server:
    queue = Queue("{lease}")
    trace = play(HISTORIES["stalled"], 2, LiveExecutor(server), queue, lease_ms=400)
    row = server.client.hgetall(queue.row_key(b"job-1"))
    print(json.dumps({"active": queue.active.decode(), "outcome": trace.outcome,
                      "attempts": row[b"attempts"].decode(), "stalled": row[b"stalled"].decode()}))
"""


def _env(**settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (URL_ENV, NAMESPACE_ENV)}
    return {**env, **settings}


def test_two_learners_on_one_attached_server_run_a_history_at_once_on_keys_of_their_own():
    with OwnedServer() as server:
        # the same user's row, written before: neither learner may see or change it
        server.client.hset(b"{lease}:job:job-1", mapping={b"state": b"untouched"})
        learners = {
            user: subprocess.Popen(
                [sys.executable, "-c", LEARNER], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                env=_env(**{URL_ENV: server.connection_url, "USER": user, "LOGNAME": user}))
            for user in ("alice", "bob")
        }
        seen = {user: json.loads(p.communicate(timeout=60)[0]) for user, p in learners.items()}
        assert all(p.returncode == 0 for p in learners.values())
        for user, run in seen.items():
            # one claim, one stall: had they shared keys, one would have found the other's job
            assert run == {"active": f"{{{user}:lease}}:active", "outcome": "recovered",
                           "attempts": "1", "stalled": "1"}
        assert server.client.hgetall(b"{lease}:job:job-1") == {b"state": b"untouched"}
        assert server.client.keys(b"{alice:*")
        assert server.client.keys(b"{bob:*")


def test_a_namespace_setting_names_the_keys_and_without_one_an_owned_server_s_stay_as_printed(
        monkeypatch):
    assert Queue("{jobs}").active == b"{jobs}:active"
    monkeypatch.setenv(NAMESPACE_ENV, "carol")
    assert Queue("{jobs}").active == b"{carol:jobs}:active"
    assert Queue("plain").active == b"carol:plain:active"
    monkeypatch.setenv(NAMESPACE_ENV, "x}y")
    with pytest.raises(BadNamespace, match=NAMESPACE_ENV):
        Queue("{jobs}").active  # noqa: B018  (naming the key is what refuses)


SENTINEL_RUN = ["-m", "pytest", "-q", "-p", "no:cacheprovider",
                "tests/live/test_executors.py::"
                "test_a_claimed_lease_is_stamped_by_the_process_that_granted_it_and_no_other"]


def test_the_suite_never_writes_to_the_server_its_environment_names():
    with OwnedServer() as server:
        server.client.set(b"sentinel", b"the room's data")
        run = subprocess.run([sys.executable, *SENTINEL_RUN], cwd=ROOT, capture_output=True,
                             text=True, timeout=300, env=_env(**{URL_ENV: server.connection_url}))
        assert "2 passed" in run.stdout, run.stdout + run.stderr  # its live case ran too
        assert server.client.get(b"sentinel") == b"the room's data"
        assert server.client.dbsize() == 1


def test_on_a_shared_server_the_os_user_names_the_keys_and_a_process_without_one_is_told_why(
        monkeypatch):
    monkeypatch.delenv(NAMESPACE_ENV, raising=False)
    monkeypatch.setenv(URL_ENV, "redis://127.0.0.1:1")
    monkeypatch.setattr(getpass, "getuser", lambda: "dave")
    assert Queue("{jobs}").row_key(b"job-1") == b"{dave:jobs}:job:job-1"

    def nobody() -> str:
        raise KeyError("getpwuid(): uid not found: 4242")

    monkeypatch.setattr(getpass, "getuser", nobody)
    with pytest.raises(BadNamespace, match=f"set {NAMESPACE_ENV}"):
        Queue("{jobs}").pending  # noqa: B018  (naming the key is what refuses)
