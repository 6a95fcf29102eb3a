"""Notebook 07, in production: what the lease epoch asks of workers, operators and persistence.

Four parts, each played on the model and, where the lab has a server it may restart or kill,
live: the race between a worker's extension and the sweep after a restart, in both orders; an
exempt job claimed again while its first worker runs, and a fencing store (a second store that
refuses a write whose token is lower than the highest it has seen) that stops the stale
worker's late write; a crash (SIGKILL) of a server that keeps its data as RDB snapshots, which
rolls `attempts` back and hands out one token twice, beside the append-only file; and the
decision table of every scenario the course plays (scenarios.py), generated on the model.

The exercise is the fencing store's write: `check_fenced_write` runs the learner's function
on the live server against a catalogue of cases, then as a stale writer with a newer writer in
every order with the commands the function sends: before each, and after the last.

Every function returns lines to print (a Shown) with processes named by the order they served,
never a live run_id; the timings the crash part measures end in "ms elapsed", which the
sanitize file masks.
"""

import time
from contextlib import closing
from dataclasses import dataclass

import redis

from trafikey_lab.course import attempts
from trafikey_lab.course.feedback import (
    EXERCISE_QUEUE,
    NOTE,
    RIGHT,
    WRONG,
    Feedback,
    Finding,
    feedback,
    not_ours,
)
from trafikey_lab.course.limits import Shown
from trafikey_lab.executors import Queue
from trafikey_lab.live.owned import OwnedServer
from trafikey_lab.live.server import LabServer
from trafikey_lab.live.stage import LiveStage
from trafikey_lab.player import ModelStage, Processes, Stage
from trafikey_lab.scenarios import decision_table, play_all
from trafikey_lab.stories import JOB, Event
from trafikey_lab.table import Table
from trafikey_lab.text import plain

__all__ = ["check_fenced_write", "crash_with_aof", "crash_with_rdb", "everysec_window",
           "model_table", "race", "runs_twice", "seeing_it"]

RACE_LEASE_MS = 150
"""A lease that runs out while a live restart (some 200 ms) is under way."""
EXTEND_MS = 1000
"""What the worker asks for when it re-extends: long enough to outlast the cells after it."""
QUEUE = Queue("{production}")


def _refused(server: LabServer, what: str) -> Shown | None:
    if not server.can_restart:
        return Shown((not_ours("not run live", server,
                               f"{what} would stop it for everyone on it"),))
    return None


def _stages(server: LabServer, **settings) -> list[tuple[str, Stage]]:
    """The model, then live: the lab's own server, or (given settings) a server of its own
    started with them; live only when the lab may restart or kill it."""
    found: list[tuple[str, Stage]] = [("model", ModelStage())]
    if server.can_restart:
        found.append(("live", LiveStage(None if settings else server, **settings)))
    return found


def _on_each(server: LabServer, part, what: str, **settings) -> Shown:
    """part(stage, name) on the model and live, each stage closed after it. Played live: the
    live lines, then whether the model's agree line for line (processes are named, never
    printed); the model's lines are printed too only when they differ, so that a learner reads
    each line once. Not played live: the model's lines and why not."""
    played = []
    for name, stage in _stages(server, **settings):
        try:
            played.append((name, part(stage, name)))
        finally:
            stage.close()
    if len(played) == 2:
        agree = played[0][1] == played[1][1]
        lines = list(played[1][1].lines)
        if not agree:
            lines += [f"model: {line}" for line in played[0][1].lines]
        lines.append(f"model and live agree on every line: {agree}")
        return Shown(tuple(lines))
    lines = [f"model: {line}" for line in played[0][1].lines]
    if (refused := _refused(server, what)) is not None:
        lines += refused.lines
    return Shown(tuple(lines))


