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

VERDICTS = ("exempt", "recovered", "dead")
BOUNDARY_CASES = 12


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


def _module_verdict(stamp: bytes | None, run_id: bytes, stalled: int | None, max_stalled: int) -> str:
    row = {b"state": b"active", b"attempts": b"1"}
    if stamp is not None:
        row[b"lease_epoch"] = stamp
    if stalled is not None:
        row[b"stalled"] = b"%d" % stalled
    return decide_row(run_id, max_stalled, row)[0].kind


def check_sweep_prediction(predict, seed: int | None = None) -> Feedback:
    """Runs the learner's `predict(lease_epoch, run_id, stalled, max_stalled)` (lease_epoch
    bytes or None when the row has none, run_id the sweeping process's bytes, stalled the row's
    count before the sweep or None when absent) over the boundary cases and fresh random ones,
    and compares each answer, "exempt", "recovered" or "dead", with the model's sweep."""
    import secrets

    exercise = "predict what the sweep does with one expired lease"
    if not callable(predict):
        return _feedback(exercise, [Finding(WRONG, f"{predict!r} is not a function: define "
                                            "predict(lease_epoch, run_id, stalled, max_stalled)")])
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
        expected = _module_verdict(stamp, run_id, stalled, max_stalled)
        try:
            answer = predict(stamp, run_id, stalled, max_stalled)
        except Exception as exc:
            wrong.append(f"{what}: your function raised {_error(exc)}; it must answer every "
                         "row, an absent field included")
            continue
        if answer not in VERDICTS:
            wrong.append(f"{what}: it answered {answer!r}; answer one of "
                         f"{', '.join(map(repr, VERDICTS))}")
        elif answer != expected:
            wrong.append(f"{what}: you said {answer}, the sweep says {expected}")
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
_LIBRARY_CHECKS = {"valid_run_id", "shape_problem", "trafikey_valid_run_id"}


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


def _borrowed(candidate) -> str | None:
    """The library's own shape check, when the candidate hands the question to it: by being
    it, or by naming it in its code (a name the learner defined themselves does not count)."""
    import types

    library = (epoch.valid_run_id, epoch.shape_problem, native.valid_run_id)
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
        if name in _LIBRARY_CHECKS and value is None:
            return name
    return None


def _as_verdict(answer) -> bool | None:
    """True or False, or the C's int 1 or 0; None for anything else."""
    if isinstance(answer, bool):
        return answer
    if type(answer) is int and answer in (0, 1):
        return bool(answer)
    return None


def _ask(candidate, value: bytes) -> tuple[bool | None, str]:
    """The candidate's verdict on value, or None and what it did instead."""
    try:
        answer = candidate(value)
    except Exception as exc:  # the learner's code may raise anything: say what it was
        return None, f"raised {_error(exc)}"
    verdict = _as_verdict(answer)
    return verdict, "" if verdict is not None else f"returned {answer!r}"


def check_shape_check(candidate, rng=None) -> Feedback:
    """Runs the learner's `candidate(value: bytes) -> bool` (or 1/0, as the C returns) over
    SHAPE_CASES and over values made up for this run (`rng`, a random.Random; a fresh one
    when not given), and compares each answer with the module's own C shape check,
    trafikey_valid_run_id."""
    import random

    exercise = ("the shape check, on the dive's test values, the shortcuts' traps and made-up "
                "values")
    if not callable(candidate):
        return _feedback(exercise, [Finding(WRONG, f"{candidate!r} is not a function: define "
                                            "one that takes bytes and returns True or False")])
    if (name := _borrowed(candidate)) is not None:
        return _feedback(exercise, [Finding(WRONG, f"your check hands the question to the "
                                            f"library's own {name}: write the test yourself, "
                                            "from the C function above")])
    findings, agreed = [], []
    for name, value in SHAPE_CASES.items():
        expected = native.valid_run_id(value)
        why = epoch.shape_problem(value) or "40 bytes, each one of 0-9 a-f"
        verdict, instead = _ask(candidate, value)
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
    findings.append(_made_up_finding(candidate, made_up_values(rng or random.Random())))
    return _feedback(exercise, findings)


def _made_up_finding(candidate, made_up: dict[str, list[bytes]]) -> Finding:
    """One finding for the made-up values, in words that do not depend on the values drawn."""
    counts, instead, missed = [], "", 0
    for kind, values in made_up.items():
        right = 0
        for value in values:
            verdict, did = _ask(candidate, value)
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

EXERCISE_JOB = "job-1"
RESTART_MS = 2_000
"""How long the model's restart takes, so that an extension after it moves the deadline."""


@dataclass(frozen=True)
class _Lease:
    stamp: bytes | None
    deadline: int | None
    attempts: bytes | None
    state: bytes | None


def _lease(executor: Executor, queue: Queue) -> _Lease:
    row = executor.row(queue, EXERCISE_JOB)
    return _Lease(row.get(b"lease_epoch"), executor.deadline(queue, EXERCISE_JOB),
                  row.get(b"attempts"), row.get(b"state"))


