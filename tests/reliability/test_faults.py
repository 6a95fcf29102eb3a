"""Crashes and replicas: what a lease keeps when its server is killed, replayed or replaced.

The servers run with `appendonly yes` and `appendfsync always`, so every write a client saw
acknowledged is on disk before the reply. Killed with SIGKILL (between commands, or while a
client streams commands) and started again on the same files, the server must hold every
acknowledged write, and every row must be whole: state, attempts, stamp and the sorted sets
agree. The replay must not re-stamp: a lease granted before the crash still carries the
granting process's run_id and its deadline.

A replica holds the primary's stamps byte for byte, refuses the verbs (READONLY), and once
promoted exempts the leases the old primary granted, since its own run_id differs.
"""

import random
import threading
import time

import pytest
import redis

from trafikey_lab import LiveExecutor, Queue
from trafikey_lab.errors import ReplyError

from .conftest import FIGURES, SOAK
from .lockstep import Pair, wall_ms

LONG = 60_000
"""A lease that does not run out during a test."""
KILL_ROUNDS = 30 if SOAK else 8


def random_step(pair: Pair, queue: Queue, rng: random.Random, n: int):
    """One random verb on both executors (lockstep): what a worker and a sweeper do."""
    job = rng.choice([b"a", b"b", b"c", b"d"])
    lease = rng.choice([1, 5, 20, LONG])
    attempts = pair.model.server.store.data.get(queue.row_key(job), {}).get(b"attempts", b"0")
    attempt = int(attempts) + rng.choice([0, 0, -1])
    max_stalled, limit = rng.choice([1, 2]), rng.choice([None, 1])
    choices = [
        ("add", lambda ex: ex.add(queue, job, b"payload %d" % n)),
        ("claim", lambda ex: ex.claim(queue, lease)),
        ("scripted claim", lambda ex: ex.scripted_claim(queue, lease)),
        ("extend", lambda ex: ex.extend(queue, job, max(attempt, 0), lease)),
        ("extends", lambda ex: ex.extends(queue, lease, [(job, max(attempt, 0)), (b"a", 1)])),
        ("sweep", lambda ex: ex.sweep(queue, max_stalled, limit)),
    ]
    what, action = rng.choice(choices)
    pair.step(f"{what} {job!r} lease {lease}", action)


def test_kill_between_commands_loses_no_acknowledged_write_and_keeps_every_stamp(make_server):
    """After each SIGKILL the restarted server's dataset equals the model's: nothing lost, and
    every stamp still names the process that wrote it (compared by process)."""
    server = make_server(persistence="aof")
    pair = Pair(server)
    queue = Queue("{jobs}")
    rng = random.Random(7)
    for round_ in range(KILL_ROUNDS):
        for n in range(12):
            random_step(pair, queue, rng, n)
        killed = server.run_id
        pair.crash()
        assert server.run_id != killed
        pair.check_same_data(f"after kill -9 number {round_ + 1}")
        FIGURES["faults injected (kill -9 between commands)"] += 1
    FIGURES["fault steps checked in lockstep"] += pair.steps


# -- kill -9 while a client streams commands -------------------------------------------------


