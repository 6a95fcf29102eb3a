"""The model: an in-memory server that runs the four EMQ verbs and the scripted ones by the rules.

No I/O and no wall clock: time is `now_ms`, moved by the caller, and `restart()` draws the
next run_id (NOW first, then forty 0s, as in the dive; then 000…001, 000…002 and so on). The
dataset survives a restart, as it does on a real server that saves before stopping. Replies
and refusals are the module's, byte for byte, so a test can hold the two side by side.

The file is laid out as trafikey.c is, so the two read side by side: the store first (what
the server provides before any module loads), then the rules, then one handler per verb
opening with its usage line, the command table last, where the module's OnLoad registers
its verbs. The steps have the C's names: plan_claim, claim_command, lease_is_live,
deadline_in_range, plan_sweep, decide_row, sweep_writes, reply_sweep.
"""

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias, cast

from trafikey_lab import epoch, sweep
from trafikey_lab.errors import ReplyError

START_MS = 1_780_000_000_000
"""The model clock's first reading: a plausible wall-clock time in ms."""

DEADLINE_MAX = 2**53
"""The largest score a sorted set holds exactly (a double's integer range)."""

DEFAULT_LIMIT = 1000
"""How many expired members a sweep takes when no LIMIT is given."""

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


SWEPT = (sweep.Kind.GHOST, sweep.Kind.LANE, sweep.Kind.EXEMPT, sweep.Kind.RECOVERED,
         sweep.Kind.DEAD)
"""The verdicts a sweep that runs gives its members (a refusal's kind refuses the sweep)."""


def refusals_field(verb: str) -> str:
    """The counter of a verb's refusals: EMQ.STALLED.CHECK's is stalled_check_refusals."""
    return verb.removeprefix("EMQ.").lower().replace(".", "_") + "_refusals"


def new_counters() -> dict[str, int]:
    """The module's INFO trafikey counters, as a process starts them: all zero. The names are
    the INFO fields without the server's "trafikey_" prefix, in the order INFO prints them."""
    names = ["sweeps", *(f"swept_{kind}" for kind in SWEPT),
             *(refusals_field(verb) for verb in ("EMQ.CLAIM", "EMQ.EXTEND", "EMQ.EXTENDS",
                                                 "EMQ.STALLED.CHECK"))]
    return dict.fromkeys(names, 0)


def run_ids() -> Iterator[bytes]:
    yield epoch.NOW
    yield epoch.ZERO
    n = 1
    while True:
        yield b"%040x" % n
        n += 1


# -- the store: keys, their types, and the server's own commands --------------------------------

def _type_of(value: "Value | None") -> str:
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


Value: TypeAlias = dict[bytes, bytes] | ZSet | bytes
"""What a key holds: a hash, a sorted set or a string, told apart as _type_of does."""

Arg: TypeAlias = bytes | str | int | float
"""A command's argument as a caller gives it; the server reads each as its bytes."""

Claimed: TypeAlias = list[bytes | int]
"""EMQ.CLAIM's reply: [id, attempts, deadline_ms]."""

Swept: TypeAlias = list[list[bytes]]
"""EMQ.STALLED.CHECK's reply: [recovered_ids, dead_ids]."""

Reply: TypeAlias = (int | float | bytes | Claimed | list[bytes] | Swept | dict[bytes, bytes]
                    | tuple[int, list[bytes]] | None)
"""A reply, in the form redis-py's client gives it: a count, a score, a string, a claim, the
ids EXTENDS extended, a sweep's two lists, a row (HGETALL), a SCAN page, or nil."""

Dataset: TypeAlias = dict[bytes, tuple[str, Any]]
"""A keyspace key by key, {key: (type, value)}: a hash's fields (dict[bytes, bytes]), a sorted
set's (member, score) pairs in order (list[tuple[bytes, float]]), a string's bytes. The value
is Any: its form follows the type word beside it, and a reader unpacks (type, value) and
branches on the word, which would not narrow a union of the forms."""