def _lease_line(stage: Stage, names: Processes) -> str:
    row = stage.worker.row(QUEUE, JOB)
    active = stage.worker.deadline(QUEUE, JOB) is not None
    return (f"state {plain(row.get(b'state'))}, stamp of {names(row.get(b'lease_epoch'))}, "
            f"stalled {plain(row.get(b'stalled'))}, in active: {active}")


# -- seeing it: the module's INFO section --------------------------------------------------

SEEN = ("sweeps", "swept_exempt", "swept_recovered", "swept_dead", "stalled_check_refusals")
"""The counters an operator reads after a restart (INFO trafikey, without its prefix)."""
BURST = 3


def _counted(stage: Stage) -> str:
    counters = stage.sweeper.counters()
    return ", ".join(f"{name} {counters[name]}" for name in SEEN)


def exemptions_seen(stage: Stage) -> Shown:
    """BURST leases cross a restart and are swept by the new process, then one lease stalls
    under it: what the counters say after each sweep."""
    stage.worker.clear(QUEUE)
    jobs = [f"{JOB.decode()}-{n}".encode() for n in range(1, BURST + 1)]
    for job in jobs:
        stage.worker.add(QUEUE, job, b"hello")
    deadline = max(stage.worker.claim(QUEUE, RACE_LEASE_MS)[2] for _ in jobs)
    stage.restart()
    lines = [f"{BURST} leases claimed, then a restart: {_counted(stage)}"]
    stage.sweeper.wait_until(deadline)
    stage.sweeper.sweep(QUEUE, 2)
    lines.append(f"the new process sweeps them: {_counted(stage)}")
    stalled = stage.worker.claim(QUEUE, RACE_LEASE_MS)[2]
    stage.sweeper.wait_until(stalled)
    stage.sweeper.sweep(QUEUE, 2)
    lines.append(f"one of them stalls under it: {_counted(stage)}")
    stage.worker.clear(QUEUE)
    return Shown(tuple(lines))


def seeing_it(server: LabServer) -> Shown:
    """exemptions_seen on the model and on the lab's server."""
    return _on_each(server, lambda stage, _: exemptions_seen(stage), "a restart")


# -- 1. the race after a restart ------------------------------------------------------------

def reconnect_race(stage: Stage, worker_first: bool) -> Shown:
    """A healthy worker's lease crosses a restart and runs out while the server is down; then
    the worker's EMQ.EXTEND and the sweeper's EMQ.STALLED.CHECK, each from its own client,
    reach the new process in the order given."""
    names = Processes()
    stage.worker.clear(QUEUE)
    names(stage.worker.run_id)
    stage.worker.add(QUEUE, JOB, b"hello")
    job, attempt, deadline = stage.worker.claim(QUEUE, RACE_LEASE_MS)
    lines = [f"worker: EMQ.CLAIM → attempt {attempt}, lease {RACE_LEASE_MS} ms, on "
             f"{names(stage.worker.run_id)}"]
    stage.restart()
    stage.sweeper.wait_until(deadline)
    lines.append(f"the server restarted: {names(stage.worker.run_id)} serves; the lease ran out "
                 "meanwhile")

    def extend() -> None:
        reply = stage.worker.extend(QUEUE, job, attempt, EXTEND_MS)
        meaning = "the lease is the worker's again" if reply == 1 else "the lease is gone: stop"
        lines.append(f"worker: EMQ.EXTEND attempt {attempt} → {reply} ({meaning})")

    def sweep() -> None:
        recovered, dead = stage.sweeper.sweep(QUEUE, 1)
        lines.append(f"sweeper: EMQ.STALLED.CHECK max_stalled 1 → recovered "
                     f"{[plain(j) for j in recovered]}, dead {[plain(j) for j in dead]}")

    for call in ((extend, sweep) if worker_first else (sweep, extend)):
        call()
    lines.append(f"the row: {_lease_line(stage, names)}")
    stage.worker.clear(QUEUE)
    return Shown(tuple(lines))


