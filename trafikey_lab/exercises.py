"""The course's doing exercises: the learner writes a few lines, a checker says right or wrong and why.

One checker per notebook, 00 to 05 (06's lives with its race, in why_natively.py). Each takes
the learner's attempt as it stands, finished or not, and never raises on it: whatever the attempt does (returns the wrong thing, raises, is left
blank) becomes a finding that says what happened and what to change. A checker that can run the
attempt on the live server as well as on the model does so when it is given the live executor.
"""

from dataclasses import dataclass, field

from . import epoch, native
from .errors import LabError, ReplyError
from .executors import Executor, ModelExecutor, Queue
from .histories import History, Trace, play
from .model import decide_row
from .sweep import Need, Seen
from .text import plain

RIGHT, WRONG, NOTE = "right", "wrong", "note"
_MARKS = {RIGHT: "✓", WRONG: "✗", NOTE: "·"}

EXERCISE_QUEUE = Queue("{exercise}")
"""The exercises' own queue, so that checking an attempt never touches a notebook's queue."""


@dataclass(frozen=True)
class Finding:
    kind: str
    """RIGHT, WRONG or NOTE (a fact that is neither, such as a step that could not run live)."""
    text: str


@dataclass(frozen=True)
class Feedback:
    """What a checker found. Prints as one verdict line, then one line per finding."""

    exercise: str
    findings: tuple[Finding, ...]
    traces: tuple[Trace, ...] = field(default=(), repr=False)
    """The histories a checker played, for a figure: notebook 04's checker fills it."""

    @property
    def right(self) -> bool:
        kinds = [f.kind for f in self.findings]
        return RIGHT in kinds and WRONG not in kinds

    def __repr__(self) -> str:
        head = f"{'RIGHT' if self.right else 'NOT YET'}: {self.exercise}"
        return "\n".join([head, *(f"  {_MARKS[f.kind]} {f.text}" for f in self.findings)])


def _feedback(exercise: str, findings, traces=()) -> Feedback:
    return Feedback(exercise, tuple(findings), tuple(traces))


def _on(executor_name: str) -> str:
    return "on the live server" if executor_name == "live" else f"on the {executor_name}"


def _error(exc: BaseException) -> str:
    return exc.text if isinstance(exc, ReplyError) else f"{type(exc).__name__}: {exc}"


# -- 00: predict what the sweep does with one expired lease ----------------------------------

_PREDICTED_READINGS = ("exempt", "counted")
_PREDICTED_OUTCOMES = ("recovered", "dead")
BOUNDARY_CASES = 12
_SWEEP_LIBRARY_NAMES = {"exempt", "decide_member", "decide", "decide_row", "count_stall",
                        "trafikey_exempt", "trafikey_decide_member", "plan_sweep", "sweep"}


def _sweep_cases(seed: int) -> list[tuple[str, bytes | None, bytes, int | None, int]]:
    """(what the case is, lease_epoch, run_id, stalled before, max_stalled): the boundaries of
    both rules, then cases drawn afresh from `seed`, so that only a rule, not a table of
    answers, gets them all right."""
    import random

    draw = random.Random(seed)
    run_id = bytes(draw.choice(epoch.HEX_DIGITS) for _ in range(epoch.RUN_ID_LEN))
    other = bytes(draw.choice(epoch.HEX_DIGITS) for _ in range(epoch.RUN_ID_LEN))
    last = b"0" if run_id[-1:] != b"0" else b"1"
    cases = [
        ("the stamp is the sweeper's, no stalled field, max_stalled 1", run_id, run_id, None, 1),
        ("the stamp is the sweeper's, no stalled field, max_stalled 2", run_id, run_id, None, 2),
        ("the stamp is the sweeper's, stalled 1, max_stalled 2", run_id, run_id, 1, 2),
        ("the stamp is the sweeper's, stalled 1, max_stalled 3", run_id, run_id, 1, 3),
        ("the stamp is the sweeper's, stalled 4, max_stalled 3", run_id, run_id, 4, 3),
        ("no lease_epoch field, max_stalled 1", None, run_id, None, 1),
        ("an empty lease_epoch, max_stalled 1", b"", run_id, 2, 1),
        ("another process's stamp, stalled 0, max_stalled 1", other, run_id, 0, 1),
        ("the sweeper's run_id with its last byte changed", run_id[:-1] + last, run_id, None, 1),
        ("the first 39 bytes of the sweeper's run_id", run_id[:-1], run_id, None, 1),
        ("the sweeper's run_id with one byte more", run_id + b"0", run_id, None, 1),
        ("the sweeper's run_id in upper case", run_id.upper(), run_id, None, 1),
    ]
    for n in range(12):
        max_stalled = draw.randint(1, 6)
        stalled = draw.choice([None, *range(0, 8)])
        stamp = draw.choice([run_id, run_id, other, None])
        cases.append((f"drawn case {n + 1}", stamp, run_id, stalled, max_stalled))
    return cases


def _module_answer(stamp: bytes | None, run_id: bytes, stalled: int | None,
                   max_stalled: int) -> tuple[str, str]:
    """What the model's sweep does with such a row: (the stamp's reading, the job's outcome)."""
    row = {b"state": b"active", b"attempts": b"1"}
    if stamp is not None:
        row[b"lease_epoch"] = stamp
    if stalled is not None:
        row[b"stalled"] = b"%d" % stalled
    kind = decide_row(run_id, max_stalled, row)[0].kind
    return ("exempt" if kind == "exempt" else "counted", "dead" if kind == "dead" else "recovered")


def check_sweep_prediction(predict, seed: int | None = None) -> Feedback:
    """Runs the learner's `predict(lease_epoch, run_id, stalled, max_stalled)` (lease_epoch
    bytes or None when the row has none, run_id the sweeping process's bytes, stalled the row's
    count before the sweep or None when absent) over the boundary cases and fresh random ones.
    Each answer is a pair: the stamp's reading ("exempt" or "counted") and the job's outcome
    ("recovered": back to pending, or "dead"), compared with the model's sweep. The feedback names the cases
    answered wrongly, never the answer they should have had."""
    import secrets

    exercise = "predict what the sweep does with one expired lease"
    if not callable(predict):
        return _feedback(exercise, [Finding(WRONG, f"{predict!r} is not a function: define "
                                            "predict(lease_epoch, run_id, stalled, max_stalled)")])
    from . import sweep

    library = (epoch.exempt, native.exempt, native.decide_member, sweep.decide_member,
               sweep.decide, sweep.count_stall, decide_row)
    if (name := _borrowed(predict, library, _SWEEP_LIBRARY_NAMES)) is not None:
        return _feedback(exercise, [Finding(WRONG, f"your function hands the question to the "
                                                   f"library's own {name}: compare the stamp and "
                                                   "count the stall yourself")])
    cases = _sweep_cases(secrets.randbits(32) if seed is None else seed)
    boundary, drawn = cases[:BOUNDARY_CASES], cases[BOUNDARY_CASES:]
    wrong = _wrong_predictions(predict, boundary)
    if wrong:
        findings = [Finding(WRONG, text) for text in wrong[:4]]
        if len(wrong) > 4:
            findings.append(Finding(WRONG, f"and {len(wrong) - 4} more of the "
                                           f"{BOUNDARY_CASES} boundary cases"))
        findings.append(Finding(NOTE, f"{len(drawn)} cases drawn at random are checked once "
                                      "the boundary cases are right"))
        return _feedback(exercise, findings)
    wrong = _wrong_predictions(predict, drawn)
    if wrong:
        return _feedback(exercise, [Finding(WRONG, text) for text in wrong[:4]])
    return _feedback(exercise, [Finding(RIGHT, f"all {len(cases)} cases answered as the sweep "
                                               "answers them: the budget's edge, the near-miss "
                                               "stamps and cases drawn at random")])