class Store:
    """The dataset, as the server keeps it whatever module is loaded: keys of three types, the
    type checks every command makes, and the plain commands (HSET, ZADD, SET, DEL, ZREM) the
    executors use to lay out a dataset and the sweep's writes are made of."""

    def __init__(self) -> None:
        self.data: dict[bytes, Value] = {}

    def type(self, key: bytes) -> str:
        return _type_of(self.data.get(key))

    def check_zsets(self, *keys: bytes) -> None:
        if any(self.type(k) not in ("none", "zset") for k in keys):
            raise ReplyError(WRONGTYPE)

    def check_hash(self, key: bytes) -> None:
        if self.type(key) not in ("none", "hash"):
            raise ReplyError(WRONGTYPE)

    def ordered(self, key: bytes) -> list[tuple[bytes, float]]:
        zset = self.data.get(key)
        return zset.ordered() if isinstance(zset, ZSet) else []

    def hash_or_new(self, key: bytes) -> dict[bytes, bytes]:
        self.check_hash(key)
        row = self.data.get(key)
        if not isinstance(row, dict):
            row = self.data[key] = {}
        return row

    def zset_or_new(self, key: bytes) -> ZSet:
        self.check_zsets(key)
        zset = self.data.get(key)
        if not isinstance(zset, ZSet):
            zset = self.data[key] = ZSet()
        return zset

    def zrem(self, key: bytes, member: bytes) -> None:
        zset = self.data.get(key)
        if isinstance(zset, ZSet):
            zset.scores.pop(member, None)
            if not zset.scores:
                del self.data[key]

    def dump(self) -> Dataset:
        """The whole dataset in the form LiveExecutor.dataset() gives a real one."""
        out: Dataset = {}
        for key, value in self.data.items():
            if isinstance(value, dict):
                out[key] = ("hash", dict(value))
            elif isinstance(value, ZSet):
                out[key] = ("zset", value.ordered())
            else:
                out[key] = ("string", value)
        return out

    def hset_command(self, verb: str, args: list[bytes]) -> int:
        if len(args) < 3 or len(args) % 2 == 0:
            raise ReplyError(arity_error(verb))
        row = self.hash_or_new(args[0])
        added = sum(k not in row for k in args[1::2])
        row.update(zip(args[1::2], args[2::2], strict=False))
        return added

    def zadd_command(self, verb: str, args: list[bytes]) -> int:
        if len(args) < 3 or len(args) % 2 == 0:
            raise ReplyError(arity_error(verb))
        zset = self.zset_or_new(args[0])
        added = 0
        for score, member in zip(args[1::2], args[2::2], strict=False):
            added += member not in zset.scores
            zset.scores[member] = float(score)
        return added

    def set_command(self, verb: str, args: list[bytes]) -> bytes:
        if len(args) != 2:
            raise ReplyError(arity_error(verb))
        self.data[args[0]] = args[1]
        return b"OK"

    def del_command(self, verb: str, args: list[bytes]) -> int:
        if not args:
            raise ReplyError(arity_error(verb))
        return sum(self.data.pop(key, None) is not None for key in args)

    def zrem_command(self, verb: str, args: list[bytes]) -> int:
        if len(args) < 2:
            raise ReplyError(arity_error(verb))
        self.check_zsets(args[0])
        # check_zsets refused any key that holds another type.
        present = cast(ZSet, self.data.get(args[0], ZSet())).scores
        removed = sum(member in present for member in set(args[1:]))
        for member in args[1:]:
            self.zrem(args[0], member)
        return removed

    # The plain reads the executors make (a row, a deadline, the queue's keys), replied in
    # the form redis-py's client gives them, so that a caller reads either executor alike.

    def hash_at(self, key: bytes) -> dict[bytes, bytes]:
        self.check_hash(key)
        row = self.data.get(key)
        return row if isinstance(row, dict) else {}

    def hgetall_command(self, verb: str, args: list[bytes]) -> dict[bytes, bytes]:
        if len(args) != 1:
            raise ReplyError(arity_error(verb))
        return dict(self.hash_at(args[0]))

    def hget_command(self, verb: str, args: list[bytes]) -> bytes | None:
        if len(args) != 2:
            raise ReplyError(arity_error(verb))
        return self.hash_at(args[0]).get(args[1])

    def zscore_command(self, verb: str, args: list[bytes]) -> float | None:
        if len(args) != 2:
            raise ReplyError(arity_error(verb))
        self.check_zsets(args[0])
        zset = self.data.get(args[0])
        return zset.scores.get(args[1]) if isinstance(zset, ZSet) else None

    def type_command(self, verb: str, args: list[bytes]) -> bytes:
        if len(args) != 1:
            raise ReplyError(arity_error(verb))
        return self.type(args[0]).encode()

    def exists_command(self, verb: str, args: list[bytes]) -> int:
        if not args:
            raise ReplyError(arity_error(verb))
        return sum(key in self.data for key in args)

    def scan_command(self, verb: str, args: list[bytes]) -> tuple[int, list[bytes]]:
        """SCAN <cursor> [MATCH <pattern>] [COUNT <n>]: every match in one reply, cursor 0."""
        if not args or len(args) % 2 == 0:
            raise ReplyError(arity_error(verb))
        options = {name.upper(): value for name, value in zip(args[1::2], args[2::2], strict=True)}
        if set(options) - {b"MATCH", b"COUNT"}:
            raise ReplyError("ERR syntax error")
        pattern = glob_pattern(options.get(b"MATCH", b"*"))
        return 0, sorted(key for key in self.data if pattern.fullmatch(key))

    COMMANDS: ClassVar[dict[str, Callable[["Store", str, list[bytes]], Reply]]] = {
        "HSET": hset_command,
        "ZADD": zadd_command,
        "SET": set_command,
        "DEL": del_command,
        "ZREM": zrem_command,
        "HGETALL": hgetall_command,
        "HGET": hget_command,
        "ZSCORE": zscore_command,
        "TYPE": type_command,
        "EXISTS": exists_command,
        "SCAN": scan_command,
    }


