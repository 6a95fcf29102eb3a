"""Notebook 06, why natively: the run_id race a scripted sweep can lose, and the check of the fix.

A script cannot read the process's run_id the way the module does (once, at load, from the
server itself). A scripted sweep is either handed the run_id by its caller, who read it from
INFO a moment earlier, or reads INFO itself on every call. The first is wrong across a
restart: the caller reads INFO, the server restarts, the script runs on the new process with
the old run_id, and a lease the old process granted looks as if this process granted it. The
lease it harms is the one the epoch exists for: its worker was healthy and extended it just
before the restart, and it ran out only because the server was away; the script counts it as a
stall. `RunIdRace` plays that race one step at a time on a live server, and also on a lease
whose worker really stalled before the restart, where the race counts a stall that happened.
`check_sweep_survives_restart` runs a learner's scripted sweep once without a restart, where
a lease ran out under the live process and the sweep must count the stall and leave every other
row of the queue as the verb leaves it (a lease not yet run out, a lane row, a row counted
before, an exempt row, a ghost), then once with the restart just before each command it sends,
on a healthy worker's lease that runs out across the restart, where the job must come back
uncounted every time: a sweep that never counts, one that reads the run_id a command too early,
and one that moves every member of active by its stamp alone each fail one of them.
"""

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

import redis
from redis.typing import EncodableT, FieldT

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
    not_ours,
)
from trafikey_lab.errors import LabError
from trafikey_lab.executors import Queue
from trafikey_lab.live import scripted
from trafikey_lab.live.executor import LiveExecutor
from trafikey_lab.live.scripted import ScriptedPeer, native_sweep
from trafikey_lab.player import Processes
from trafikey_lab.scripts import source as script_source
from trafikey_lab.stories import JOB
from trafikey_lab.text import plain

__all__ = ["RunIdRace", "check_sweep_survives_restart", "run_lua", "scripted"]


def grant_expired_lease(live: LiveExecutor, queue: Queue, lease_ms: int = 50) -> list:
    """An empty queue, one job claimed natively under the running process, its lease run out
    under that process: its worker stalled under a live server."""
    live.clear(queue)
    live.add(queue, JOB, b"hello")
    claimed = live.claim(queue, lease_ms)
    live.wait_until(claimed[2])
    return claimed


HEALTHY_LEASE_MS = 200
"""The lease a healthy worker holds and extends: long enough that the few commands a step or a
sweep sends before a restart never outlast it, short enough that waiting it out after the
restart costs the learner no noticeable time."""


def grant_healthy_lease(live: LiveExecutor, queue: Queue) -> list:
    """An empty queue, one job claimed natively under the running process, its lease still
    live: its worker is healthy, and `outlast_restart` is what makes the lease run out."""
    live.clear(queue)
    live.add(queue, JOB, b"hello")
    return live.claim(queue, HEALTHY_LEASE_MS)


def outlast_restart(live: LiveExecutor, queue: Queue, attempt: int) -> int:
    """The healthy worker's last extension, then the restart, then the wait until the lease has
    run out: it runs out while the server is away, or under the new process before the worker's
    next extension reaches it (which client reaches a new process first is a race, and here the
    sweep wins). Returns the lease's deadline. Refuses if the extension did not take, since the
    lease would then not be the one this step means to show."""
    if live.extend(queue, JOB, attempt, HEALTHY_LEASE_MS) != 1:
        raise LabError(f"the worker's extension of {JOB.decode()} did not take: the job is no "
                       "longer active under this attempt (a sweep or another claim took it "
                       "since the grant). Run the steps again from the grant.")
    deadline = live.deadline(queue, JOB)
    if deadline is None:
        raise LabError(f"{JOB.decode()} holds no lease in active after its extension: run the "
                       "steps again from the grant.")
    live.restart()
    live.wait_until(deadline)
    return deadline


