"""The module-API facts the module's data path relies on, pinned on a real server.

trafikey.c writes through the low-level key API (ZsetRem, ZsetAdd, HashSet), which by itself
replicates nothing, notifies nobody and signals no WATCH; the module does each of those with
Replicate, NotifyKeyspaceEvent and SignalModifiedKey, and sets NO_IMPLICIT_SIGNAL_MODIFIED so
that a key it opens but does not change is not signalled. These tests hold a verb's visible
effects against the plain commands': WATCH, MULTI/EXEC, keyspace events, and what the
append-only file and a replica receive.
"""

import time

import pytest
import redis

from trafikey_lab import LiveExecutor, Queue, choose_server
from trafikey_lab.course.beyond_one_server import aof_commands
from trafikey_lab.model import new_counters

QUEUE = Queue("{facts}")
LONG = 60_000


@pytest.fixture
def client(lab):
    lab.client.flushall()
    return lab.client


def put_row(client, job, **fields):
    row = QUEUE.row_key(job)
    client.delete(row)
    client.hset(row, mapping={"state": "pending", "attempts": "0", **fields})
    return row


def expired(client, job, **fields):
    """A member of active whose deadline has passed, with its row."""
    put_row(client, job, state="active", **fields)
    client.zadd(QUEUE.active, {job: 1})


SWEPT = (QUEUE.active, QUEUE.pending, QUEUE.dead, QUEUE.prefix)


def sweep(client, max_stalled=2):
    return client.execute_command("EMQ.STALLED.CHECK", *SWEPT, max_stalled)


def claim(client):
    return client.execute_command("EMQ.CLAIM", QUEUE.pending, QUEUE.active, QUEUE.prefix, LONG)


def exec_after_watching(lab, key, action):
    """WATCH key on a second connection, run action on the first, then EXEC on the second:
    True when the EXEC ran, False when it was aborted because key was signalled."""
    watcher = redis.Redis(host=lab.host, port=lab.port, password=lab.password)
    try:
        with watcher.pipeline(transaction=True) as pipe:
            pipe.watch(key)
            action()
            pipe.multi()
            pipe.ping()
            try:
                pipe.execute()
            except redis.WatchError:
                return False
            return True
    finally:
        watcher.close()


# -- WATCH ----------------------------------------------------------------------------------


@pytest.mark.parametrize("written", ["pending", "active", "row"])
def test_a_claim_aborts_the_exec_of_a_client_watching_any_key_it_writes(lab, client, written):
    put_row(client, "a")
    client.zadd(QUEUE.pending, {"a": 0, "b": 1})
    key = {"pending": QUEUE.pending, "active": QUEUE.active, "row": QUEUE.row_key("a")}[written]
    assert not exec_after_watching(lab, key, lambda: claim(client))


@pytest.mark.parametrize("written", ["active", "pending", "dead", "exempt row", "dead row"])
def test_a_sweep_aborts_the_exec_of_a_client_watching_any_key_it_writes(lab, client, written):
    here = client.info("server")["run_id"]
    expired(client, "exempt")
    expired(client, "dead", lease_epoch=here, stalled="5")
    key = {"active": QUEUE.active, "pending": QUEUE.pending, "dead": QUEUE.dead,
           "exempt row": QUEUE.row_key("exempt"), "dead row": QUEUE.row_key("dead")}[written]
    assert not exec_after_watching(lab, key, lambda: sweep(client))


def test_an_extend_aborts_the_exec_of_a_client_watching_its_row(lab, client):
    put_row(client, "a")
    client.zadd(QUEUE.pending, {"a": 0})
    claim(client)
    row = QUEUE.row_key("a")
    assert not exec_after_watching(
        lab, row, lambda: client.execute_command("EMQ.EXTEND", QUEUE.active, row, "a", 1, LONG))


def test_a_verb_that_writes_nothing_leaves_watchers_alone_though_it_opened_keys_for_writing(
        lab, client):
    # Without NO_IMPLICIT_SIGNAL_MODIFIED, closing a key opened for writing signals it.
    put_row(client, "lane", group="g")
    client.zadd(QUEUE.active, {"lane": 1})
    client.set("unrelated", "x")
    for key in (*SWEPT[:3], QUEUE.row_key("lane")):
        assert exec_after_watching(lab, key, lambda: sweep(client)), key
        assert exec_after_watching(lab, key, lambda: claim(client)), key


def test_a_refused_verb_leaves_watchers_alone(lab, client):
    expired(client, "bad", lease_epoch=client.info("server")["run_id"], stalled="x")
    for key in (QUEUE.active, QUEUE.pending, QUEUE.row_key("bad")):
        with pytest.raises(redis.ResponseError, match="not an integer"):
            sweep(client)
        assert exec_after_watching(lab, key, lambda: None), key
    def refused() -> None:
        with pytest.raises(redis.ResponseError):
            sweep(client)

    assert exec_after_watching(lab, QUEUE.active, refused)