def glob_pattern(glob: bytes) -> "re.Pattern[bytes]":
    """A SCAN MATCH pattern as Valkey's stringmatch reads it: `*` any run, `?` one byte,
    `[...]` a class (`^` negates, `a-z` a range), `\\` makes the next byte literal."""
    out: list[bytes] = []
    i = 0
    while i < len(glob):
        byte = glob[i:i + 1]
        if byte == b"\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1:i + 2]))
            i += 2
            continue
        if byte == b"*":
            out.append(b".*")
        elif byte == b"?":
            out.append(b".")
        elif byte == b"[" and glob.find(b"]", i + 2) > 0:
            end = glob.find(b"]", i + 2)
            body = glob[i + 1:end]
            negate = body[:1] == b"^"
            body = body[1:] if negate else body
            escaped = re.sub(rb"([\\\]\[^])", rb"\\\1", body)
            out.append(b"[" + (b"^" if negate else b"") + escaped + b"]")
            i = end
        else:
            out.append(re.escape(byte))
        i += 1
    return re.compile(b"".join(out), re.DOTALL)


# -- the rules: arguments, counters, deadlines, and the sweep's per-member steps ----------------

def parse_at_least(value: bytes, minimum: int, refusal: str) -> int:
    """An argument read as the server reads integers, refused with `refusal` below `minimum`."""
    number = epoch.argument_integer(value)
    if number is None or number < minimum:
        raise ReplyError(refusal)
    return number


def deadline_in_range(now: int, lease: int) -> int:
    """now + lease, refused when a sorted set's score could not hold it exactly."""
    deadline = now + lease
    if deadline > DEADLINE_MAX:
        raise ReplyError(DEADLINE_ERROR)
    return deadline


def counter_field(value: bytes | None) -> int:
    """A row's attempts or stalled: absent is 0; anything but a counter refuses the verb."""
    number = epoch.counter(value)
    if number is None:
        raise ReplyError(NOT_INTEGER)
    return number


def decide_row(run_id: bytes, max_stalled: int, row: Value | None,
               step_machine: sweep.StepMachine | None = None,
               ) -> tuple[sweep.Verdict, list[sweep.Need]]:
    """The sweep's verdict on one stored row, and the reads it asked for, in order; by
    sweep.decide_member, or by the step machine given (the C's, through ctypes)."""

    def read(need: sweep.Need) -> str | bytes | None:
        if need is sweep.Need.TYPE:
            return _type_of(row)
        # The step machine asks for a field only once TYPE has read "hash".
        return cast(dict[bytes, bytes], row).get(need.value.encode())

    return sweep.decide(run_id, max_stalled, read, step_machine)


