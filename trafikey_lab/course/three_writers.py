"""Notebook 02, three writers: the verbs that stamp a lease. Its exercise checker (a lease
moved to the process that runs now), its diagnostic question and the names the notebook uses."""

from dataclasses import dataclass

from trafikey_lab import epoch
from trafikey_lab.course import attempts
from trafikey_lab.course.feedback import (
    EXERCISE_QUEUE,
    NOTE,
    RIGHT,
    WRONG,
    Feedback,
    Finding,
    feedback,
)
from trafikey_lab.errors import LabError, ReplyError
from trafikey_lab.executors import Executor, ModelExecutor, Queue
from trafikey_lab.model import WRONGTYPE, arity_error
from trafikey_lab.module.build import c_excerpt
from trafikey_lab.questions import THREE_WRITERS
from trafikey_lab.text import plain
from trafikey_lab.widgets.diagnostic import Diagnostic

__all__ = ["c_excerpt", "check_lease_move", "stamp_question"]

# -- 02: move a lease to the process that runs now --------------------------------------------

MOVE_LEASE_MS = 60_000
"""The lease of the worker's live claims, long enough to outlast the check, and the least a
moved lease must get from the move: a lease cut short is not moved."""
RESTART_MS = 2_000
"""The least time the checker's restart takes, so that an extension after it moves the
deadline: the model's clock is moved by that much; a live restart's clock has moved by what
the real restart took, and the checker waits for the rest of RESTART_MS."""
LAPSE_MAX_STALLED = 100
"""The budget of the sweeps that send a lapsed claim back to pending: no job dies of them."""
SPARE_JOB = b"job-4"
"""A pending job this worker never claimed: a claim made by the learner's move takes it."""


@dataclass(frozen=True)
class HeldJob:
    """A job in a worker's history: the attempt the worker's claim gave it, and whether the
    job was claimed again by another worker since (so that the worker's claim is stale)."""

    id: bytes
    attempt: int
    stale: bool = False


MOVE_HISTORIES = (
    (HeldJob(b"job-1", 1), HeldJob(b"job-2", 1, stale=True), HeldJob(b"job-3", 2)),
    (HeldJob(b"job-1", 2, stale=True), HeldJob(b"job-2", 1), HeldJob(b"job-3", 3)),
)
"""Two histories with other attempts and another stale claim, so that a move that names the
first history's numbers, rather than reading its claims, fails the second."""

_READONLY = frozenset({
    "BITCOUNT", "BITFIELD_RO", "BITPOS", "CLUSTERSCAN", "DBSIZE", "DUMP", "EVALSHA_RO",
    "EVAL_RO", "EXISTS", "EXPIRETIME", "FCALL_RO", "GEODIST", "GEOHASH", "GEOPOS",
    "GEORADIUSBYMEMBER_RO", "GEORADIUS_RO", "GEOSEARCH", "GET", "GETBIT", "GETRANGE",
    "HEXISTS", "HEXPIRETIME", "HGET", "HGETALL", "HKEYS", "HLEN", "HMGET", "HPEXPIRETIME",
    "HPTTL", "HRANDFIELD", "HSCAN", "HSTRLEN", "HTTL", "HVALS", "KEYS", "LCS", "LINDEX",
    "LLEN", "LOLWUT", "LPOS", "LRANGE", "MGET", "PEXPIRETIME", "PFCOUNT", "PTTL", "RANDOMKEY",
    "SCAN", "SCARD", "SDIFF", "SINTER", "SINTERCARD", "SISMEMBER", "SMEMBERS", "SMISMEMBER",
    "SORT_RO", "SRANDMEMBER", "SSCAN", "STRLEN", "SUBSTR", "SUNION", "TOUCH", "TTL", "TYPE",
    "XLEN", "XPENDING", "XRANGE", "XREAD", "XREVRANGE", "ZCARD", "ZCOUNT", "ZDIFF", "ZINTER",
    "ZINTERCARD", "ZLEXCOUNT", "ZMSCORE", "ZRANDMEMBER", "ZRANGE", "ZRANGEBYLEX",
    "ZRANGEBYSCORE", "ZRANK", "ZREVRANGE", "ZREVRANGEBYLEX", "ZREVRANGEBYSCORE", "ZREVRANK",
    "ZSCAN", "ZSCORE", "ZUNION",
})
"""Every command Valkey flags readonly (COMMAND INFO), none of them flagged write: pinned
against the live server's own flags in tests/notebooks/test_02_three_writers.py."""
_KEYLESS_READS = frozenset({"PING", "ECHO", "TIME", "INFO", "LASTSAVE", "ROLE", "COMMAND",
                            "OBJECT", "XINFO"})
