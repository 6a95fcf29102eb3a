"""The fair scripted peer of the native verbs, the datasets they are measured on, and the clock.

A queue without the module runs its transitions as Lua scripts. To compare the module with
such a queue fairly, the scripts here do what the verbs do and no more: `claim2` reads pending
a page at a time from its head, `stalled2` sweeps with the verb's selection, verdicts and
writes (one TYPE and one HMGET per member), taking the run_id from its caller, and
`stalled2_info` reads the run_id from INFO server itself. `pipelined_sweep` is the third way:
the client reads, decides with the model's own rule and writes back in one MULTI.

Every function takes a redis client of a module-loaded server. Timings come from the server's
own `INFO commandstats` (microseconds spent in each command), so the network and the client
are left out; wall-clock times are given beside them.
"""

import time
from dataclasses import dataclass
from typing import cast

import redis
from redis.typing import EncodableT, FieldT

from trafikey_lab import epoch, scripts, sweep
from trafikey_lab.executors import Queue
from trafikey_lab.live.executor import server_now_ms
from trafikey_lab.live.owned import OwnedServer
from trafikey_lab.live.server import client_of
from trafikey_lab.model import sweep_writes


@dataclass(frozen=True)
class Mix:
    """Expired leases of one kind, or of several: `row(i, run_id)` is the i-th lease's row
    (None for a ghost), swept with `max_stalled`."""

    name: str
    description: str
    max_stalled: int

    def row(self, i: int, run_id: bytes) -> dict[FieldT, EncodableT] | None:
        """Typed as redis-py's hset takes a mapping: it refuses a dict[bytes, bytes] (Mapping's
        key type is invariant)."""
        kind = self.name if self.name != "mixed" else MIXED_CYCLE[i % len(MIXED_CYCLE)]
        if kind == "ghost":
            return None
        row: dict[FieldT, EncodableT] = {b"state": b"active", b"attempts": b"1", b"payload": b"p"}
        if kind == "lane":
            row[b"group"] = b"lane-a"
        row[b"lease_epoch"] = epoch.ZERO if kind == "exempt" else run_id
        return row


MIXED_CYCLE = ("ghost", "lane", "exempt", "counted")

MIXES = {
    mix.name: mix
    for mix in (
        Mix("counted", "all counted: stamped by this process, recovered with stalled 1", 1000),
        Mix("exempt", "all exempt: stamped by another process, back to pending uncounted", 1000),
        Mix("dead", "all dead: stamped by this process, max_stalled 1", 1),
        Mix("mixed", "a quarter each: ghosts, lane rows, exempt, counted", 1000),
    )
}


def lay_out_expired(client: redis.Redis, queue: Queue, n: int, mix: Mix | str,
                    run_id: bytes | None = None, chunk: int = 2000) -> None:
    """Empties the queue's keys, then writes n leases of the mix that ran out long ago."""
    mix = MIXES[mix] if isinstance(mix, str) else mix
    run_id = run_id or current_run_id(client)
    clear(client, queue)
    for start in range(0, n, chunk):
        with client.pipeline(transaction=False) as pipe:
            for i in range(start, min(n, start + chunk)):
                job = b"job-%07d" % i
                row = mix.row(i, run_id)
                if row is not None:
                    pipe.hset(queue.row_key(job), mapping=row)
                pipe.zadd(queue.active, {job: 1 + i})
            pipe.execute()


def lay_out_pending(client: redis.Redis, queue: Queue, n: int, chunk: int = 2000) -> None:
    """Empties the queue's keys, then enqueues n jobs as `add` leaves them."""
    clear(client, queue)
    for start in range(0, n, chunk):
        with client.pipeline(transaction=False) as pipe:
            for i in range(start, min(n, start + chunk)):
                job = b"job-%07d" % i
                pipe.hset(queue.row_key(job), mapping={b"state": b"pending", b"attempts": b"0",
                                                   b"payload": b"p"})
                pipe.zadd(queue.pending, {job: 0})
            pipe.execute()


def clear(client: redis.Redis, queue: Queue) -> None:
    """Deletes the queue's sorted sets and every key under its prefix, as Executor.clear does,
    on a client and at a benchmark's size: the keys found by SCAN and unlinked in batches,
    where Executor.clear reads the whole dataset."""
    client.delete(queue.pending, queue.active, queue.dead)
    batch = []
    for key in client.scan_iter(match=queue.prefix.replace(b"{", b"\\{").replace(b"}", b"\\}")
                                + b"*", count=5000):
        batch.append(key)
        if len(batch) == 5000:
            client.unlink(*batch)
            batch = []
    if batch:
        client.unlink(*batch)


