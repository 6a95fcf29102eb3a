"""One lease on a time axis: when it is granted, extended, swept, and when the server restarts.

A history (`histories`) says what happens in which order; a schedule also says when, in
milliseconds from the claim, so that the epoch's boundaries show: a lease that ran out before
a restart and is swept after it, an extension on either side of the restart, a sweep one
millisecond before its deadline or at it, a downtime that outlasts what is left of the lease
or not (for a sweep the downtime holds back).

`decide` is the rule, as a pure function of the schedule: which process stamped the lease,
which one sweeps it, whether the sweep finds it due (`deadline <= now`), the reading and the
outcome, and the outcome without the epoch. `play` runs the same schedule on an executor step
by step, so tests hold `decide` to the model, and the live replay (`LivePlan`) to the module.

Two rules of time the schedule needs and the verbs do not say:
- While the server is down (from the restart for `restart_ms`) no call is served: a call asked
  for then (the worker's extension, the sweep) runs the moment the server is back, as a client
  that retries would.
- Calls that run at the same millisecond, every call held until the end of the downtime
  included, run in one order: the restart, the worker's extension, then the sweep. The claim
  is at 0, before all of them.
"""

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import TypeVar

from trafikey_lab import epoch, player
from trafikey_lab.executors import Executor, Queue
from trafikey_lab.player import Performed, Trace
from trafikey_lab.stories import CLAIMS, EXTENSIONS, GRANTS, STORIES, Action, Story
from trafikey_lab.sweep import Outcome, Reading, count_stall

WORKERS = {"stops": "stops", "extend": "EMQ.EXTEND", "scripted_extend": "extend2"}
"""What the worker does at `worker_at_ms`: stop (it never extends), or extend its lease to
`lease_ms` after the moment the extension runs, with the native verb (which stamps) or the
script (which does not)."""
MOST_MS = 10_000
"""The latest moment a schedule may name: long enough for any boundary, short enough to draw."""


@dataclass(frozen=True)
class Schedule:
    lease_ms: int = 1000
    claim: str = "claim"
    worker: str = "stops"
    worker_at_ms: int = 200
    restarts: bool = True
    restart_at_ms: int = 400
    restart_ms: int = 300
    sweep_at_ms: int = 1500
    max_stalled: int = 1
    stalled_before: int = 0


PRESETS = {key: (STORIES[key].title, schedule) for key, schedule in (
    ("stalled", Schedule(restarts=False)),
    ("restarted", Schedule()),
    ("extended", Schedule(worker="extend", worker_at_ms=800, sweep_at_ms=2000)),
    ("upgrade", Schedule(claim="scripted_claim")),
    ("fifth", Schedule(worker="scripted_extend", worker_at_ms=800, sweep_at_ms=2000)),
)}
"""The dive's four histories and 04's fifth, at times that leave each boundary far away; their
titles are the stories'."""


def problems(schedule: Schedule) -> list[str]:
    """What makes the schedule one the lab cannot play, each with how to fix it; [] if none."""
    found = []
    if schedule.claim not in CLAIMS:
        found.append(f"claim is {schedule.claim!r}: use one of {', '.join(CLAIMS)}")
    if schedule.worker not in WORKERS:
        found.append(f"worker is {schedule.worker!r}: use one of {', '.join(WORKERS)}")
    bounds = (("lease_ms", 1, MOST_MS), ("worker_at_ms", 0, MOST_MS),
              ("restart_at_ms", 0, MOST_MS), ("restart_ms", 0, MOST_MS),
              ("sweep_at_ms", 0, MOST_MS), ("max_stalled", 1, 100), ("stalled_before", 0, 100))
    for name, low, high in bounds:
        value = getattr(schedule, name)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            found.append(f"{name} is {value!r}: make it a whole number from {low} to {high}")
    return found


@dataclass(frozen=True)
class Moment:
    """One call of the schedule: what it is, when the learner put it, when it ran (later only
    while the server was down), and which process served it (1 before the restart, 2 after)."""

    action: str
    asked_ms: int
    at_ms: int
    process: int


