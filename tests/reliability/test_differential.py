"""The model and the module, side by side, on random sequences of calls.

A hypothesis state machine drives a ModelExecutor and a LiveExecutor (RDB or AOF server) with
the same calls: adds, native and scripted claims, extensions by the right and by stale
workers, batch extensions, sweeps with random budgets and limits, restarts, waits past
deadlines, and injected oddities (ghosts, lane rows, rows of the wrong type, fields that are
not integers, foreign and own stamps, a declared key of the wrong type). After every step
the replies, the whole datasets and the module's counters (INFO trafikey: sweeps, members by
verdict, refusals by verb) must be equal, with run_ids compared by process; after every
restart the new process's counters must be zero.

Profiles: `trafikey-default` (300 sequences of up to 10 steps) for `make test`,
`trafikey-soak` (TRAFIKEY_SOAK=1, `make soak`) for long runs.
"""

from typing import ClassVar

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from trafikey_lab import Queue, epoch
from trafikey_lab.model import ZSet

from .conftest import FIGURES, SOAK, profile
from .lockstep import RUNGS, WITNESS, Pair

QUEUE = Queue("{jobs}")
JOBS = [b"a", b"b", b"c", b"\xff\x00j"]
"""Few ids, so that claims, ghosts and oddities keep meeting the same rows (one binary)."""
RESTARTS_PER_SEQUENCE = 4 if SOAK else 1
jobs = st.sampled_from(JOBS)
leases = st.integers(1, 50)
budgets = st.integers(1, 3)
limits = st.none() | st.integers(1, 3)
NOT_INTEGERS = [b"x", b"", b"-1", b"01", b"1.5", b" 1", b"%d" % 2**53]
FOREIGN_STAMPS = [b"", b"f" * 40, epoch.NOW[:39], b"\x00" * 40]
"""Stamps no executor ever draws as a run_id (the model draws NOW, forty 0s, 0…01, …)."""


def attempts_of(pair, job) -> int:
    """The row's attempts as the model holds it (the datasets are equal), 0 when unusable."""
    row = pair.model.server.store.data.get(QUEUE.row_key(job))
    value = row.get(b"attempts") if isinstance(row, dict) else None
    number = epoch.counter(value) if value is not None else 0
    return number or 0


