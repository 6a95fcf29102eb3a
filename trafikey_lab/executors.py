"""One interface, two executors: the model in memory and the module on a live server.

Both speak in commands (`call`) and scripts (`run_script`); the verbs on `Executor` build the
same argument lists for either, so a sequence of calls means the same thing on both. The reads
the verbs need (a job's row, its deadline, the queue's keys) are plain commands too, sent to
the keys they touch, which both executors answer.

The live executor is in live/executor.py, so that importing this module (as the histories and
the schedule do) loads no redis client: take `LiveExecutor` from the live package
(`trafikey_lab.live`, which loads it on first use) or from `trafikey_lab`.
"""

import abc
import getpass
import os
import re
from dataclasses import dataclass
from typing import Any, TypeAlias, cast

from trafikey_lab import epoch
from trafikey_lab.errors import BadNamespace, ReplyError
from trafikey_lab.model import Arg, Dataset, ModelServer, Reply, Store, Swept, SweptMember

SCRIPTS = ("add", "claim2", "extend2")

NAMESPACE_ENV = "TRAFIKEY_NAMESPACE"
URL_ENV = "TRAFIKEY_VALKEY_URL"
"""The URL of a server to attach to (live/choose.py reads it too); here so that reading it
loads no server kind."""


def namespace() -> str:
    """The learner's part of every queue name, read when a key is built.

    TRAFIKEY_NAMESPACE when it is set (empty: none); otherwise, when the lab attaches to a
    server at TRAFIKEY_VALKEY_URL, the OS user's name, so that learners who share one server
    each use keys of their own; otherwise none, and the names are the course's as printed.
    """
    chosen = os.environ.get(NAMESPACE_ENV)
    if chosen is None:
        chosen = _user() if os.environ.get(URL_ENV) else ""
    if re.search(r"[{}\s]", chosen):
        raise BadNamespace(
            f"the namespace {chosen!r} holds a brace or a space, which would break the hash "
            f"tag that keeps a queue's keys in one slot: set {NAMESPACE_ENV} to a name of "
            "letters, digits, '-', '_' or '.'"
        )
    return chosen


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no USER, LOGNAME... and no passwd entry (some containers)
        raise BadNamespace(
            f"{URL_ENV} names a shared server, and the lab keeps each learner's keys apart "
            f"under their OS user's name, but this process has none: set {NAMESPACE_ENV} to "
            "a name of your own (letters, digits, '-', '_' or '.')"
        ) from None


Job: TypeAlias = bytes | str | int
"""A job's id as a caller gives it: its bytes are the id."""


@dataclass(frozen=True)
class Queue:
    """A queue's keys, from a hash-tagged base such as `{jobs}` so they share one slot.

    Every key carries the learner's namespace (`namespace()`) inside the hash tag:
    `{alice:jobs}:active`. It is read from the environment each time a key is built, not when
    the Queue is made, since the course builds its queues when its modules are imported, before
    a notebook's setup has said which server it uses; so each key below (pending, active...)
    may raise BadNamespace, and a notebook's setup, which empties its queue, is the first to.
    With no namespace the keys are `{jobs}:active`."""

    base: str = "{jobs}"

    def name_from_environment(self) -> str:
        """The base with the namespace the environment gives now in its hash tag (the base
        itself when there is none); BadNamespace when that namespace would break the tag."""
        space = namespace()
        if not space:
            return self.base
        if self.base.startswith("{") and "}" in self.base:
            return "{" + space + ":" + self.base[1:]
        return f"{space}:{self.base}"

    def key(self, suffix: str) -> bytes:
        return f"{self.name_from_environment()}:{suffix}".encode()

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

    def row_key(self, job: Job) -> bytes:
        return self.prefix + _b(job)

    @property
    def keys(self) -> tuple[bytes, ...]:
        return (self.pending, self.active, self.dead)


def _b(value: Arg) -> bytes:
    if isinstance(value, bytes):
        return value
    return str(value).encode()