def moments(schedule: Schedule) -> tuple[Moment, ...]:
    """The schedule's calls in the order they run, the claim first."""
    down, up = schedule.restart_at_ms, schedule.restart_at_ms + schedule.restart_ms

    def served(action: str, asked: int, rank: int) -> tuple[int, int, Moment]:
        at = up if schedule.restarts and down <= asked < up else asked
        after = schedule.restarts and at >= down
        return at, rank, Moment(action, asked, at, 2 if after else 1)

    # the claim is the origin: a restart at 0 comes just after it
    calls = [(0, 0, Moment(schedule.claim, 0, 0, 1)), served("sweep", schedule.sweep_at_ms, 3)]
    if schedule.restarts:
        calls.append((down, 1, Moment("restart", down, down, 1)))
    if schedule.worker != "stops":
        calls.append(served(schedule.worker, schedule.worker_at_ms, 2))
    return tuple(moment for *_, moment in sorted(calls, key=lambda c: (c[0], c[1])))


@dataclass(frozen=True)
class Decision:
    moments: tuple[Moment, ...]
    deadline_ms: int
    """The lease's deadline when the sweep runs (ms from the claim)."""
    stamp: int | None
    """The process whose stamp the row holds at the sweep (None: no stamp)."""
    sweep: Moment
    extension: str
    """What the worker's extension did: "" (none), "stamped", "moved" (the script: deadline
    only) or "not live" (it replied 0: the sweep had taken the job out of active)."""
    due: bool
    """Whether the sweep finds the lease expired: deadline <= now."""
    reading: Reading
    """exempt or counted; "not read" when the lease was not due (the sweep reads no stamp)."""
    outcome: Outcome
    """recovered, dead, or untouched (not due: the job stays in active)."""
    stalled_after: int
    without_epoch: Outcome
    """The outcome had the sweep counted every expired lease, as a sweep without the epoch
    must."""


def decide(schedule: Schedule) -> Decision:
    """The sweep's reading and outcome for the schedule, by the rule alone."""
    if found := problems(schedule):
        raise ValueError("; ".join(found))
    order = moments(schedule)
    sweep = next(m for m in order if m.action == "sweep")
    deadline = schedule.lease_ms
    stamp: int | None = 1 if schedule.claim == "claim" else None
    extension = ""
    worker = next((m for m in order if m.action in EXTENSIONS), None)
    # the extension counts for the sweep when it runs first; EMQ.EXTEND and extend2 ignore the
    # deadline, so an extension after the deadline but before the sweep still succeeds
    first = worker is not None and order.index(worker) < order.index(sweep)
    if worker is not None and first:
        deadline = worker.at_ms + schedule.lease_ms
        if worker.action == "extend":
            stamp = worker.process
    due = deadline <= sweep.at_ms
    if worker is not None:
        # after a sweep that took the job out of active, the extension finds no lease
        extension = ("not live" if not first and due
                     else "stamped" if worker.action == "extend" else "moved")
    counted = count_stall(_stalled(schedule), schedule.max_stalled)
    if not due:
        return Decision(order, deadline, stamp, sweep, extension, False, Reading.NOT_READ,
                        Outcome.UNTOUCHED, schedule.stalled_before, Outcome.UNTOUCHED)
    exempt = epoch.exempt(None if stamp is None else _run_id(stamp), _run_id(sweep.process))
    if exempt:
        reading, outcome, stalled = Reading.EXEMPT, Outcome.RECOVERED, schedule.stalled_before
    else:
        assert counted.stalled is not None  # stalled_before is a whole number: a counter
        reading, outcome, stalled = Reading.COUNTED, Outcome(counted.kind), counted.stalled
    return Decision(order, deadline, stamp, sweep, extension, True, reading, outcome, stalled,
                    Outcome(counted.kind))


def _stalled(schedule: Schedule) -> bytes | None:
    """The row's stalled field as `play` leaves it: absent unless a count was set."""
    return str(schedule.stalled_before).encode() if schedule.stalled_before else None