def current_run_id(client: redis.Redis) -> bytes:
    return client.info("server")["run_id"].encode()


class ScriptedPeer:
    """The scripts a queue without the module would run, loaded on one client's server."""

    NAMES = ("claim2", "stalled2", "stalled2_info")

    def __init__(self, client: redis.Redis):
        self.client = client
        self.scripts = {name: client.register_script(scripts.source(name)) for name in self.NAMES}

    def claim(self, queue: Queue, lease_ms: int):
        return self.scripts["claim2"](keys=[queue.pending, queue.active, queue.prefix],
                                      args=[lease_ms])

    def sweep(self, queue: Queue, run_id: bytes | str, max_stalled: int, limit: int | None = None):
        """stalled2: the sweep, with the run_id the caller believes is current."""
        return self.scripts["stalled2"](keys=sweep_keys(queue),
                                        args=[run_id, max_stalled, *limit_option(limit)])

    def sweep_reading_info(self, queue: Queue, max_stalled: int, limit: int | None = None):
        """stalled2_info: the sweep, with the run_id the script reads from INFO server."""
        return self.scripts["stalled2_info"](keys=sweep_keys(queue),
                                             args=[max_stalled, *limit_option(limit)])


def sweep_keys(queue: Queue) -> list[bytes]:
    return [queue.active, queue.pending, queue.dead, queue.prefix]


def limit_option(limit: int | None) -> tuple:
    return () if limit is None else ("LIMIT", limit)


def native_sweep(client: redis.Redis, queue: Queue, max_stalled: int, limit: int | None = None):
    return client.execute_command("EMQ.STALLED.CHECK", *sweep_keys(queue), max_stalled,
                                  *limit_option(limit))


def native_claim(client: redis.Redis, queue: Queue, lease_ms: int):
    return client.execute_command("EMQ.CLAIM", queue.pending, queue.active, queue.prefix, lease_ms)


def pipelined_sweep(client: redis.Redis, queue: Queue, run_id: bytes, max_stalled: int,
                    limit: int = 1000):
    """The sweep done by the client: one read of the expired members, one pipeline of TYPE and
    HMGET, the model's decision for each, then every write in one MULTI. Not atomic: a worker
    that extends a lease between the reads and the MULTI loses its extension."""
    now = server_now_ms(client)
    # Members alone, without withscores: redis-py types the reply for either.
    ids = cast(list[bytes], client.zrange(queue.active, "-inf", now, byscore=True, offset=0,
                                          num=limit))
    with client.pipeline(transaction=False) as pipe:
        for job in ids:
            pipe.type(queue.row_key(job))
            pipe.hmget(queue.row_key(job), "group", "lease_epoch", "stalled")
        answers = pipe.execute()
    plan = []
    for job, kind, (group, stamp, stalled) in zip(ids, answers[0::2], answers[1::2],
                                                  strict=True):
        seen = sweep.Seen(type=kind.decode(), group=group, epoch=stamp, stalled=stalled)
        verdict = sweep.decide_member(run_id, max_stalled, seen)
        assert isinstance(verdict, sweep.Verdict), "every field it could ask for was read"
        if verdict.refusal:
            raise redis.ResponseError(f"{verdict.kind} at {job!r}")
        plan.append((job, verdict))
    with client.pipeline(transaction=True) as pipe:
        for job, verdict in plan:
            for write in sweep_writes(verdict, job, queue.active, queue.pending, queue.dead,
                                      queue.row_key(job), now):
                pipe.execute_command(*write)
        pipe.execute()
    return [[job for job, v in plan if v.kind in sweep.RECOVERING],
            [job for job, v in plan if v.kind == "dead"]]


# -- the clock ------------------------------------------------------------------------------


def command_usec(client: redis.Redis) -> dict[str, tuple[int, int]]:
    """INFO commandstats as {command: (calls, usec)}."""
    stats = client.info("commandstats")
    return {name.removeprefix("cmdstat_"): (int(s["calls"]), int(s["usec"]))
            for name, s in stats.items()}