def _wrong_predictions(predict, cases) -> list[str]:
    wrong = []
    for what, stamp, run_id, stalled, max_stalled in cases:
        reading, outcome = _module_answer(stamp, run_id, stalled, max_stalled)
        try:
            answer = predict(stamp, run_id, stalled, max_stalled)
        except Exception as exc:
            wrong.append(f"{what}: your function raised {_error(exc)}; it must answer every "
                         "row, an absent field included")
            continue
        if (not isinstance(answer, (tuple, list)) or len(answer) != 2
                or answer[0] not in _PREDICTED_READINGS or answer[1] not in _PREDICTED_OUTCOMES):
            wrong.append(f"{what}: it answered {answer!r}; answer a pair such as "
                         "(\"exempt\", \"recovered\"): the reading, then the outcome")
        elif answer[0] != reading:
            wrong.append(f"{what}: this lease is not {answer[0]}: look again at the stamp comparison")
        elif answer[1] != outcome:
            wrong.append(f"{what}: the job does not end {answer[1]}: look again at the count "
                         "and the budget")
    return wrong


# -- 01: write the shape check ---------------------------------------------------------------

SHAPE_CASES: dict[str, bytes] = {
    "NOW": epoch.NOW,
    **epoch.SHAPE_REJECTS,
    "forty 0s": epoch.ZERO,
    # What a check built on int(value, 16) lets through.
    "NOW starting 0x": b"0x" + epoch.NOW[2:],
    "NOW with an underscore": epoch.NOW[:20] + b"_" + epoch.NOW[21:],
    "NOW ending in a space": epoch.NOW[:39] + b" ",
    # The bytes just outside 0-9 and a-f, where a range test is off by one.
    "NOW starting with a slash": b"/" + epoch.NOW[1:],
    "NOW with a colon inside": epoch.NOW[:20] + b":" + epoch.NOW[21:],
    "NOW ending in a backquote": epoch.NOW[:39] + b"`",
    # What a regex ending in $ lets through: $ also matches just before a final newline.
    "NOW with a newline appended": epoch.NOW + b"\n",
    # What str.isdigit() on decoded text lets through: the digits of other scripts, counted
    # in bytes or in characters, and a byte that only some decodings read as a digit.
    "NOW ending in an Arabic-Indic 3 (40 bytes)": epoch.NOW[:38] + "٣".encode(),
    "NOW ending in a superscript 3 (40 characters)": epoch.NOW[:39] + "³".encode(),
    "NOW ending in byte 0xb2 (not UTF-8)": epoch.NOW[:39] + b"\xb2",
}
"""The dive's test values, then values that the usual shortcuts get wrong."""

MADE_UP = 3
"""How many run_ids, and how many with one bad byte, the checker makes up on each run."""

_NOT_HEX = bytes(b for b in range(256) if b not in epoch.HEX_DIGITS)
_LIBRARY_CHECKS = {"valid_run_id", "shape_problem", "trafikey_valid_run_id", "read_value"}


def made_up_values(rng) -> dict[str, list[bytes]]:
    """Fresh run_ids, and fresh run_ids with one byte that is not 0-9 a-f at a random place:
    values no table written before the run can hold."""
    def run_id() -> bytearray:
        return bytearray(rng.choice(epoch.HEX_DIGITS) for _ in range(epoch.RUN_ID_LEN))

    broken = []
    for _ in range(MADE_UP):
        value = run_id()
        value[rng.randrange(epoch.RUN_ID_LEN)] = rng.choice(_NOT_HEX)
        broken.append(bytes(value))
    return {"fresh run_ids": [bytes(run_id()) for _ in range(MADE_UP)],
            "fresh run_ids with one byte outside 0-9 a-f": broken}


def _borrowed(candidate, library=None, library_names=_LIBRARY_CHECKS) -> str | None:
    """The library's own answer, when the candidate hands the question to it: by being it, or
    by naming it in its code (a name the learner defined themselves does not count). The
    shape check's functions unless `library` and `library_names` name others."""
    import types

    library = library or (epoch.valid_run_id, epoch.shape_problem, native.valid_run_id)
    if any(candidate is check for check in library):
        return candidate.__name__
    code = getattr(candidate, "__code__", None)
    scope = dict(getattr(candidate, "__globals__", {}))
    cells = getattr(candidate, "__closure__", None) or ()
    for name, cell in zip(getattr(code, "co_freevars", ()), cells):
        try:
            scope[name] = cell.cell_contents
        except ValueError:  # a closure variable not yet assigned holds nothing to inspect
            pass
    codes, names = ([code] if code is not None else []), set()
    while codes:
        code = codes.pop()
        names |= {*code.co_names, *code.co_freevars}
        codes += [const for const in code.co_consts if isinstance(const, types.CodeType)]
    for name in sorted(names):
        value = scope.get(name)
        if any(value is check for check in library):
            return value.__name__
        if name in library_names and value is None:
            return name
    return None


def _as_verdict(answer) -> bool | None:
    """True or False, or the C's int 1 or 0; None for anything else."""
    if isinstance(answer, bool):
        return answer
    if type(answer) is int and answer in (0, 1):
        return bool(answer)
    return None


def _library_calls(candidate, value: bytes, used: list[str]):
    """candidate(value), with the name of every function of the trafikey_lab package that
    runs meanwhile appended to `used`, however the candidate reached it: by name, through
    getattr with a name built at run time, a default argument or a container."""
    import os
    import sys

    package = os.path.join(os.path.dirname(epoch.__file__), "")

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(package):
            used.append(frame.f_code.co_name)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        return candidate(value)
    finally:
        sys.setprofile(previous)


def _ask(candidate, value: bytes, used: list[str]) -> tuple[bool | None, str]:
    """The candidate's verdict on value, or None and what it did instead; the library
    functions it called are appended to `used`."""
    try:
        answer = _library_calls(candidate, value, used)
    except Exception as exc:  # the learner's code may raise anything: say what it was
        return None, f"raised {_error(exc)}"
    verdict = _as_verdict(answer)
    return verdict, "" if verdict is not None else f"returned {answer!r}"