def _move_findings(executor: Executor, reply, before: _Lease, after: _Lease) -> list[Finding]:
    where = _on(executor.name)
    current = executor.run_id.encode()
    moved = after.deadline != before.deadline
    if after.state != b"active" or after.attempts != before.attempts or after.deadline is None:
        return [Finding(WRONG, f"{where}: job-1 is no longer the same lease (state "
                               f"{plain(after.state)}, attempts {plain(after.attempts)}); "
                               "extend the worker's lease, do not end it or claim again")]
    if after.stamp == current and moved:
        return [Finding(RIGHT, f"{where}: the reply was {reply!r}, the deadline moved and the "
                               "stamp now names the process that runs the server: a sweep "
                               "after this would count the lease")]
    if after.stamp == current:
        return [Finding(WRONG, f"{where}: the stamp names this process but the deadline did not "
                               "move, so no lease was granted or extended: only a grant or an "
                               "extension should write lease_epoch")]
    if moved:
        return [Finding(WRONG, f"{where}: the deadline moved but the stamp still names the "
                               "process before the restart: a script (extend2) extends without "
                               "writing lease_epoch; use a native verb")]
    if reply == 0 or reply == []:
        return [Finding(WRONG, f"{where}: the reply was {reply!r}: the lease is not live for the "
                               f"attempt you named; the row says attempts "
                               f"{plain(after.attempts)} (claims count from 1)")]
    return [Finding(WRONG, f"{where}: nothing changed: the stamp still names the process before "
                           "the restart; call one of the verbs that write it")]


def check_lease_move(move, executors: tuple[Executor, ...] | None = None,
                     queue: Queue = EXERCISE_QUEUE) -> Feedback:
    """On each executor (a fresh model when none is given): job-1 is claimed with a one-minute
    lease and the server restarts; then `move(executor, queue)` runs. Right when afterwards
    the same lease (state active, attempts 1) has a later deadline and a stamp naming the
    process that runs now."""
    exercise = "move job-1's lease to the process that runs after the restart"
    if not callable(move):
        return _feedback(exercise, [Finding(WRONG, f"{move!r} is not a function: define one "
                                            "that takes (executor, queue)")])
    findings = []
    for executor in executors or (ModelExecutor(),):
        try:
            executor.clear(queue)
            executor.add(queue, EXERCISE_JOB, b"resize photo 1")
            executor.claim(queue, 60_000)
            executor.restart()
        except LabError as exc:
            findings.append(Finding(NOTE, f"not checked {_on(executor.name)}: {exc}"))
            continue
        if isinstance(executor, ModelExecutor):
            # A restart takes a moment; the model's clock moves only when told.
            executor.advance(RESTART_MS)
        before = _lease(executor, queue)
        try:
            reply = move(executor, queue)
        except ReplyError as refusal:
            findings.append(Finding(WRONG, f"{_on(executor.name)}: refused with "
                                           f"{refusal.text}; a refusal writes nothing"))
            executor.clear(queue)
            continue
        except Exception as exc:
            findings.append(Finding(WRONG, f"{_on(executor.name)}: your function raised "
                                           f"{_error(exc)}"))
            executor.clear(queue)
            continue
        findings += _move_findings(executor, reply, before, _lease(executor, queue))
        executor.clear(queue)
    return _feedback(exercise, findings)


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