def _run_id(process: int) -> bytes:
    """A stand-in run_id per process, so that `decide` reads the stamp with epoch.exempt, the
    comparison the sweep makes."""
    return (b"%d" % process) * 40


def sentence(schedule: Schedule, decision: Decision | None = None) -> str:
    """The schedule's story in one sentence whose numbers are the schedule's: "the lease ran
    out at 1000 ms, 300 ms after the server came back; process 2 swept it at 1500 ms and found
    the stamp of process 1: exempt, back to pending uncounted (stalled not written)"."""
    d = decision or decide(schedule)
    sweep = d.sweep
    worker = next((m for m in d.moments if m.action in EXTENSIONS), None)
    after = worker is not None and worker.at_ms > sweep.at_ms
    parts = [_extension_clause(schedule, d)] if worker is not None and not after else []
    then = f"; then {_extension_clause(schedule, d)}" if after else ""
    late = (f" (asked for {sweep.asked_ms} ms, while the server was down)"
            if sweep.asked_ms != sweep.at_ms else "")
    if not d.due:
        parts.append(f"process {sweep.process} swept at {sweep.at_ms} ms{late}, "
                     f"{d.deadline_ms - sweep.at_ms} ms before the deadline at {d.deadline_ms} "
                     "ms")
        return ("; ".join(parts) + ": the lease is not due, so the sweep reads no stamp and the "
                "job stays in active, untouched" + then)
    stamp = "no stamp" if d.stamp is None else f"the stamp of process {d.stamp}"
    parts.append(f"the lease ran out at {d.deadline_ms} ms{_ran_out(schedule, d.deadline_ms)}")
    parts.append(f"process {sweep.process} swept it at {sweep.at_ms} ms{late} and found {stamp}")
    head = "; ".join(parts)
    if d.reading == "exempt":
        kept = (f"stalled stays {d.stalled_after}" if schedule.stalled_before
                else "stalled not written")
        return f"{head}: exempt, back to pending uncounted ({kept}){then}"
    if d.outcome == "dead":
        return (f"{head}: counted, stalled {schedule.stalled_before} → {d.stalled_after}, not "
                f"below max_stalled {schedule.max_stalled}: dead{then}")
    return (f"{head}: counted, stalled {schedule.stalled_before} → {d.stalled_after}, below "
            f"max_stalled {schedule.max_stalled}: back to pending{then}")


def _extension_clause(schedule: Schedule, d: Decision) -> str:
    worker = next(m for m in d.moments if m.action in EXTENSIONS)
    verb = WORKERS[worker.action]
    at = f"{verb} at {worker.at_ms} ms"
    if worker.asked_ms != worker.at_ms:
        at += f" (asked for {worker.asked_ms} ms, while the server was down)"
    if d.extension == "not live":
        return f"{at} found the job no longer in active and replied 0"
    kept = ("wrote no stamp: the row still has none" if d.stamp is None
            else f"left the stamp of process {d.stamp}")
    if d.extension == "stamped":
        kept = f"stamped the row with process {worker.process}"
    if worker.at_ms > d.sweep.at_ms:
        return (f"{at} extended the lease the sweep had left, to "
                f"{worker.at_ms + schedule.lease_ms} ms, and {kept}")
    return f"{at} set the deadline to {d.deadline_ms} ms and {kept}"


def _ran_out(schedule: Schedule, deadline: int) -> str:
    if not schedule.restarts:
        return ""
    down, up = schedule.restart_at_ms, schedule.restart_at_ms + schedule.restart_ms
    if deadline == down:
        return ", the moment the server went down"
    if deadline < down:
        return f", {down - deadline} ms before the restart"
    if deadline < up:
        return f", {deadline - down} ms into the restart's downtime"
    if deadline == up:
        return ", the moment the server came back"
    return f", {deadline - up} ms after the server came back"


# -- playing a schedule -----------------------------------------------------------------------


