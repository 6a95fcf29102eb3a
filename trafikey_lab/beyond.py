"""Notebook 05, beyond one server: a replica, a failback, the append-only file, and a model of
what other queues charge for a restart.

The live parts each start the extra servers they need (a replica through caveats.replica_of, an
append-only server of their own) and stop them, folders removed, however the run ends. Each
returns a Shown whose lines hold no run_id, port or path, only what was compared.
"""

import html
import math
import tempfile
import time
from dataclasses import dataclass

from .caveats import Shown, unavailable, wait_in_sync, replica_of
from .errors import LabError, ReplyError
from .executors import LiveExecutor, Queue
from .histories import JOB, LEASE_MS
from .plots import alt
from .server import LabServer, OwnedServer

VERBS = ("EMQ.CLAIM", "EMQ.EXTEND", "EMQ.EXTENDS", "EMQ.STALLED.CHECK")
"""The module's four verbs: each one writes, so a replica refuses each one."""


def _try_each_verb(live: LiveExecutor, queue: Queue) -> dict[str, str]:
    attempts = {
        "EMQ.CLAIM": lambda: live.claim(queue, LEASE_MS),
        "EMQ.EXTEND": lambda: live.extend(queue, JOB, 1, LEASE_MS),
        "EMQ.EXTENDS": lambda: live.extends(queue, LEASE_MS, [(JOB, 1)]),
        "EMQ.STALLED.CHECK": lambda: live.sweep(queue, 1),
    }
    answers = {}
    for verb, attempt in attempts.items():
        try:
            answers[verb] = f"accepted: {attempt()!r}"
        except ReplyError as exc:
            answers[verb] = exc.text.split(" ", 1)[0]
    return answers


def replica_copy(server: LabServer, queue: Queue) -> Shown:
    """A lease granted on `server`; a module-loaded replica holds the same bytes, stamp
    included, and refuses every verb with READONLY."""
    if (refused := unavailable(server, "a replica")) is not None:
        return refused
    primary = LiveExecutor(server)
    primary.clear(queue)
    primary.add(queue, JOB, b"hello")
    primary.claim(queue, LEASE_MS)
    try:
        with replica_of(server) as replica:
            copy = LiveExecutor(replica)
            same = copy.dataset() == primary.dataset()
            stamp = copy.row(queue, JOB).get(b"lease_epoch")
            answers = _try_each_verb(copy, queue)
            role = replica.client.info("replication")["role"]
    finally:
        primary.clear(queue)
    return Shown((
        f"the replica's role: {role}",
        f"every key of the queue, byte for byte the same on both: {same}",
        f"the replica's stamp is the primary's run_id: {stamp == server.run_id.encode()}",
        *(f"{verb} on the replica → {answer}" for verb, answer in answers.items()),
    ))


FIELDS = ("run_id", "master_replid", "role")


def _fields(server: LabServer) -> dict[str, str]:
    info = {**server.client.info("server"), **server.client.info("replication")}
    return {name: str(info[name]) for name in FIELDS}


def failback_fields(server: LabServer) -> Shown:
    """`server` hands over to a replica, follows it, then is promoted back with no restart.
    Which of the INFO fields a stamp could hold changed across that, and which did not."""
    if (refused := unavailable(server, "a failover")) is not None:
        return refused
    before = _fields(server)
    with replica_of(server) as other:
        other.client.execute_command("REPLICAOF", "NO", "ONE")
        server.client.execute_command("REPLICAOF", "127.0.0.1", str(other.port))
        # The replication id a replica reports is its primary's only once it has synced.
        wait_in_sync(other, server)
        during = _fields(server)
        server.client.execute_command("REPLICAOF", "NO", "ONE")
    after = _fields(server)
    return Shown(tuple(
        f"{name}: while a replica {'changed' if during[name] != before[name] else 'same'}, "
        f"after the failback {'changed' if after[name] != before[name] else 'same'}"
        for name in FIELDS
    ))


# -- the append-only file ----------------------------------------------------------------------

def parse_resp_commands(data: bytes) -> list[list[bytes]]:
    """The commands of an append-only file's RESP text: arrays of bulk strings, one per
    command. Raises LabError at the first byte that is not one."""
    commands, at = [], 0
    while at < len(data):
        if data[at:at + 1] != b"*":
            raise LabError(f"the append-only file has {data[at:at + 20]!r} at byte {at} where a "
                           "command should start (*): it is not RESP text")
        end = data.index(b"\r\n", at)
        count, at = int(data[at + 1:end]), end + 2
        command = []
        for _ in range(count):
            end = data.index(b"\r\n", at)
            length = int(data[at + 1:end])
            command.append(data[end + 2:end + 2 + length])
            at = end + 2 + length + 2
        commands.append(command)
    return commands