class Worker(threading.Thread):
    """Streams add, claim, extend (and for every fourth job a 1 ms claim that a sweep
    dead-letters) on one queue until the server goes away. Records every acknowledged reply
    with the wall-clock window it was sent in, and the one command left without a reply.

    A failed assert in this thread would only be printed as a warning, so it is kept in
    `failure` for the test's own thread to raise; `ready` is set once `jobs_before_kill` jobs
    are done (every stage then acknowledged at least once), or at the failure."""

    STAGES = ("add", "claim", "extend", "sweep")

    def __init__(self, server, queue: Queue, jobs_before_kill: int):
        super().__init__(daemon=True)
        self.executor = LiveExecutor(server)
        self.queue = queue
        self.jobs: dict[bytes, list] = {}
        self.in_flight = None
        self.jobs_before_kill = jobs_before_kill
        self.jobs_done = 0
        self.ready = threading.Event()
        self.failure: BaseException | None = None

    def send(self, job, stage, action):
        before = wall_ms()
        self.in_flight = (job, stage, before)
        reply = action()
        after = wall_ms() + 1
        self.in_flight = None
        self.jobs.setdefault(job, []).append((stage, reply, before, after))
        return reply

    def run(self):
        try:
            self.stream()
        except redis.ConnectionError:
            pass
        except BaseException as exc:
            self.failure = exc
        finally:
            self.ready.set()

    def stream(self):
        ex, q = self.executor, self.queue
        for i in range(100_000):
            job = b"job-%d" % i
            # each action runs inside send, before the loop moves on: the defaults only say so
            self.send(job, "add", lambda job=job: ex.add(q, job, b"payload"))
            lease = 1 if i % 4 == 3 else LONG
            claimed = self.send(job, "claim", lambda lease=lease: ex.claim(q, lease))
            assert claimed[:2] == [job, 1], f"claim of {job!r} replied {claimed}"
            if lease == LONG:
                extended = self.send(job, "extend", lambda job=job: ex.extend(q, job, 1, LONG))
                assert extended == 1, f"extend of {job!r}'s live lease replied {extended}, not 1"
            else:
                while True:
                    swept = self.send(job, "sweep", lambda: ex.sweep(q, 1))
                    if swept[1]:
                        assert swept == [[], [job]], f"the sweep for {job!r} replied {swept}"
                        break
                    self.jobs[job].pop()
            self.jobs_done += 1
            if self.jobs_done == self.jobs_before_kill:
                self.ready.set()

    def raise_failure(self, when: str):
        if self.failure is not None:
            raise AssertionError(f"the worker thread failed {when}: {self.failure!r}") \
                from self.failure

    def stages_acknowledged(self) -> set[str]:
        return {stage for acks in self.jobs.values() for stage, *_ in acks}


def expected_row(stage, epoch_):
    row = {b"state": b"pending", b"attempts": b"0", b"payload": b"payload"}
    if stage in ("claim", "extend"):
        row.update({b"state": b"active", b"attempts": b"1", b"lease_epoch": epoch_})
    if stage == "sweep":
        row.update({b"state": b"dead", b"attempts": b"1", b"lease_epoch": epoch_, b"stalled": b"1"})
    return row


def stage_problem(stage, reply, window, observed, epoch_, claim_deadline, lease):
    """Why the observed job does not show `stage` done (reply None: unacknowledged), or None."""
    row, pending, active, dead = observed
    if stage is None:
        return None if observed == ({}, None, None, None) else f"an unsent job exists: {observed}"
    if row != expected_row(stage, epoch_):
        return f"row {row} is not the row after {stage}"
    first, last = window
    if stage == "add":
        return (None if (pending, active, dead) == (0.0, None, None)
                else f"sets {pending, active, dead}")
    if stage in ("claim", "extend"):
        if pending is not None or dead is not None or active is None:
            return f"an active row with sets {pending, active, dead}"
        if stage == "claim" and reply is not None:
            return None if active == reply[2] else f"deadline {active}, acknowledged {reply[2]}"
        return (None if first <= active - lease <= last
                else f"deadline {active} not in {window}+{lease}")
    if pending is not None or active is not None or dead is None:
        return f"a dead row with sets {pending, active, dead}"
    return (None if first <= dead <= last and dead >= claim_deadline
            else f"dead at {dead}, not in {window}")


def observe(client, queue: Queue, job):
    return (
        client.hgetall(queue.row_key(job)),
        client.zscore(queue.pending, job),
        client.zscore(queue.active, job),
        client.zscore(queue.dead, job),
    )


def check_worker(client, worker: Worker, epoch_: bytes, killed_at: int) -> tuple[list[str], int]:
    """Problems with the worker's jobs as the server now holds them, and how many jobs were
    checked."""
    problems = []
    jobs = dict(worker.jobs)
    if worker.in_flight:
        jobs.setdefault(worker.in_flight[0], [])
    for job, acked in jobs.items():
        lease = 1 if int(job.split(b"-")[1]) % 4 == 3 else LONG
        observed = observe(client, worker.queue, job)
        claim_deadline = next((r[2] for s, r, _, _ in acked if s == "claim"), 0)
        last = acked[-1] if acked else (None, None, 0, 0)
        options = [stage_problem(last[0], last[1], (last[2], last[3]), observed, epoch_,
                                 claim_deadline, lease)]
        if worker.in_flight and worker.in_flight[0] == job:
            _, stage, sent = worker.in_flight
            options.append(stage_problem(stage, None, (sent, killed_at), observed, epoch_,
                                         claim_deadline, lease))
        if all(options):
            problems.append(f"{job!r} (acknowledged {[s for s, *_ in acked]}, in flight "
                            f"{worker.in_flight}): {options}")
    return problems, len(jobs)