def race(server: LabServer, worker_first: bool) -> Shown:
    """reconnect_race on the model and on the lab's server."""
    return _on_each(server, lambda stage, _: reconnect_race(stage, worker_first), "a restart")


# -- 2. an exempt job runs twice; the fencing store -------------------------------------------

@dataclass(frozen=True)
class FenceKeys:
    """The fencing store's two keys for one job: the highest token it has seen (a string
    holding a number) and the effects it accepted (a list), in one hash slot."""

    highest: bytes
    effects: bytes

    @classmethod
    def of(cls, queue: Queue, job: bytes = JOB) -> "FenceKeys":
        return cls(queue.key(f"fence:{plain(job)}:highest"),
                   queue.key(f"fence:{plain(job)}:effects"))


FENCE_LUA = """
local token = tonumber(ARGV[1])
local highest = tonumber(redis.call('GET', KEYS[1]) or '0')
if token < highest then return 0 end
redis.call('SET', KEYS[1], token)
redis.call('RPUSH', KEYS[2], ARGV[2])
return 1
"""
"""The store's write: a Lua script, so that the comparison and the write are one command and
no other writer runs between them (WATCH/MULTI would do too, with a retry on every conflict)."""


def fenced_write(client: redis.Redis, keys: FenceKeys, token: int, effect: str) -> bool:
    """Writes `effect` unless the store has seen a token higher than `token`."""
    return bool(client.eval(FENCE_LUA, 2, keys.highest, keys.effects, token, effect))


class ModelFence:
    """The fencing store on the model: the same rule, in memory."""

    def __init__(self) -> None:
        self.highest = 0
        self.effects: list[str] = []

    def write(self, token: int | None, effect: str) -> bool:
        """`effect` with its token (None: unfenced, always written)."""
        if token is not None:
            if token < self.highest:
                return False
            self.highest = token
        self.effects.append(effect)
        return True


FENCE_QUEUE = Queue("{fence}")
"""The fencing store's keys: apart from every queue's."""


class LiveFence:
    """The fencing store as a plain Valkey key and list, written by FENCE_LUA."""

    def __init__(self, client: redis.Redis) -> None:
        self.client, self.keys = client, FenceKeys.of(FENCE_QUEUE)
        client.delete(self.keys.highest, self.keys.effects)

    def write(self, token: int | None, effect: str) -> bool:
        if token is None:
            self.client.rpush(self.keys.effects, effect)
            return True
        return fenced_write(self.client, self.keys, token, effect)

    @property
    def effects(self) -> list[str]:
        return [plain(e) for e in self.client.lrange(self.keys.effects, 0, -1)]


def _fence(stage: Stage, server: LabServer) -> ModelFence | LiveFence:
    """The fencing store for a part played on `stage`: in memory beside the model; beside a
    live stage, a second store on the lab's server, apart from the queue (and alive when the
    queue's own server crashes)."""
    if isinstance(stage, ModelStage):
        return ModelFence()
    return LiveFence(redis.Redis.from_url(server.connection_url))


def exempt_job_runs_twice(stage: Stage, fence, fenced: bool, stale_last: bool = True) -> Shown:
    """Worker A's lease crosses a restart and is swept back to pending uncounted while A still
    runs; worker B claims the job again. Each writes its effect to the fencing store, with its
    attempt as the token when `fenced`, A's write arriving last when `stale_last`."""
    names = Processes()
    stage.worker.clear(QUEUE)
    names(stage.worker.run_id)
    stage.worker.add(QUEUE, JOB, b"send the invoice")
    _, a, deadline = stage.worker.claim(QUEUE, RACE_LEASE_MS)
    stage.restart()
    stage.sweeper.wait_until(deadline)
    recovered, _ = stage.sweeper.sweep(QUEUE, 1)
    _, b, _ = stage.worker.claim(QUEUE, EXTEND_MS)
    lines = [f"worker A claimed attempt {a}; the server restarted; the sweep sent the job back "
             f"uncounted ({plain(recovered[0])} recovered); worker B claimed attempt {b}"]
    writes = [("B", b), ("A", a)] if stale_last else [("A", a), ("B", b)]
    for worker, token in writes:
        accepted = fence.write(token if fenced else None, f"invoice sent by {worker}")
        how = f"with token {token}" if fenced else "unfenced"
        lines.append(f"worker {worker} writes {how}: {'accepted' if accepted else 'refused'}")
    sent = fence.effects
    lines.append(f"the store holds {len(sent)} invoice{'s' if len(sent) != 1 else ''}: {sent}")
    stage.worker.clear(QUEUE)
    return Shown(tuple(lines))