def glob_escaped(prefix: bytes) -> bytes:
    """The prefix as a SCAN MATCH pattern that matches it literally: `*?[]\\` escaped (braces,
    which hash tags use, are not glob characters)."""
    return re.sub(rb"([*?\[\]\\])", rb"\\\1", prefix)


class Executor(abc.ABC):
    """The verbs of the course, on whichever executor implements the primitives below."""

    name = "executor"
    where = "on the executor"
    """Where a finding about a step played here says it was played, as feedback words it."""

    # -- primitives each executor provides ---------------------------------------------------

    @abc.abstractmethod
    def call(self, *args: Arg) -> Any:
        """One command; its reply in the form redis-py's client gives it. Any command runs
        on a server (INFO, SAVE, CONFIG...), each with a form of its own, so the reply is
        Any here; the verbs below say the forms of theirs."""

    def answers(self, command: str) -> bool:
        """Whether `call` runs this command: a server runs every one."""
        return True

    @abc.abstractmethod
    def run_script(self, name: str, keys: list[bytes], args: list[bytes]) -> Any:
        """One of SCRIPTS; its reply as `call` gives a command's."""

    @abc.abstractmethod
    def restart(self) -> str:
        """A new process over the same data; returns its run_id."""

    @property
    @abc.abstractmethod
    def run_id(self) -> str:
        """The run_id of the process that answers now."""

    @abc.abstractmethod
    def now_ms(self) -> int:
        """The executor's clock in ms: the server's TIME, or the model's clock."""

    @abc.abstractmethod
    def wait_until(self, ms: int) -> None:
        """Returns once the executor's clock reads later than `ms`: the model's clock is moved
        there, a live executor sleeps."""

    @abc.abstractmethod
    def counters(self) -> dict[str, int]:
        """The module's counters since its process started (INFO trafikey, without the
        "trafikey_" prefix): sweeps, swept_<verdict> for ghost, lane, exempt, recovered and
        dead, and <verb>_refusals for each verb. Per process: a restart starts them at zero."""

    @abc.abstractmethod
    def dataset(self, queue: Queue | None = None) -> Dataset:
        """The keyspace, key by key: {key: (type, value)}; with a queue, only its keys (its
        sorted sets and every key under its prefix, found by SCAN MATCH on the prefix). Without
        one, on a live server it reads every key there is (SCAN, then TYPE and a read per
        key), so it is for comparing whole datasets (the differential suites), never for a
        step."""

    # -- the verbs ---------------------------------------------------------------------------

    def add(self, queue: Queue, job: Job, payload: bytes | str = b"") -> int:
        return cast(int, self.run_script("add", [queue.pending, queue.prefix],
                                         [_b(job), _b(payload)]))

    # A claim replies Claimed or None, but its reply stays Any: the course's callers index the
    # claims they know were made (a job was added just before), and would each need a check
    # of None first.
    def claim(self, queue: Queue, lease_ms: int) -> Any:
        return self.call("EMQ.CLAIM", queue.pending, queue.active, queue.prefix, lease_ms)

    def extend(self, queue: Queue, job: Job, attempt: int, lease_ms: int) -> int:
        return cast(int, self.call("EMQ.EXTEND", queue.active, queue.row_key(job), _b(job),
                                   attempt, lease_ms))

    def extends(self, queue: Queue, lease_ms: int,
                leases: list[tuple[Job, int]]) -> list[bytes]:
        """leases: (job, attempt) pairs. Replies the jobs extended."""
        triples = [part for job, attempt in leases
                   for part in (_b(job), queue.row_key(job), attempt)]
        return cast(list[bytes], self.call("EMQ.EXTENDS", queue.active, lease_ms, *triples))

    def sweep(self, queue: Queue, max_stalled: int, limit: int | None = None) -> Swept:
        option: tuple[Arg, ...] = () if limit is None else ("LIMIT", limit)
        return cast(Swept, self.call(
            "EMQ.STALLED.CHECK", queue.active, queue.pending, queue.dead, queue.prefix,
            max_stalled, *option,
        ))

    def scripted_claim(self, queue: Queue, lease_ms: int) -> Any:
        """claim's reply (Claimed or None, Any as claim's is) by the script claim2."""
        return self.run_script(
            "claim2", [queue.pending, queue.active, queue.prefix], [_b(lease_ms)]
        )

    def scripted_extend(self, queue: Queue, job: Job, attempt: int, lease_ms: int) -> int:
        return cast(int, self.run_script(
            "extend2", [queue.active, queue.row_key(job)], [_b(job), _b(attempt), _b(lease_ms)]
        ))

    # -- the reads: each goes to the keys it is about ----------------------------------------

    def row(self, queue: Queue, job: Job) -> dict[bytes, bytes]:
        """The job's row (one HGETALL); {} when there is none or the key is not a hash."""
        try:
            return cast(dict[bytes, bytes], self.call("HGETALL", queue.row_key(job)))
        except ReplyError as refusal:
            if refusal.code == "WRONGTYPE":
                return {}
            raise

    def stamped_by(self, queue: Queue, job: Job, run_id: bytes | str) -> bool:
        """Whether the job's lease carries the stamp of the process with this run_id: its row's
        lease_epoch holds exactly those bytes. The comparison is the sweep's own, so under that
        process the lease would be counted; a row with no stamp is stamped by no process."""
        return not epoch.exempt(self.row(queue, job).get(b"lease_epoch"), _b(run_id))

    def deadline(self, queue: Queue, job: Job) -> int | None:
        """The job's deadline in active (one ZSCORE), None when it holds no lease there."""
        try:
            score = self.call("ZSCORE", queue.active, _b(job))
        except ReplyError as refusal:
            if refusal.code == "WRONGTYPE":
                return None
            raise
        return None if score is None else int(score)

    def clear(self, queue: Queue) -> None:
        """Deletes the queue's sorted sets and every key under its prefix (the rows), found by
        SCAN MATCH on the prefix alone, so that other queues' keys are not even read."""
        keys = set(queue.keys)
        pattern = glob_escaped(queue.prefix) + b"*"
        cursor = 0
        while True:
            cursor, found = self.call("SCAN", cursor, "MATCH", pattern, "COUNT", 1000)
            keys.update(found)
            if int(cursor) == 0:
                break
        self.call("DEL", *sorted(keys))