def test_kill_during_a_command_stream_keeps_every_acknowledged_write_and_every_row_whole(
        make_server):
    """Each worker streams a few whole jobs (so it has acknowledged every stage) and is then
    killed at a random moment of its stream; a failed assert in a worker fails this test, and
    every worker's jobs are checked after every kill."""
    server = make_server(persistence="aof")
    rng = random.Random(11)
    workers = []
    acknowledged = 0
    for round_ in range(KILL_ROUNDS):
        worker = Worker(server, Queue(f"{{round-{round_}}}"), jobs_before_kill=rng.randint(4, 12))
        epoch_ = server.run_id.encode()
        worker.start()
        assert worker.ready.wait(30), \
            f"worker {round_} did not finish {worker.jobs_before_kill} jobs in 30 s"
        worker.raise_failure("before the kill")
        time.sleep(rng.uniform(0, 0.02))
        server.kill()
        killed_at = wall_ms() + 1
        worker.join(10)
        assert not worker.is_alive()
        worker.raise_failure("while streaming")
        server.start()
        FIGURES["faults injected (kill -9 during a command stream)"] += 1
        workers.append((worker, epoch_, killed_at))
        for number, (earlier, stamp, at) in enumerate(workers):
            problems, checked = check_worker(server.client, earlier, stamp, at)
            assert not problems, f"after kill -9 number {round_ + 1}:\n" + "\n".join(problems)
            assert checked >= earlier.jobs_before_kill, (
                f"worker {number} had {checked} jobs to check, fewer than the "
                f"{earlier.jobs_before_kill} it finished: it tests too little")
        assert worker.stages_acknowledged() == set(Worker.STAGES), (
            f"worker {round_} acknowledged only {worker.stages_acknowledged()}: "
            "a stage went unchecked")
        acknowledged += sum(len(acks) for acks in worker.jobs.values())
        assert server.run_id.encode() != epoch_
    FIGURES["acknowledged writes checked after kill -9"] += acknowledged


def test_a_leaseholders_stamp_and_deadline_survive_kill_and_replay_so_the_sweep_exempts_it(
        make_server):
    server = make_server(persistence="aof")
    live, queue = LiveExecutor(server), Queue("{jobs}")
    live.add(queue, b"held")
    _job, attempts, deadline = live.claim(queue, 300)
    assert live.extend(queue, b"held", attempts, 300) == 1
    granted = live.row(queue, b"held")
    deadline = live.deadline(queue, b"held")
    granting = server.run_id.encode()
    assert granted[b"lease_epoch"] == granting
    server.kill()
    server.start()
    FIGURES["faults injected (kill -9 with a lease held)"] += 1
    assert live.row(queue, b"held") == granted, "replaying the AOF changed the leaseholder's row"
    assert live.deadline(queue, b"held") == deadline, "replaying the AOF moved the deadline"
    assert server.run_id.encode() != granting
    live.wait_until(deadline)
    assert live.sweep(queue, 1) == [[b"held"], []], "a lease that crossed a crash was counted"
    assert b"stalled" not in live.row(queue, b"held")


# -- replicas --------------------------------------------------------------------------------


FAST_SYNC = ("--repl-diskless-sync-delay", "0")
"""A primary that serves a new replica at once, not after the default 5 s wait for more."""


def replica_of(make_server, primary, **options):
    replica = make_server(
        extra_args=("--replicaof", "127.0.0.1", str(primary.port),
                    "--propagation-error-behavior", "panic", *FAST_SYNC),
        **options,
    )
    wait_in_sync(primary, replica)
    return replica