"""Commands that touch no data and write none, though Valkey flags them neither readonly nor
write (OBJECT and XINFO: containers whose data subcommands are all readonly)."""
_READS = _READONLY | _KEYLESS_READS
"""The commands that write nothing. Any other plain command a move sends writes by hand."""


class _Watched(Executor):
    """The executor as the learner's move sees it: every command and script goes through and
    is recorded. A lease written by hand (HSET lease_epoch, ZADD a deadline) leaves the very
    bytes an extension leaves, so only the commands tell the two apart."""

    def __init__(self, executor: Executor):
        self._inner = executor
        self.name, self.where = executor.name, executor.where
        self.commands: list[tuple[str, tuple[bytes, ...]]] = []
        self.unanswered: list[str] = []
        """The reads the model could not answer (the live server answers every one)."""

    def call(self, *args):
        parts = tuple(_as_bytes(arg) for arg in args)
        name = parts[0].decode(errors="replace").upper() if parts else ""
        self.commands.append((name, parts[1:]))
        if name in _READS and not self._inner.answers(name):
            try:
                return _model_read(self._inner, name, parts[1:])
            except _NotServed:
                self.unanswered.append(name)
                raise ReplyError(f"ERR the model does not answer {name}") from None
        return self._inner.call(*args)

    def run_script(self, name, keys, args):
        self.commands.append((f"script {name}", tuple(_as_bytes(a) for a in (*keys, *args))))
        return self._inner.run_script(name, keys, args)

    def restart(self) -> str:
        raise RuntimeError("the checker has restarted the server already: move the leases in "
                           "the process that runs now")

    @property
    def run_id(self) -> str:
        return self._inner.run_id

    def now_ms(self) -> int:
        return self._inner.now_ms()

    def wait_until(self, ms: int) -> None:
        self._inner.wait_until(ms)

    def counters(self) -> dict[str, int]:
        return self._inner.counters()

    def dataset(self, queue: Queue | None = None) -> dict:
        return self._inner.dataset(queue)

    def written_by_hand(self) -> list[str]:
        return sorted({name for name, _ in self.commands
                       if not name.startswith(("EMQ.", "script ")) and name not in _READS})

    def attempts_named(self, queue: Queue, job: bytes) -> list[bytes]:
        """The attempts this move's extensions of `job` on the queue's keys named."""
        named = []
        for name, args in self.commands:
            if name == "EMQ.EXTEND" and len(args) == 5 and args[0] == queue.active:
                triples = [(args[2], args[1], args[3])]
            elif name == "EMQ.EXTENDS" and len(args) >= 5 and args[0] == queue.active:
                # a learner's malformed call may leave a triple short: it names no attempt
                triples = list(zip(args[2::3], args[3::3], args[4::3], strict=False))
            else:
                continue
            named += [attempt for id_, row, attempt in triples
                      if id_ == job and row == queue.row_key(job)]
        return named


def _as_bytes(value) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


_MODEL_READS = {  # name: (how many arguments, at least that many when True)
    "HMGET": (2, True), "HEXISTS": (2, False), "HLEN": (1, False), "HKEYS": (1, False),
    "HVALS": (1, False), "ZMSCORE": (2, True), "ZCARD": (1, False), "ZRANK": (2, False),
    "ZRANGE": (3, False), "TIME": (0, False), "PING": (0, False),
}
"""The reads the checker answers on an executor that does not (the model, which answers
HGET, HGETALL, ZSCORE, TYPE, EXISTS and SCAN itself; ZRANGE by index, with no options)."""


class _NotServed(Exception):
    """A read the checker does not answer on the model."""


