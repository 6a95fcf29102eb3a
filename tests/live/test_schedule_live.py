"""Schedules replayed on live servers (`schedule.play_live`): every preset, the boundaries
crossed by one millisecond, and random schedules, each agreeing with the model at every step
and on the reading and outcome, with the replay's order held.

The replays mostly wait, so they run four at a time, each on a server of its own."""

import random
from concurrent.futures import ThreadPoolExecutor

import pytest

from trafikey_lab import LiveExecutor, ModelExecutor
from trafikey_lab import schedule as S
from trafikey_lab.player import compare
from trafikey_lab.schedule import Schedule

SERVERS = 4
RANDOM = 24

BOUNDARIES = {
    "sweep 1 ms before the deadline": Schedule(restarts=False, sweep_at_ms=999),
    "sweep at the deadline": Schedule(restarts=False, sweep_at_ms=1000),
    "ran out before the restart, swept just before it": Schedule(restart_at_ms=1200,
                                                                 sweep_at_ms=1199),
    "ran out before the restart, swept after it": Schedule(restart_at_ms=1200, sweep_at_ms=1500),
    "EMQ.EXTEND 1 ms before the restart": Schedule(worker="extend", worker_at_ms=399,
                                                   sweep_at_ms=2000),
    "EMQ.EXTEND at the restart": Schedule(worker="extend", worker_at_ms=400, sweep_at_ms=2000),
    "downtime 1 ms shorter than the rest of the lease": Schedule(
        lease_ms=500, restart_at_ms=100, restart_ms=399, sweep_at_ms=200),
    "downtime as long as the rest of the lease": Schedule(
        lease_ms=500, restart_at_ms=100, restart_ms=400, sweep_at_ms=200),
    "extension after the sweep took the job": Schedule(restarts=False, worker="extend",
                                                       worker_at_ms=1600),
    "counted below the budget": Schedule(restarts=False, max_stalled=3, stalled_before=1),
    "a restart with no downtime, swept at its millisecond": Schedule(
        restart_at_ms=1500, restart_ms=0, sweep_at_ms=1500),
    "a restart with no downtime, 10 ms before the deadline": Schedule(
        lease_ms=410, restart_at_ms=400, restart_ms=0, sweep_at_ms=400),
    "a downtime longer than the budget": Schedule(restart_ms=5000, sweep_at_ms=6000),
}


def random_schedule(rng: random.Random) -> Schedule:
    lease = rng.randint(50, 2000)
    return Schedule(
        lease_ms=lease, claim=rng.choice(tuple(S.CLAIMS)), worker=rng.choice(tuple(S.WORKERS)),
        worker_at_ms=rng.randint(0, 2500), restarts=rng.random() < 0.7,
        restart_at_ms=rng.randint(0, 2500), restart_ms=rng.choice((0, rng.randint(1, 800))),
        sweep_at_ms=rng.randint(0, 3000), max_stalled=rng.randint(1, 3),
        stalled_before=rng.randint(0, 2))


def replay(executor: LiveExecutor, schedule: Schedule) -> tuple[Schedule, list, bool, str]:
    trace, plan = S.play_live(schedule, executor)
    rows = compare(S.play(schedule, ModelExecutor()), trace)
    return schedule, [r for r in rows if not r[1]], plan.held(), plan.report()


@pytest.fixture(scope="module")
def executors():
    from trafikey_lab import choose_server
    servers = [choose_server().start() for _ in range(SERVERS)]
    yield [LiveExecutor(s) for s in servers]
    for server in servers:
        server.stop()


def replay_all(executors, schedules):
    """Each executor replays its share in turn; the shares run at once."""
    shares = [schedules[i::len(executors)] for i in range(len(executors))]
    with ThreadPoolExecutor(len(executors)) as pool:
        done = pool.map(lambda pair: [replay(pair[0], s) for s in pair[1]],
                        zip(executors, shares, strict=True))
        return [result for share in done for result in share]


def test_every_preset_and_boundary_replayed_live_agrees_with_the_model(executors):
    schedules = [s for _, s in S.PRESETS.values()] + list(BOUNDARIES.values())
    for schedule, differ, held, report in replay_all(executors, schedules):
        assert held, (schedule, report)
        assert differ == [], (schedule, differ)


def test_random_schedules_replayed_live_agree_with_the_model(executors):
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    schedules = [random_schedule(rng) for _ in range(RANDOM)]
    results = replay_all(executors, schedules)
    assert len(results) == RANDOM
    for schedule, differ, held, report in results:
        assert held, (f"seed {seed}", schedule, report)
        assert differ == [], (f"seed {seed}", schedule, differ)


def test_the_boundaries_flip_as_named():
    words = {name: (S.decide(s).reading, S.decide(s).outcome) for name, s in BOUNDARIES.items()}
    assert words["sweep 1 ms before the deadline"] == ("not read", "untouched")
    assert words["sweep at the deadline"] == ("counted", "dead")
    assert words["ran out before the restart, swept just before it"] == ("counted", "dead")
    assert words["ran out before the restart, swept after it"] == ("exempt", "recovered")
    assert words["EMQ.EXTEND 1 ms before the restart"] == ("exempt", "recovered")
    assert words["EMQ.EXTEND at the restart"] == ("counted", "dead")
    assert words["downtime 1 ms shorter than the rest of the lease"] == ("not read", "untouched")
    assert words["downtime as long as the rest of the lease"] == ("exempt", "recovered")
    assert words["counted below the budget"] == ("counted", "recovered")
    assert words["a restart with no downtime, swept at its millisecond"] == ("exempt",
                                                                              "recovered")
    assert words["a restart with no downtime, 10 ms before the deadline"] == ("not read",
                                                                               "untouched")
    assert words["a downtime longer than the budget"] == ("exempt", "recovered")