def runs_twice(server: LabServer, fenced: bool, stale_last: bool = True) -> Shown:
    """exempt_job_runs_twice on the model and on the lab's server."""
    return _on_each(server, lambda stage, _: exempt_job_runs_twice(
        stage, _fence(stage, server), fenced, stale_last), "a restart")


# -- 3. only as durable as persistence --------------------------------------------------------

def crash(stage: Stage, fence, snapshot_restores: bool = True) -> Shown:
    """A snapshot with the job pending, worker A's claim after it, a crash (SIGKILL and a new
    process on the same folder), and worker B's claim: which token B gets, whether A's
    extension still lands, and what the fencing store accepts. A server with an append-only
    file restores from that file, not the snapshot (`snapshot_restores` False)."""
    names = Processes()
    stage.worker.clear(QUEUE)
    names(stage.worker.run_id)
    stage.worker.add(QUEUE, JOB, b"send the invoice")
    stage.event(Event.SNAPSHOT)
    _, a, _ = stage.worker.claim(QUEUE, EXTEND_MS)
    lines = [f"the snapshot holds the job pending; then worker A claimed attempt {a}"
             if snapshot_restores else
             "SAVE wrote a snapshot with the job pending (this server restores from its "
             f"append-only file); then worker A claimed attempt {a}"]
    lines.append(f"worker A writes with token {a}: "
                 f"{'accepted' if fence.write(a, 'invoice sent by A') else 'refused'}")
    stage.event(Event.CRASH)
    row = stage.worker.row(QUEUE, JOB)
    lines.append(f"crash; {names(stage.worker.run_id)} serves: state {plain(row.get(b'state'))}, "
                 f"attempts {plain(row.get(b'attempts'))}")
    claimed = stage.worker.claim(QUEUE, EXTEND_MS)
    if claimed is None:
        lines.append("worker B: EMQ.CLAIM → nil (the job is still A's, in active)")
    else:
        b = claimed[1]
        lines.append(f"worker B: EMQ.CLAIM → attempt {b}"
                     + (f": token {b} now has two holders" if b == a else ""))
        lines.append(f"worker B writes with token {b}: "
                     f"{'accepted' if fence.write(b, 'invoice sent by B') else 'refused'}")
    extended = stage.worker.extend(QUEUE, JOB, a, EXTEND_MS)
    lines.append(f"worker A: EMQ.EXTEND attempt {a} → {extended}")
    lines.append(f"the store holds {fence.effects}")
    stage.worker.clear(QUEUE)
    return Shown(tuple(lines))


def crash_with_rdb(server: LabServer) -> Shown:
    """crash on the model and on a server of its own that snapshots as production might
    (save 3600 1: an hour after a change), the snapshot taken by SAVE."""
    return _on_each(server, lambda stage, _: crash(stage, _fence(stage, server)), "a crash",
                    persistence="rdb", save="3600 1")


def crash_with_aof(server: LabServer) -> Shown:
    """crash on a server of its own whose append-only file is fsynced at every write (the
    model keeps no such file)."""
    if (refused := _refused(server, "a crash")) is not None:
        return refused
    stage = LiveStage(persistence="aof", appendfsync="always")
    try:
        shown = crash(stage, _fence(stage, server), snapshot_restores=False)
    finally:
        stage.close()
    return shown