def _handed_over(exercise: str, name: str) -> Feedback:
    return _feedback(exercise, [Finding(WRONG, f"your check hands the question to the "
                                        f"library's own {name}: write the test yourself, "
                                        "from the C function above")])


def check_shape_check(candidate, rng=None) -> Feedback:
    """Runs the learner's `candidate(value: bytes) -> bool` (or 1/0, as the C returns) over
    SHAPE_CASES and over values made up for this run (`rng`, a random.Random; a fresh one
    when not given), and compares each answer with the module's own C shape check,
    trafikey_valid_run_id.

    A check that hands the question to the library is wrong whatever it answers. Before it
    runs, its code is read for the library's checks (epoch's, native's, readings.read_value)
    by name or as objects in its scope; while it runs, any call into the trafikey_lab
    package is seen (sys.setprofile), so a name built at run time for getattr, or a function
    held in a default argument, is caught too. Not caught: the module's C function called
    through a ctypes handle the learner opened and named with a built string, since no Python
    code of the package runs then."""
    import random

    from . import readings

    exercise = ("the shape check, on the dive's test values, the shortcuts' traps and made-up "
                "values")
    if not callable(candidate):
        return _feedback(exercise, [Finding(WRONG, f"{candidate!r} is not a function: define "
                                            "one that takes bytes and returns True or False")])
    library = (epoch.valid_run_id, epoch.shape_problem, native.valid_run_id,
               readings.read_value)
    if (name := _borrowed(candidate, library)) is not None:
        return _handed_over(exercise, name)
    findings: list[Finding] = []
    agreed: list[str] = []
    used: list[str] = []  # the library functions the candidate called, however it reached them
    for name, value in SHAPE_CASES.items():
        expected = native.valid_run_id(value)
        why = epoch.shape_problem(value) or "40 bytes, each one of 0-9 a-f"
        verdict, instead = _ask(candidate, value, used)
        if instead.startswith("raised"):
            findings.append(Finding(WRONG, f"{name}: your check {instead}; it must answer True "
                                           f"or False for any bytes ({why})"))
        elif instead:
            findings.append(Finding(WRONG, f"{name}: your check {instead}, not True or False "
                                           "(1 or 0, as the C's int, will do too); wrap the "
                                           "test in bool(...)"))
        elif verdict != expected:
            findings.append(Finding(WRONG, f"{name}: your check says {verdict}, the module says "
                                           f"{expected}: {why}"))
        else:
            agreed.append(name)
    if len(agreed) == len(SHAPE_CASES):
        findings.insert(0, Finding(RIGHT, f"all {len(SHAPE_CASES)} named values answered as the "
                                          "module answers"))
    elif agreed:
        findings.insert(0, Finding(RIGHT, f"{len(agreed)} of {len(SHAPE_CASES)} named values "
                                          f"answered as the module answers: {', '.join(agreed)}"))
    findings.append(_made_up_finding(candidate, made_up_values(rng or random.Random()), used))
    if used:
        return _handed_over(exercise, used[0])
    return _feedback(exercise, findings)


def _made_up_finding(candidate, made_up: dict[str, list[bytes]], used: list[str]) -> Finding:
    """One finding for the made-up values, in words that do not depend on the values drawn."""
    counts, instead, missed = [], "", 0
    for kind, values in made_up.items():
        right = 0
        for value in values:
            verdict, did = _ask(candidate, value, used)
            right += int(verdict == native.valid_run_id(value))
            instead = instead or did
        missed += len(values) - right
        counts.append(f"{right} of {len(values)} {kind}")
    if not missed:
        return Finding(RIGHT, f"all {sum(map(len, made_up.values()))} values made up for this "
                              "run answered as the module answers")
    return Finding(WRONG, "values made up for this run (new each time, so no table of known "
                          f"values can answer them): {' and '.join(counts)} answered as the "
                          "module answers" + (f"; on one, your check {instead}" if instead else ""))


# -- 02: move a lease to the process that runs now --------------------------------------------

MOVE_LEASE_MS = 60_000
"""The lease of the worker's live claims, long enough to outlast the check, and the least a
moved lease must get from the move: a lease cut short is not moved."""
RESTART_MS = 2_000
"""How long the model's restart takes, so that an extension after it moves the deadline."""
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
against the live server's own flags in tests/test_exercise_lease_move.py."""
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
        self.name = executor.name
        self.commands: list[tuple[str, tuple[bytes, ...]]] = []
        self.unanswered: list[str] = []
        """The reads the model could not answer (the live server answers every one)."""

    def call(self, *args):
        parts = tuple(_as_bytes(arg) for arg in args)
        name = parts[0].decode(errors="replace").upper() if parts else ""
        self.commands.append((name, parts[1:]))
        if isinstance(self._inner, ModelExecutor) and name in _READS:
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

    def dataset(self) -> dict:
        return self._inner.dataset()

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
                triples = list(zip(args[2::3], args[3::3], args[4::3]))
            else:
                continue
            named += [attempt for id_, row, attempt in triples
                      if id_ == job and row == queue.row(job)]
        return named


def _as_bytes(value) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


_MODEL_READS = {  # name: (how many arguments, at least that many when True)
    "HGET": (2, False), "HMGET": (2, True), "HGETALL": (1, False), "HEXISTS": (2, False),
    "HLEN": (1, False), "HKEYS": (1, False), "HVALS": (1, False), "ZSCORE": (2, False),
    "ZMSCORE": (2, True), "ZCARD": (1, False), "ZRANK": (2, False), "ZRANGE": (3, False),
    "TYPE": (1, False), "EXISTS": (1, True), "TIME": (0, False), "PING": (0, False),
}
"""The reads the checker answers on the model (ZRANGE by index, with no options)."""


class _NotServed(Exception):
    """A read the checker does not answer on the model."""