class ModelExecutor(Executor):
    """The rules in memory, with a clock that moves only when told."""

    name = "model"
    where = "on the model"

    def __init__(self, server: ModelServer | None = None) -> None:
        self.server = server or ModelServer()

    def call(self, *args: Arg) -> Reply:
        return self.server.execute(*args)

    def answers(self, command: str) -> bool:
        """The model's server runs the verbs, the scripts, the writes a dataset is laid out
        with and a few reads (HGET, HGETALL, ZSCORE, TYPE, EXISTS, SCAN), not every command."""
        return command.upper() in ModelServer.COMMANDS or command.upper() in Store.COMMANDS

    def run_script(self, name: str, keys: list[bytes], args: list[bytes]) -> Reply:
        return self.server.script(name, list(keys), list(args))

    def restart(self) -> str:
        return self.server.restart().decode()

    @property
    def run_id(self) -> str:
        return self.server.run_id_cached().decode()

    def now_ms(self) -> int:
        return self.server.now_ms

    def plan_sweep(self, queue: Queue, max_stalled: int, limit: int = 1000) -> list[SweptMember]:
        """The sweep's read pass over the queue, without running it (nothing is written)."""
        return self.server.plan_sweep(queue.active, queue.pending, queue.dead, queue.prefix,
                                      max_stalled, limit)

    def counters(self) -> dict[str, int]:
        return dict(self.server.counters)

    def advance(self, ms: int) -> None:
        self.server.now_ms += ms

    def wait_until(self, ms: int) -> None:
        self.server.now_ms = max(self.server.now_ms, ms + 1)

    def dataset(self, queue: Queue | None = None) -> Dataset:
        data = self.server.dump()
        if queue is None:
            return data
        return {key: value for key, value in data.items()
                if key in queue.keys or key.startswith(queue.prefix)}

