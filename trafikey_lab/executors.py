"""One interface, two executors: the model in memory and the module on a live server.

Both speak in commands (`call`) and scripts (`run_script`); the verbs on `Executor` build the
same argument lists for either, so a sequence of calls means the same thing on both.
"""

import time
from dataclasses import dataclass
from importlib import resources

import redis

from trafikey_lab import epoch
from trafikey_lab.errors import ReplyError
from trafikey_lab.live.server import client_of
from trafikey_lab.model import ModelServer
from trafikey_lab.text import plain

SCRIPTS = ("add", "claim2", "extend2")


@dataclass(frozen=True)
class Queue:
    """A queue's keys, from a hash-tagged base such as `{jobs}` so they share one slot."""

    base: str = "{jobs}"

    def key(self, suffix: str) -> bytes:
        return f"{self.base}:{suffix}".encode()

    @property
    def pending(self) -> bytes:
        return self.key("pending")

    @property
    def active(self) -> bytes:
        return self.key("active")

    @property
    def dead(self) -> bytes:
        return self.key("dead")

    @property
    def prefix(self) -> bytes:
        return self.key("job:")

    def row_key(self, job: bytes | str) -> bytes:
        return self.prefix + _b(job)

    @property
    def keys(self) -> tuple[bytes, ...]:
        return (self.pending, self.active, self.dead)


def _b(value) -> bytes:
    if isinstance(value, bytes):
        return value
    return str(value).encode()


def script_source(name: str) -> str:
    """A script's text: the shared rules in common.lua, then the script's own body."""
    folder = resources.files("trafikey_lab.scripts")
    return folder.joinpath("common.lua").read_text() + folder.joinpath(f"{name}.lua").read_text()


class Executor:
    """The verbs of the course, on whichever executor implements the primitives below."""

    name = "executor"

    # -- primitives each executor provides ---------------------------------------------------

    def call(self, *args):
        raise NotImplementedError

    def run_script(self, name: str, keys: list[bytes], args: list[bytes]):
        raise NotImplementedError

    def restart(self) -> str:
        raise NotImplementedError

    @property
    def run_id(self) -> str:
        raise NotImplementedError

    def now_ms(self) -> int:
        raise NotImplementedError

    def wait_until(self, ms: int) -> None:
        """Returns once the executor's clock reads later than `ms`."""
        raise NotImplementedError

    def dataset(self) -> dict:
        raise NotImplementedError

    # -- the verbs ---------------------------------------------------------------------------

    def add(self, queue: Queue, job, payload=b""):
        return self.run_script("add", [queue.pending, queue.prefix], [_b(job), _b(payload)])

    def claim(self, queue: Queue, lease_ms: int):
        return self.call("EMQ.CLAIM", queue.pending, queue.active, queue.prefix, lease_ms)

    def extend(self, queue: Queue, job, attempt: int, lease_ms: int):
        return self.call("EMQ.EXTEND", queue.active, queue.row_key(job), _b(job), attempt, lease_ms)

    def extends(self, queue: Queue, lease_ms: int, leases: list[tuple]):
        """leases: (job, attempt) pairs."""
        triples = [part for job, attempt in leases
                   for part in (_b(job), queue.row_key(job), attempt)]
        return self.call("EMQ.EXTENDS", queue.active, lease_ms, *triples)

    def sweep(self, queue: Queue, max_stalled: int, limit: int | None = None):
        option = () if limit is None else ("LIMIT", limit)
        return self.call(
            "EMQ.STALLED.CHECK", queue.active, queue.pending, queue.dead, queue.prefix,
            max_stalled, *option,
        )

    def scripted_claim(self, queue: Queue, lease_ms: int):
        return self.run_script(
            "claim2", [queue.pending, queue.active, queue.prefix], [_b(lease_ms)]
        )

    def scripted_extend(self, queue: Queue, job, attempt: int, lease_ms: int):
        return self.run_script(
            "extend2", [queue.active, queue.row_key(job)], [_b(job), _b(attempt), _b(lease_ms)]
        )

    def row(self, queue: Queue, job) -> dict[bytes, bytes]:
        return self.dataset_row(queue.row_key(job))

    def dataset_row(self, key: bytes) -> dict[bytes, bytes]:
        kind, value = self.dataset().get(key, ("none", {}))
        return value if kind == "hash" else {}

    def stamped_by(self, queue: Queue, job, run_id: bytes | str) -> bool:
        """Whether the job's lease carries the stamp of the process with this run_id: its row's
        lease_epoch holds exactly those bytes. The comparison is the sweep's own, so under that
        process the lease would be counted; a row with no stamp is stamped by no process."""
        return not epoch.exempt(self.row(queue, job).get(b"lease_epoch"), _b(run_id))

    def deadline(self, queue: Queue, job) -> int | None:
        _, members = self.dataset().get(queue.active, ("zset", []))
        return next((int(score) for member, score in members if member == _b(job)), None)

    def clear(self, queue: Queue) -> None:
        """Deletes the queue's sorted sets and every key under its prefix (the rows)."""
        data = self.dataset()
        keys = set(queue.keys) | {k for k in data if k.startswith(queue.prefix)}
        if keys:
            self.call("DEL", *sorted(keys))