@dataclass(frozen=True)
class Timed:
    """One measured run: the server's microseconds in the named commands, the wall clock."""

    server_usec: int
    wall_usec: int
    calls: int


def timed(client: redis.Redis, commands: tuple[str, ...], action) -> Timed:
    """Runs action() and returns the server time the named commands took during it."""
    client.config_resetstat()
    start = time.perf_counter()
    action()
    wall = time.perf_counter() - start
    stats = command_usec(client)
    return Timed(
        server_usec=sum(stats.get(c, (0, 0))[1] for c in commands),
        wall_usec=round(wall * 1e6),
        calls=sum(stats.get(c, (0, 0))[0] for c in commands),
    )


SWEEP_WAYS = ("native", "lua", "lua reading INFO", "pipelined")

PIPELINED_COMMANDS = ("zrange", "type", "hmget", "multi", "exec", "zrem", "zadd", "hset", "time")


def time_sweep(client: redis.Redis, queue: Queue, way: str, n: int, mix: Mix | str) -> Timed:
    """Lays out n expired leases of the mix, then sweeps them all in one call the given way
    (`pipelined` in one read and one MULTI) and times that sweep."""
    mix = MIXES[mix] if isinstance(mix, str) else mix
    run_id = current_run_id(client)
    lay_out_expired(client, queue, n, mix, run_id)
    peer = ScriptedPeer(client)
    if way == "native":
        return timed(client, ("EMQ.STALLED.CHECK",),
                     lambda: native_sweep(client, queue, mix.max_stalled, n))
    if way == "lua":
        return timed(client, ("evalsha", "eval"),
                     lambda: peer.sweep(queue, run_id, mix.max_stalled, n))
    if way == "lua reading INFO":
        return timed(client, ("evalsha", "eval"),
                     lambda: peer.sweep_reading_info(queue, mix.max_stalled, n))
    if way == "pipelined":
        return timed(client, PIPELINED_COMMANDS,
                     lambda: pipelined_sweep(client, queue, run_id, mix.max_stalled, n))
    raise ValueError(f"no sweep way {way!r}: choose one of {', '.join(SWEEP_WAYS)}")


def script_body(name: str) -> str:
    """A script's own text, without the shared rules of common.lua that run before it."""
    if name not in ScriptedPeer.NAMES:
        raise ValueError(f"no script named {name!r}: choose one of {', '.join(ScriptedPeer.NAMES)}")
    return scripts.text(name)


def small_measurement(queue: Queue = Queue("{measure}"), n: int = 2000, repeats: int = 5,
                      info_calls: int = 1000) -> str:
    """A measurement small enough for a notebook and fair in the way `make bench` is: every run
    on a server of its own, started the same way, the ways taking turns, and the best of
    `repeats` runs of each (other work on the machine only ever slows a run; `make bench` takes
    the best of three). A server that has already swept and deleted many rows can sweep slower
    the next time, whichever way it sweeps (measured at 100,000 leases for this course, up to
    about twice as slow; at 2000, no slower): a server of its own for each run rules that out.

    n expired leases, all counted, swept by the verb, by stalled2 and by stalled2_info; then
    INFO server alone, info_calls times. Each time is server time: the microseconds the server
    spent inside those commands (INFO commandstats), not the wall clock."""
    ways = (("native", "EMQ.STALLED.CHECK"), ("lua", "stalled2"),
            ("lua reading INFO", "stalled2_info"))
    best: dict[str, int] = {}
    for _ in range(repeats):
        for way, _label in ways:
            with OwnedServer() as server:
                usec = time_sweep(client_of(server), queue, way, n, "counted").server_usec
            best[way] = min(best.get(way, usec), usec)
        with OwnedServer() as server:
            client = client_of(server)
            usec = timed(client, ("info",),  # called at once, in this iteration
                         lambda: [client.info("server") for _ in range(info_calls)]  # noqa: B023
                         ).server_usec
        best["info"] = min(best.get("info", usec), usec)
    lines = [(f"each on a server of its own, best of {repeats} runs, the server's time inside "
              "the commands:")]
    lines += [f"{label:<18} {n} expired leases in {best[way] / 1000:.2f} ms of server time"
              for way, label in ways]
    lines.append(f"{'INFO server':<18} {info_calls} calls in {best['info'] / 1000:.2f} ms of "
                 "server time")
    return "\n".join(lines)