def aof_commands(server: LabServer) -> list[list[bytes]]:
    """The commands in `server`'s incremental append-only files, oldest first."""
    folder = server.data_dir / "appendonlydir"
    manifest = (folder / "appendonly.aof.manifest").read_text().splitlines()
    names = [line.split()[1] for line in manifest if line.split()[-1] == "i"]
    return [c for name in names for c in parse_resp_commands((folder / name).read_bytes())]


def _command_line(command: list[bytes], run_id: bytes) -> str:
    words = [("<this process's run_id>" if word == run_id else word.decode(errors="replace"))
             for word in command]
    return " ".join(words)


def aof_claim(queue: Queue) -> Shown:
    """A claim on a server of its own with appendonly yes: the commands the file holds for
    it, whether any of them is a verb or carries the password, and the row after a restart
    replays the file."""
    with OwnedServer(persistence="aof") as server:
        live = LiveExecutor(server)
        live.add(queue, JOB, b"hello")
        live.claim(queue, LEASE_MS)
        run_id = server.run_id.encode()
        commands = aof_commands(server)
        stamp = live.row(queue, JOB).get(b"lease_epoch")
        server.restart()
        replayed = live.row(queue, JOB).get(b"lease_epoch")
        secret = server.password.encode()
    claim_at = max(i for i, c in enumerate(commands) if c[0] == b"ZREM")
    return Shown((
        "the commands the claim left in the append-only file:",
        *(f"  {_command_line(c, run_id)}" for c in commands[claim_at - 1:]),
        f"a verb of the module among them: {any(c[0].upper().startswith(b'EMQ.') for c in commands)}",
        f"the password anywhere in the file: {any(secret in word for c in commands for word in c)}",
        f"after a restart, the replayed row's stamp is the one written: {replayed == stamp}",
        f"and it is not the new process's run_id: {replayed != server.run_id.encode()}",
    ))


DOWNTIME_LEASE_MS = 1000
"""The lease of downtime_verdicts: longer than a quick restart of an append-only server takes
(about a quarter of a second), so that the quick restart comes back before it runs out."""


def downtime_verdicts(queue: Queue, wait_s: float = 2.0,
                      lease_ms: int = DOWNTIME_LEASE_MS) -> Shown:
    """Two leases on an append-only server, each across one restart: one restart is quick,
    the other waits `wait_s` seconds while the server is down (longer than the lease). Each
    line says whether the server came back before the lease ran out, so that a machine whose
    quick restart takes longer than the lease shows it; both sweeps, max_stalled 1, give the
    same verdict."""
    if wait_s * 1000 <= lease_ms:
        raise ValueError(f"wait_s must be longer than the lease ({lease_ms} ms): the long restart "
                         "is the one that outlasts it")
    lines, back_before = [], []
    with tempfile.TemporaryDirectory(prefix="trafikey-lab-") as folder:
        server = OwnedServer(persistence="aof", data_dir=folder)
        try:
            server.start()
            live = LiveExecutor(server)
            for label, pause in (("a quick restart", 0.0), (f"down {wait_s:g} s", wait_s)):
                live.clear(queue)
                live.add(queue, JOB, b"hello")
                live.claim(queue, lease_ms)
                deadline = live.deadline(queue, JOB)
                server.stop()
                time.sleep(pause)
                server.start()
                back_before.append(live.now_ms() <= deadline)
                live.wait_until(deadline)
                reply = live.sweep(queue, 1)
                row = live.row(queue, JOB)
                when = "before" if back_before[-1] else "after"
                lines.append(f"{label}: back {when} the lease ran out · sweep {reply!r} · stalled "
                             f"{row.get(b'stalled', b'(none)').decode()} · state "
                             f"{row[b'state'].decode()}")
        finally:
            server.stop()
    if back_before[0]:
        ending = "→ the same verdict: the stamp names a process, not a time"
    else:
        ending = (f"→ the same verdict, but not the contrast: on this machine even the quick "
                  f"restart took longer than the {lease_ms} ms lease")
    return Shown((*lines, ending))


# -- what other queues charge for a restart: a model -------------------------------------------