def _model_read(executor: ModelExecutor, name: str, args: tuple[bytes, ...]):
    """A read answered from the model's dataset, in the form the live executor's redis-py
    client returns it: the model's server runs only the verbs, the scripts and the writes a
    dataset is laid out with. _NotServed for a read that is not one of _MODEL_READS."""
    from .model import WRONGTYPE, arity_error

    if name not in _MODEL_READS or (name == "ZRANGE" and len(args) > 3):
        raise _NotServed(name)
    count, at_least = _MODEL_READS[name]
    if len(args) < count or (len(args) > count and not at_least):
        raise ReplyError(arity_error(name.lower()))
    data = executor.dataset()
    if name in ("TIME", "PING", "TYPE", "EXISTS"):
        return {"TIME": lambda: divmod(executor.now_ms() * 1000, 1_000_000),
                "PING": lambda: True,
                "TYPE": lambda: data.get(args[0], ("none", None))[0].encode(),
                "EXISTS": lambda: sum(key in data for key in args)}[name]()
    kind = "hash" if name.startswith("H") else "zset"
    found, held = data.get(args[0], (kind, {} if kind == "hash" else []))
    if found != kind:
        raise ReplyError(WRONGTYPE)
    if kind == "hash":
        return {"HGET": lambda: held.get(args[1]),
                "HMGET": lambda: [held.get(field) for field in args[1:]],
                "HGETALL": lambda: dict(held), "HEXISTS": lambda: args[1] in held,
                "HLEN": lambda: len(held), "HKEYS": lambda: list(held),
                "HVALS": lambda: list(held.values())}[name]()
    members = [member for member, _ in held]
    scores = {member: float(score) for member, score in held}
    return {"ZSCORE": lambda: scores.get(args[1]),
            "ZMSCORE": lambda: [scores.get(member) for member in args[1:]],
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
    data = executor.dataset()

    def scores(key: bytes) -> dict[bytes, int]:
        kind, members = data.get(key, ("zset", []))
        return {member: int(score) for member, score in members} if kind == "zset" else {}

    active, pending, dead = scores(queue.active), scores(queue.pending), scores(queue.dead)
    leases = {}
    for job in jobs:
        kind, row = data.get(queue.row(job), ("none", {}))
        row = row if kind == "hash" else {}
        rest = tuple(sorted((f, v) for f, v in row.items() if f != b"lease_epoch"))
        leases[job] = _Lease(row.get(b"lease_epoch"), active.get(job),
                             (kind, rest, pending.get(job), dead.get(job)))
    return leases


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
    executor.restart()
    if isinstance(executor, ModelExecutor):
        # A restart takes a moment; the model's clock moves only when told.
        executor.advance(RESTART_MS)
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


def _move_round(move, executor: Executor, queue: Queue, history, claims, where: str):
    """The learner's move on one played history: its findings, and whether it sent nothing."""
    jobs = [job.id for job in history] + [SPARE_JOB]
    before = _leases(executor, queue, jobs)
    earliest = executor.now_ms() + MOVE_LEASE_MS
    watched = _Watched(executor)
    raised = reply = None
    try:
        reply = move(watched, queue, list(claims))
    except Exception as exc:  # the learner's code may raise anything: say what it was
        raised = exc
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
        return [Finding(WRONG, f"{where}: your function raised {_error(raised)}")], False
    if not watched.commands:
        return [Finding(WRONG, f"{where}: your function sent nothing, so every lease still "
                               "carries the stamp of the process before the restart")], True
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


def check_lease_move(move, executors: tuple[Executor, ...] | None = None,
                     queue: Queue = EXERCISE_QUEUE) -> Feedback:
    """The learner's `move(executor, queue, claims)`: on each executor (a fresh model when none
    is given) and for each of MOVE_HISTORIES, a worker holds claims, one of them lost to a
    newer claim, and the server restarts; `claims` are the worker's (id, attempt) pairs.
    Right when every lease the worker still holds has a new deadline, at least MOVE_LEASE_MS
    from the move's start, and the new process's stamp, written by the verbs (the commands
    are watched; plain reads are let through, and answered on the model from its dataset),
    the lost lease and the spare job are untouched, and the move returns the ids it moved."""
    exercise = "move this worker's leases to the process that runs after the restart"
    if not callable(move):
        return _feedback(exercise, [Finding(WRONG, f"{move!r} is not a function: define one "
                                            "that takes (executor, queue, claims)")])
    findings, first, first_where = [], None, ""
    for executor in executors or (ModelExecutor(),):
        found = []
        for number, history in enumerate(MOVE_HISTORIES, 1):
            try:
                claims = _hold(executor, queue, history)
            except LabError as exc:
                found.append(Finding(NOTE, f"not checked {_on(executor.name)}: {exc}"))
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
                return _feedback(exercise, [Finding(f.kind, f"{_on(executor.name)}, {f.text}")
                                            for f in found])
        if first is not None and found == first:
            # The same findings on a second executor: one line says so, instead of a copy.
            kind = WRONG if any(f.kind == WRONG for f in found) else RIGHT
            findings.append(Finding(kind, f"{_on(executor.name)}: the same as {first_where}, "
                                          "in both histories"))
            continue
        if first is None:
            first, first_where = found, _on(executor.name)
        findings += [Finding(f.kind, f"{_on(executor.name)}, {f.text}") for f in found]
    return _feedback(exercise, findings)


def stamp_question():
    """02's diagnostic question: what a scripted claim leaves of an earlier native stamp."""
    from .widgets.diagnostic import Option, Question

    return Question(
        "job-4 was claimed with EMQ.CLAIM; its lease ran out and the sweep (max_stalled 2) sent "
        "it back to pending with stalled 1. In the same server process a worker then claims "
        "it with the script claim2, and that lease runs out too. What does the next sweep, "
        "max_stalled 2, do with job-4?", [
            Option("It sends job-4 back to pending uncounted: a lease a script granted carries "
                   "no stamp.", misconception="claim2 removes the stamp",
                   why="claim2's one write to the row is HSET state active attempts <n>; "
                       "lease_epoch stays as the native claim wrote it. Only a row that no "
                       "native verb ever stamped is never charged."),
            Option("It dead-letters job-4 with stalled 2: the row still carries the stamp the "
                   "native claim wrote, this process's.", right=True,
                   why="claim2 writes only state and attempts, and neither it nor the sweep "
                       "removes lease_epoch. The row still carries the stamp the native claim "
                       "wrote, this process's, so the stall is counted: 1 + 1 = 2 reaches "
                       "max_stalled."),
            Option("It sends job-4 back to pending uncounted: the first sweep cleared the stamp "
                   "when it sent the job back.",
                   misconception="the sweep removes the stamp of a lease it ends",
                   why="the sweep writes state, and stalled for a counted lease; it never "
                       "writes lease_epoch."),
            Option("It sends job-4 back to pending with stalled 1: the new claim started the "
                   "count again.", misconception="a new claim resets stalled",
                   why="no claim writes stalled: EMQ.CLAIM writes state, attempts and "
                       "lease_epoch, claim2 state and attempts. The count goes on from 1 to 2."),
            Option("It dead-letters job-4 with stalled still 1: the scripted lease is not "
                   "counted, but a job claimed twice has used up max_stalled 2.",
                   misconception="max_stalled counts claims",
                   why="max_stalled is held against stalled, the counted stalls, not against "
                       "attempts: the sweep dead-letters a job only on a counted stall, when "
                       "stalled + 1 reaches max_stalled, and writes that stalled with it. Here "
                       "the stall is counted, on the stamp the native claim left, so the job "
                       "dies with stalled 2."),
        ])


# -- 03: a row that stops the sweep's decision at each read -----------------------------------


class _ThisProcess:
    def __repr__(self) -> str:
        return "THIS_PROCESS"


THIS_PROCESS = _ThisProcess()
"""Stands for the run_id of the server that sweeps; the checker writes the real one."""

READS = tuple(need.value for need in Need)
"""type, group, lease_epoch, stalled: the reads in the order the decision asks for them."""

STOP_MAX_STALLED = 3


def _row_bytes(row, run_id: bytes):
    """A learner's row as the executors store it: None (no key), bytes (a string key) or a
    hash of bytes; THIS_PROCESS becomes run_id. Raises ValueError saying what is wrong."""
    if row is None:
        return None
    if isinstance(row, (bytes, str)):
        return row.encode() if isinstance(row, str) else row

    def b(value):
        if value is THIS_PROCESS:
            return run_id
        if isinstance(value, bytes):
            return value
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return str(value).encode()
        raise ValueError(f"{value!r} cannot be stored in a hash: use text, bytes or an integer")

    if not isinstance(row, dict):
        raise ValueError(f"{row!r} is not a row: give None (no row), a dict (a hash) or text "
                         "(a string key)")
    if not row:
        raise ValueError("a hash with no fields cannot exist in Valkey: give it at least one "
                         "field (state, say)")
    return {b(k): b(v) for k, v in row.items()}


# Where to look, as a hint: the branches of the step machine after each read, never which row
# to write or what it must hold, so that the feedback on a wrong row does not hand over the
# right one (the notebook's list of refusals would turn "the case that does not refuse" into
# a recipe).
_STOP_ADVICE = {
    "type": ("The decision can stop at type only on what its first read, the key's type, finds: "
             "see the branches after NEED_TYPE in trafikey_decide_member"),
    "group": ("The decision can stop at group only on what that read finds: see the branches "
              "after NEED_GROUP"),
    "lease_epoch": ("The decision can stop at lease_epoch only on what the stamp comparison "
                    "finds, before any stall is counted: see the branches after NEED_EPOCH"),
    "stalled": "The decision asks for stalled only for a lease it counts",
}


def _stop_finding(read: str, stopped: str, verdict: str) -> Finding:
    if verdict in ("wrongtype", "not_integer"):
        refusal = "WRONGTYPE" if verdict == "wrongtype" else "ERR EMQ row field is not an integer"
        if stopped == read:
            return Finding(WRONG, f"{read}: it stops at {stopped}, but as a refusal ({refusal}): "
                                  "the whole sweep refuses and no row is swept. "
                                  + _STOP_ADVICE[read])
        return Finding(WRONG, f"{read}: it refuses the whole sweep at {stopped} ({refusal}). "
                              + _STOP_ADVICE[read])
    if stopped == read:
        return Finding(RIGHT, f"{read}: the decision stops at {stopped} with the verdict "
                              f"{verdict}")
    why = {
        "type": "there is no row, so the decision ends at the first read",
        "group": "the row has a group field: a lane row, left where it is",
        "lease_epoch": "it went past type and group, and the stamp comparison settled it",
        "stalled": "its lease_epoch is this process's, so the lease is counted and stalled "
                   "is read",
    }[stopped]
    return Finding(WRONG, f"{read}: it stops at {stopped} instead ({verdict}): {why}. "
                          + _STOP_ADVICE[read])


def _plant(executor: Executor, queue: Queue, rows: dict) -> None:
    """Each row as an expired member of active, in READS order, one millisecond apart."""
    executor.clear(queue)
    base = executor.now_ms()
    for offset, (read, row) in enumerate(rows.items(), 1):
        key = queue.row(read)
        if isinstance(row, dict):
            executor.call("HSET", key, *[part for item in row.items() for part in item])
        elif row is not None:
            executor.call("SET", key, row)
        executor.call("ZADD", queue.active, base + offset, read)
    executor.wait_until(base + len(rows))


def _sweep_reply(executor: Executor, queue: Queue):
    try:
        return executor.sweep(queue, STOP_MAX_STALLED)
    except ReplyError as refusal:
        return refusal.text


def check_stops(rows, live: Executor | None = None, queue: Queue = EXERCISE_QUEUE) -> Feedback:
    """rows maps each read (type, group, lease_epoch, stalled) to a row meant to stop the
    sweep's decision there: None for no row, a dict for a hash (THIS_PROCESS for the sweeping
    server's run_id), text for a string key. Each row is decided by the model's step machine
    and by the module's C one under max_stalled 3; then, on a fresh model and on `live` when
    given, the four rows are swept together and the two replies compared."""
    exercise = "one row for each read the sweep can stop at"
    if not isinstance(rows, dict):
        return _feedback(exercise, [Finding(WRONG, f"rows is {type(rows).__name__}: make it a "
                                            f"dict with the keys {', '.join(READS)}")])
    findings = [Finding(WRONG, f"{read}: no row given; add rows[{read!r}]")
                for read in READS if read not in rows]
    findings += [Finding(NOTE, f"{key!r} is not one of the reads and is not checked")
                 for key in rows if key not in READS]
    model = ModelExecutor()
    run_id = model.run_id.encode()
    # A run_id typed out names one process: the checker sweeps on two, so only THIS_PROCESS
    # means "the server that sweeps" on both.
    typed = {epoch.NOW: "NOW is the model's run_id"}
    if live is not None:
        try:
            typed[live.run_id.encode()] = "that is your live server's run_id"
        except LabError:
            pass
    stored = {}
    for read in READS:
        if read not in rows:
            continue
        try:
            stored[read] = _row_bytes(rows[read], run_id)
        except ValueError as exc:
            findings.append(Finding(WRONG, f"{read}: {exc}"))
            continue
        named = [typed[v] for v in _typed_values(rows[read]) if v in typed]
        if named:
            findings.append(Finding(WRONG, f"{read}: {named[0]}, not every server's: write "
                                           "THIS_PROCESS for the run_id of the server that "
                                           "sweeps"))
            del stored[read]
            continue
        verdict, asked = decide_row(run_id, STOP_MAX_STALLED, stored[read])
        native_verdict = _native_decision(run_id, stored[read])
        finding = _stop_finding(read, asked[-1].value, verdict.kind)
        if native_verdict != verdict.kind:
            finding = Finding(WRONG, f"{read}: the model says {verdict.kind}, the C module "
                                     f"says {native_verdict}: report this as a bug")
        findings.append(finding)
    if len(stored) == len(READS):
        findings += _swept_together(stored, rows, model, live, queue)
    return _feedback(exercise, findings)


def _typed_values(row) -> list[bytes]:
    """The values of a learner's hash row as bytes, THIS_PROCESS left out."""
    if not isinstance(row, dict):
        return []
    return [v.encode() if isinstance(v, str) else v for v in row.values()
            if isinstance(v, (bytes, str))]


def _native_decision(run_id: bytes, row) -> str:
    """The C step machine's verdict on a stored row, fed the same reads the model makes."""
    seen = Seen()
    while isinstance(step := native.decide_member(run_id, STOP_MAX_STALLED, seen), Need):
        if step is Need.TYPE:
            value = "none" if row is None else "hash" if isinstance(row, dict) else "string"
            seen = Seen(type=value)
        else:
            seen = Seen(**{**seen.__dict__, step.name.lower(): row.get(step.value.encode())})
    return step.kind


def _swept_together(stored, rows, model, live, queue) -> list[Finding]:
    _plant(model, queue, stored)
    expected = _sweep_reply(model, queue)
    findings = [Finding(NOTE, f"the four rows swept together on the model: {expected!r}")]
    if live is None:
        return findings
    try:
        live_rows = {read: _row_bytes(rows[read], live.run_id.encode()) for read in READS}
        _plant(live, queue, live_rows)
        reply = _sweep_reply(live, queue)
        live.clear(queue)
    except LabError as exc:
        return findings + [Finding(NOTE, f"not swept live: {exc}")]
    if reply == expected:
        findings.append(Finding(NOTE, "the live server's sweep of the same rows gave the same "
                                      "reply"))
    else:
        findings.append(Finding(WRONG, f"the live server answered {reply!r}, the model "
                                       f"{expected!r}: report this as a bug"))
    return findings


# -- 04: a fifth history ----------------------------------------------------------------------

ACTIONS = ("add", "claim", "scripted_claim", "extend", "scripted_extend", "restart", "expire",
           "sweep")
FIFTH_TITLE = "extended by a script after the restart"
FIFTH_MAX_STALLED = 1
STAMPS = ("process 1", "process 2", "no process")
VERDICTS = ("counted", "exempt")
OUTCOMES = ("recovered", "dead")
_GRANTS = ("claim", "scripted_claim")
_EXTENSIONS = ("extend", "scripted_extend")
_NATIVE = {"claim": "EMQ.CLAIM", "extend": "EMQ.EXTEND"}


@dataclass(frozen=True)
class FifthPrediction:
    stamp: str
    verdict: str
    outcome: str

    def __str__(self) -> str:
        return (f"the stamp names {self.stamp}, the verdict is {self.verdict}, the job is "
                f"{self.outcome}")


def _word(value) -> str | None:
    """A prediction's word, case and spacing aside; None for anything but text."""
    return " ".join(value.lower().split()) if isinstance(value, str) else None


def _prediction_problems(stamp, verdict, outcome) -> list[str]:
    asked = (
        ("stamp", stamp, STAMPS, "which process the row's stamp names when the sweep reads it: "
                                 "\"process 1\" (the server before the restart), \"process 2\" "
                                 "(the one after it) or \"no process\" (no stamp)"),
        ("verdict", verdict, VERDICTS, "the sweep's verdict: \"counted\" or \"exempt\""),
        ("outcome", outcome, OUTCOMES, f"the job's outcome at max_stalled {FIFTH_MAX_STALLED}: "
                                       "\"recovered\" or \"dead\""),
    )
    return [f"{name} is {value!r}: write {what}" for name, value, allowed, what in asked
            if _word(value) not in allowed]


def _fifth_problems(steps) -> list[str]:
    """What keeps `steps` from telling the fifth history: the module grants the lease, the
    server restarts after the claim, on the new process the worker extends it by the script
    alone, then the lease runs out and one sweep reads it. Judged by what each step does to
    the stamp, so a native verb after the restart is refused wherever it stands."""
    if not isinstance(steps, (tuple, list)) or not all(isinstance(s, str) for s in steps):
        return [f"steps is {steps!r}: make it a tuple of step names, such as "
                "(\"add\", \"claim\", ...)"]
    problems = [f"{s!r} is not a step: use one of {', '.join(ACTIONS)}"
                for s in steps if s not in ACTIONS]
    if problems or not steps:
        return problems or ["steps is empty: write the history's steps, in order"]
    steps = list(steps)
    claims = [i for i, s in enumerate(steps) if s in _GRANTS]
    restarts = [i for i, s in enumerate(steps) if s == "restart"]
    if steps[0] != "add" or steps.count("add") != 1:
        problems.append("the history starts from an empty queue: the job is added once, as the "
                        "first step")
    if "scripted_claim" in steps:
        problems.append("\"scripted_claim\" is the script claim2, a grant the module does not "
                        "make: in this history the module grants the lease")
    elif not claims:
        problems.append("nothing grants the worker its lease: the claim is missing")
    if len(claims) > 1:
        problems.append("the job is claimed more than once: while its lease is in active the job "
                        "is not in pending, so a second claim has nothing to take, and a claim "
                        "after a sweep starts another lease. Claim it once")
    if len(restarts) != 1:
        times = "never restarts" if not restarts else f"restarts {len(restarts)} times"
        problems.append(f"the server {times}: in this history it restarts once, after the "
                        "claim")
    elif claims and restarts[0] < claims[0]:
        problems.append("the restart comes before the claim, so one process would grant the "
                        "lease and sweep it: in this history the module grants the lease before "
                        "the server restarts")
    else:
        after = steps[restarts[0] + 1:]
        if "extend" in after:
            problems.append("\"extend\" is EMQ.EXTEND, a native verb: after the restart it would "
                            "write a stamp of its own. In this history no native verb runs after "
                            "the restart; the worker keeps its lease through the script alone")
        if "scripted_extend" not in after:
            problems.append("after the restart the worker, still alive, keeps its lease going by "
                            "the script before it stops: that extension is missing")
    if claims and any(s in _EXTENSIONS for s in steps[:claims[0]]):
        problems.append("an extension before the claim finds no lease to extend (it replies 0): "
                        "extend after the claim")
    if steps[-2:] != ["expire", "sweep"] or steps.count("expire") != 1 \
            or steps.count("sweep") != 1:
        problems.append("the history ends once: after the last extension the lease runs out "
                        "(\"expire\"), then the one sweep reads it (\"sweep\"); neither comes "
                        "earlier or twice")
    return problems


def _why_stamp(trace: Trace) -> str:
    """Which verb wrote the stamp the sweep found, and what the script's extensions did to it."""
    native = [(i, s) for i, s in enumerate(trace.steps)
              if s.action in _NATIVE and s.reply not in (None, 0)]
    if not native:
        return "no native verb stamped the row, so it has no stamp"
    last, step = native[-1]
    why = (f"the last native verb to stamp the row was {_NATIVE[step.action]}, in "
           f"{trace.process_name(step.run_id)}")
    scripted = [trace.process_name(s.run_id) for s in trace.steps[last + 1:]
                if s.action == "scripted_extend"]
    if scripted:
        why += (f"; the script's extension after it (extend2, in {scripted[-1]}) moved the "
                "deadline and wrote no stamp")
    return why


def _history_finding(trace: Trace, prediction: FifthPrediction) -> Finding:
    stamp = trace.process_name(trace.lease_epoch)
    sweeper = trace.process_name(trace.sweep_run_id)
    seen = FifthPrediction(stamp, trace.verdict, trace.outcome)
    result = (f"{_on(trace.executor)}: the stamp names {stamp}, the sweep runs in {sweeper}: "
              f"{trace.verdict}, so {trace.outcome}")
    if seen == prediction:
        return Finding(RIGHT, f"{result}, as you predicted")
    wrong = []
    if prediction.stamp != seen.stamp:
        wrong.append(f'the stamp names {stamp}, not "{prediction.stamp}": {_why_stamp(trace)}')
    if prediction.verdict != seen.verdict:
        own = "is not" if trace.exempt else "is"
        wrong.append(f'{trace.verdict}, not "{prediction.verdict}": the sweep in {sweeper} '
                     f"compares the stamp with its own run_id, and {stamp}'s {own} its own")
    if prediction.outcome != seen.outcome:
        wrong.append(f'{trace.outcome}, not "{prediction.outcome}": ' + (
            "an exempt lease goes back to pending whatever max_stalled is, stalled untouched"
            if trace.exempt else
            f"a counted stall makes stalled 1, which reaches max_stalled {trace.max_stalled}"))
    return Finding(WRONG, f"{result}. Not as you predicted: " + "; ".join(wrong))


class FifthHistory:
    """The exercise in one kernel: the prediction is recorded first, and once a play has shown
    the result it can no longer be changed. The module holds the one instance the notebook
    uses (FIFTH), not a notebook cell, so that running the prediction cell again cannot reset
    it; a notebook run again from the top with the same prediction records it unchanged."""

    def __init__(self):
        self.prediction: FifthPrediction | None = None
        self.played = False
        self.refused: FifthPrediction | None = None

    def predict(self, stamp=None, verdict=None, outcome=None) -> Feedback:
        exercise = "a fifth history: your prediction"
        findings = [Finding(WRONG, p) for p in _prediction_problems(stamp, verdict, outcome)]
        if findings:
            if self.played:
                findings.append(Finding(NOTE, f"the prediction recorded before the play still "
                                              f"holds: {self.prediction}"))
            return _feedback(exercise, findings)
        new = FifthPrediction(_word(stamp), _word(verdict), _word(outcome))
        if self.played and new != self.prediction:
            self.refused, first = new, self.prediction
            return _feedback(exercise, [Finding(WRONG, (
                f"refused: your prediction was recorded before the history was played ({first}), "
                "and the play has shown the result since. A prediction changed "
                "after the result is not a prediction: the check holds you to the first one for "
                "the rest of this kernel's session"))])
        again = new == self.prediction
        self.prediction, self.refused = new, None
        return _feedback(exercise, [Finding(NOTE, (
            f"{'recorded again, unchanged' if again else 'recorded'}: {new}. "
            + ("It holds: the history has been played with it."
               if self.played else "Nothing is played yet: write the steps in the next cell "
                                   "and run it."))
        )])

    def check(self, steps, executors: tuple[Executor, ...] | None = None,
              queue: Queue = EXERCISE_QUEUE) -> Feedback:
        """Plays the steps at max_stalled 1, on each executor (a fresh model when none is
        given), only if they tell the fifth history and a prediction is recorded."""
        exercise = f"a fifth history: {FIFTH_TITLE}"
        findings = [Finding(WRONG, p) for p in _fifth_problems(steps)]
        if self.prediction is None:
            findings.append(Finding(WRONG, "no prediction is recorded yet: run predict_fifth(...) "
                                           "with your three answers first; nothing is played "
                                           "before there is one"))
        if findings:
            return _feedback(exercise, findings)
        if (refused := self.refused) is not None:
            findings.append(Finding(NOTE, f"the prediction changed after the result ({refused}) "
                                          "was refused: this play is held against the first one"))
        history = History("fifth", FIFTH_TITLE, tuple(steps), "")
        traces = []
        for executor in executors or (ModelExecutor(),):
            try:
                trace = play(history, FIFTH_MAX_STALLED, executor, queue)
            except (LabError, ReplyError) as exc:
                findings.append(Finding(NOTE, f"not played {_on(executor.name)}: {_error(exc)}"))
                continue
            self.played = True
            traces.append(trace)
            findings.append(_history_finding(trace, self.prediction))
        return _feedback(exercise, findings, traces)


FIFTH = FifthHistory()
"""Notebook 04's exercise, for the kernel's whole session."""


def predict_fifth(stamp=None, verdict=None, outcome=None) -> Feedback:
    """Records the prediction for the fifth history: the stamp's process, verdict, outcome."""
    return FIFTH.predict(stamp, verdict, outcome)


def check_history(steps, *, executors: tuple[Executor, ...] | None = None,
                  queue: Queue = EXERCISE_QUEUE) -> Feedback:
    """Plays the learner's fifth history against the recorded prediction (FifthHistory.check)."""
    return FIFTH.check(steps, executors, queue)


# -- 05: promote the replica -------------------------------------------------------------------

PROMOTE_QUEUE = Queue("{promote}")

SETTLE_S = 5.0
"""How long the roles may take to settle once hand_over returns: FAILOVER works in the
background, and a demoted primary syncs from its new primary."""


def _settled(primary, replica) -> tuple[dict, dict]:
    """INFO replication of both servers once the handover is done, or once nothing is moving:
    a FAILOVER under way, or the old primary still syncing from the replica, is moving."""
    import time

    start = time.monotonic()
    while True:
        old, new = primary.client.info("replication"), replica.client.info("replication")
        follows = old["role"] == "slave" and old.get("master_port") == replica.port
        if new["role"] == "master" and follows and old.get("master_link_status") == "up":
            return old, new
        moving = (old.get("master_failover_state", "no-failover") != "no-failover"
                  or (follows and old.get("master_link_status") != "up"))
        waited = time.monotonic() - start
        if waited > SETTLE_S or (not moving and waited > 0.2):
            return old, new
        time.sleep(0.02)


def _holds_the_lease(primary, replica, queue: Queue, job: bytes) -> bool:
    """Whether, within SETTLE_S, the replica holds the lease and the primary counts it online:
    a FAILOVER to a replica it does not yet count so is refused. (A replica is counted from its
    first acknowledgement, sent once a second.)"""
    import time

    def online() -> bool:
        info = primary.client.info("replication")
        return any(info.get(f"slave{i}", {}).get("state") == "online" for i in range(2))

    deadline = time.monotonic() + SETTLE_S
    while replica.client.zscore(queue.active, job) is None or not online():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def _gone(primary, replica) -> str | None:
    """Which server hand_over stopped, if it stopped one; None while both run."""
    stopped = [name for name, server in (("the old primary", primary), ("the replica", replica))
               if not server.running or server.client is None]
    if not stopped:
        return None
    return (f"hand_over stopped {' and '.join(stopped)}: "
            f"{'their processes are' if len(stopped) == 2 else 'its process is'} gone. A "
            "handover keeps both servers running and changes their roles: the replica goes on "
            "as the primary, and the old primary as its replica, in sync with it.")


def _row_changes(row: dict, granted: dict, deadline, granted_deadline) -> list[str]:
    """What differs between the lease as the new primary holds it and as the old primary
    granted it: the row's fields by name, and the deadline in active."""
    changes = [f"its {plain(name)}" for name in sorted(set(row) | set(granted))
               if row.get(name) != granted.get(name)]
    return changes + (["its deadline"] if deadline != granted_deadline else [])


def _follows(info: dict, names: dict) -> str:
    port = info.get("master_port")
    return names.get(port, f"a server on port {port}")


def _roles_problem(old: dict, new: dict, primary, replica) -> str | None:
    """Why the two servers are not a primary (the replica) and its replica (the old primary),
    in sync; None when they are."""
    names = {primary.port: "the old primary", replica.port: "itself"}
    if new["role"] == "master" and old["role"] == "master":
        return ("both servers now answer as primaries. A worker still connected to the old one "
                "could go on extending its lease there, out of the new primary's sight, and the "
                "two datasets drift apart: the old primary has to become the new one's replica.")
    if new["role"] != "master" and old["role"] != "master":
        return (f"neither server answers as a primary: the old primary follows "
                f"{_follows(old, {replica.port: 'the replica', primary.port: 'itself'})}, and "
                f"the replica follows {_follows(new, names)}. One of them has to stop "
                "following anyone.")
    if new["role"] != "master":
        if new.get("master_port") == replica.port:
            return ("the replica now follows itself (the port it is told to follow is its own), "
                    "which never connects: it is still a replica, and the primary still answers "
                    "as the primary.")
        if replica.client.config_get("replica-read-only").get("replica-read-only") == "no":
            return ("the replica accepts writes now (replica-read-only no), but it still follows "
                    "its primary: its next full sync throws away what was written there, and the "
                    "primary still answers as the primary.")
        return ("nothing changed in the roles: the replica still follows the primary (INFO "
                "replication calls a replica role slave, the older word Valkey keeps), and the "
                "primary still answers as one. A handover changes the role of both servers.")
    if old.get("master_port") != replica.port:
        return (f"the replica answers as a primary, but the old primary follows "
                f"{_follows(old, {primary.port: 'itself'})}, not the new primary.")
    if old.get("master_link_status") == "up":
        return None
    return (f"the replica answers as a primary and the old primary follows it, but it had not "
            f"caught up with it within {SETTLE_S:g} s (link {old.get('master_link_status')}).")


def check_promotion(hand_over, queue: Queue = PROMOTE_QUEUE) -> Feedback:
    """The learner's `hand_over(primary, replica)`, given two servers of the lab (each with
    .client, .host and .port), where `replica` follows `primary` and holds a lease `primary`
    granted. Right when, within SETTLE_S of its return, both servers still run, the replica
    answers as a primary, the old primary follows it in sync and refuses the module's verbs, the
    new primary holds the lease's row and deadline byte for byte as the old primary granted them
    (its stamp the old primary's run_id, which is not the new primary's), and the new primary's
    sweep, max_stalled 1, finds the lease exempt. Both servers are started for the check alone,
    and stopped afterwards, however it ends. Whatever hand_over does, the answer is a finding,
    never an exception."""
    import redis

    from .executors import LiveExecutor
    from .histories import JOB, LEASE_MS
    from .server import OwnedServer

    exercise = "hand the primary role to the replica"
    if not callable(hand_over):
        return _feedback(exercise, [Finding(WRONG, f"hand_over is {hand_over!r}: define it as "
                                                   "a function, def hand_over(primary, "
                                                   "replica): ...")])
    # By default a primary waits 5 s for more replicas before a diskless sync, and a replica
    # saves the sync to disk in a thread it looks at once a second; a replica with nothing to
    # lose loads it as it comes. Either server is the other's primary at some point.
    quick_sync = ("--repl-diskless-sync-delay", "0", "--repl-diskless-load", "on-empty-db")
    with OwnedServer(extra_args=quick_sync) as primary, \
            OwnedServer(extra_args=quick_sync) as replica:
        granted = LiveExecutor(primary)
        granted.add(queue, JOB, b"hello")
        granted.claim(queue, LEASE_MS)
        granted_row, granted_deadline = granted.row(queue, JOB), granted.deadline(queue, JOB)
        granted_run_id = granted.run_id
        # The lease reaches the replica in the snapshot of its first sync.
        replica.client.execute_command("REPLICAOF", primary.host, str(primary.port))
        if not _holds_the_lease(primary, replica, queue, JOB):
            raise LabError(f"the replica was not in sync with the lease within {SETTLE_S:g} s. "
                           f"Its log says:\n{replica.log_tail()}")
        try:
            hand_over(primary, replica)
        except Exception as exc:  # the learner's code may raise anything: say what it was
            advice = ("Check which server each command is sent to: a command acts on the server "
                      "that receives it, and a server refuses what its role does not allow."
                      if isinstance(exc, redis.ResponseError) else "Fix it and run the cell "
                      "again.")
            return _feedback(exercise, [Finding(WRONG, f"hand_over raised "
                                                       f"{_error(exc).rstrip('.')}. {advice}")])
        if (gone := _gone(primary, replica)) is None:
            try:
                old, new = _settled(primary, replica)
            except redis.ConnectionError:
                # A server shut down from inside hand_over: its process may end only now.
                gone = _gone(primary, replica) or ("a server stopped answering once hand_over "
                                                   "had returned: a handover keeps both running.")
        if gone is not None:
            return _feedback(exercise, [Finding(WRONG, gone)])
        if (problem := _roles_problem(old, new, primary, replica)) is not None:
            return _feedback(exercise, [Finding(WRONG, problem)])
        findings = [Finding(RIGHT, "the replica answers as a primary, and the old primary "
                                   "follows it, in sync")]
        try:
            LiveExecutor(primary).sweep(queue, 1)
            refused = None
        except ReplyError as refusal:
            refused = refusal.text.split(" ", 1)[0]
        if refused == "READONLY":
            findings.append(Finding(RIGHT, "the old primary answers the sweep with READONLY: no "
                                           "worker can extend a lease there now"))
        elif refused is None:
            findings.append(Finding(WRONG, "the old primary accepted a sweep: it is still "
                                           "writable: a worker could extend a lease there."))
        else:
            findings.append(Finding(WRONG, f"the old primary answers the sweep with {refused}, "
                                           "not READONLY: a replica refuses every write."))
        live = LiveExecutor(replica)
        deadline = live.deadline(queue, JOB)
        if deadline is None:
            findings.append(Finding(WRONG, "the lease the old primary granted is gone from the "
                                           "new primary: the handover lost it"))
            return _feedback(exercise, findings)
        if changes := _row_changes(live.row(queue, JOB), granted_row, deadline, granted_deadline):
            findings.append(Finding(WRONG, f"the lease on the new primary is not the one the old "
                                           f"primary granted: {' and '.join(changes)} changed. A "
                                           "handover moves roles, never rows: the new primary "
                                           "must hold the bytes the old one wrote, stamp "
                                           "included, or its sweep's verdict on the lease says "
                                           "nothing about the handover."))
            return _feedback(exercise, findings)
        stamp = granted_row.get(b"lease_epoch")
        another = stamp == granted_run_id.encode() and live.run_id != granted_run_id
        live.wait_until(deadline)
        exempt = another and live.sweep(queue, 1) == [[JOB], []]
        findings.append(Finding(
            RIGHT if exempt else WRONG,
            "the new primary's sweep, max_stalled 1, sends the old primary's lease back to "
            "pending uncounted: the row's stamp is byte for byte the old primary's run_id, and "
            "the new primary's run_id is another" if exempt else
            "the new primary's sweep did not find the old primary's lease exempt"))
    return _feedback(exercise, findings)