class ModelExecutor(Executor):
    """The rules in memory, with a clock that moves only when told."""

    name = "model"

    def __init__(self, server: ModelServer | None = None):
        self.server = server or ModelServer()

    def call(self, *args):
        return self.server.execute(*args)

    def run_script(self, name, keys, args):
        return self.server.script(name, list(keys), list(args))

    def restart(self) -> str:
        return self.server.restart().decode()

    @property
    def run_id(self) -> str:
        return self.server.run_id_cached().decode()

    def now_ms(self) -> int:
        return self.server.now_ms

    def plan_sweep(self, queue: Queue, max_stalled: int, limit: int = 1000):
        """The sweep's read pass over the queue, without running it (nothing is written)."""
        return self.server.plan_sweep(queue.active, queue.pending, queue.dead, queue.prefix,
                                      max_stalled, limit)

    def advance(self, ms: int) -> None:
        self.server.now_ms += ms

    def wait_until(self, ms: int) -> None:
        self.server.now_ms = max(self.server.now_ms, ms + 1)

    def dataset(self) -> dict:
        return self.server.dump()


def server_now_ms(client) -> int:
    """The server's clock in ms, from one TIME call: its seconds and microseconds belong
    together, and two calls may straddle a second."""
    seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def error_text(exc: redis.ResponseError) -> str:
    """The server's whole error line. redis-py strips the ERR code and maps some codes to
    classes; this puts the code back so both executors' refusals read the same."""
    codes = {
        redis.exceptions.NoPermissionError: "NOPERM",
        redis.exceptions.ReadOnlyError: "READONLY",
        redis.exceptions.NoScriptError: "NOSCRIPT",
        redis.exceptions.ExecAbortError: "EXECABORT",
        redis.exceptions.BusyLoadingError: "LOADING",
    }
    message = str(exc)
    for cls, code in codes.items():
        if isinstance(exc, cls):
            return f"{code} {message}"
    first = message.split(" ", 1)[0]
    if first.isupper() and first.isalpha() and first != "EMQ":
        return message
    return f"ERR {message}"


class LiveExecutor(Executor):
    """The module on a real server: a LabServer, or any redis-py client of a module-loaded one."""

    name = "live"

    def __init__(self, server):
        self.server = server
        self._scripts = {}

    @property
    def client(self) -> redis.Redis:
        return client_of(self.server)

    def call(self, *args):
        try:
            return self.client.execute_command(*args)
        except redis.ResponseError as exc:
            raise ReplyError(error_text(exc)) from None

    def run_script(self, name, keys, args):
        if name not in SCRIPTS:
            raise ValueError(f"no script named {name!r}")
        if name not in self._scripts:
            self._scripts[name] = self.client.register_script(script_source(name))
        try:
            return self._scripts[name](keys=list(keys), args=list(args), client=self.client)
        except redis.ResponseError as exc:
            raise ReplyError(error_text(exc)) from None

    def restart(self) -> str:
        return self.server.restart()

    @property
    def run_id(self) -> str:
        return self.client.info("server")["run_id"]

    def now_ms(self) -> int:
        return server_now_ms(self.client)

    def wait_until(self, ms: int) -> None:
        while (now := self.now_ms()) <= ms:
            time.sleep(min((ms - now + 1) / 1000, 0.5))

    def dataset(self) -> dict:
        out: dict[bytes, tuple[str, object]] = {}
        for key in sorted(self.client.scan_iter(count=1000)):
            kind = plain(self.client.type(key))
            if kind == "hash":
                out[key] = ("hash", self.client.hgetall(key))
            elif kind == "zset":
                out[key] = ("zset", self.client.zrange(key, 0, -1, withscores=True))
            elif kind == "string":
                out[key] = ("string", self.client.get(key))
            else:
                out[key] = (kind, None)
        return out