@dataclass(frozen=True)
class Budget:
    """One queue's rule, as the model plays it: a job is dead-lettered once the leases it lost
    exceed `forgiven`. `limit` is the setting as the queue's own documentation names it, and
    `forgiven` what that setting forgives, off-by-one included (notebook 05 cites each page).
    `counts_restarts` False: a lease that crossed a restart is not counted at all. `note`, when
    set, says why the row is not the same event as the others."""

    queue: str
    limit: str
    forgiven: int
    counts_restarts: bool
    note: str = ""


BUDGETS = (
    # A job fails once its stall count is greater than maxStalledCount: the second stall.
    Budget("BullMQ", "maxStalledCount 1 (default)", 1, True),
    # A task whose lease expires with all MaxRetry retries used is archived: the 26th.
    Budget("asynq", "MaxRetry 25 (default)", 25, True),
    # A message goes to the dead-letter queue when its receive count would exceed
    # maxReceiveCount; the first receive counts, so the 5th lost lease is the last.
    # SQS has no broker to restart: the row is a consumer outage, which trafikey counts.
    Budget("Amazon SQS", "maxReceiveCount 5 (your choice)", 4, True,
           note="SQS has no broker to restart: its row is a consumer outage. trafikey would count "
                "that outage (a worker gone under a live server), so the SQS row cannot be set "
                "beside trafikey's 0."),
    # stalled + 1 reaching max_stalled is a death: at 1, the first counted stall.
    Budget("trafikey", "max_stalled 1", 0, False),
)

WEEK_MIN = 7 * 24 * 60

NEGLIGIBLE_SHARE = 1e-9
"""Below this share of the week's jobs, the model says "fewer than one job in a billion": its
inputs are guesses, so a figure such as 2.3e-80 would be precision the model does not have."""


def poisson_tail(mean: float, at_least: int) -> float:
    """P(N >= at_least) for N ~ Poisson(mean)."""
    # Summed upward rather than as 1 - P(N < at_least), which rounds to noise for small tails.
    if mean == 0:
        return 1.0 if at_least <= 0 else 0.0
    terms = (math.exp(k * math.log(mean) - mean - math.lgamma(k + 1))
             for k in range(max(at_least, 0), max(at_least, 0) + 400))
    return math.fsum(terms)


def restart_dead_letters(jobs_in_flight: int, restarts_per_week: float, job_minutes: float,
                         lease_s: float, down_s: float, budgets=BUDGETS) -> list[dict]:
    """Healthy jobs a week each queue dead-letters because of restarts alone, in a model:
    jobs_in_flight jobs at all times, each running job_minutes; restarts come at random
    (Poisson) restarts_per_week times a week and each lasts down_s seconds. The model assumes
    that a restart shorter than the lease loses no lease (every worker renews its lease as soon
    as the server is back, before the lease runs out), that a longer one costs every job in
    flight one lost lease, and that a lost lease leaves a job's running time unchanged (a job
    retried from the start really stays in flight longer, and meets more restarts). A job is
    dead-lettered when its lost leases exceed what its queue forgives."""
    if jobs_in_flight < 0 or restarts_per_week < 0 or job_minutes <= 0 or lease_s <= 0:
        raise ValueError("jobs_in_flight and restarts_per_week must be 0 or more, job_minutes "
                         "and lease_s more than 0")
    jobs_per_week = jobs_in_flight * WEEK_MIN / job_minutes
    costly = restarts_per_week if down_s > lease_s else 0.0
    mean = costly * job_minutes / WEEK_MIN
    rows = []
    for budget in budgets:
        share = poisson_tail(mean, budget.forgiven + 1) if budget.counts_restarts else 0.0
        rows.append({"queue": budget.queue, "limit": budget.limit, "forgiven": budget.forgiven,
                     "counts_restarts": budget.counts_restarts, "share": share,
                     "dead_per_week": jobs_per_week * share, "note": budget.note})
    return rows


def dead_text(row: dict) -> str:
    """A row's healthy jobs dead-lettered a week, to the precision the model has."""
    if row["dead_per_week"] == 0:
        return "0"
    if row["share"] < NEGLIGIBLE_SHARE:
        return "fewer than one job in a billion"
    return f"{row['dead_per_week']:.2g}"


def _forgiven_text(row: dict) -> str:
    return str(row["forgiven"]) if row["counts_restarts"] else f"{row['forgiven']}, restarts not counted"


def _marked(row: dict) -> str:
    """The queue's name, with a * when a note below the table says its row is another event."""
    return f"{row['queue']}*" if row.get("note") else row["queue"]