_STOP_ADVICE = {
    "type": "To stop at the type, give no row at all (None): a ghost",
    "group": "To stop at group, give a hash with a group field (any value, even empty)",
    "lease_epoch": ("To stop at lease_epoch, give a hash without group whose lease_epoch is "
                    "missing or another process's (forty 0s, say)"),
    "stalled": ("To stop at stalled, give a hash without group whose lease_epoch is "
                "THIS_PROCESS, so that the lease is counted"),
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
        "lease_epoch": "its lease_epoch is missing or another process's: exempt",
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
    stored = {}
    for read in READS:
        if read not in rows:
            continue
        try:
            stored[read] = _row_bytes(rows[read], run_id)
        except ValueError as exc:
            findings.append(Finding(WRONG, f"{read}: {exc}"))
            continue
        if isinstance(rows[read], dict) and any(
                value in (epoch.NOW, epoch.NOW.decode()) for value in rows[read].values()):
            findings.append(Finding(WRONG, f"{read}: NOW is the model's run_id, not every "
                                           "server's: write THIS_PROCESS for the run_id of the "
                                           "server that sweeps"))
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


def _fifth_problems(steps) -> list[str]:
    """What keeps `steps` from being the fifth history: a native claim, a restart, a scripted
    extension after it, then the lease runs out and the sweep runs."""
    if not isinstance(steps, (tuple, list)) or not all(isinstance(s, str) for s in steps):
        return [f"steps is {steps!r}: make it a tuple of step names, such as "
                "(\"add\", \"claim\", ...)"]
    problems = [f"{s!r} is not a step: use one of {', '.join(ACTIONS)}"
                for s in steps if s not in ACTIONS]
    if problems:
        return problems
    steps = list(steps)
    if steps[:2] != ["add", "claim"]:
        problems.append("start with \"add\" and then the native claim, \"claim\"")
    if "restart" not in steps:
        problems.append("the server must restart after the claim: add \"restart\"")
    elif "scripted_extend" not in steps[steps.index("restart"):]:
        if "extend" in steps[steps.index("restart"):]:
            problems.append("\"extend\" is the native EMQ.EXTEND (that is the dive's *extended* "
                            "history); the fifth extends with the script: \"scripted_extend\"")
        else:
            problems.append("after the restart the worker extends with the script: add "
                            "\"scripted_extend\" after \"restart\"")
    if steps[-2:] != ["expire", "sweep"]:
        problems.append("end with \"expire\" (the lease runs out) and then \"sweep\"")
    if steps.count("restart") > 1 or steps.count("sweep") != 1 or steps.count("expire") != 1:
        problems.append("one restart, one expire and one sweep")
    return problems


def check_history(steps, prediction, executors: tuple[Executor, ...] | None = None,
                  queue: Queue = Queue("{lease}")) -> Feedback:
    """The learner's fifth history and their prediction ("counted" or "exempt"). Plays it
    only once both are given, at max_stalled 1, on each executor (a fresh model when none is
    given), and says whether the prediction held and why."""
    exercise = f"a fifth history: {FIFTH_TITLE}"
    findings = [Finding(WRONG, p) for p in _fifth_problems(steps)]
    if prediction not in ("counted", "exempt"):
        findings.append(Finding(WRONG, f"prediction is {prediction!r}: write \"counted\" or "
                                       "\"exempt\" before anything is played"))
    if findings:
        return _feedback(exercise, findings)
    history = History("fifth", FIFTH_TITLE, tuple(steps), "")
    traces = []
    for executor in executors or (ModelExecutor(),):
        try:
            trace = play(history, FIFTH_MAX_STALLED, executor, queue)
        except LabError as exc:
            findings.append(Finding(NOTE, f"not played {_on(executor.name)}: {exc}"))
            continue
        traces.append(trace)
        findings.append(_history_finding(trace, prediction))
    return _feedback(exercise, findings, traces)


def _history_finding(trace: Trace, prediction: str) -> Finding:
    seen = (f"{_on(trace.executor)}: the stamp names {trace.process_name(trace.lease_epoch)}, "
            f"the sweep runs in {trace.process_name(trace.sweep_run_id)}: {trace.verdict}, so "
            f"{trace.outcome}")
    why = ("extend2 moved the deadline but wrote no stamp, so the stamp still names the process "
           "that granted the claim, before the restart"
           if trace.exempt else "the stamp names the process that sweeps")
    if prediction == trace.verdict:
        return Finding(RIGHT, f"{seen}, as you predicted: {why}")
    return Finding(WRONG, f"{seen}, not {prediction}: {why}")


# -- 05: promote the replica -------------------------------------------------------------------

PROMOTE_QUEUE = Queue("{promote}")


def check_promotion(promote, server) -> Feedback:
    """The learner's `promote(client)`, which should make the replica that client talks to a
    primary. Run on a fresh replica of `server` holding one lease `server` granted; right when
    the replica answers as a primary with its own run_id and its sweep finds the lease exempt."""
    from .caveats import unavailable
    from .beyond import JOB, LEASE_MS, replica_of
    from .executors import LiveExecutor

    exercise = "promote the replica"
    if not callable(promote):
        return _feedback(exercise, [Finding(WRONG, f"promote is {promote!r}: define it as a "
                                                   "function, def promote(client): ...")])
    if (refused := unavailable(server, "a replica")) is not None:
        return _feedback(exercise, [Finding(NOTE, refused.lines[0])])
    primary = LiveExecutor(server)
    primary.clear(PROMOTE_QUEUE)
    primary.add(PROMOTE_QUEUE, JOB, b"hello")
    primary.claim(PROMOTE_QUEUE, LEASE_MS)
    findings = []
    try:
        with replica_of(server) as replica:
            try:
                promote(replica.client)
            except Exception as exc:  # the learner's code may raise anything: say what it was
                return _feedback(exercise, [Finding(WRONG, f"promote raised {_error(exc).rstrip('.')}: "
                                                           "send the command that makes a "
                                                           "replica stop following its primary")])
            info = replica.client.info("replication")
            if info["role"] != "master":
                return _feedback(exercise, [Finding(
                    WRONG, f"the replica still answers role {info['role']}: it follows its "
                           "primary until it is told to follow no one (REPLICAOF NO ONE)")])
            findings.append(Finding(RIGHT, "the replica now answers role master"))
            findings.append(Finding(
                RIGHT if replica.run_id != server.run_id else WRONG,
                "its run_id is its own, not the old primary's"))
            live = LiveExecutor(replica)
            live.wait_until(live.deadline(PROMOTE_QUEUE, JOB))
            exempt = live.sweep(PROMOTE_QUEUE, 1)[0] == [JOB]
            findings.append(Finding(
                RIGHT if exempt else WRONG,
                "its sweep, max_stalled 1, sends the old primary's lease back to pending "
                "uncounted: the stamp names another process" if exempt else
                "its sweep did not find the old primary's lease exempt"))
    finally:
        primary.clear(PROMOTE_QUEUE)
    return _feedback(exercise, findings)
