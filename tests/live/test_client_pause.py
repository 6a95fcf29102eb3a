"""04 says a worker held by `CLIENT PAUSE` on a running server can be charged as though it had
stalled, and that the pause holds the sweep too, so whichever command reached the server first
runs first once the pause ends. Both orders, on a real server: the lease runs out during the
pause, then the worker's extension and the sweep arrive, one after the other."""

import threading
import time

import pytest

from trafikey_lab import LiveExecutor
from trafikey_lab.executors import Queue

QUEUE = Queue("{paused}")
LEASE_MS = 200
PAUSE_MS = 900
# Long enough that the first command is queued behind the pause before the second is sent.
BETWEEN_S = 0.15


def send_during_a_pause(lab, first: str) -> dict[str, object]:
    """Claims a job, pauses the server's writes until the lease has run out, then sends the
    extension and the sweep (max_stalled 1) in the given order while the pause holds both."""
    live = LiveExecutor(lab)
    live.add(QUEUE, "job")
    attempt = int(live.claim(QUEUE, LEASE_MS)[1])
    deadline = int(live.call("ZSCORE", QUEUE.active, "job"))
    lab.client.execute_command("CLIENT", "PAUSE", PAUSE_MS, "WRITE")
    while live.now_ms() <= deadline:  # the lease runs out while the pause holds every write
        time.sleep(0.01)
    replies: dict[str, object] = {}
    sends = {"extend": lambda: live.extend(QUEUE, "job", attempt, LEASE_MS),
             "sweep": lambda: live.sweep(QUEUE, 1)}
    threads = []
    for name in (first, *(n for n in sends if n != first)):
        thread = threading.Thread(target=lambda n=name: replies.__setitem__(n, sends[n]()))
        thread.start()
        threads.append(thread)
        time.sleep(BETWEEN_S)
    for thread in threads:
        thread.join(timeout=10)
    replies["stalled"] = live.call("HGET", QUEUE.row_key("job"), "stalled")
    return replies


@pytest.fixture
def lab(lab):
    lab.client.flushall()
    yield lab
    lab.client.execute_command("CLIENT", "UNPAUSE")


def test_the_extension_that_reaches_a_paused_server_first_keeps_the_lease(lab):
    replies = send_during_a_pause(lab, "extend")
    assert replies["extend"] == 1
    assert replies["sweep"] == [[], []]
    assert replies["stalled"] is None


def test_the_sweep_that_reaches_a_paused_server_first_charges_a_healthy_worker(lab):
    replies = send_during_a_pause(lab, "sweep")
    assert replies["sweep"] == [[], [b"job"]]  # counted: the same process, max_stalled 1
    assert replies["stalled"] == b"1"
    assert replies["extend"] == 0