class Differential(RuleBasedStateMachine):
    # set once per test run by the test that drives the machine: the servers its runs share
    servers: ClassVar[dict] = {}

    @initialize(persistence=st.sampled_from(["rdb", "aof"]))
    def start(self, persistence):
        self.pair = Pair(self.servers[persistence])
        self.restarts = 0
        FIGURES["differential sequences"] += 1
        FIGURES[f"differential sequences on {persistence}"] += 1

    def teardown(self):
        if hasattr(self, "pair"):
            FIGURES["differential steps"] += self.pair.steps
            FIGURES["differential restarts"] += self.restarts

    # -- the verbs -------------------------------------------------------------------------

    @rule(job=jobs, payload=st.binary(max_size=8))
    def add(self, job, payload):
        self.pair.step(f"add {job!r}", lambda ex: ex.add(QUEUE, job, payload))

    @rule(lease=leases)
    def claim(self, lease):
        self.pair.step(f"claim {lease}", lambda ex: ex.claim(QUEUE, lease))

    @rule(lease=leases)
    def scripted_claim(self, lease):
        self.pair.step(f"scripted claim {lease}", lambda ex: ex.scripted_claim(QUEUE, lease))

    @rule(job=jobs, stale=st.sampled_from([0, -1, 1]), lease=leases, scripted=st.booleans())
    def extend(self, job, stale, lease, scripted):
        attempt = max(0, attempts_of(self.pair, job) + stale)
        verb = "scripted_extend" if scripted else "extend"
        self.pair.step(
            f"{verb} {job!r} attempt {attempt} lease {lease}",
            lambda ex: getattr(ex, verb)(QUEUE, job, attempt, lease),
        )

    @rule(picks=st.lists(st.tuples(jobs, st.sampled_from([0, 0, -1, 1])), min_size=1, max_size=3),
          lease=leases)
    def extends(self, picks, lease):
        leases_ = [(job, max(0, attempts_of(self.pair, job) + stale)) for job, stale in picks]
        self.pair.step(f"extends {leases_} lease {lease}",
                       lambda ex: ex.extends(QUEUE, lease, leases_))

    @rule(max_stalled=budgets, limit=limits)
    def sweep(self, max_stalled, limit):
        self.pair.step(
            f"sweep max_stalled {max_stalled} limit {limit}",
            lambda ex: ex.sweep(QUEUE, max_stalled, limit),
        )

    @rule(max_stalled=budgets)
    def sweep_across_the_clock(self, max_stalled):
        """A sweep whose now is known to the millisecond, with a member on its boundary."""
        start, now = self.pair.sweep_across_the_clock(QUEUE, max_stalled)
        if now is not None and 0 <= now - start < RUNGS - 1:
            FIGURES["differential sweeps with a member on the boundary"] += 1

    # -- time and processes ------------------------------------------------------------------

    @rule(pick=st.integers(0, 10))
    def wait_past_a_deadline(self, pick):
        """Lets the live clock run past one of the deadlines in active (the latest, at most).
        Whether active holds any member depends on the clock (a sweep may have emptied it), so
        this is checked here and not in a precondition: Hypothesis must see the same draws
        whenever a sequence's choices repeat, or it reports the strategy as flaky."""
        active = self.pair.model.server.store.data.get(QUEUE.active)
        if not isinstance(active, ZSet):
            return
        scores = sorted(s for _, s in active.ordered())
        target = int(scores[min(pick, len(scores) - 1)])
        if target - self.pair.live.now_ms() <= 60:
            self.pair.log.append(f"wait past {target}")
            self.pair.live.wait_until(target)

    @precondition(lambda self: self.restarts < RESTARTS_PER_SEQUENCE)
    @rule()
    def restart(self):
        self.restarts += 1
        self.pair.restart()

    # -- injected oddities -------------------------------------------------------------------

    def inject(self, what, *command):
        self.pair.step(what, lambda ex: ex.call(*command))

    @rule(job=jobs)
    def ghost_in_pending(self, job):
        self.inject(f"ghost {job!r} in pending", "ZADD", QUEUE.pending, 0, job)

    @rule(job=jobs, ago=st.integers(-30, 30))
    def ghost_in_active(self, job, ago):
        """A member of active whose row may be missing, its deadline near the live clock."""
        at = self.pair.live.now_ms() - ago
        self.inject(f"{job!r} in active at {at}", "ZADD", QUEUE.active, at, job)

    @rule(job=jobs)
    def lane_row(self, job):
        self.inject(f"lane row {job!r}", "HSET", QUEUE.row_key(job), "group", "lane-1")

    @rule(job=jobs)
    def row_of_the_wrong_type(self, job):
        self.inject(f"string row {job!r}", "SET", QUEUE.row_key(job), "not a hash")

    @rule(job=jobs, field=st.sampled_from([b"attempts", b"stalled"]),
          value=st.sampled_from(NOT_INTEGERS))
    def field_that_is_not_an_integer(self, job, field, value):
        self.inject(f"{job!r} {field!r}={value!r}", "HSET", QUEUE.row_key(job), field, value)

    @rule(job=jobs, stamp=st.sampled_from(FOREIGN_STAMPS))
    def foreign_stamp(self, job, stamp):
        self.inject(f"{job!r} stamped {stamp!r}", "HSET", QUEUE.row_key(job), "lease_epoch", stamp)

    @rule(job=jobs, state=st.sampled_from([b"active", b"pending"]))
    def own_stamp(self, job, state):
        """Stamps a row with each executor's own current run_id: a lease this process granted."""
        self.pair.step(
            f"{job!r} stamped by this process, state {state!r}",
            lambda ex: ex.call("HSET", QUEUE.row_key(job), "lease_epoch", ex.run_id,
                               "state", state),
        )

    @rule(key=st.sampled_from([QUEUE.pending, QUEUE.active, QUEUE.dead]))
    def declared_key_of_the_wrong_type(self, key):
        self.inject(f"string at {key!r}", "SET", key, "oops")

    @rule(job=jobs)
    def repair_row(self, job):
        self.inject(f"delete row {job!r}", "DEL", QUEUE.row_key(job))

    @rule(key=st.sampled_from([QUEUE.pending, QUEUE.active, QUEUE.dead]))
    def repair_declared_key(self, key):
        self.inject(f"delete {key!r}", "DEL", key)

    @invariant()
    def datasets_agree(self):
        if hasattr(self, "pair"):
            self.pair.check_same_data("between steps")


def test_model_and_module_agree_on_random_sequences(rdb_server, aof_server):
    Differential.servers = {"rdb": rdb_server, "aof": aof_server}
    run_state_machine_as_test(Differential, settings=profile())


def test_the_differential_harness_detects_a_disagreement(rdb_server):
    """The harness can fail: a write made on the live side only is reported at the next step."""
    pair = Pair(rdb_server)
    pair.step("add a", lambda ex: ex.add(QUEUE, b"a"))
    rdb_server.client.hset(QUEUE.row_key(b"a"), "attempts", "7")
    with pytest.raises(AssertionError, match="attempts"):
        pair.step("claim", lambda ex: ex.claim(QUEUE, 10))


def test_the_harness_checks_the_sweep_boundary_to_the_millisecond(rdb_server):
    """The live sweep's now, read from the witness's dead score, is the only model clock that
    agrees; at that clock the ghost whose deadline equals now is swept on both sides and the
    one a millisecond later is kept. A sweep that lands past the ladder is tried again."""
    pair = Pair(rdb_server)
    for _ in range(5):
        start, now = pair.sweep_across_the_clock(QUEUE, 2)
        assert now is not None, "the witness was not dead-lettered"
        if now - start < RUNGS - 1:
            break
    else:
        pytest.fail(f"five sweeps in a row came over {RUNGS} ms after the ladder was laid")
    assert now >= start
    kept = [member for member, _ in pair.live_view()[QUEUE.active][1]]
    assert b"rung-%d" % (now - start) not in kept, "the ghost on the sweep's now was kept"
    assert kept[0] == b"rung-%d" % (now - start + 1), "the ghost a millisecond later was swept"
    assert [m for m, _ in pair.model_view()[QUEUE.active][1]] == kept
    assert dict(pair.live_view()[QUEUE.dead][1])[WITNESS] == now
