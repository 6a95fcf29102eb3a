"""The model: an in-memory server that runs the four EMQ verbs and the scripted ones by the rules.

No I/O and no wall clock: time is `now_ms`, moved by the caller, and `restart()` draws the
next run_id (NOW first, then forty 0s, as in the dive; then 000…001, 000…002 and so on). The
dataset survives a restart, as it does on a real server that saves before stopping. Replies
and refusals are the module's, byte for byte, so a test can hold the two side by side.
"""

from dataclasses import dataclass, field

from . import epoch, sweep
from .errors import ReplyError

START_MS = 1_780_000_000_000
"""The model clock's first reading: a plausible wall-clock time in ms."""

DEADLINE_MAX = 2**53
"""The largest score a sorted set holds exactly (a double's integer range)."""

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_INTEGER = "ERR EMQ row field is not an integer"
JOB_EXISTS = "ERR EMQ job already exists"


def must_be_positive(name: str) -> str:
    return f"ERR EMQ {name} must be a positive integer"


ATTEMPT_ERROR = "ERR EMQ attempt must be a non-negative integer"
SYNTAX_ERROR = "ERR EMQ syntax error"
DEADLINE_ERROR = "ERR EMQ deadline out of range"
HOST_CALL_FAILED = "ERR EMQ host call failed"


def arity_error(verb: str) -> str:
    return f"ERR wrong number of arguments for '{verb}' command"


def run_ids():
    yield epoch.NOW
    yield epoch.ZERO
    n = 1
    while True:
        yield b"%040x" % n
        n += 1


def _type_of(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, dict):
        return "hash"
    if isinstance(value, ZSet):
        return "zset"
    return "string"


@dataclass
class ZSet:
    """A sorted set: member -> score; ordered by score, then member bytes, as Valkey orders it."""

    scores: dict[bytes, float] = field(default_factory=dict)

    def ordered(self) -> list[tuple[bytes, float]]:
        return sorted(self.scores.items(), key=lambda item: (item[1], item[0]))