def _model_read(executor: Executor, name: str, args: tuple[bytes, ...]):
    """A read the executor does not answer, answered from the one key it names in the form
    the live executor's redis-py client returns it. Only the model is asked for one (a server
    answers every read), so the dataset read is of the checker's own model in memory, never
    of a server. _NotServed for a read that is not one of _MODEL_READS."""
    if name not in _MODEL_READS or (name == "ZRANGE" and len(args) > 3):
        raise _NotServed(name)
    count, at_least = _MODEL_READS[name]
    if len(args) < count or (len(args) > count and not at_least):
        raise ReplyError(arity_error(name.lower()))
    if name == "TIME":
        return divmod(executor.now_ms() * 1000, 1_000_000)
    if name == "PING":
        return True
    kind = "hash" if name.startswith("H") else "zset"
    found, held = executor.dataset().get(args[0], (kind, {} if kind == "hash" else []))
    if found != kind:
        raise ReplyError(WRONGTYPE)
    if kind == "hash":
        return {"HMGET": lambda: [held.get(field) for field in args[1:]],
                "HEXISTS": lambda: args[1] in held, "HLEN": lambda: len(held),
                "HKEYS": lambda: list(held), "HVALS": lambda: list(held.values())}[name]()
    members = [member for member, _ in held]
    scores = {member: float(score) for member, score in held}
    return {"ZMSCORE": lambda: [scores.get(member) for member in args[1:]],
            "ZCARD": lambda: len(members),
            "ZRANK": lambda: members.index(args[1]) if args[1] in scores else None,
            "ZRANGE": lambda: members[slice(*_index_range(args[1], args[2], len(members)))],
            }[name]()


def _index_range(start: bytes, stop: bytes, length: int) -> tuple[int, int]:
    """ZRANGE's inclusive start and stop (negative: from the end) as a slice's bounds."""
    try:
        first, last = int(start), int(stop)
    except ValueError:
        raise ReplyError("ERR value is not an integer or out of range") from None
    first, last = (bound + length if bound < 0 else bound for bound in (first, last))
    first = max(first, 0)
    return first, max(first, last + 1)


@dataclass(frozen=True)
class _Lease:
    """A job as the move may find and leave it: its lease (the stamp, the deadline in active)
    and the rest (its other fields, its place in pending or dead), which a move must keep."""

    stamp: bytes | None
    deadline: int | None
    rest: tuple


def _leases(executor: Executor, queue: Queue, jobs) -> dict[bytes, _Lease]:
    """Each job's lease and the rest, read from the keys about it alone: its row, and its
    score in each of the queue's sorted sets."""
    leases = {}
    for job in jobs:
        kind = plain(executor.call("TYPE", queue.row_key(job)))
        row = executor.row(queue, job)
        rest = tuple(sorted((f, v) for f, v in row.items() if f != b"lease_epoch"))
        leases[job] = _Lease(row.get(b"lease_epoch"), executor.deadline(queue, job),
                             (kind, rest, _score(executor, queue.pending, job),
                              _score(executor, queue.dead, job)))
    return leases


def _score(executor: Executor, key: bytes, job: bytes) -> int | None:
    """The job's score in the sorted set at `key`; None when it is not there, or `key` holds
    no sorted set."""
    try:
        score = executor.call("ZSCORE", key, job)
    except ReplyError as refusal:
        if refusal.code == "WRONGTYPE":
            return None
        raise
    return None if score is None else int(score)


def _lapse(executor: Executor, queue: Queue) -> tuple[bytes, int]:
    """A claim of the head of pending whose lease runs out and is swept back to pending."""
    job, attempt, deadline = executor.claim(queue, 1)
    executor.wait_until(deadline)
    executor.sweep(queue, LAPSE_MAX_STALLED)
    return job, attempt


def _hold(executor: Executor, queue: Queue, history) -> list[tuple[bytes, int]]:
    """Plays a worker's history on the emptied queue, then restarts the server. Returns the
    worker's claims, (id, attempt) as EMQ.CLAIM replied them, the stale one included."""
    executor.clear(queue)
    claims = []
    for job in history:
        executor.add(queue, job.id, b"resize " + job.id)
        for _ in range(job.attempt - 1):
            _lapse(executor, queue)
        if job.stale:
            claims.append(_lapse(executor, queue))
            executor.claim(queue, MOVE_LEASE_MS)  # another worker's claim: attempt + 1
        else:
            claims.append(tuple(executor.claim(queue, MOVE_LEASE_MS)[:2]))
    executor.add(queue, SPARE_JOB, b"resize " + SPARE_JOB)
    restarted = executor.now_ms()
    executor.restart()
    # A restart takes a moment, so that an extension after it moves the deadline: a model's
    # clock moves only when told; on a server the wait is for what the real restart left.
    executor.wait_until(restarted + RESTART_MS - 1)
    return claims