# -- MULTI/EXEC -----------------------------------------------------------------------------


def test_the_verbs_run_inside_multi_exec_and_answer_there(client):
    put_row(client, "a")
    client.zadd(QUEUE.pending, {"a": 0})
    with client.pipeline(transaction=True) as pipe:
        pipe.execute_command("EMQ.CLAIM", QUEUE.pending, QUEUE.active, QUEUE.prefix, LONG)
        pipe.execute_command("EMQ.EXTEND", QUEUE.active, QUEUE.row_key("a"), "a", 1, LONG)
        pipe.execute_command("EMQ.EXTENDS", QUEUE.active, LONG, "a", QUEUE.row_key("a"), 1)
        pipe.execute_command("EMQ.STALLED.CHECK", *SWEPT, 1)
        claimed, extended, extends, swept = pipe.execute()
    assert claimed[:2] == [b"a", 1]
    assert (extended, extends, swept) == (1, [b"a"], [[], []])
    assert (client.hget(QUEUE.row_key("a"), "lease_epoch")
            == client.info("server")["run_id"].encode())


# -- keyspace notifications -----------------------------------------------------------------


def events_of(client, action):
    """The keyevent notifications (event, key) that action causes, in order."""
    client.config_set("notify-keyspace-events", "KEA")
    pubsub = client.pubsub()
    try:
        pubsub.psubscribe("__keyevent@0__:*")
        pubsub.get_message(timeout=1.0)
        action()
        client.ping()
        seen, deadline = [], time.monotonic() + 2.0
        while time.monotonic() < deadline:
            message = pubsub.get_message(timeout=0.2)
            if message is None:
                if seen:
                    break
                continue
            if message["type"] == "pmessage":
                seen.append((message["channel"].split(b":", 1)[1], message["data"]))
        return seen
    finally:
        client.config_set("notify-keyspace-events", "")
        pubsub.close()


def test_a_claim_sends_the_events_its_plain_zrem_hset_zadd_send(client):
    def dataset():
        client.flushall()
        put_row(client, "a")
        client.zadd(QUEUE.pending, {"ghost": 0, "a": 1})

    dataset()
    native = events_of(client, lambda: claim(client))
    dataset()
    here = client.info("server")["run_id"]
    plain = events_of(client, lambda: (
        client.zrem(QUEUE.pending, "ghost", "a"),
        client.hset(QUEUE.row_key("a"),
                    mapping={"state": "active", "attempts": 1, "lease_epoch": here}),
        client.zadd(QUEUE.active, {"a": 2})))
    assert native == plain
    assert [event for event, _ in native] == [b"zrem", b"del", b"hset", b"zadd"]


def test_a_sweep_sends_the_events_of_its_plain_writes_one_command_per_set_then_per_row(client):
    here = client.info("server")["run_id"]

    def dataset():
        client.flushall()
        client.zadd(QUEUE.active, {"ghost": 1})
        put_row(client, "lane", state="active", group="g")
        client.zadd(QUEUE.active, {"lane": 2})
        put_row(client, "exempt", state="active")
        client.zadd(QUEUE.active, {"exempt": 3})
        put_row(client, "counted", state="active", lease_epoch=here)
        client.zadd(QUEUE.active, {"counted": 4})
        put_row(client, "dead", state="active", lease_epoch=here, stalled="1")
        client.zadd(QUEUE.active, {"dead": 5})

    dataset()
    native = events_of(client, lambda: sweep(client, 2))
    dataset()
    plain = events_of(client, lambda: (
        client.zrem(QUEUE.active, "ghost", "exempt", "counted", "dead"),
        client.zadd(QUEUE.pending, {"exempt": 0, "counted": 0}),
        client.zadd(QUEUE.dead, {"dead": 6}),
        client.hset(QUEUE.row_key("exempt"), "state", "pending"),
        client.hset(QUEUE.row_key("counted"), mapping={"state": "pending", "stalled": 1}),
        client.hset(QUEUE.row_key("dead"), mapping={"state": "dead", "stalled": 2})))
    assert native == plain
    assert native[:3] == [(b"zrem", QUEUE.active), (b"zadd", QUEUE.pending),
                          (b"zadd", QUEUE.dead)]


def test_a_zadd_that_changes_nothing_sends_no_event_from_the_verb_either(client):
    # An exempt member that is already in pending with score 0: ZADD adds nothing.
    def dataset():
        client.flushall()
        put_row(client, "both", state="active")
        client.zadd(QUEUE.active, {"both": 1})
        client.zadd(QUEUE.pending, {"both": 0})

    dataset()
    native = events_of(client, lambda: sweep(client))
    dataset()
    plain = events_of(client, lambda: (
        client.zrem(QUEUE.active, "both"),
        client.zadd(QUEUE.pending, {"both": 0}),
        client.hset(QUEUE.row_key("both"), "state", "pending")))
    assert native == plain == [(b"zrem", QUEUE.active), (b"del", QUEUE.active),
                               (b"hset", QUEUE.row_key("both"))]