class Timer:
    """When each moment runs on an executor: the model's clock is set to it; `LivePlan` waits
    for the live server's."""

    def start(self, executor: Executor, queue: Queue) -> None:
        self.origin = executor.now_ms()

    def lease_ms(self, schedule: Schedule, moment: Moment) -> int:
        """The lease argument of the grant made at this moment."""
        return schedule.lease_ms

    def wait(self, executor: Executor, moment: Moment, deadline_ms: int | None) -> None:
        """Until the moment's time from the claim, on the executor's own clock: the model's is
        moved there at once; a live one is waited for, at the schedule's own times (which a
        real restart may outlast: `play_live`'s plan keeps the order instead)."""
        executor.wait_until(self.origin + moment.at_ms - 1)

    def granted(self, executor: Executor, moment: Moment, deadline_ms: int | None) -> None:
        """Called after each call, with the lease's deadline then."""


E = TypeVar("E", bound=Executor)
"""The executor a schedule plays on: before_sweep is handed that same one (a widget gives
the model and reads its plan of the sweep)."""


class _Timed(player.Clock):
    """The player's clock for a schedule: the story's steps after `add` (and the `stalled`
    count) are the schedule's moments, each waited for on `timer` and named with its time."""

    def __init__(self, schedule: Schedule, timer: Timer, order: tuple[Moment, ...],
                 first: int) -> None:
        self.schedule, self.timer, self.first = schedule, timer, first
        self.moments = {first + n: moment for n, moment in enumerate(order)}
        self.stalled_before = schedule.stalled_before

    def wait(self, index: int, executor: Executor, queue: Queue) -> None:
        if (moment := self.moments.get(index)) is None:
            return
        if index == self.first:  # the claim: the origin of every other moment
            self.timer.start(executor, queue)
        else:
            self.timer.wait(executor, moment, executor.deadline(queue, player.JOB))

    def lease_ms(self, index: int, lease_ms: int) -> int:
        moment = self.moments.get(index)
        if moment is None or moment.action not in GRANTS:
            return 0
        return self.timer.lease_ms(self.schedule, moment)

    def name(self, index: int, action: str, done: Performed, lease_ms: int,
             max_stalled: int) -> str:
        s, moment = self.schedule, self.moments.get(index)
        if moment is None:
            return (f"HSET stalled {s.stalled_before}" if action == Action.STALLED
                    else player.call_text(action, done, lease_ms=0, max_stalled=max_stalled))
        if action == Action.RESTART:
            return f"restart at {moment.at_ms} ms for {s.restart_ms} ms"
        if action in EXTENSIONS:
            return (f"{WORKERS[action]} at {moment.at_ms} ms, attempt {done.attempt}, lease "
                    f"{s.lease_ms} ms")
        if action == Action.SWEEP:
            return f"EMQ.STALLED.CHECK at {moment.at_ms} ms, max_stalled {s.max_stalled}"
        return player.call_text(action, done, lease_ms=s.lease_ms, max_stalled=max_stalled)

    def after(self, index: int, executor: Executor, queue: Queue) -> None:
        if (moment := self.moments.get(index)) is not None:
            self.timer.granted(executor, moment, executor.deadline(queue, player.JOB))


def play(schedule: Schedule, executor: E, queue: Queue = player.QUEUE,
         clock: Timer | None = None,
         before_sweep: Callable[[E], object] | None = None) -> Trace:
    """Plays the schedule from an empty queue, one call at its time, and returns its trace:
    the player's loop over the schedule's moments, with `clock` for their times.

    before_sweep, if given, is called with the executor just before the sweep runs (the
    widget takes the model's read pass there)."""
    if found := problems(schedule):
        raise ValueError("; ".join(found))
    order = moments(schedule)
    setup = (Action.ADD, Action.STALLED) if schedule.stalled_before else (Action.ADD,)
    story = Story("schedule", "your schedule", (*setup, *(m.action for m in order)),
                  sentence(schedule))

    def progress(index: int, count: int, action: str) -> None:
        if action == Action.SWEEP and before_sweep is not None:
            before_sweep(executor)

    timed = _Timed(schedule, clock or Timer(), order, len(setup))
    return player.play(story, schedule.max_stalled, executor, queue, schedule.lease_ms,
                       progress=progress, clock=timed)