def _held_finding(job: HeldJob, before: _Lease, after: _Lease, current: bytes,
                  named: list[bytes], earliest: int) -> Finding | None:
    """None when the worker's live lease on `job` moved as it should: a new deadline no
    earlier than `earliest` (a lease of MOVE_LEASE_MS from the move's start, later than the
    one the restart left), the stamp of the process that runs now, the rest of the job as
    it was."""
    name = plain(job.id)
    if after == before:
        wrong = [plain(a) for a in named if a != b"%d" % job.attempt]
        hint = (f"your extension of it named attempt {', '.join(wrong)}, which is not the "
                "attempt of this worker's claim, so the verb found no live lease to extend"
                if wrong else "nothing your function sent extended it")
        return Finding(WRONG, f"{name}: not moved: its deadline and its stamp are as the "
                              f"restart left them; {hint}")
    if after.rest != before.rest or after.deadline is None:
        return Finding(WRONG, f"{name}: no longer the same lease: moving a lease extends the "
                              "claim the worker holds; it does not end it or claim the job "
                              "again")
    if epoch.exempt(after.stamp, current):
        return Finding(WRONG, f"{name}: its deadline moved, but its stamp still names the "
                              "process before the restart: what extended it wrote no "
                              "lease_epoch, so a sweep would still exempt it")
    if after.deadline == before.deadline:
        return Finding(WRONG, f"{name}: its stamp changed but its deadline did not: no lease "
                              "was extended")
    if after.deadline < earliest:
        sooner = (" and sooner than the one the restart left it, so the move cut the lease "
                  "short" if before.deadline is not None and after.deadline < before.deadline
                  else "")
        return Finding(WRONG, f"{name}: its new deadline is less than a minute "
                              f"({MOVE_LEASE_MS:_} ms) from now{sooner}: the worker still "
                              "needs the lease its claims asked for")
    return None


def _stale_finding(job: HeldJob, before: _Lease, after: _Lease) -> Finding | None:
    """None when the lease the worker lost to a newer claim was left as it was."""
    if after == before:
        return None
    return Finding(WRONG, f"{plain(job.id)}: this worker no longer holds it, but your function "
                          f"changed its lease: the worker's claim was attempt {job.attempt}, "
                          "and since then the lease ran out, the sweep sent the job back and "
                          "another worker claimed it again. A worker extends only with the "
                          "attempt of its own claim; any other number is someone else's lease")


def _returned(reply) -> list[bytes] | None:
    if not isinstance(reply, (list, tuple)) or not all(isinstance(r, (bytes, str)) for r in reply):
        return None
    return [_as_bytes(r) for r in reply]


def _unplayed_move(outcome, watched, where: str):
    """The findings on a move that cannot be judged by the leases it left (it ran too long,
    wrote by hand, read what the model does not answer, was refused, raised or sent nothing),
    and whether it sent nothing; None for a move whose leases tell."""
    if isinstance(outcome, attempts.TimedOut):
        return [Finding(WRONG, f"{where}: your function {attempts.failed(outcome)}; a move "
                               "sends a few calls and returns")], False
    raised = outcome.error if isinstance(outcome, attempts.Raised) else None
    by_hand = watched.written_by_hand()
    if by_hand:
        return [Finding(WRONG, f"{where}: your function wrote with {', '.join(by_hand)} "
                               "itself. Bytes written by hand can look like a moved lease, "
                               "but they grant nothing: nothing checked that the worker's "
                               "claim is still live, so a stale worker could take over a "
                               "lease it lost. Let a call that checks the claim do the "
                               "writing")], False
    if watched.unanswered:
        served = ", ".join(sorted(_MODEL_READS))
        return [Finding(NOTE, f"{where}: not checked here: your function read with "
                              f"{', '.join(sorted(set(watched.unanswered)))}, which the model "
                              f"does not answer (it answers the queue's calls and the reads "
                              f"{served}; executor.row(queue, job) and executor.deadline(queue, "
                              "job) read a job on either executor)")], False
    if isinstance(raised, ReplyError):
        before_it = ("but what your function sent before it stands"
                     if len(watched.commands) > 1
                     else "and it was the first your function sent, so no lease moved")
        return [Finding(WRONG, f"{where}: a call your function sent was refused with "
                               f"{raised.text}: that call wrote nothing, {before_it}")], False
    if raised is not None:
        return [Finding(WRONG, f"{where}: your function {attempts.failed(outcome)}")], False
    if not watched.commands:
        return [Finding(WRONG, f"{where}: your function sent nothing, so every lease keeps "
                               "the old process's stamp")], True
    return None