WINDOW_CLAIMS = 200


def everysec_window(server: LabServer, claims: int = WINDOW_CLAIMS) -> Shown:
    """Times `claims` adds and claims under appendfsync always and everysec, each on a server of
    its own, then SIGKILLs the everysec one and counts the claims its replay lost."""
    if (refused := _refused(server, "a crash")) is not None:
        return refused
    lines = []
    for policy in ("always", "everysec"):
        with (OwnedServer(persistence="aof", appendfsync=policy) as owned,
              closing(LiveStage(owned)) as live):
            began = time.perf_counter()
            for n in range(claims):
                live.worker.add(QUEUE, n, b"")
                live.worker.claim(QUEUE, 60_000)
            elapsed = (time.perf_counter() - began) * 1000
            lines.append(f"appendfsync {policy}: {claims} adds and claims in {elapsed:.0f} ms "
                         "elapsed")
            if policy == "everysec":
                live.event(Event.CRASH)
                kept = live.worker.call("ZCARD", QUEUE.active)
                lines.append(f"after kill -9, the replay holds {kept} of the {claims} claims")
    return Shown(tuple(lines))


# -- the decision table -----------------------------------------------------------------------

def model_table() -> Table:
    """Every scenario of stories.TABLE played on the model at max_stalled 1 and 2."""
    return decision_table(play_all(lambda scenario: ModelStage()))


# -- the exercise: a fenced write -------------------------------------------------------------

EXERCISE = "a fenced write, with a newer writer before each command it sends"


@dataclass(frozen=True)
class FenceCase:
    name: str
    highest: int | None
    """The highest token the store has seen before the write; None for an empty store."""
    token: int
    written: bool
    """Whether the rule writes the effect."""


CASES = (
    FenceCase("the first write", None, 1, True),
    FenceCase("a newer token", 1, 2, True),
    FenceCase("the same token again", 3, 3, True),
    FenceCase("a stale token", 5, 3, False),
    FenceCase("10 after 9", 9, 10, True),
    FenceCase("9 after 10", 10, 9, False),
)
STALE, NEWER = 1, 2
STALE_EFFECT, NEWER_EFFECT = f"effect {STALE}", f"effect {NEWER}"
MOST_COMMANDS = 20
"""The commands one write may send and still be played in every order: a fenced write needs
one to a few (six for a WATCH/MULTI write that retries once)."""


def _interleaving(server: LabServer, before_send):
    """A client of `server` that calls before_send() before each packet it sends once
    connected, pipelines and transactions included (one packet each); what redis-py sends to
    set a connection up (HELLO, AUTH, CLIENT SETINFO) is not the learner's and is left out."""

    class Interleaving(redis.Connection):
        connecting = False

        def connect(self):
            self.connecting = True
            try:
                super().connect()
            finally:
                self.connecting = False

        def send_packed_command(self, command, check_health=True):
            if not self.connecting:
                before_send()
            super().send_packed_command(command, check_health)

    pool = redis.ConnectionPool(connection_class=Interleaving, host=server.host,
                                port=server.port, password=server.password)
    return redis.Redis(connection_pool=pool)


class _Order:
    """One order of the stale write's commands and the newer writer's: counts the packets the
    stale client sends, reads the store's effects after each of them, and lands the newer
    write just before the packet numbered `at` (or after the last, by land())."""

    def __init__(self, at: int, newer, effects) -> None:
        self.at, self.newer, self.effects = at, newer, effects
        self.sent, self.landed, self.refused = 0, False, ""
        self.seen: list[list[str] | str] = []
        """The effects after each command the stale client sent but its last."""

    def __call__(self) -> None:
        if self.sent:
            self.seen.append(self.effects())
        if self.sent == self.at:
            self.land()
        self.sent += 1

    def land(self) -> None:
        try:
            self.newer()
        except redis.ResponseError as error:  # a store the learner's write gave another shape
            self.refused = str(error)
        self.landed = True


