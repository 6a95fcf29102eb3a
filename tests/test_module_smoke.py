"""A few quick checks of the built module inside a real valkey-server.

The full spec tables, over both executors, live in the executor tests; these only show that
the module loads, stamps, round-trips and refuses cleanly.
"""

import time

import pytest
import redis

from trafikey_lab.server import LabServer

PENDING, ACTIVE, DEAD, PREFIX = "{q}:pending", "{q}:active", "{q}:dead", "{q}:job:"


@pytest.fixture(scope="module")
def server():
    with LabServer() as srv:
        yield srv


@pytest.fixture
def client(server):
    server.client.flushall()
    return server.client


def snapshot(client):
    """Every key with its type and content, for comparing a dataset before and after."""
    dump = {}
    for key in client.keys("*"):
        kind = client.type(key)
        if kind == b"hash":
            dump[key] = client.hgetall(key)
        elif kind == b"zset":
            dump[key] = client.zrange(key, 0, -1, withscores=True)
        else:
            dump[key] = (kind, client.dump(key))
    return dump


def add_job(client, job_id, **fields):
    client.hset(PREFIX + job_id, mapping={"state": "pending", "attempts": 0, **fields})
    client.zadd(PENDING, {job_id: 0})


def test_module_is_listed_as_trafikey(server):
    names = [module[b"name"] for module in server.client.module_list()]
    assert b"trafikey" in names


def test_claim_stamps_the_row_with_the_servers_run_id(client, server):
    add_job(client, "j1")
    assert client.execute_command("EMQ.CLAIM", PENDING, ACTIVE, PREFIX, 60000)[:2] == [b"j1", 1]
    assert client.hget(PREFIX + "j1", "lease_epoch") == server.run_id.encode()
    assert client.hget(PREFIX + "j1", "lease_epoch") == client.info("server")["run_id"].encode()


def test_claim_extend_sweep_round_trip(client):
    add_job(client, "j1")
    job_id, attempts, deadline = client.execute_command("EMQ.CLAIM", PENDING, ACTIVE, PREFIX, 60000)
    assert client.hgetall(PREFIX + "j1")[b"state"] == b"active"
    assert client.zscore(ACTIVE, "j1") == deadline

    row = PREFIX + "j1"
    assert client.execute_command("EMQ.EXTEND", ACTIVE, row, "j1", attempts, 1) == 1
    assert client.execute_command("EMQ.EXTEND", ACTIVE, row, "j1", attempts + 1, 1) == 0
    assert client.execute_command("EMQ.EXTENDS", ACTIVE, 1, "j1", row, attempts) == [b"j1"]

    # The lease now ends 1 ms after the extension: wait it out, then sweep.
    time.sleep(0.01)
    swept = client.execute_command("EMQ.STALLED.CHECK", ACTIVE, PENDING, DEAD, PREFIX, 2)
    assert swept == [[b"j1"], []]
    assert client.hget(row, "stalled") == b"1"
    assert client.hget(row, "state") == b"pending"
    assert client.zrange(PENDING, 0, -1) == [b"j1"]
    assert client.zcard(ACTIVE) == 0


def test_refused_claim_leaves_the_dataset_unchanged(client):
    # A ghost at the head, then a row of the wrong type: the ghost must not be removed either.
    client.zadd(PENDING, {"a-ghost": 0, "b-bad": 0, "c-good": 0})
    client.set(PREFIX + "b-bad", "a string")
    add_job(client, "c-good")
    before = snapshot(client)
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE "):
        client.execute_command("EMQ.CLAIM", PENDING, ACTIVE, PREFIX, 60000)
    assert snapshot(client) == before


def test_refused_sweep_leaves_the_dataset_unchanged(client):
    now_ms = 1000
    client.hset(PREFIX + "j1", mapping={"state": "active", "lease_epoch": "x"})
    client.hset(PREFIX + "j2", mapping={"state": "active", "stalled": "01"})
    client.hset(PREFIX + "j2", "lease_epoch", client.info("server")["run_id"])
    client.zadd(ACTIVE, {"j0-ghost": now_ms, "j1": now_ms, "j2": now_ms})
    before = snapshot(client)
    with pytest.raises(redis.ResponseError, match="^EMQ row field is not an integer$"):
        client.execute_command("EMQ.STALLED.CHECK", ACTIVE, PENDING, DEAD, PREFIX, 3)
    assert snapshot(client) == before