def _move_round(move, executor: Executor, queue: Queue, history, claims, where: str):
    """The learner's move on one played history: its findings, and whether it sent nothing."""
    jobs = [job.id for job in history] + [SPARE_JOB]
    before = _leases(executor, queue, jobs)
    earliest = executor.now_ms() + MOVE_LEASE_MS
    watched = _Watched(executor)
    outcome = attempts.run(move, watched, queue, list(claims))
    unplayed = _unplayed_move(outcome, watched, where)
    if unplayed is not None:
        return unplayed
    reply = outcome.value if isinstance(outcome, attempts.Returned) else None
    after = _leases(executor, queue, jobs)
    current = executor.run_id.encode()
    findings = []
    for job in history:
        if job.stale:
            finding = _stale_finding(job, before[job.id], after[job.id])
        else:
            finding = _held_finding(job, before[job.id], after[job.id], current,
                                    watched.attempts_named(queue, job.id), earliest)
        if finding is not None:
            findings.append(Finding(finding.kind, f"{where}: {finding.text}"))
    if after[SPARE_JOB] != before[SPARE_JOB]:
        findings.append(Finding(WRONG, f"{where}: {plain(SPARE_JOB)}, a job this worker never "
                                       "claimed, was changed: a claim grants a new lease on a "
                                       "pending job; moving a lease extends one the worker "
                                       "already holds"))
    if findings:
        return findings, False
    moved = [job.id for job in history if not job.stale]
    lost = [plain(job.id) for job in history if job.stale]
    if _returned(reply) != moved:
        return [Finding(WRONG, f"{where}: the leases moved, but your function returned "
                               f"{reply!r}: return the ids of the leases it moved, in the "
                               "order of claims, so that the worker knows which jobs it "
                               "still holds")], False
    return [Finding(RIGHT, f"{where}: {' and '.join(plain(m) for m in moved)} moved to the "
                           "process that runs now (a new deadline and that process's stamp), "
                           f"{' and '.join(lost)} left to the worker that claimed it again, "
                           "and the ids you returned say so")], False


def check_lease_move(move, *, live: Executor | None = None,
                     queue: Queue = EXERCISE_QUEUE) -> Feedback:
    """The learner's `move(executor, queue, claims)`, on a fresh model, then on `live` when it
    is given (`judge_on`)."""
    return judge_on(move, (ModelExecutor(), *([live] if live is not None else [])), queue)


def judge_on(move, executors: tuple[Executor, ...],
             queue: Queue = EXERCISE_QUEUE) -> Feedback:
    """The learner's `move(executor, queue, claims)`: on each executor in turn, and for each of
    MOVE_HISTORIES, a worker holds claims, one of them lost to a newer claim, and the server
    restarts; `claims` are the worker's (id, attempt) pairs. Right when every lease the worker
    still holds has a new deadline, at least MOVE_LEASE_MS from the move's start, and the new
    process's stamp, written by the verbs (the commands are watched; plain reads are let
    through, and answered on the model from its dataset), the lost lease and the spare job are
    untouched, and the move returns the ids it moved."""
    exercise = "move the worker's leases to the new process"
    if isinstance(attempts.screen(move, library=(), library_names=set()),
                  attempts.NotAFunction):
        return feedback(exercise, [Finding(WRONG, f"{move!r} is not a function: define one "
                                            "that takes (executor, queue, claims)")])
    findings, first, first_where = [], None, ""
    for executor in executors:
        found = []
        for number, history in enumerate(MOVE_HISTORIES, 1):
            try:
                claims = _hold(executor, queue, history)
            except LabError as exc:
                found.append(Finding(NOTE, f"not checked {executor.where}: {exc}"))
                break
            try:
                round_found, silent = _move_round(move, executor, queue, history, claims,
                                                  f"history {number}")
            finally:
                executor.clear(queue)
            found += round_found
            if any(f.kind == NOTE for f in round_found):
                break  # a read the model does not answer: the other history would say the same
            if silent:
                return feedback(exercise, [Finding(f.kind, f"{executor.where}, {f.text}")
                                            for f in found])
        if first is not None and found == first:
            # The same findings on a second executor: one line says so, instead of a copy.
            kind = WRONG if any(f.kind == WRONG for f in found) else RIGHT
            findings.append(Finding(kind, f"{executor.where}: the same as {first_where}, "
                                          "in both histories"))
            continue
        if first is None:
            first, first_where = found, executor.where
        findings += [Finding(f.kind, f"{executor.where}, {f.text}") for f in found]
    return feedback(exercise, findings)


def stamp_question() -> Diagnostic:
    """02's diagnostic question: what a scripted claim leaves of an earlier native stamp."""
    return Diagnostic(THREE_WRITERS)