@dataclass(frozen=True)
class SweptMember:
    id: bytes
    reads: tuple[sweep.Need, ...]
    verdict: sweep.Verdict
    writes: tuple[tuple[bytes, ...], ...]


def sweep_writes(verdict: sweep.Verdict, member: bytes, active: bytes, pending: bytes, dead: bytes,
                 row: bytes, now: int) -> list[tuple[bytes, ...]]:
    """The writes one member's verdict implies, as plain commands, in the order the model makes
    them. The module gathers a whole sweep's writes by key instead (one ZREM of every member it
    takes out of active, one ZADD for each set that receives members, then each row's HSET in
    sweep order: its sweep_writes), which leaves the same dataset, since the members are
    distinct."""
    if verdict.kind == sweep.Kind.GHOST:
        return [(b"ZREM", active, member)]
    if verdict.kind in sweep.RECOVERING:
        fields: tuple[bytes, ...] = (b"state", b"pending")
        if verdict.stalled is not None:
            fields += (b"stalled", b"%d" % verdict.stalled)
        return [(b"ZREM", active, member), (b"ZADD", pending, b"0", member),
                (b"HSET", row, *fields)]
    if verdict.kind == sweep.Kind.DEAD:
        stalled = cast(int, verdict.stalled)  # count_stall gives every death its count
        return [(b"ZREM", active, member), (b"ZADD", dead, b"%d" % now, member),
                (b"HSET", row, b"state", b"dead", b"stalled", b"%d" % stalled)]
    return []


def reply_sweep(plan: list[SweptMember]) -> list[list[bytes]]:
    """[recovered_ids, dead_ids], each in sweep order; exempt ids are recovered."""
    return [
        [m.id for m in plan if m.verdict.kind in sweep.RECOVERING],
        [m.id for m in plan if m.verdict.kind == sweep.Kind.DEAD],
    ]


# -- the verbs ----------------------------------------------------------------------------------