# -- the append-only file and a replica -----------------------------------------------------


def test_the_aof_receives_hset_zadd_zrem_with_the_granting_run_id_in_one_multi_not_the_verb():
    with choose_server(persistence="aof") as server:
        client = server.client
        put_row(client, "a")
        client.zadd(QUEUE.pending, {"ghost": 0, "a": 1})
        before = len(aof_commands(server))
        claimed = claim(client)
        with client.pipeline(transaction=True) as pipe:
            pipe.set("marker", "1")
            # A longer lease, so the deadline moves even within the claim's millisecond.
            pipe.execute_command("EMQ.EXTEND", QUEUE.active, QUEUE.row_key("a"), "a", 1, 2 * LONG)
            pipe.execute()
        logged = aof_commands(server)[before:]
    here = server.run_id.encode()
    deadline = b"%d" % claimed[2]
    assert not any(command[0].upper().startswith(b"EMQ.") for command in logged)
    claim_part = logged[:logged.index([b"EXEC"]) + 1]
    assert claim_part == [
        [b"MULTI"],
        [b"ZREM", QUEUE.pending, b"ghost", b"a"],
        [b"HSET", QUEUE.row_key("a"), b"state", b"active", b"attempts", b"1", b"lease_epoch", here],
        [b"ZADD", QUEUE.active, deadline, b"a"],
        [b"EXEC"],
    ]
    extend_part = logged[len(claim_part):]
    assert [command[0] for command in extend_part] == [b"MULTI", b"SET", b"ZADD", b"HSET", b"EXEC"]
    assert extend_part[3] == [b"HSET", QUEUE.row_key("a"), b"lease_epoch", here]


def test_the_aof_keeps_each_swept_rows_own_count_though_the_module_frees_its_copy_at_once():
    """The sweep frees each row's new stalled count right after Replicate, so the next row's
    count may reuse its memory: the AOF still holds every row's own value only because
    Replicate keeps a reference of its own until the command is propagated."""
    with choose_server(persistence="aof") as server:
        client = server.client
        here = server.run_id
        for job, stalled in (("a", "0"), ("b", "3"), ("c", "7")):
            expired(client, job, lease_epoch=here, stalled=stalled)
        before = len(aof_commands(server))
        assert sweep(client, 100) == [[b"a", b"b", b"c"], []]
        logged = aof_commands(server)[before:]
    rows = [command for command in logged if command[0] == b"HSET"]
    assert rows == [
        [b"HSET", QUEUE.row_key("a"), b"state", b"pending", b"stalled", b"1"],
        [b"HSET", QUEUE.row_key("b"), b"state", b"pending", b"stalled", b"4"],
        [b"HSET", QUEUE.row_key("c"), b"state", b"pending", b"stalled", b"8"],
    ]


def test_a_replica_that_panics_on_a_bad_propagation_applies_every_verb_as_the_primary_did(servers):
    primary = servers(persistence="aof", extra_args=("--repl-diskless-sync-delay", "0"))
    replica = servers(extra_args=("--replicaof", "127.0.0.1", str(primary.port),
                                  "--primaryauth", primary.password or "",
                                  "--propagation-error-behavior", "panic"))
    deadline = time.monotonic() + 10
    while replica.client.info("replication").get("master_link_status") != "up":
        assert time.monotonic() < deadline, "the replica did not sync"
        time.sleep(0.05)
    client, here = primary.client, primary.run_id
    put_row(client, "a")
    put_row(client, "b")
    client.zadd(QUEUE.pending, {"ghost": 0, "a": 1, "b": 2})
    claim(client)
    client.execute_command("EMQ.CLAIM", QUEUE.pending, QUEUE.active, QUEUE.prefix, 1)
    client.execute_command("EMQ.EXTENDS", QUEUE.active, LONG, "a", QUEUE.row_key("a"), 1)
    time.sleep(0.01)
    sweep(client, 1)
    assert client.wait(1, 5000) == 1
    live_primary, live_replica = LiveExecutor(primary), LiveExecutor(replica)
    assert live_replica.dataset() == live_primary.dataset()
    assert client.hget(QUEUE.row_key("b"), "state") == b"dead"
    assert replica.client.hget(QUEUE.row_key("a"), "lease_epoch") == here.encode()
    assert replica.client.info("server")["run_id"] != here
    # The counters are the primary's own: what the replica applies are plain writes, no verb.
    assert live_primary.counters()["sweeps"] == 1
    assert live_replica.counters() == new_counters()