class RunIdRace:
    """The race, one call per step: grant (a native claim whose worker is healthy), read_run_id
    (the client's INFO), restart (the worker's last extension, the restart, the lease running
    out while the server is away), then sweep with the run_id the client read.
    `grant_stalled` instead grants a lease whose worker stalls before the restart: the same race
    on the lease 04's second boundary is about."""

    def __init__(self, live: LiveExecutor, queue: Queue, max_stalled: int = 1):
        self.live, self.queue, self.max_stalled = live, queue, max_stalled
        self.client_run_id: str | None = None
        self.processes = Processes()
        self.attempt: int | None = None
        """The healthy worker's attempt, which its extension names; None when the lease's worker
        has stalled."""

    def _name(self, run_id) -> str:
        return self.processes(run_id)

    def grant(self) -> str:
        self.processes = Processes()
        self._name(self.live.run_id)
        self.attempt = int(grant_healthy_lease(self.live, self.queue)[1])
        return (f"{JOB.decode()} claimed by {self.stamp()} with a {HEALTHY_LEASE_MS} ms lease; "
                "its worker is healthy and extends it in the restart step")

    def grant_stalled(self) -> str:
        self.processes = Processes()
        self._name(self.live.run_id)
        self.attempt = None
        grant_expired_lease(self.live, self.queue)
        return (f"{JOB.decode()} claimed by {self.stamp()}; its worker stalled, and the lease "
                f"ran out under {self.stamp()}")

    def read_run_id(self) -> str:
        self.client_run_id = self.live.run_id
        return f"the client read INFO server: run_id of {self._name(self.client_run_id)}"

    def restart(self) -> str:
        if self.attempt is None:
            self.live.restart()
            return f"the server restarted: now {self._name(self.live.run_id)} is running"
        outlast_restart(self.live, self.queue, self.attempt)
        return (f"the worker extended its lease on {self.stamp()}, then the server restarted: "
                f"now {self._name(self.live.run_id)} is running, and the lease ran out before "
                "the worker's next extension reached it")

    def sweep_with_client_run_id(self) -> str:
        if self.client_run_id is None:
            raise LabError("the client has read no run_id yet: run read_run_id() first")
        peer = ScriptedPeer(self.live.client)
        reply = peer.sweep(self.queue, self.client_run_id, self.max_stalled)
        return self.outcome("stalled2 with the client's run_id", reply,
                            f"compared with: {self._name(self.client_run_id)}, the run_id the "
                            "client passed")

    def sweep_reading_info(self) -> str:
        reply = ScriptedPeer(self.live.client).sweep_reading_info(self.queue, self.max_stalled)
        return self.outcome("stalled2_info", reply,
                            "compared with: the run_id the script read itself, unseen by the "
                            "client")

    def sweep_natively(self) -> str:
        reply = native_sweep(self.live.client, self.queue, self.max_stalled)
        return self.outcome("EMQ.STALLED.CHECK", reply,
                            "compared with: the run_id the module cached at load, unseen by the "
                            "client")

    def stamp(self) -> str:
        return self._name(self.live.row(self.queue, JOB).get(b"lease_epoch"))

    def outcome(self, who: str, reply, compared: str) -> str:
        """What the sweep did to the job. The processes are named from the client's INFO (the
        one it runs on, the stamp's); `compared` says what the decision compared the stamp
        with, as far as the client can know it: the argument it passed, or that it cannot see."""
        row = self.live.row(self.queue, JOB)
        stalled = row.get(b"stalled", b"absent").decode()
        recovered, dead = reply
        verdict = ("dead-lettered" if JOB in dead else "recovered" if JOB in recovered
                   else "untouched")
        return (f"{who} on {self._name(self.live.run_id)}: {JOB.decode()} {verdict}, "
                f"state {row[b'state'].decode()}, stalled {stalled} "
                f"(stamp: {self.stamp()}; {compared})")


RULES = resources.files("trafikey_lab.scripts").joinpath("common.lua").read_text()
"""The rules every course script starts with (common.lua); a learner's body runs after them."""


def run_lua(client, body: str, keys: list, args: list):
    """Runs `body` as one script (EVAL) on client's server, after the rules every course script
    starts with (common.lua), so that its functions, stalled_sweep(keys, run_id, opts) among
    them, are there for the body to call."""
    return client.eval(RULES + body, len(keys), *keys, *args)


_CALLS_A_VERB = re.compile(r"""redis\s*\.\s*p?call\s*\(\s*['"]emq\.""", re.IGNORECASE)


class _SweepClient(redis.Redis):
    """The client a learner's sweep is given: it sends each command through the course's own
    client and keeps their names; when told to, it calls `restart` (the healthy worker's last
    extension, the restart, the wait until the lease has run out) just before the command
    numbered `restart_before` (0 for the first) goes out. Scripts it sees loaded are kept in
    `loaded`, so that the checker can load them into each new process before a run."""

    def __init__(self, live: LiveExecutor, restart_before: int | None, loaded: set[str],
                 restart: Callable[[], object] | None):
        super().__init__(connection_pool=live.client.connection_pool)
        self._live = live
        self._restart_before = restart_before
        self._restart = restart
        self.loaded = loaded
        self.sent: list[str] = []
        self.restarted_at: int | None = None
        """How many commands had gone out when the server restarted, if it did."""
        self.script_texts: list[str] = []

    def execute_command(self, *args, **options):
        name = plain(args[0]).upper()
        if name == "SCRIPT" and len(args) > 2 and plain(args[1]).upper() == "LOAD":
            self.loaded.add(plain(args[2]))
            self.script_texts.append(plain(args[2]))
        elif name == "EVAL" and len(args) > 1:
            self.script_texts.append(plain(args[1]))
        if self._restart is not None and len(self.sent) == self._restart_before:
            self.restarted_at = len(self.sent)
            self._restart()
        self.sent.append(name)
        return self._live.client.execute_command(*args, **options)


