"""Every verb with random, hostile arguments, against a live server and the model.

A tight seeded loop (no hypothesis, no sleeps) sends the four EMQ verbs arguments drawn from
pools of bad values: empty, huge, negative, non-canonical and out-of-range integers, binary
bytes, keys of the wrong type, missing keys, another queue's keys, wrong arity, odd option
words. The dataset under the calls is reseeded every batch with ghosts, lane rows, rows of the
wrong type, fields that are not integers and stamps of this and other processes.

For each call: the reply (or refusal) and the whole dataset after it must equal the model's
for the same call on the same dataset (lockstep.Pair), and so must the module's counters; a
refusal must leave the dataset as it was and move one counter, the verb's refusals, by one; a
refusal's text must be one of the spec's. After each batch the server answers PING.

TRAFIKEY_FUZZ_SEED picks the seed (default 20240611); TRAFIKEY_SOAK=1 runs ten times more.
"""

import os
import random
import re
from pathlib import Path

import pytest

from trafikey_lab import Queue
from trafikey_lab.model import refusals_field

from .conftest import FIGURES, PRELOAD_ENV, SOAK, module_under_test
from .lockstep import Pair

CALLS = 100_000 if SOAK else 10_000
BATCH = 250
SEED = int(os.environ.get("TRAFIKEY_FUZZ_SEED", "20240611"))

QUEUE = Queue("{jobs}")
OTHER = Queue("{other}")
STRING_KEY = b"{jobs}:a-string"
HASH_KEY = b"{jobs}:a-hash"
IDS = [b"a", b"b", b"c", b"ghost", b"", b"\x00", b"\xff\xfe", b"a" * 300, b"lane", b"strung"]
VERBS = ["EMQ.CLAIM", "EMQ.EXTEND", "EMQ.EXTENDS", "EMQ.STALLED.CHECK"]

SPEC_TEXTS = {
    "ERR EMQ lease must be a positive integer",
    "ERR EMQ max_stalled must be a positive integer",
    "ERR EMQ limit must be a positive integer",
    "ERR EMQ attempt must be a non-negative integer",
    "ERR EMQ syntax error",
    "ERR EMQ deadline out of range",
    "WRONGTYPE Operation against a key holding the wrong kind of value",
    "ERR EMQ row field is not an integer",
    "NOPERM No permissions to access a key",
    "ERR EMQ host call failed",
}
ARITY = re.compile(r"ERR wrong number of arguments for '([^']*)' command")

INTEGERS = [
    b"0", b"1", b"2", b"3", b"5", b"50", b"-1", b"-0", b"+1", b" 1", b"1 ", b"01", b"1.5", b"1e3",
    b"", b"0x10", b"abc", b"\x00", b"9007199254740992", b"9007199254740991", b"4503599627370496",
    b"9223372036854775807", b"9223372036854775808", b"-9223372036854775808",
    b"-9223372036854775809", b"99999999999999999999999", b"inf", b"nan", b"\xff",
]
OPTIONS = [b"LIMIT", b"limit", b"LiMiT", b"LIMITS", b"LIM", b"", b"1", b"MAX", b"\xffLIMIT"]