def _read(client: redis.Redis, key: bytes, kind: str, read):
    """read(key), or None for a key that is not there, or "a list" (say) for a key the
    learner's write gave another type than `kind`."""
    found = plain(client.type(key))
    if found == "none":
        return None
    return read(key) if found == kind else f"a {found}"


def _state(client: redis.Redis, keys: FenceKeys) -> tuple[str | None, list[str] | str]:
    """The store's highest token and its effects, as text."""
    highest = _read(client, keys.highest, "string", lambda key: plain(client.get(key)))
    effects = _read(client, keys.effects, "list",
                    lambda key: [plain(e) for e in client.lrange(key, 0, -1)])
    return highest, [] if effects is None else effects


def check_fenced_write(attempt, *, live=None) -> Feedback:
    """Runs the learner's `fenced_write(client, keys, token, effect) -> bool` on the live
    server: each case of CASES from a store laid out by hand, then a stale write (token 1)
    with a newer one (token 2) in every order with the commands the function sends: just
    before each, and after the last. The store must end as the rule says, the stale effect
    must never stand after the newer one (after any command, not only at the end), and the
    reply must say whether the effect was written. The model has no Lua, so the checker needs
    the live server."""
    match attempts.screen(attempt, (fenced_write,), {"fenced_write", "FENCE_LUA"}):
        case attempts.NotAFunction():
            return feedback(EXERCISE, [Finding(WRONG, f"{attempt!r} is not a function: define "
                                                      "fenced_write(client, keys, token, effect)")])
        case attempts.Borrowed(name):
            return feedback(EXERCISE, [Finding(WRONG, f"your function hands the write to the "
                                                      f"library's {name}: write the comparison "
                                                      "and the write yourself")])
    if live is None:
        return feedback(EXERCISE, [Finding(NOTE, "not checked: the fenced write runs on a real "
                                                 "server (the model has no Lua); pass "
                                                 "live=course.live")])
    server = live.server
    keys = FenceKeys.of(EXERCISE_QUEUE)
    admin = redis.Redis.from_url(server.connection_url)
    try:
        findings = [_case(attempt, server, admin, keys, case) for case in CASES]
        findings += _interleaved(attempt, server, admin, keys)
    finally:
        admin.delete(keys.highest, keys.effects)
        admin.close()
    if all(f.kind != WRONG for f in findings):
        findings.insert(0, Finding(RIGHT, f"all {len(CASES)} cases and every interleaving: a "
                                          "stale writer never wins"))
    return feedback(EXERCISE, findings)


def _case(attempt, server: LabServer, admin: redis.Redis, keys: FenceKeys,
          case: FenceCase) -> Finding:
    """The attempt's write on a store laid out as the case says, judged by the rule."""
    admin.delete(keys.highest, keys.effects)
    if case.highest is not None:
        admin.set(keys.highest, case.highest)
        admin.rpush(keys.effects, f"effect {case.highest}")
    before = _state(admin, keys)
    client = _interleaving(server, lambda: None)  # the same client as the interleavings'
    outcome = attempts.run(attempt, client, keys, case.token, f"effect {case.token}")
    client.close()
    expect = (str(case.token), [*before[1], f"effect {case.token}"]) if case.written else before
    return _judge(case, outcome, _state(admin, keys), expect)


def _judge(case: FenceCase, outcome, state, expect) -> Finding:
    said = f"{case.name}: token {case.token}" + (
        "" if case.highest is None else f" after {case.highest}")
    if not isinstance(outcome, attempts.Returned):
        return Finding(WRONG, f"{said}: your function {_did(outcome)}")
    if state != expect:
        should = "written" if case.written else "refused"
        return Finding(WRONG, f"{said} should be {should}, leaving highest {expect[0]} and "
                              f"effects {expect[1]}; the store holds highest {state[0]} and "
                              f"effects {state[1]}")
    if outcome.value is not case.written:
        return Finding(WRONG, f"{said}: the store is right, but your function returned "
                              f"{outcome.value!r}, not {case.written}: a worker reads the reply "
                              "to know whether to go on")
    return Finding(NOTE, f"{said}: {'written' if case.written else 'refused'}, as the rule says")


