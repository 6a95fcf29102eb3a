"""The model and a live server in lockstep: the same call on both, then the same dataset.

A live verb reads the server's clock when it runs; the model reads `server.now_ms`. The live
call is bracketed by two readings of the server clock (TIME), so the clock the verb read lies
between them. The model is then run once per millisecond of that bracket, from the same
dataset, and the step agrees when one of those clocks gives the live reply and the live
dataset exactly (deadlines, dead-letter scores, which leases had run out). Usually the bracket
is a single millisecond, so deadlines compare exactly.

A bracket of several milliseconds leaves the sweep's boundary unchecked: a member whose
deadline equals the live sweep's now would also be swept by a model that selects
`deadline < now`, run at the next millisecond, whenever nothing is dead-lettered to show the
score. `Pair.sweep_across_the_clock` pins it: a witness lease that the sweep dead-letters
shows the live now in its score, which only one model clock reproduces, and a ladder of
ghosts, one per millisecond from the clock read before the sweep, puts a member on that
millisecond and on the next.

run_ids are compared by the process they belong to: each executor's run_ids are numbered in
order of appearance, and a stored lease_epoch that is one of them is compared by its number.

The module's counters (INFO trafikey) are part of every step's result: a step agrees only
when the model's counters equal the live ones too. The live server may have run verbs before
the pair was made (the suite's servers live for the whole session), so its counters are read
as they move from the pair's start; a restart starts them at zero, which is checked.
"""

import copy
import time

from trafikey_lab import LiveExecutor, ModelExecutor, ReplyError

STAMP = b"lease_epoch"
WITNESS = b"witness"
"""The lease a boundary sweep dead-letters, whose dead score is the sweep's now."""
RUNGS = 100
"""Ghosts in a boundary ladder, one per millisecond: how late the sweep may land and still be
checked to the millisecond."""


class Processes:
    """Numbers one executor's run_ids in order of appearance: 0, 1, 2, ..."""

    def __init__(self):
        self.numbers: dict[bytes, int] = {}

    def see(self, run_id) -> int:
        run_id = run_id if isinstance(run_id, bytes) else run_id.encode()
        return self.numbers.setdefault(run_id, len(self.numbers))

    def label(self, stamp: bytes):
        number = self.numbers.get(stamp)
        return stamp if number is None else f"<process {number}>"


def outcome(action, executor):
    """A call's result in a form both executors share: the reply, or ("refused", text)."""
    try:
        return ("reply", plain(action(executor)))
    except ReplyError as exc:
        return ("refused", exc.text)


def plain(reply):
    if reply is True:
        return b"OK"
    if isinstance(reply, (list, tuple)):
        return [plain(item) for item in reply]
    return reply


def view(dataset: dict, processes: Processes) -> dict:
    """A dataset with every stored stamp that is a known run_id replaced by its process."""
    out = {}
    for key, (kind, value) in dataset.items():
        if kind == "hash" and STAMP in value:
            value = {**value, STAMP: processes.label(value[STAMP])}
        out[key] = (kind, value)
    return out


class Disagreement(AssertionError):
    pass