def _load_scripts(live: LiveExecutor, loaded: set[str]) -> None:
    """The course's scripts and every script the sweep has loaded before, in the running
    process's cache: a run then starts as a sweep that has run before does, whatever the last
    restart emptied."""
    for name in ScriptedPeer.NAMES:
        live.client.script_load(script_source(name))
    for text in loaded:
        live.client.script_load(text)


FAR_DEADLINE_MS = 4_000_000_000_000
"""The deadline of the control run's lease that has not run out: in the year 2096, the same in
the verb's run and the learner's, so that their rows compare byte for byte."""

OTHERS = {
    b"job-running": ("a lease this process granted whose deadline has not passed",
                     "a sweep takes only the members of active whose deadline has passed"),
    b"job-lane": ("a lane row (its row has a group field), run out",
                  "the sweep leaves a lane row where it is, untouched"),
    b"job-counted-before": (("a lease this process granted, run out, whose row already says "
                             "stalled 2"),
                            "a counted stall adds one to the stalled count the row holds"),
    b"job-exempt": ("a lease another process granted, run out, whose row says stalled 1",
                    ("a lease another process granted goes back to pending with its stalled "
                     "count untouched")),
    b"job-ghost": ("a member of active with no row (a ghost), run out",
                   "the sweep drops a ghost from active and writes no row"),
}
"""The control run's other rows: what each is, and what the verb does with it (the checker
compares each with the verb's own run on the same rows)."""


def _lay_out_control(live: LiveExecutor, queue: Queue) -> None:
    """The control run's queue: JOB granted natively and run out, as in every run, beside one
    member of active of each other kind the sweep decides (OTHERS), written by the checker."""
    live.clear(queue)
    live.add(queue, JOB, b"hello")
    claimed = live.claim(queue, 50)
    run_id = live.run_id.encode()
    # Typed as redis-py's hset takes a mapping: it refuses a dict[bytes, bytes] (Mapping's key
    # type is invariant).
    lease: dict[FieldT, EncodableT] = {b"state": b"active", b"attempts": b"1", b"payload": b"p",
                                       b"lease_epoch": run_id}
    rows = {
        b"job-running": ({**lease}, FAR_DEADLINE_MS),
        b"job-lane": ({**lease, b"group": b"lane-a"}, 1),
        b"job-counted-before": ({**lease, b"attempts": b"3", b"stalled": b"2"}, 2),
        b"job-exempt": ({**lease, b"lease_epoch": epoch.ZERO, b"stalled": b"1"}, 3),
        b"job-ghost": (None, 4),
    }
    for job, (row, deadline) in rows.items():
        if row is not None:
            live.client.hset(queue.row_key(job), mapping=row)
        live.client.zadd(queue.active, {job: deadline})
    live.wait_until(claimed[2])


@dataclass(frozen=True)
class _Member:
    """Where one job is after a sweep: the sorted sets that hold it, its score in active and in
    pending (a dead member's score is the time it died, which differs between runs), its row."""

    sets: tuple[str, ...]
    scores: tuple
    row: dict


def _member(live: LiveExecutor, queue: Queue, job: bytes) -> _Member:
    named = (("active", queue.active), ("pending", queue.pending), ("dead", queue.dead))
    scores = {name: live.client.zscore(key, job) for name, key in named}
    return _Member(tuple(name for name, _ in named if scores[name] is not None),
                   (scores["active"], scores["pending"]), live.row(queue, job))


@dataclass(frozen=True)
class _Run:
    """One run of the learner's sweep: where the job ended up, where the control run's other
    rows did (empty in a run with a restart), and what the sweep sent."""

    sets: tuple[str, ...]
    row: dict
    others: dict
    client: _SweepClient
    failed: str | None
    """What the sweep did instead of returning (attempts.failed), if it did not return."""