def moved(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """The counters that changed, by how much."""
    return {name: value - before.get(name, 0) for name, value in after.items()
            if value != before.get(name, 0)}


def spec_problem(text: str, verb: str) -> str | None:
    """Why an error text is not one the spec lists for this verb, or None when it is."""
    if text in SPEC_TEXTS:
        return None
    named = ARITY.fullmatch(text)
    if named:
        if named.group(1).lower() == verb.lower():
            return None
        return f"the arity error names {named.group(1)!r}, not the verb {verb!r}"
    return "not one of the spec's error texts"


class Fuzzer:
    def __init__(self, rng: random.Random):
        self.rng = rng

    def pick(self, pool):
        return self.rng.choice(pool)

    def junk(self) -> bytes:
        roll = self.rng.random()
        if roll < 0.003:
            return bytes([self.rng.randrange(256)]) * self.rng.choice([65_536, 600_000])
        if roll < 0.3:
            return self.pick(INTEGERS)
        return bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(12)))

    def zset_key(self) -> bytes:
        return self.pick([QUEUE.pending, QUEUE.active, QUEUE.dead, QUEUE.pending, QUEUE.active,
                          OTHER.pending, STRING_KEY, HASH_KEY, QUEUE.row_key(b"a"),
                          b"{jobs}:missing", b""])

    def prefix(self) -> bytes:
        return self.pick([QUEUE.prefix, QUEUE.prefix, QUEUE.prefix, OTHER.prefix, b"", b"{jobs}:",
                          b"{jobs}:job:\x00", STRING_KEY])

    def row(self) -> bytes:
        return self.pick([QUEUE.row_key(self.pick(IDS)), QUEUE.row_key(self.pick(IDS)), STRING_KEY,
                          HASH_KEY, QUEUE.active, b"", b"{jobs}:missing"])

    def integer(self, good: int) -> bytes:
        if self.rng.random() < 0.6:
            return b"%d" % self.rng.randrange(max(good - 1, 0), good + 50)
        return self.pick(INTEGERS)

    def attempt(self, pair) -> bytes:
        if self.rng.random() < 0.5:
            row = pair.model.server.store.data.get(QUEUE.row_key(self.pick(IDS)))
            if isinstance(row, dict) and row.get(b"attempts", b"").isdigit():
                return row[b"attempts"]
        return self.integer(0)

    def call(self, pair) -> tuple:
        verb = self.pick(VERBS)
        if self.rng.random() < 0.2:
            verb = "".join(c.lower() if self.rng.random() < 0.5 else c for c in verb)
        args = self.verb_args(verb.upper(), pair)
        for i in range(len(args)):
            if self.rng.random() < 0.05:
                args[i] = self.junk()
        roll = self.rng.random()
        if roll < 0.08:
            args = args[: self.rng.randrange(len(args))]
        elif roll < 0.14:
            args = args + [self.junk() for _ in range(self.rng.randrange(1, 3))]
        return (verb, *args)

    def verb_args(self, canonical: str, pair) -> list:
        """Arguments of the right count and kinds for the verb, before any is spoiled (drawn in
        the order the seed fixes, so a failing case replays)."""
        if canonical == "EMQ.CLAIM":
            args = [self.zset_key(), self.zset_key(), self.prefix(), self.integer(1)]
        elif canonical == "EMQ.EXTEND":
            job = self.pick(IDS)
            row = QUEUE.row_key(job) if self.rng.random() < 0.6 else self.row()
            args = [self.zset_key(), row, job, self.attempt(pair), self.integer(1)]
        elif canonical == "EMQ.EXTENDS":
            args = [self.zset_key(), self.integer(1)]
            for _ in range(self.rng.randrange(1, 4)):
                job = self.pick(IDS)
                row = QUEUE.row_key(job) if self.rng.random() < 0.7 else self.row()
                args += [job, row, self.attempt(pair)]
        else:
            args = [self.zset_key(), self.zset_key(), self.zset_key(), self.prefix(),
                    self.integer(1)]
            if self.rng.random() < 0.5:
                args += [self.pick(OPTIONS) if self.rng.random() < 0.3 else b"LIMIT",
                         self.integer(1)]
        return args

    def seed_commands(self, pair) -> list[tuple]:
        """A fresh dataset with every oddity the verbs must survive."""
        now = pair.live.now_ms()
        commands = []
        for job in IDS:
            roll = self.rng.random()
            row = QUEUE.row_key(job)
            if roll < 0.1:
                commands.append(("SET", row, b"not a hash"))
                continue
            if roll < 0.2:
                continue
            fields = [b"state", self.pick([b"pending", b"active", b"dead", b"odd"]),
                      b"attempts", self.pick([b"0", b"1", b"2", b"7", b"x", b"-1", b"01"]),
                      b"payload", b"p"]
            if self.rng.random() < 0.3:
                fields += [b"stalled", self.pick([b"0", b"1", b"x", b"", b"9007199254740991"])]
            if self.rng.random() < 0.15:
                fields += [b"group", b"g"]
            commands.append(("HSET", row, *fields))
            stamp = self.pick(["own", "foreign", None, None])
            if stamp:
                commands.append(("STAMP", row, stamp))
        for job in IDS:
            if self.rng.random() < 0.5:
                commands.append(("ZADD", QUEUE.pending, 0, job))
            if self.rng.random() < 0.5:
                commands.append(("ZADD", QUEUE.active, now + self.rng.randrange(-1000, 1000), job))
        commands += [("SET", STRING_KEY, b"s"), ("HSET", HASH_KEY, b"f", b"v"),
                     ("ZADD", OTHER.pending, 0, b"a"),
                     ("HSET", OTHER.row_key(b"a"), b"state", b"pending")]
        return commands


def seed_action(command):
    if command[0] == "STAMP":
        _, row, kind = command
        if kind == "own":
            return lambda ex: ex.call("HSET", row, b"lease_epoch", ex.run_id)
        return lambda ex: ex.call("HSET", row, b"lease_epoch", b"e" * 40)
    return lambda ex: ex.call(*command)