def _did(outcome) -> str:
    if isinstance(outcome, attempts.TimedOut):
        return f"{attempts.failed(outcome)}; restart the kernel if it is still busy"
    return attempts.failed(outcome) or "did not return"


def _interleaved(attempt, server: LabServer, admin: redis.Redis,
                 keys: FenceKeys) -> list[Finding]:
    """A stale write (token 1) with the newer one (token 2) landing just before the stale
    write's first command, then before its second, and so on, and last after its last command
    (none for a function that sends none: the cases judged it)."""
    findings: list[Finding] = []
    for at in range(MOST_COMMANDS + 1):
        admin.delete(keys.highest, keys.effects)
        order = _Order(at, lambda: fenced_write(admin, keys, NEWER, NEWER_EFFECT),
                       lambda: _state(admin, keys)[1])
        client = _interleaving(server, order)
        outcome = attempts.run(attempt, client, keys, STALE, STALE_EFFECT)
        client.close()
        if order.sent == 0:
            return findings
        after = not order.landed
        if after:
            order.land()
        where = (f"the newer writer {'after' if after else 'before'} your command "
                 f"{order.sent if after else at + 1} of {order.sent}")
        if (found := _judge_order(where, outcome, order, _state(admin, keys))) is not None:
            findings.append(found)
        if after or isinstance(outcome, attempts.TimedOut):
            break
    else:
        findings.append(Finding(WRONG, f"your function sent more than {MOST_COMMANDS} commands "
                                       "for one write, and the newer writer was played before "
                                       "each of the first ones only: a fenced write needs a few"))
    if not findings:
        each = ("your one command" if order.sent == 1
                else f"each of your {order.sent} commands")
        findings.append(Finding(NOTE, f"a newer writer before {each} and after the last: the "
                                      "stale write never won"))
    return findings


def _stale_after_newer(effects: list[str] | str) -> bool:
    return (isinstance(effects, list) and NEWER_EFFECT in effects
            and STALE_EFFECT in effects[effects.index(NEWER_EFFECT) + 1:])


def _judge_order(where: str, outcome, order: _Order, state) -> Finding | None:
    """What is wrong with one order, or None: the store must end at the newer token, with the
    stale effect before the newer one or not at all, at every moment; the reply must say
    whether the stale effect landed."""
    if not isinstance(outcome, attempts.Returned):
        return Finding(WRONG, f"{where}: your function {_did(outcome)}")
    if order.refused:
        return Finding(WRONG, f"{where}: the newer writer's fenced write failed on the store "
                              f"your write left ({order.refused}): keep highest a number and "
                              "effects a list")
    highest, effects = state
    if highest != str(NEWER) or effects not in ([NEWER_EFFECT], [STALE_EFFECT, NEWER_EFFECT]):
        return Finding(WRONG, f"{where}: the store ends with highest {highest} and effects "
                              f"{effects}: the stale write won. The comparison and the write "
                              "must be one step no other writer can come between")
    for n, held in enumerate(order.seen, start=1):
        if _stale_after_newer(held):
            return Finding(WRONG, f"{where}: the stale effect landed after the newer one (the "
                                  f"store held {held} after your command {n} of {order.sent}), "
                                  "though the store ends right: a worker may act on an effect "
                                  "as soon as it lands. Write the effect only in the step that "
                                  "compares the token")
    landed = STALE_EFFECT in effects
    if outcome.value is not landed:
        return Finding(WRONG, f"{where}: your function returned {outcome.value!r}, but its "
                              f"effect {'landed' if landed else 'did not'}")
    return None