class ModelServer:
    """One modelled Valkey process after another, over one store.

    One class of some 200 lines, as trafikey.c is one file: a handler per verb under the C's
    names, in the C's order, so that the two read side by side (the store and the pure rules
    are outside it)."""

    def __init__(self, now_ms: int = START_MS) -> None:
        self.now_ms = now_ms
        self.store = Store()
        self._run_ids = run_ids()
        self.run_id: bytes | None = next(self._run_ids)
        self.counters = new_counters()
        """The module's counters since this process loaded it, kept by the module's rules: a
        sweep that runs counts itself and each member by verdict, a refused verb counts one
        refusal and nothing else. In memory only, so a restart starts them at zero."""

    def restart(self) -> bytes:
        self.run_id = next(self._run_ids)
        self.counters = new_counters()
        return self.run_id

    def run_id_cached(self) -> bytes:
        """The run_id the module read at load; a verb without one refuses."""
        if self.run_id is None:
            raise ReplyError(HOST_CALL_FAILED)
        return self.run_id

    def lease_deadline(self, lease: bytes) -> int:
        return deadline_in_range(self.now_ms, parse_at_least(lease, 1, must_be_positive("lease")))

    def plan_claim(self, pending: bytes, prefix: bytes,
                   ) -> tuple[list[bytes], bytes | None, int]:
        """Walks pending in claim order until a row that is a hash: (ghosts, id, attempts).
        A missing row is a ghost, kept for removal; a row of another type refuses the claim."""
        ghosts: list[bytes] = []
        for member, _ in self.store.ordered(pending):
            row = self.store.data.get(prefix + member)
            if row is None:
                ghosts.append(member)
                continue
            if not isinstance(row, dict):
                raise ReplyError(WRONGTYPE)
            return ghosts, member, counter_field(row.get(b"attempts"))
        return ghosts, None, 0

    def claim_command(self, verb: str, args: list[bytes], stamp: bool = True) -> Claimed | None:
        """EMQ.CLAIM <pending> <active> <prefix> <lease_ms>

        Claims the head of pending and replies [id, attempts, deadline_ms], or nil. Ghosts
        before the head are dropped; the row gets state, attempts and the stamp together.
        claim2, the scripted claim, is the same without the stamp."""
        if len(args) != 4:
            raise ReplyError(arity_error(verb))
        pending, active, prefix, lease = args
        deadline = self.lease_deadline(lease)
        self.store.check_zsets(pending, active)
        run_id = self.run_id_cached()
        ghosts, claimed, attempts = self.plan_claim(pending, prefix)
        for ghost in ghosts:
            self.store.zrem(pending, ghost)
        if claimed is None:
            return None
        self.store.zrem(pending, claimed)
        fields = {b"state": b"active", b"attempts": b"%d" % (attempts + 1)}
        if stamp:
            fields[b"lease_epoch"] = run_id
        cast(dict[bytes, bytes], self.store.data[prefix + claimed]).update(fields)
        self.store.zset_or_new(active).scores[claimed] = float(deadline)
        return [claimed, attempts + 1, deadline]

    def lease_is_live(self, active: bytes, row: bytes, member: bytes, attempt: int) -> bool:
        """id in active, the row a hash, state exactly active, attempts equal to attempt; the
        attempts must be a counter only when the rest holds."""
        zset, fields = self.store.data.get(active), self.store.data.get(row)
        if not isinstance(zset, ZSet) or member not in zset.scores or not isinstance(fields, dict):
            return False
        if fields.get(b"state") != b"active":
            return False
        return counter_field(fields.get(b"attempts")) == attempt

    def extend_command(self, verb: str, args: list[bytes], stamp: bool = True) -> int:
        """EMQ.EXTEND <active> <row> <id> <attempt> <lease_ms>

        Extends one live lease to now + lease_ms and re-stamps its row; replies 1, or 0 and
        writes nothing. extend2, the scripted extend, is the same without the stamp."""
        if len(args) != 5:
            raise ReplyError(arity_error(verb))
        active, row, member, _, lease = args
        attempt = parse_at_least(args[3], 0, ATTEMPT_ERROR)
        deadline = self.lease_deadline(lease)
        self.store.check_zsets(active)
        self.store.check_hash(row)
        run_id = self.run_id_cached()
        if not self.lease_is_live(active, row, member, attempt):
            return 0
        self.store.zset_or_new(active).scores[member] = float(deadline)
        if stamp:
            cast(dict[bytes, bytes], self.store.data[row])[b"lease_epoch"] = run_id
        return 1

    def plan_extends(self, active: bytes, triples: list[bytes], attempts: list[int],
                     ) -> list[tuple[bytes, bytes]]:
        """EXTENDS' read pass: the (id, row) of each live triple, in argument order."""
        live: list[tuple[bytes, bytes]] = []
        for member, row, attempt in zip(triples[0::3], triples[1::3], attempts, strict=False):
            self.store.check_hash(row)
            if self.lease_is_live(active, row, member, attempt):
                live.append((member, row))
        return live

    def extends_command(self, verb: str, args: list[bytes]) -> list[bytes]:
        """EMQ.EXTENDS <active> <lease_ms> <id> <row> <attempt> [<id> <row> <attempt> ...]

        EMQ.EXTEND for many leases in one call: every live lease gets the same deadline and
        the stamp; replies the ids extended, in argument order."""
        if len(args) < 5 or (len(args) - 2) % 3:
            raise ReplyError(arity_error(verb))
        active, lease, triples = args[0], args[1], args[2:]
        deadline = self.lease_deadline(lease)
        attempts = [parse_at_least(a, 0, ATTEMPT_ERROR) for a in triples[2::3]]
        self.store.check_zsets(active)
        run_id = self.run_id_cached()
        live = self.plan_extends(active, triples, attempts)
        for member, row in live:
            self.store.zset_or_new(active).scores[member] = float(deadline)
            cast(dict[bytes, bytes], self.store.data[row])[b"lease_epoch"] = run_id
        return [member for member, _ in live]

    def plan_sweep(self, active: bytes, pending: bytes, dead: bytes, prefix: bytes,
                   max_stalled: int, limit: int = DEFAULT_LIMIT) -> list[SweptMember]:
        """The sweep's read pass: for each expired member (ascending deadline, at most
        `limit`), the reads its verdict asked for, the verdict and the writes it implies."""
        run_id = self.run_id_cached()
        now = self.now_ms
        plan: list[SweptMember] = []
        for member, _ in [m for m in self.store.ordered(active) if m[1] <= now][:limit]:
            row = self.store.data.get(prefix + member)
            verdict, asked = decide_row(run_id, max_stalled, row)
            plan.append(SweptMember(member, tuple(asked), verdict, tuple(
                sweep_writes(verdict, member, active, pending, dead, prefix + member, now))))
        return plan

    def stalled_check_command(self, verb: str, args: list[bytes]) -> Swept:
        """EMQ.STALLED.CHECK <active> <pending> <dead> <prefix> <max_stalled> [LIMIT <n>]

        Sweeps the expired members of active in deadline order and replies
        [recovered_ids, dead_ids]. A lease stamped by this process counts a stall; one that
        crossed a restart, or has no stamp, goes back to pending uncounted. A refusal on any
        member refuses the whole sweep before any write."""
        if len(args) not in (5, 7):
            raise ReplyError(arity_error(verb))
        active, pending, dead, prefix = args[:4]
        max_stalled = parse_at_least(args[4], 1, must_be_positive("max_stalled"))
        limit = DEFAULT_LIMIT
        if len(args) == 7:
            if args[5].upper() != b"LIMIT":
                raise ReplyError(SYNTAX_ERROR)
            limit = parse_at_least(args[6], 1, must_be_positive("limit"))
        self.store.check_zsets(active, pending, dead)
        plan = self.plan_sweep(active, pending, dead, prefix, max_stalled, limit)
        for member in plan:
            if member.verdict.refusal:
                wrongtype = member.verdict.kind == sweep.Kind.WRONGTYPE
                raise ReplyError(WRONGTYPE if wrongtype else NOT_INTEGER)
        for member in plan:
            for write in member.writes:
                self.execute(*write)
        self.counters["sweeps"] += 1
        for member in plan:
            self.counters[f"swept_{member.verdict.kind}"] += 1
        return reply_sweep(plan)

    # -- the scripted executor: the queue without the module, so without the stamp ----------

    def add_script(self, keys: list[bytes], args: list[bytes]) -> int:
        """add: KEYS pending, prefix; ARGV id, payload. Refuses an id whose row exists."""
        (pending, prefix), (member, payload) = keys, args
        self.store.check_zsets(pending)
        if self.store.type(prefix + member) != "none":
            raise ReplyError(JOB_EXISTS)
        self.store.data[prefix + member] = {b"state": b"pending", b"attempts": b"0",
                                            b"payload": payload}
        self.store.zset_or_new(pending).scores[member] = 0.0
        return 1

    def script(self, name: str, keys: list[bytes], args: list[bytes]) -> Reply:
        if name == "add":
            return self.add_script(keys, args)
        if name == "claim2":
            return self.claim_command("claim2", [*keys, *args], stamp=False)
        if name == "extend2":
            return self.extend_command("extend2", [*keys, *args], stamp=False)
        raise ValueError(f"no script named {name!r}")

    # -- the command table, as the module's OnLoad registers it -----------------------------

    COMMANDS: ClassVar[dict[str, Callable[["ModelServer", str, list[bytes]], Reply]]] = {
        "EMQ.CLAIM": claim_command,
        "EMQ.EXTEND": extend_command,
        "EMQ.EXTENDS": extends_command,
        "EMQ.STALLED.CHECK": stalled_check_command,
    }

    def execute(self, *given: Arg) -> Reply:
        if not given:
            raise ReplyError("ERR no command given")
        args = [a if isinstance(a, bytes) else str(a).encode() for a in given]
        name = args[0].decode(errors="replace").upper()
        if name in self.COMMANDS:
            try:
                return self.COMMANDS[name](self, name, args[1:])
            except ReplyError:
                self.counters[refusals_field(name)] += 1
                raise
        if name in Store.COMMANDS:
            # The server names its own commands in errors in lower case, the module's verbs
            # as registered, in upper case.
            return Store.COMMANDS[name](self.store, name.lower(), args[1:])
        raise ReplyError(f"ERR unknown command '{args[0].decode(errors='replace')}'")

    def dump(self) -> Dataset:
        """The whole dataset in the form LiveExecutor.dataset() gives a real one."""
        return self.store.dump()