def test_hostile_arguments_never_crash_the_server_write_on_refusal_or_stray_from_the_spec(
        rdb_server):
    rng = random.Random(SEED)
    fuzz = Fuzzer(rng)
    pair = Pair(rdb_server)
    problems = []
    calls = refusals = 0
    while calls < CALLS:
        pair.server.client.flushall()
        pair.model.server.store.data.clear()
        for command in fuzz.seed_commands(pair):
            pair.step(f"seed {command!r}", seed_action(command), server_clock=False)
        for _ in range(BATCH):
            args = fuzz.call(pair)
            before = pair.model_view()
            counted = pair.live_counters()
            shown = repr(tuple(a[:60] + b"..." if isinstance(a, bytes) and len(a) > 60 else a
                               for a in args))
            result = pair.step(shown, lambda ex, args=args: ex.call(*args), server_clock=False)
            calls += 1
            changed = moved(counted, pair.live_counters())
            if result[0] == "refused":
                refusals += 1
                why = spec_problem(result[1], args[0])
                if why:
                    problems.append(f"{shown}: {result[1]!r}: {why}")
                if pair.live_view() != before:
                    problems.append(f"{shown}: refused with {result[1]!r} but changed the dataset")
                if changed != {refusals_field(args[0].upper()): 1}:
                    problems.append(f"{shown}: refused with {result[1]!r} but moved the counters "
                                    f"{changed}, not its verb's refusals by one")
            elif any(name.endswith("_refusals") for name in changed):
                problems.append(f"{shown}: replied but counted a refusal: {changed}")
            pair.log.clear()
        assert pair.server.client.ping(), f"the server stopped answering after {calls} calls"
    FIGURES["bad-input calls fuzzed"] += calls
    FIGURES["bad-input refusals checked"] += refusals
    assert not problems, "\n".join(problems[:20])
    assert refusals > calls // 4, "the fuzz hardly reached the refusals: it tests too little"
    assert calls - refusals > calls // 10, \
        "the fuzz hardly reached a verb's work: it tests too little"


@pytest.mark.parametrize("verb", ["emq.claim", "Emq.Extend", "EMQ.EXTENDS", "emq.STALLED.check"])
def test_arity_error_names_the_verb_as_the_server_does_in_any_case(rdb_server, verb):
    """The server's own arity error names a module command by its registered name."""
    pair = Pair(rdb_server)
    result = pair.step(verb, lambda ex: ex.call(verb))
    assert result == ("refused", f"ERR wrong number of arguments for '{verb.upper()}' command")


def test_server_runs_the_module_build_under_test(rdb_server):
    """Guards make asan: the servers load the build named by the switch, and its preload."""
    modules = rdb_server.client.module_list()
    paths = {m.get(b"path") for m in modules if m.get(b"name") == b"trafikey"}
    wanted = module_under_test()
    assert paths, "the server has no trafikey module loaded"
    if wanted is not True:
        assert wanted.encode() in paths, f"the server loaded {paths}, not {wanted}"
    preload = os.environ.get(PRELOAD_ENV)
    if preload:
        maps = Path(f"/proc/{rdb_server.pid}/maps").read_text()
        for library in preload.split():
            assert os.path.realpath(library) in maps or library in maps, f"{library} not loaded"
    assert rdb_server.client.ping()


def test_spec_problem_names_what_is_wrong_with_an_error_text():
    assert spec_problem("ERR EMQ syntax error", "EMQ.CLAIM") is None
    assert spec_problem("ERR wrong number of arguments for 'EMQ.CLAIM' command",
                        "emq.claim") is None
    assert "names 'hset'" in spec_problem("ERR wrong number of arguments for 'hset' command",
                                          "EMQ.CLAIM")
    assert "not one of" in spec_problem("ERR EMQ lease must be positive", "EMQ.CLAIM")


def test_a_refused_sweep_counts_its_refusal_and_not_the_members_it_decided_first(rdb_server):
    """The sweep decides a ghost and a lane row, then meets a row that is not a hash and
    refuses: nothing is written, and of the counters only the sweep's refusals move, on the
    module as on the model (the pair checks them equal)."""
    pair = Pair(rdb_server)
    now = pair.live.now_ms()
    pair.step("a lane row", lambda ex: ex.call("HSET", QUEUE.row_key(b"lane"), "group", "g"))
    pair.step("a string row", lambda ex: ex.call("SET", QUEUE.row_key(b"strung"), "s"))
    pair.step("ghost, lane, string, expired in that order",
              lambda ex: ex.call("ZADD", QUEUE.active, now - 3, b"ghost", now - 2, b"lane",
                                 now - 1, b"strung"))
    counted, data = pair.live_counters(), pair.live_view()
    result = pair.step("sweep", lambda ex: ex.sweep(QUEUE, 1))
    assert result == ("refused",
                      "WRONGTYPE Operation against a key holding the wrong kind of value")
    assert moved(counted, pair.live_counters()) == {"stalled_check_refusals": 1}
    assert pair.live_view() == data