class ModelServer:
    """One modelled Valkey process after another, over one dataset."""

    def __init__(self, now_ms: int = START_MS):
        self.now_ms = now_ms
        self.data: dict[bytes, object] = {}
        self._run_ids = run_ids()
        self.run_id: bytes | None = next(self._run_ids)

    def restart(self) -> bytes:
        self.run_id = next(self._run_ids)
        return self.run_id

    # -- the command table -----------------------------------------------------------------

    def execute(self, *args):
        if not args:
            raise ReplyError("ERR no command given")
        args = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        name = args[0].decode(errors="replace").upper()
        handler = self.COMMANDS.get(name)
        if handler is None:
            raise ReplyError(f"ERR unknown command '{args[0].decode(errors='replace')}'")
        # The server names a command in its errors as registered: the module's verbs in upper
        # case, its own commands in lower case.
        return handler(self, name if name.startswith("EMQ.") else name.lower(), args[1:])

    # -- small data commands the executors share (injections and dumps) ----------------------

    def _hset(self, verb, args):
        if len(args) < 3 or len(args) % 2 == 0:
            raise ReplyError(arity_error(verb))
        row = self._hash_or_new(args[0])
        added = sum(k not in row for k in args[1::2])
        row.update(zip(args[1::2], args[2::2]))
        return added

    def _zadd(self, verb, args):
        if len(args) < 3 or len(args) % 2 == 0:
            raise ReplyError(arity_error(verb))
        zset = self._zset_or_new(args[0])
        added = 0
        for score, member in zip(args[1::2], args[2::2]):
            added += member not in zset.scores
            zset.scores[member] = float(score)
        return added

    def _set(self, verb, args):
        if len(args) != 2:
            raise ReplyError(arity_error(verb))
        self.data[args[0]] = args[1]
        return b"OK"

    def _zrem_command(self, verb, args):
        if len(args) < 2:
            raise ReplyError(arity_error(verb))
        self._check_zsets(args[0])
        present = self.data.get(args[0], ZSet()).scores
        removed = sum(member in present for member in set(args[1:]))
        for member in args[1:]:
            self._zrem(args[0], member)
        return removed

    def _del(self, verb, args):
        if not args:
            raise ReplyError(arity_error(verb))
        return sum(self.data.pop(key, None) is not None for key in args)

    # -- the verbs ---------------------------------------------------------------------------

    def _claim(self, verb, args, stamp=True):
        if len(args) != 4:
            raise ReplyError(arity_error(verb))
        pending, active, prefix, lease = args
        deadline = self._deadline(lease)
        self._check_zsets(pending, active)
        run_id = self._current()
        ghosts, claimed, attempts = [], None, 0
        for member, _ in self._ordered(pending):
            kind = self._type(prefix + member)
            if kind == "none":
                ghosts.append(member)
                continue
            if kind != "hash":
                raise ReplyError(WRONGTYPE)
            attempts = self._counter(self.data[prefix + member].get(b"attempts"))
            claimed = member
            break
        for ghost in ghosts:
            self._zrem(pending, ghost)
        if claimed is None:
            return None
        self._zrem(pending, claimed)
        fields = {b"state": b"active", b"attempts": b"%d" % (attempts + 1)}
        if stamp:
            fields[b"lease_epoch"] = run_id
        self.data[prefix + claimed].update(fields)
        self._zset_or_new(active).scores[claimed] = float(deadline)
        return [claimed, attempts + 1, deadline]

    def _extend(self, verb, args, stamp=True):
        if len(args) != 5:
            raise ReplyError(arity_error(verb))
        active, row, member, attempt, lease = args
        attempt = self._attempt(attempt)
        deadline = self._deadline(lease)
        self._check_zsets(active)
        self._check_hash(row)
        run_id = self._current()
        if not self._live(active, row, member, attempt):
            return 0
        self._zset_or_new(active).scores[member] = float(deadline)
        if stamp:
            self.data[row][b"lease_epoch"] = run_id
        return 1

    def _extends(self, verb, args):
        if len(args) < 5 or (len(args) - 2) % 3:
            raise ReplyError(arity_error(verb))
        active, lease, triples = args[0], args[1], args[2:]
        deadline = self._deadline(lease)
        attempts = [self._attempt(a) for a in triples[2::3]]
        self._check_zsets(active)
        run_id = self._current()
        live = []
        for member, row, attempt in zip(triples[0::3], triples[1::3], attempts):
            self._check_hash(row)
            if self._live(active, row, member, attempt):
                live.append((member, row))
        for member, row in live:
            self._zset_or_new(active).scores[member] = float(deadline)
            self.data[row][b"lease_epoch"] = run_id
        return [member for member, _ in live]

    def _stalled_check(self, verb, args):
        if len(args) not in (5, 7):
            raise ReplyError(arity_error(verb))
        active, pending, dead, prefix = args[:4]
        max_stalled = self._positive(args[4], "max_stalled")
        limit = 1000
        if len(args) == 7:
            if args[5].upper() != b"LIMIT":
                raise ReplyError(SYNTAX_ERROR)
            limit = self._positive(args[6], "limit")
        self._check_zsets(active, pending, dead)
        plan = self.plan_sweep(active, pending, dead, prefix, max_stalled, limit)
        for member in plan:
            if member.verdict.refusal:
                raise ReplyError(WRONGTYPE if member.verdict.kind == "wrongtype" else NOT_INTEGER)
        for member in plan:
            for write in member.writes:
                self.execute(*write)
        return [
            [m.id for m in plan if m.verdict.kind in ("exempt", "recovered")],
            [m.id for m in plan if m.verdict.kind == "dead"],
        ]

    def plan_sweep(self, active, pending, dead, prefix, max_stalled, limit=1000):
        """The sweep's read pass: for each expired member (ascending deadline, at most
        `limit`), the reads its verdict asked for, the verdict and the writes it implies."""
        run_id = self._current()
        now = self.now_ms
        plan = []
        for member, _ in [m for m in self._ordered(active) if m[1] <= now][:limit]:
            row = self.data.get(prefix + member)
            verdict, asked = decide_row(run_id, max_stalled, row)
            plan.append(SweptMember(member, tuple(asked), verdict, tuple(
                sweep_writes(verdict, member, active, pending, dead, prefix + member, now))))
        return plan

    COMMANDS = {
        "HSET": _hset,
        "ZADD": _zadd,
        "SET": _set,
        "DEL": _del,
        "ZREM": _zrem_command,
        "EMQ.CLAIM": _claim,
        "EMQ.EXTEND": _extend,
        "EMQ.EXTENDS": _extends,
        "EMQ.STALLED.CHECK": _stalled_check,
    }

    # -- the scripted executor (no stamp) ----------------------------------------------------

    def script(self, name: str, keys: list[bytes], args: list[bytes]):
        if name == "add":
            return self._add(keys, args)
        if name == "claim2":
            return self._claim("claim2", [*keys, *args], stamp=False)
        if name == "extend2":
            return self._extend("extend2", [*keys, *args], stamp=False)
        raise ValueError(f"no script named {name!r}")

    def _add(self, keys, args):
        (pending, prefix), (member, payload) = keys, args
        self._check_zsets(pending)
        if self._type(prefix + member) != "none":
            raise ReplyError(JOB_EXISTS)
        self.data[prefix + member] = {b"state": b"pending", b"attempts": b"0", b"payload": payload}
        self._zset_or_new(pending).scores[member] = 0.0
        return 1

    # -- the checks, in the order every verb makes them ------------------------------------

    def _positive(self, value: bytes, name: str) -> int:
        number = epoch.argument_integer(value)
        if number is None or number < 1:
            raise ReplyError(must_be_positive(name))
        return number

    def _attempt(self, value: bytes) -> int:
        number = epoch.argument_integer(value)
        if number is None or number < 0:
            raise ReplyError(ATTEMPT_ERROR)
        return number

    def _deadline(self, lease: bytes) -> int:
        deadline = self.now_ms + self._positive(lease, "lease")
        if deadline > DEADLINE_MAX:
            raise ReplyError(DEADLINE_ERROR)
        return deadline

    def _check_zsets(self, *keys: bytes) -> None:
        if any(self._type(k) not in ("none", "zset") for k in keys):
            raise ReplyError(WRONGTYPE)

    def _check_hash(self, key: bytes) -> None:
        if self._type(key) not in ("none", "hash"):
            raise ReplyError(WRONGTYPE)

    def _current(self) -> bytes:
        if self.run_id is None:
            raise ReplyError(HOST_CALL_FAILED)
        return self.run_id

    def _counter(self, value: bytes | None) -> int:
        number = epoch.counter(value)
        if number is None:
            raise ReplyError(NOT_INTEGER)
        return number

    def _live(self, active: bytes, row: bytes, member: bytes, attempt: int) -> bool:
        zset = self.data.get(active)
        if zset is None or member not in zset.scores or self._type(row) != "hash":
            return False
        fields = self.data[row]
        if fields.get(b"state") != b"active":
            return False
        return self._counter(fields.get(b"attempts")) == attempt

    # -- storage -----------------------------------------------------------------------------

    def _type(self, key: bytes) -> str:
        return _type_of(self.data.get(key))

    def _ordered(self, key: bytes) -> list[tuple[bytes, float]]:
        zset = self.data.get(key)
        return zset.ordered() if zset is not None else []

    def _hash_or_new(self, key: bytes) -> dict:
        self._check_hash(key)
        return self.data.setdefault(key, {})

    def _zset_or_new(self, key: bytes) -> ZSet:
        self._check_zsets(key)
        return self.data.setdefault(key, ZSet())

    def _zrem(self, key: bytes, member: bytes) -> None:
        zset = self.data.get(key)
        if zset is not None:
            zset.scores.pop(member, None)
            if not zset.scores:
                del self.data[key]

    def dump(self) -> dict:
        """The whole dataset in the form LiveExecutor.dataset() gives a real one."""
        out = {}
        for key, value in self.data.items():
            kind = _type_of(value)
            if kind == "hash":
                out[key] = ("hash", dict(value))
            elif kind == "zset":
                out[key] = ("zset", value.ordered())
            else:
                out[key] = ("string", value)
        return out