def _notes(rows: list[dict]) -> list[str]:
    return [f"* {r['note']}" for r in rows if r.get("note")]


def dead_letter_table(rows: list[dict]) -> str:
    lines = [f"{'queue':<12} {'limit':<32} {'lost leases forgiven':<24} healthy jobs dead a week"]
    lines += [f"{_marked(r):<12} {r['limit']:<32} {_forgiven_text(r):<24} {dead_text(r)}"
              for r in rows]
    return "\n".join(lines + _notes(rows))


def dead_letter_alt(rows: list[dict]) -> str:
    """The figure's alt text: what each bar shows, in the table's words, and its notes."""
    bars = "; ".join(f"{_marked(r)} {dead_text(r)}" for r in rows)
    notes = "".join(f" {note}" for note in _notes(rows))
    return (f"Horizontal bars, one per queue, of the healthy jobs that restarts alone "
            f"dead-letter in a week, in the model: {bars}.{notes}")


# Okabe-Ito, readable by colour-blind readers; each bar also carries its queue's name and value.
_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")


def plot_dead_letters(rows: list[dict], ax=None):
    """A bar per queue: healthy jobs dead-lettered a week by restarts. Returns the bars."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3))
    names = [_marked(r) for r in rows]
    values = [r["dead_per_week"] for r in rows]
    bars = ax.barh(names, values, color=_COLOURS[:len(rows)],
                   hatch=["", "//", "..", "xx", "\\\\", "oo"][:len(rows)], edgecolor="black")
    for bar, row in zip(bars, rows):
        ax.annotate(dead_text(row), (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                    xytext=(4, 0), textcoords="offset points", va="center")
    ax.set_xlabel("healthy jobs dead-lettered a week by restarts (model)")
    ax.invert_yaxis()
    # Room on the right for the longest label, "fewer than one job in a billion".
    ax.set_xlim(0, max(values + [1.0]) * 2.2)
    alt.describe(ax.figure, dead_letter_alt(rows))
    return bars


def _figure_svg(rows: list[dict]) -> str:
    import io

    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 3))
    plot_dead_letters(rows, ax=figure.add_subplot())
    figure.tight_layout()
    out = io.StringIO()
    figure.savefig(out, format="svg")
    svg = out.getvalue()
    label = html.escape(alt.alt_text(figure), quote=True)
    return svg[svg.index("<svg"):].replace("<svg", f'<svg role="img" aria-label="{label}"', 1)


def _table_html(rows: list[dict]) -> str:
    body = "".join(
        f"<tr><td>{html.escape(_marked(r))}</td><td>{r['limit']}</td><td>{_forgiven_text(r)}</td>"
        f"<td>{dead_text(r)}</td></tr>" for r in rows)
    notes = "".join(f"<p>{html.escape(note)}</p>" for note in _notes(rows))
    return ("<table><tr><th>queue</th><th>limit</th><th>lost leases forgiven</th>"
            f"<th>healthy jobs dead a week</th></tr>{body}</table>{notes}")


def restart_costs():
    """The model with a number field for each input; the table and the figure redrawn into one
    HTML area on each change (no Output area, so a stored notebook holds only the text below).
    Number fields, not sliders: an ipywidgets slider's handle has no accessible name, while a
    number field's label names it, and its arrow keys step it as a slider's do."""
    import ipywidgets as w

    class RestartCosts(w.VBox):
        def __init__(self):
            # The labels carry their units and are never cut off (description_width).
            wide = {"description_width": "initial"}
            number = w.BoundedIntText
            self.controls = {
                "jobs_in_flight": number(200, 0, 2000, 50, description="jobs in flight", style=wide),
                "restarts_per_week": number(2, 0, 20, 1, description="restarts a week", style=wide),
                "job_minutes": number(30, 1, 240, 1, description="job length (min)", style=wide),
                "lease_s": number(30, 5, 300, 5, description="lease (s)", style=wide),
                "down_s": number(60, 1, 600, 1, description="each restart down (s)", style=wide),
            }
            self.shown = w.HTML()
            super().__init__([*self.controls.values(), self.shown])
            for control in self.controls.values():
                control.observe(self.update, names="value")
            self.update()

        def update(self, _change=None):
            self.rows = restart_dead_letters(**{k: c.value for k, c in self.controls.items()})
            self.shown.value = _table_html(self.rows) + _figure_svg(self.rows)

        def __repr__(self) -> str:
            return "RestartCosts: five number fields, the table and the figure of the model"

    return RestartCosts()