# -- the live replay --------------------------------------------------------------------------


def key_times(schedule: Schedule) -> list[int]:
    """Every moment that orders the story: the calls as they run, and each deadline."""
    order = moments(schedule)
    times = {m.at_ms for m in order} | {schedule.lease_ms}
    times |= {m.at_ms + schedule.lease_ms for m in order if m.action in EXTENSIONS}
    if schedule.restarts:
        times |= {schedule.restart_at_ms, schedule.restart_at_ms + schedule.restart_ms}
    return sorted(times)


class LivePlan(Timer):
    """The schedule replayed on a live server within about `budget_ms` of real time.

    A real server cannot honour every time: waits overshoot by a few ms, a call takes its round
    trip, and a restart takes what it takes (about a quarter of a second here). So the replay
    keeps the order of every moment and nothing finer. The restart is given at least
    `restart_slot_ms` (its downtime stretched to it, or that long inserted after a restart with
    no downtime), so that the real restart ends within it; a schedule that would then take
    longer than the budget is shrunk by one factor (a shorter one plays at its own pace); and
    any gap outside the downtime shorter than `min_gap_ms`, before or after shrinking, is
    widened to it, so that no overshoot can swap two moments. A sweep the schedule puts at or
    after its deadline waits, live, for the deadline the server wrote. The reading and outcome
    depend only on the order, so the scaling cannot change them; `held` checks afterwards that
    the live run kept that order, and `report` says what was done."""

    def __init__(self, schedule: Schedule, budget_ms: int = 3000, min_gap_ms: int = 60,
                 restart_slot_ms: int = 900):
        self.schedule = schedule
        self.min_gap_ms = min_gap_ms
        times = key_times(schedule)
        down, up = schedule.restart_at_ms, schedule.restart_at_ms + schedule.restart_ms
        downtime = schedule.restart_ms if schedule.restarts else 0
        least = restart_slot_ms if schedule.restarts else 0

        def inside(a: int, b: int) -> bool:
            return schedule.restarts and down <= a and b <= up and a < b

        span = sum(b - a for a, b in pairwise(times) if not inside(a, b))
        self.factor = min(1.0, budget_ms / (span + downtime)) if span + downtime else 1.0
        if downtime * self.factor < least:  # the restart's slot is fixed: shrink the rest
            self.factor = min(1.0, max(budget_ms - least, 0) / span) if span else 1.0
        self.scaled_downtime_ms = round(downtime * self.factor)
        self.slot_ms = max(least, self.scaled_downtime_ms)
        self.widened = 0
        self.live = {times[0]: 0.0}
        for a, b in pairwise(times):
            if inside(a, b):
                gap = self.slot_ms * (b - a) / downtime
            else:
                gap = (b - a) * self.factor
                if gap < min_gap_ms:
                    gap, self.widened = float(min_gap_ms), self.widened + 1
                if schedule.restarts and downtime == 0 and a == down:
                    gap += self.slot_ms  # the restart itself, which the schedule gives no time
            self.live[b] = self.live[a] + gap
        self.due = decide(schedule).due
        self.origin = self._now = 0
        self.restart_took_ms: int | None = None
        self.swept_due: bool | None = None
        """Whether the live sweep found the lease due, by its reply (None: not replayed)."""

    def at(self, schedule_ms: int) -> int:
        """A key time of the schedule as ms from the live claim."""
        return round(self.live[schedule_ms])

    @property
    def total_ms(self) -> int:
        """The replay's length: its last moment, or the end of a restart with no downtime that
        comes last."""
        end = max(self.live.values())
        s = self.schedule
        if s.restarts and s.restart_ms == 0:
            end = max(end, self.live[s.restart_at_ms] + self.slot_ms)
        return round(end)

    def start(self, executor: Executor, queue: Queue) -> None:
        """Nothing yet: the deadline the claim writes anchors the plan (`granted`)."""

    def lease_ms(self, schedule: Schedule, moment: Moment) -> int:
        if moment.action in CLAIMS:
            return max(self.at(schedule.lease_ms), 1)
        # an extension's deadline is planned from the claim; the call runs a little late
        return max(self.origin + self.at(moment.at_ms + schedule.lease_ms) - self._now, 1)

    def wait(self, executor: Executor, moment: Moment, deadline_ms: int | None) -> None:
        target = self.origin + self.at(moment.at_ms)
        s = self.schedule
        if s.restarts and s.restart_ms == 0 and moment.process == 2 \
                and moment.at_ms == s.restart_at_ms:
            target += self.slot_ms  # served after a restart with no downtime: wait for it
        if moment.action == "sweep" and self.due and deadline_ms is not None:
            target = max(target, deadline_ms)
        executor.wait_until(target - 1)
        self._now = executor.now_ms()

    def granted(self, executor: Executor, moment: Moment, deadline_ms: int | None) -> None:
        """After a call: the claim anchors the plan on the deadline the server wrote; the
        restart's length is measured."""
        if moment.at_ms == 0 and moment.action in CLAIMS and deadline_ms is not None:
            self.origin = deadline_ms - self.at(self.schedule.lease_ms)
        if moment.action == "restart":
            self.restart_took_ms = executor.now_ms() - self._now

    def held(self) -> bool:
        """Whether the live run kept the schedule's order where the reading and outcome look:
        the sweep found the lease due exactly when the schedule says so, and the restart ended
        within its slot."""
        if self.swept_due is None:
            return False
        in_slot = self.restart_took_ms is None or self.restart_took_ms <= self.slot_ms
        return self.swept_due == self.due and in_slot

    def report(self) -> str:
        """How the replay scaled or stretched the schedule, in one paragraph."""
        s = self.schedule
        planned = key_times(s)[-1]
        parts = [f"the schedule's {planned} ms laid out over {self.total_ms} ms of real time"]
        stretched = s.restarts and self.slot_ms > self.scaled_downtime_ms
        if self.factor < 1:
            parts.append(f"every gap scaled by {self.factor:.2f}" + (
                f", the downtime included ({s.restart_ms} ms → {self.slot_ms} ms)"
                if s.restarts and s.restart_ms and not stretched else
                ", the downtime aside" if s.restarts and s.restart_ms else ""))
        if self.widened:
            gaps = "gap" if self.widened == 1 else "gaps"
            parts.append(f"{self.widened} {gaps} shorter than {self.min_gap_ms} ms widened to "
                         f"{self.min_gap_ms} ms")
        if s.restarts:
            took = ("" if self.restart_took_ms is None
                    else f"; the restart took {self.restart_took_ms} ms")
            why = "so that a real restart (about a quarter of a second here) ends within it"
            if s.restart_ms == 0:
                later = any(m.process == 2 for m in moments(s))
                parts.append(f"the restart, which the schedule gives no downtime, given "
                             f"{self.slot_ms} ms, {why}"
                             + (": the calls after it wait for that" if later else "") + took)
            elif stretched:
                parts.append(f"the downtime of {s.restart_ms} ms stretched to {self.slot_ms} ms, "
                             f"{why}{took}")
            elif self.factor == 1:
                parts.append(f"the downtime played at its {s.restart_ms} ms{took}")
            elif took:
                parts.append(took.removeprefix("; "))
        if self.swept_due is None:
            return "; ".join(parts) + ". Not replayed yet."
        order = ("every moment kept its order, which is all the reading and outcome depend on"
                 if self.held() else
                 "the live timing did NOT keep the schedule's order (a call or the restart ran "
                 "late): the comparison below does not test the rule; press Run live again")
        return "; ".join(parts) + ". " + order[0].upper() + order[1:] + "."


def play_live(schedule: Schedule, executor: Executor, queue: Queue = player.QUEUE,
              **plan: int) -> tuple[Trace, LivePlan]:
    """The schedule on a live executor at its replay's times; returns the trace and the plan,
    whose `report` says how it was scaled and whether the order held."""
    live = LivePlan(schedule, **plan)
    trace = play(schedule, executor, queue, clock=live)
    live.swept_due = trace.due
    return trace, live