def _run(sweep, live: LiveExecutor, queue: Queue, restart_before: int | None,
         loaded: set[str]) -> _Run:
    control = restart_before is None
    if control:
        _lay_out_control(live, queue)
    _load_scripts(live, loaded)
    restart = None
    if not control:
        attempt = int(grant_healthy_lease(live, queue)[1])
        restart = functools.partial(outlast_restart, live, queue, attempt)
    client = _SweepClient(live, restart_before, loaded, restart)
    outcome = attempts.run(sweep, client, queue, library=(), library_names=set())
    job = _member(live, queue, JOB)
    others = {other: _member(live, queue, other) for other in OTHERS} if control else {}
    return _Run(job.sets, job.row, others, client, attempts.failed(outcome))


def _verbs_control(live: LiveExecutor, queue: Queue) -> dict:
    """The control run's other rows as the verb leaves them, swept with max_stalled 1."""
    _lay_out_control(live, queue)
    native_sweep(live.client, queue, 1)
    return {other: _member(live, queue, other) for other in OTHERS}


def _where(run: _Run) -> str:
    sets = " and ".join(run.sets) if run.sets else "none of the sorted sets"
    return (f"the job is in {sets}, its row says state {plain(run.row.get(b'state'))}, "
            f"stalled {plain(run.row.get(b'stalled'))}")


def _control_problem(run: _Run) -> str | None:
    """What is wrong with the run without a restart, where a sweep must count the stall and,
    at max_stalled 1, dead-letter the job; None when it did."""
    state, stalled = run.row.get(b"state"), run.row.get(b"stalled")
    if run.sets == ("dead",) and state == b"dead" and stalled == b"1":
        return None
    if run.sets == ("active",) and state == b"active":
        return ("with no restart at all, nothing swept the job: its lease has run out and it "
                "is still active. Sweep the queue's keys (active, pending, dead, prefix) with "
                "max_stalled 1.")
    if "active" in run.sets:
        return (f"with no restart at all, {_where(run)}. A sweep moves the job out of active "
                "as well as writing its row: a row that says one thing while the sorted sets "
                "say another is a forgery, and the next claim or sweep goes by the sets.")
    if run.sets == ("pending",) and stalled is None:
        return ("with no restart at all, your sweep sent the job back to pending uncounted, "
                "as if the server had restarted. Its worker stalled under a live server, so "
                "the stall must count, and at max_stalled 1 the job is dead-lettered. A sweep "
                "that never counts passes the restart for the wrong reason.")
    if run.sets == ("pending",):
        return (f"with no restart at all, your sweep counted the stall but kept the job "
                f"(stalled {plain(stalled)}, back in pending): sweep with max_stalled 1, where "
                "the first counted stall dead-letters it.")
    return (f"with no restart at all, {_where(run)}; a sweep at max_stalled 1 leaves it in dead "
            "only, with state dead and stalled 1.")


def _seen(member: _Member) -> str:
    sets = " and ".join(member.sets) if member.sets else "none of the sorted sets"
    if not member.row:
        return f"in {sets}, with no row"
    return (f"in {sets}, its row saying state {plain(member.row.get(b'state'))}, stalled "
            f"{plain(member.row.get(b'stalled'))}")


def _others_problem(run: _Run, expected: dict) -> str | None:
    """The first of the control run's other rows that the learner's sweep left otherwise than
    the verb does, said with what the verb does and why; None when every one matches."""
    for job, (what, rule) in OTHERS.items():
        got, wanted = run.others[job], expected[job]
        if got == wanted:
            continue
        ended = _seen(got)
        if ended == _seen(wanted):
            changed = [f"its {name} score" for name, mine, verbs in
                       zip(("active", "pending"), got.scores, wanted.scores, strict=True)
                       if mine != verbs]
            fields = sorted(set(got.row) | set(wanted.row))
            changed += [f"its row's {plain(field)}" for field in fields
                        if got.row.get(field) != wanted.row.get(field)]
            ended += f", but with {' and '.join(changed)} changed"
        return (f"with no restart at all, {what} ({job.decode()}) ended {ended}; the verb leaves "
                f"it {_seen(wanted)}: {rule}.")
    return None


def _moment(client: _SweepClient) -> str:
    """When the restart came, in the sweep's own commands."""
    at, sent = client.restarted_at, client.sent
    assert at is not None, "asked of a run whose server restarted"
    if at == 0:
        return f"just before your sweep's first command ({sent[0]})"
    return f"between your sweep's command {at} ({sent[at - 1]}) and command {at + 1} ({sent[at]})"