def wait_in_sync(primary, replica, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = replica.client.info("replication")
        if info.get("master_link_status") == "up" and primary.client.wait(1, 1000) >= 1:
            return
        time.sleep(0.02)
    raise AssertionError(f"the replica did not sync: {replica.client.info('replication')}")


def raw(server):
    return dict(LiveExecutor(server).dataset())


def test_replica_holds_the_primarys_stamps_and_deadlines_byte_for_byte(make_server):
    primary = make_server(persistence="aof", extra_args=FAST_SYNC)
    replica = replica_of(make_server, primary)
    live, queue = LiveExecutor(primary), Queue("{jobs}")

    def expire_then_sweep(job, max_stalled):
        live.wait_until(live.deadline(queue, job))
        return live.sweep(queue, max_stalled)

    # Compared after every call: a later write to the same key (an extension, a sweep) would
    # hide an effect that was never replicated.
    steps = [
        ("add", lambda: [live.add(queue, job) for job in (b"a", b"b", b"c", b"d")]),
        ("claim", lambda: live.claim(queue, LONG)),
        ("claim of 1 ms", lambda: live.claim(queue, 1)),
        ("scripted claim", lambda: live.scripted_claim(queue, LONG)),
        ("extend", lambda: live.extend(queue, b"a", 1, LONG)),
        ("extends", lambda: live.extends(queue, LONG, [(b"a", 1)])),
        ("sweep of a stall under the budget", lambda: expire_then_sweep(b"b", 2)),
        ("second claim of 1 ms", lambda: live.claim(queue, 1)),
        ("sweep that dead-letters", lambda: expire_then_sweep(b"b", 1)),
    ]
    for what, step in steps:
        step()
        assert primary.client.wait(1, 5000) == 1
        assert raw(replica) == raw(primary), \
            f"after the {what} the replica differs from the primary"
    assert raw(replica)[queue.row_key(b"a")][1][b"lease_epoch"] == primary.run_id.encode()
    assert raw(replica)[queue.row_key(b"b")][1][b"state"] == b"dead"
    assert replica.run_id != primary.run_id


def test_replica_refuses_every_verb_readonly_and_writes_nothing(make_server):
    primary = make_server(extra_args=FAST_SYNC)
    replica = replica_of(make_server, primary)
    live, queue = LiveExecutor(primary), Queue("{jobs}")
    live.add(queue, b"a")
    live.add(queue, b"b")
    live.claim(queue, 1)
    assert primary.client.wait(1, 5000) == 1
    on_replica = LiveExecutor(replica)
    before = on_replica.dataset()
    calls = [
        lambda: on_replica.claim(queue, 100),
        lambda: on_replica.extend(queue, b"a", 1, 100),
        lambda: on_replica.extends(queue, 100, [(b"a", 1)]),
        lambda: on_replica.sweep(queue, 1),
    ]
    for call in calls:
        with pytest.raises(ReplyError, match=r"^READONLY"):
            call()
    assert on_replica.dataset() == before


def test_promoted_replica_exempts_the_leases_the_old_primary_granted(make_server):
    primary = make_server(extra_args=FAST_SYNC)
    replica = replica_of(make_server, primary)
    live, queue = LiveExecutor(primary), Queue("{jobs}")
    for job in (b"a", b"b"):
        live.add(queue, job)
    live.claim(queue, 50)
    assert primary.client.wait(1, 5000) == 1
    primary.stop()
    promoted = LiveExecutor(replica)
    replica.client.execute_command("REPLICAOF", "NO", "ONE")
    own = promoted.claim(queue, 50)
    assert own[0] == b"b"
    promoted.wait_until(max(promoted.deadline(queue, b"a"), own[2]))
    recovered, dead = promoted.sweep(queue, 1)
    assert recovered == [b"a"], "the old primary's lease was counted by the promoted replica"
    assert dead == [b"b"], "the promoted replica's own lease was not counted"
    assert b"stalled" not in promoted.row(queue, b"a")


def test_failback_without_a_restart_counts_the_leases_the_primary_granted_before(make_server):
    """The failback caveat. The stamp names a process, not a term of office: a primary that is
    demoted (REPLICAOF host port) and promoted again (REPLICAOF NO ONE) without restarting
    keeps its run_id, so the leases it granted before the failover carry its current run_id
    again and the sweep counts them as stalls, although their workers may only have lost
    the server during the failover. Only a restart (a new run_id) exempts them. Operators who
    fail back without restarting should expect such leases to spend stall budget."""
    first = make_server(extra_args=FAST_SYNC)
    second = replica_of(make_server, first)
    live, queue = LiveExecutor(first), Queue("{jobs}")
    live.add(queue, b"a")
    live.claim(queue, 50)
    stamp = first.run_id.encode()
    assert first.client.wait(1, 5000) == 1
    second.client.execute_command("REPLICAOF", "NO", "ONE")
    first.client.execute_command("REPLICAOF", "127.0.0.1", str(second.port))
    wait_in_sync(second, first)
    first.client.execute_command("REPLICAOF", "NO", "ONE")
    assert first.client.info("server")["run_id"] == first.run_id, \
        "the failback restarted the process"
    assert live.row(queue, b"a")[b"lease_epoch"] == stamp
    live.wait_until(live.deadline(queue, b"a"))
    assert live.sweep(queue, 1) == [[], [b"a"]], "the failed-back primary exempted its own lease"
    assert LiveExecutor(second).sweep(queue, 1) == [[b"a"], []], "the other server counted it"