def decide_row(run_id: bytes, max_stalled: int, row) -> tuple[sweep.Verdict, list[sweep.Need]]:
    """The sweep's verdict on one stored row, and the reads it asked for, in order."""

    def read(need: sweep.Need):
        if need is sweep.Need.TYPE:
            return _type_of(row)
        return row.get(need.value.encode())

    return sweep.decide(run_id, max_stalled, read)


@dataclass(frozen=True)
class SweptMember:
    id: bytes
    reads: tuple[sweep.Need, ...]
    verdict: sweep.Verdict
    writes: tuple[tuple[bytes, ...], ...]


def sweep_writes(verdict, member, active, pending, dead, row, now) -> list[tuple[bytes, ...]]:
    """The commands the sweep issues for one member's verdict, as the module issues them."""
    if verdict.kind == "ghost":
        return [(b"ZREM", active, member)]
    if verdict.kind in ("exempt", "recovered"):
        fields = (b"state", b"pending")
        if verdict.stalled is not None:
            fields += (b"stalled", b"%d" % verdict.stalled)
        return [(b"ZREM", active, member), (b"ZADD", pending, b"0", member), (b"HSET", row, *fields)]
    if verdict.kind == "dead":
        return [(b"ZREM", active, member), (b"ZADD", dead, b"%d" % now, member),
                (b"HSET", row, b"state", b"dead", b"stalled", b"%d" % verdict.stalled)]
    return []