def _restart_problem(run: _Run) -> str | None:
    """What is wrong with a run whose healthy worker's lease ran out across a restart, where the
    job must come back to pending uncounted; None when it did."""
    state, stalled = run.row.get(b"state"), run.row.get(b"stalled")
    if run.sets == ("pending",) and state == b"pending" and stalled is None:
        return None
    if stalled is not None:
        return (f"a restart {_moment(run.client)} was counted as a stall: {_where(run)}. The "
                "job's worker was healthy: it extended the lease just before the restart, and "
                "the lease ran out only because the server was away. Under the new process it "
                "should have been exempt; your sweep charged the worker for the server's "
                "restart.")
    return (f"after a restart {_moment(run.client)}, {_where(run)}: the job should be back in "
            "pending, uncounted.")


def _calls_a_verb(client: _SweepClient) -> bool:
    return (any(name.startswith("EMQ.") for name in client.sent)
            or any(_CALLS_A_VERB.search(text.removeprefix(RULES)) for text in client.script_texts))


MAX_RESTARTS = 12
"""Restart positions tried, one run each: a sweep needs only a few commands."""

EXERCISE = "a scripted sweep that survives a restart"


def check_sweep_survives_restart(sweep, *, live: LiveExecutor | None = None,
                                 queue: Queue = EXERCISE_QUEUE) -> Feedback:
    """Runs `sweep(client, queue)`, meant to sweep the queue with max_stalled 1 as a script, on
    a job whose lease the running process granted.

    First without a restart, on a lease that ran out under the running process, where a right
    sweep counts the stall and dead-letters the job, and leaves each of the other rows laid out
    beside it (OTHERS) as the verb leaves them on the same rows. Then once for each command the
    sweep sends, on a healthy worker's lease: just before that command the worker extends it,
    the server restarts, and the lease runs out before the command goes out; every time, the job
    must come back to pending uncounted. A sweep that calls the
    module's verb is not a script, and is told so."""
    match attempts.screen(sweep, library=(), library_names=set()):
        case attempts.NotAFunction():
            return feedback(EXERCISE, [Finding(WRONG, f"my_sweep is {sweep!r}: define it as a "
                                                      "function, def my_sweep(client, queue): "
                                                      "...")])
    if live is None:
        return feedback(EXERCISE, [Finding(NOTE, "not checked: the check restarts a live "
                                                 "server; pass live=course.live")])
    if not live.server.can_restart:
        return feedback(EXERCISE, [Finding(NOTE, not_ours("not checked", live.server,
                                                          "the check restarts its server"))])
    try:
        return feedback(EXERCISE, [_judge(sweep, live, queue)])
    finally:
        live.clear(queue)


def _judge(sweep, live: LiveExecutor, queue: Queue) -> Finding:
    """The one finding on the sweep: the first problem its runs show, or that it is right."""
    loaded: set[str] = set()
    control = _run(sweep, live, queue, None, loaded)
    if control.failed is not None:
        return Finding(WRONG, f"your sweep {control.failed}. Fix it and run the cell again.")
    if _calls_a_verb(control.client):
        return Finding(WRONG, "your sweep calls the module's verb. The verb survives the "
                              "restart, as the race above showed; this exercise asks for the "
                              "sweep as a script, which has to find the right run_id itself.")
    if (problem := _control_problem(control)) is not None:
        return Finding(WRONG, problem)
    if (problem := _others_problem(control, _verbs_control(live, queue))) is not None:
        return Finding(WRONG, problem)
    tried = 0
    for position in range(MAX_RESTARTS):
        run = _run(sweep, live, queue, position, loaded)
        if run.client.restarted_at is None:
            break
        tried += 1
        if run.failed is not None:
            return Finding(WRONG, f"after a restart {_moment(run.client)}, your sweep "
                                  f"{run.failed}")
        if (problem := _restart_problem(run)) is not None:
            return Finding(WRONG, problem)
    else:
        return Finding(WRONG, f"your sweep sends more than {MAX_RESTARTS} commands, and the "
                              f"first {MAX_RESTARTS} restarts did not trouble it; a sweep needs "
                              "one or two. Make it one script and run the cell again.")
    each = ("just before the one command it sends" if tried == 1
            else f"before each of the {tried} commands it sends, in turn")
    return Finding(RIGHT, "with no restart, your sweep counted the stall and dead-lettered the "
                          f"job, and left the {len(OTHERS)} other rows of the queue as the verb "
                          "leaves them; with the server restarted "
                          f"{each}, it sent the job back to pending uncounted every time.")