class Pair:
    """A ModelExecutor and a LiveExecutor over one server, from an empty dataset."""

    def __init__(self, server):
        self.server = server
        server.client.flushall()
        self.live = LiveExecutor(server)
        self.model = ModelExecutor()
        self.live_processes = Processes()
        self.model_processes = Processes()
        self._see_processes()
        self.live_base = self.live.counters()
        self.steps = 0
        self.log: list[str] = []

    def _see_processes(self):
        live = self.live_processes.see(self.server.run_id)
        model = self.model_processes.see(self.model.run_id)
        if live != model:
            raise Disagreement(f"the live server is process {live}, the model process {model}")

    def live_view(self) -> dict:
        return view(dump(self.server.client), self.live_processes)

    def model_view(self) -> dict:
        return view(self.model.dataset(), self.model_processes)

    def live_counters(self) -> dict[str, int]:
        """The live counters as they moved since the pair started, or since the last restart."""
        base = self.live_base
        return {name: value - base.get(name, 0) for name, value in self.live.counters().items()}

    def step(self, what: str, action, *, server_clock=True):
        """Runs action(executor) on both; returns the shared outcome or raises Disagreement.

        The bracket is read from the server (TIME) or, with server_clock=False, from this
        machine's wall clock, which is the server's clock too (the server is on loopback)
        and costs no round trip.
        """
        self.steps += 1
        self.log.append(what)
        before = self.live.now_ms() if server_clock else wall_ms()
        live_out = outcome(action, self.live)
        after = self.live.now_ms() if server_clock else wall_ms() + 1
        live_data = self.live_view()
        return self._match(what, action, live_out, live_data, self.live_counters(), before, after)

    def _match(self, what, action, live_out, live_data, live_counters, first_ms, last_ms):
        start = copy.deepcopy(self.model.server.store.data)
        start_counters = dict(self.model.server.counters)
        tried = None
        for now in range(first_ms, last_ms + 1):
            self.model.server.store.data = copy.deepcopy(start)
            self.model.server.counters = dict(start_counters)
            self.model.server.now_ms = now
            model_out = outcome(action, self.model)
            model_data = self.model_view()
            model_counters = self.model.counters()
            if (model_out, model_data, model_counters) == (live_out, live_data, live_counters):
                return live_out
            tried = tried or (now, model_out, model_data, model_counters)
        now, model_out, model_data, model_counters = tried
        raise Disagreement(
            f"{what}: no model clock in [{first_ms}, {last_ms}] gives the live result.\n"
            f"steps so far: {self.log}\n"
            f"live reply:  {live_out!r}\nmodel reply: {model_out!r} (model clock {now})\n"
            + dataset_diff(live_data, model_data) + "\n"
            + counters_diff(live_counters, model_counters)
        )

    def sweep_across_the_clock(self, queue, max_stalled: int, rungs: int = RUNGS):
        """Lays a ladder of ghosts and a witness in active, then sweeps, in lockstep.

        Returns (start, now): the first rung's deadline and the live sweep's now, read from
        the witness's dead score; the boundary was checked when now - start < rungs - 1,
        since then a rung sat on the sweep's millisecond and one on the next.
        """
        start = self.live.now_ms()
        ladder = [part for i in range(rungs) for part in (start + i, b"rung-%d" % i)]

        def lay(ex):
            # stalled + 1 reaches max_stalled: a lease of this process that this sweep kills.
            ex.call("HSET", queue.row_key(WITNESS), "state", "active", "lease_epoch", ex.run_id,
                    "stalled", max_stalled - 1)
            return ex.call("ZADD", queue.active, 1, WITNESS, *ladder)

        self.step(f"ladder of {rungs} ghosts from {start}, and the witness", lay)
        self.step(f"sweep max_stalled {max_stalled} across the ladder",
                  lambda ex: ex.sweep(queue, max_stalled))
        kind, dead = self.live_view().get(queue.dead, ("none", None))
        now = dict(dead).get(WITNESS) if kind == "zset" else None
        return start, None if now is None else int(now)

    def restart(self):
        self.log.append("restart")
        self.live.restart()
        self.model.restart()
        self._see_processes()
        self._counters_start_again("after the restart")
        self.check_same_data("after the restart")

    def crash(self):
        """SIGKILL the live server and start a new process on its files; the model restarts."""
        self.log.append("kill -9")
        self.server.kill()
        self.server.start()
        self.model.restart()
        self._see_processes()
        self._counters_start_again("after kill -9")

    def _counters_start_again(self, when: str):
        """A new process's counters are all zero, whatever the old one counted or its files
        replayed (the replicated effects are plain HSET, ZADD and ZREM, never a verb)."""
        self.live_base = {}
        moved = {name: value for name, value in self.live_counters().items() if value}
        if moved:
            raise Disagreement(f"{when}: the new process's counters are not all zero: {moved}")

    def check_same_data(self, when: str):
        live, model = self.live_view(), self.model_view()
        if live != model:
            raise Disagreement(f"{when}: datasets differ.\nsteps: {self.log}\n"
                               + dataset_diff(live, model))
        live_counters, model_counters = self.live_counters(), self.model.counters()
        if live_counters != model_counters:
            raise Disagreement(f"{when}: counters differ.\nsteps: {self.log}\n"
                               + counters_diff(live_counters, model_counters))


def dump(client) -> dict:
    """The whole dataset in LiveExecutor.dataset()'s form, in three round trips."""
    keys = list(client.scan_iter(count=1000))
    if not keys:
        return {}
    pipe = client.pipeline(transaction=False)
    for key in keys:
        pipe.type(key)
    kinds = [kind.decode() for kind in pipe.execute()]
    read = {"hash": pipe.hgetall, "string": pipe.get,
            "zset": lambda key: pipe.zrange(key, 0, -1, withscores=True)}
    for key, kind in zip(keys, kinds, strict=True):
        read.get(kind, pipe.exists)(key)
    values = pipe.execute()
    return {
        key: (kind, value if kind in read else None)
        for key, kind, value in zip(keys, kinds, values, strict=True)
    }


def dataset_diff(live: dict, model: dict) -> str:
    lines = []
    for key in sorted(set(live) | set(model)):
        if live.get(key) != model.get(key):
            lines.append(f"  {key!r}:\n    live:  {live.get(key)!r}\n    model: {model.get(key)!r}")
    return "dataset differences:\n" + ("\n".join(lines) if lines else "  (none)")


def counters_diff(live: dict, model: dict) -> str:
    lines = [f"  {name}: live {live.get(name)!r}, model {model.get(name)!r}"
             for name in sorted(set(live) | set(model)) if live.get(name) != model.get(name)]
    return "counter differences:\n" + ("\n".join(lines) if lines else "  (none)")


def wall_ms() -> int:
    return time.time_ns() // 1_000_000
