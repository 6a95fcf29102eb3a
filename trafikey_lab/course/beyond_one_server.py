"""Notebook 05, beyond one server: a replica, a failback, the append-only file, other queues
played for real beside trafikey (from `peers`), and the notebook's exercise, a promotion.

The live parts each start the extra servers they need (a replica through
live.replicas.replica_of, an append-only server of their own, RQ's servers through peers) and
stop them, folders removed, however the run ends. Each returns what it compared, with no
run_id, port, path or timing that changes from run to run.

What this module adds to the peers API (peers/__init__.py): the recordings as 05 shows them
(trafikey's runs marked as not measured, the versions and leases under the table), BullMQ's
reconnect delays beside its recorded short restart, and a kernel's RQ play kept, so that
running the cell again shows it at once unless asked to play anew. The recordings read in a
page with no server (peers loads redis only for a live play); RQ's play refuses there.
"""

from __future__ import annotations

import html
import math
import time
from dataclasses import dataclass

import peers
from trafikey_lab import live as servers
from trafikey_lab.course import attempts, needs_servers_of_its_own
from trafikey_lab.course.feedback import (
    RIGHT,
    WRONG,
    Feedback,
    Finding,
    feedback,
)
from trafikey_lab.course.limits import Shown, failback, promoted_replica, unavailable
from trafikey_lab.errors import LabError, ReplyError
from trafikey_lab.executors import Queue
from trafikey_lab.stories import JOB, LEASE_MS
from trafikey_lab.text import plain

__all__ = ["aof_claim", "bullmq_backoff", "check_promotion", "failback", "failback_fields",
           "other_queues", "play_rq", "promoted_replica", "replica_copy"]

VERBS = ("EMQ.CLAIM", "EMQ.EXTEND", "EMQ.EXTENDS", "EMQ.STALLED.CHECK")
"""The module's four verbs: each one writes, so a replica refuses each one."""


def _try_each_verb(live: servers.LiveExecutor, queue: Queue) -> dict[str, str]:
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


def replica_copy(server: servers.LabServer, queue: Queue) -> Shown:
    """A lease granted on `server`; a module-loaded replica holds the same bytes, stamp
    included, and refuses every verb with READONLY."""
    if (refused := unavailable(server, "a replica")) is not None:
        return refused
    primary = servers.LiveExecutor(server)
    primary.clear(queue)
    primary.add(queue, JOB, b"hello")
    primary.claim(queue, LEASE_MS)
    try:
        with servers.replica_of(server) as replica:
            copy = servers.LiveExecutor(replica)
            same = copy.dataset(queue) == primary.dataset(queue)
            stamp = copy.row(queue, JOB).get(b"lease_epoch")
            answers = _try_each_verb(copy, queue)
            role = copy.client.info("replication")["role"]
    finally:
        primary.clear(queue)
    return Shown((
        f"the replica's role: {role}",
        f"every key of the queue, byte for byte the same on both: {same}",
        f"the replica's stamp is the primary's run_id: {stamp == primary.run_id.encode()}",
        *(f"{verb} on the replica → {answer}" for verb, answer in answers.items()),
    ))


FIELDS = ("run_id", "master_replid", "role")


def _fields(server: servers.LabServer) -> dict[str, str]:
    client = servers.client_of(server)
    info = {**client.info("server"), **client.info("replication")}
    return {name: str(info[name]) for name in FIELDS}


def failback_fields(server: servers.LabServer) -> Shown:
    """`server` hands over to a replica, follows it, then is promoted back with no restart.
    Which of the INFO fields a stamp could hold changed across that, and which did not."""
    if (refused := unavailable(server, "a failover")) is not None:
        return refused
    before = _fields(server)
    with servers.failed_over(server):
        during = _fields(server)
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


def aof_commands(server: servers.OwnedServer) -> list[list[bytes]]:
    """The commands in `server`'s incremental append-only files, oldest first."""
    assert server.data_dir is not None, "a server that has started has its folder"
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
    needs_servers_of_its_own("A server of its own with an append-only file")
    secret = servers.owner_secret()
    with servers.OwnedServer(persistence="aof", password=secret) as server:
        live = servers.LiveExecutor(server)
        live.add(queue, JOB, b"hello")
        live.claim(queue, LEASE_MS)
        run_id = live.run_id.encode()
        commands = aof_commands(server)
        stamp = live.row(queue, JOB).get(b"lease_epoch")
        new_run_id = server.restart()
        replayed = live.row(queue, JOB).get(b"lease_epoch")
    claim_at = max(i for i, c in enumerate(commands) if c[0] == b"ZREM")
    return Shown((
        "the commands the claim left in the append-only file:",
        *(f"  {_command_line(c, run_id)}" for c in commands[claim_at - 1:]),
        "a verb of the module among them: "
        f"{any(c[0].upper().startswith(b'EMQ.') for c in commands)}",
        f"the password anywhere in the file: "
        f"{any(secret.encode() in word for c in commands for word in c)}",
        f"after a restart, the replayed row's stamp is the one written: {replayed == stamp}",
        f"and it is not the new process's run_id: {replayed != new_run_id.encode()}",
    ))


# -- other queues, measured (peers) -----------------------------------------------------------

NOT_MEASURED = "not measured"
TRAFIKEY_RUNS = ("trafikey's runs are not measured: the lab's player claims and sweeps, and no "
                 "worker runs the job. A job its sweep sends back to pending runs again when a "
                 "worker claims it.")


@dataclass(frozen=True)
class Measured:
    """The side-by-side table of the stored recordings, with the lines under it: shown as
    text, and as an HTML table where a page renders one."""

    rows: tuple[dict[str, str], ...]
    columns: tuple[str, ...]
    notes: tuple[str, ...]

    def __repr__(self) -> str:
        widths = {c: max(len(c), *(len(r[c]) for r in self.rows)) for c in self.columns}
        lines = ["  ".join(c.ljust(widths[c]) for c in self.columns).rstrip()]
        lines += ["  ".join(r[c].ljust(widths[c]) for c in self.columns).rstrip()
                  for r in self.rows]
        return "\n".join([*lines, "", *self.notes])

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(r[c])}</td>" for c in self.columns)
                       + "</tr>" for r in self.rows)
        notes = "".join(f"<p>{html.escape(note)}</p>" for note in self.notes)
        return f"<table><tr>{head}</tr>{body}</table>{notes}"


def other_queues() -> Measured:
    """The stored recordings side by side (peers.table), trafikey's row last with its runs
    marked as not measured; under the table, each queue's versions, what runs out and how long
    its restarts kept the server down. 05's prose names the command that plays them again,
    peers.REPLAY."""
    stored = peers.recordings()
    rows = [dict(row) for row in peers.table(stored)]
    for row in rows:
        if row["queue"] == "trafikey":
            row["runs"] = f"{NOT_MEASURED}*"
    servers_used = ", ".join(sorted({r.versions["valkey-server"] for r in stored.values()}))
    notes = [
        "runs: how often the job started in the stall / the restart / the short restart; "
        "(at once): two runs in flight together.",
        f"* {TRAFIKEY_RUNS}",
        *(f"{r.library}: {_versions(r)}; what runs out: {r.lease}; the restart down "
          f"{_down(r, 'restarted')}, the short one {_down(r, 'short_restart')}"
          for r in stored.values()),
        *(f"trafikey: this lab's module, max_stalled 1; what runs out: a {_lab_lease(lab)} "
          f"lease; the restart down {lab['restarted']['settings']['down_s']:g} s, the short "
          f"one {lab['short_restart']['settings']['down_s']:g} s" for lab in _lab(stored)),
        f"Each played on valkey-server {servers_used}, started for it, with the append-only "
        "file on.",
    ]
    return Measured(tuple(rows), tuple(peers.COLUMNS), tuple(notes))


def _lab(stored) -> list[dict]:
    """trafikey's histories beside the first recording that has them (peers.table's row)."""
    return [r.trafikey for r in stored.values() if r.trafikey][:1]


def _lab_lease(lab: dict) -> str:
    return f"{lab['stalled']['settings']['lease_ms'] / 1000:g} s"


def _versions(recording) -> str:
    return ", ".join(f"{name} {version}" for name, version in recording.versions.items()
                     if name != "valkey-server")


def _down(recording, history: str) -> str:
    return f"{recording.histories[history].settings['down_s']:g} s"


BULLMQ_LOCK_S = 30.0
"""BullMQ's default lockDuration (30000 ms, the Worker's defaults in worker.ts)."""
BULLMQ_MAX_DELAY_MS = 20_000
BULLMQ_MIN_DELAY_MS = 1_000


def bullmq_delay_ms(attempt: int) -> float:
    """BullMQ's default reconnect delay before retry `attempt` (1, 2, ...), as its
    RedisConnection hands ioredis: max(min(e^attempt ms, 20 s), 1 s)."""
    return max(min(math.exp(attempt), BULLMQ_MAX_DELAY_MS), BULLMQ_MIN_DELAY_MS)


def bullmq_attempts(until_s: float) -> list[float]:
    """The seconds, after the connection was lost, at which BullMQ's default delays bring the
    reconnect attempts, up to and including the first at or after `until_s`."""
    at, times = 0.0, []
    for attempt in range(1, 1000):
        at += bullmq_delay_ms(attempt) / 1000
        times.append(at)
        if at >= until_s:
            return times
    raise ValueError(f"no attempt within {until_s} s")


def bullmq_backoff() -> Shown:
    """BullMQ's recorded short restart (its defaults, the server down for less than the lock)
    beside the reconnect attempts its default delays give: the first attempt after the server
    is back, and when the workers were seen back."""
    recorded = peers.recording("bullmq")
    short = recorded.histories["short_restart"]
    down = short.timings["down_s"]
    back = short.timings["workers_back_s"]
    if down is None or back is None:
        raise LabError("BullMQ's recording has no timings for its short restart: run make peers")
    attempts_s = bullmq_attempts(down)
    return Shown((
        f"BullMQ {recorded.versions['bullmq']}, its defaults: a {BULLMQ_LOCK_S:g} s lock; "
        "before reconnect attempt n, a wait of max(min(e^n ms, 20 s), 1 s)",
        "its attempts, in seconds after the server went away: "
        + " ".join(f"{t:.1f}" for t in attempts_s),
        f"the short restart, as recorded: the server down {down:.1f} s, "
        f"{_beside_lock(down)}",
        f"the first attempt after the server is back, by those waits: {attempts_s[-1]:.1f} s",
        f"a worker's connection seen again, as recorded: {down + back:.1f} s, "
        f"{_beside_lock(down + back)}",
        f"the job: counted {short.counted}, {short.fate}, ran {short.runs} times"
        + (", two runs at once" if short.overlap else ""),
    ))


def _beside_lock(seconds: float) -> str:
    return "within the lock" if seconds < BULLMQ_LOCK_S else "past the lock"


_rq_played: tuple[float, Shown] | None = None
"""This kernel's RQ play and when it ended: shown again, at once, when the cell runs again."""


def play_rq(again: bool = False) -> Shown:
    """RQ's stall and restart played now, trafikey's beside each on the same server, both
    histories at once (peers.play_rq): about peers.RQ_LIVE_SECONDS seconds, for the reason
    peers.RQ_LIVE_WHY gives, which is printed first. Run again in the same kernel, it shows the
    play it made, saying so, unless `again`."""
    global _rq_played
    needs_servers_of_its_own("RQ's play, on servers of its own,")
    if _rq_played is not None and not again:
        ended, shown = _rq_played
        print(f"This kernel played RQ {time.monotonic() - ended:.0f} s ago: shown again. "
              f"beyond.play_rq(again=True) plays it anew, in about {peers.RQ_LIVE_SECONDS} s.")
        return shown
    print(peers.RQ_LIVE_WHY, flush=True)
    played = peers.play_rq()
    shown = _rq_lines(played, peers.differences(peers.recording("rq"), played), peers.TITLES)
    _rq_played = (time.monotonic(), shown)
    return shown


def _rq_lines(played, differences: list[str], titles: dict[str, str]) -> Shown:
    """What an RQ play showed: for each history (titled by `titles`), RQ's count, fate and
    runs beside trafikey's count and fate, and whether its facts are the stored recording's."""
    lab = played.trafikey
    lines = [f"RQ {played.versions['rq']}, {played.budget} · trafikey, max_stalled 1, a "
             f"{_lab_lease(lab)} lease · each history on a server of its own"]
    for history, outcome in played.histories.items():
        beside = lab[history]
        lines.append(f"{titles[history]}: RQ counted {outcome.counted}, {outcome.fate}, ran "
                     f"{outcome.runs} times · trafikey counted {beside['counted']}, "
                     f"{beside['fate']}")
        if outcome.settings["down_s"]:
            lines.append(f"  the server down {outcome.settings['down_s']:g} s for RQ, "
                         f"{beside['settings']['down_s']:g} s for trafikey: longer than each "
                         "one's lease")
    lines.append("counted, fate and runs as the stored recording has them: "
                 + ("yes" if not differences else "no: " + "; ".join(differences)))
    return Shown(tuple(lines))


# -- 05: promote the replica -------------------------------------------------------------------

PROMOTE_QUEUE = Queue("{promote}")

SETTLE_S = 5.0
"""How long the roles may take to settle once hand_over returns: FAILOVER works in the
background, and a demoted primary syncs from its new primary."""


def _settled(primary, replica) -> tuple[dict, dict]:
    """INFO replication of both servers once the handover is done, or once nothing is moving:
    a FAILOVER under way, or the old primary still syncing from the replica, is moving."""
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


def _hand_over_failed(outcome) -> str | None:
    """What went wrong when hand_over ran too long or raised, else None (it returned)."""
    if (failed := attempts.failed(outcome)) is None:
        return None
    if isinstance(outcome, attempts.TimedOut):
        return f"hand_over {failed}: a handover sends a few commands and returns."
    advice = ("Check which server each command is sent to: a command acts on the server that "
              "receives it, and a server refuses what its role does not allow."
              if isinstance(outcome.error, servers.ResponseError) else "Fix it and run the "
              "cell again.")
    return f"hand_over {failed.rstrip('.')}. {advice}"


def _old_primary_sweeps(primary, queue: Queue) -> Finding:
    """Right when the old primary refuses a sweep with READONLY, as a replica refuses every
    write; wrong when it sweeps, or refuses for another reason."""
    try:
        servers.LiveExecutor(primary).sweep(queue, 1)
        refused = None
    except ReplyError as refusal:
        refused = refusal.text.split(" ", 1)[0]
    if refused == "READONLY":
        return Finding(RIGHT, "the old primary answers the sweep with READONLY: no worker can "
                              "extend a lease there now")
    if refused is None:
        return Finding(WRONG, "the old primary accepted a sweep: it is still writable: a worker "
                              "could extend a lease there.")
    return Finding(WRONG, f"the old primary answers the sweep with {refused}, not READONLY: a "
                          "replica refuses every write.")


def check_promotion(hand_over, *, live=None, queue: Queue = PROMOTE_QUEUE) -> Feedback:
    """The learner's `hand_over(primary, replica)`, given two servers of the lab (each with
    .client, .host and .port), where `replica` follows `primary` and holds a lease `primary`
    granted. Right when, within SETTLE_S of its return, both servers still run, the replica
    answers as a primary, the old primary follows it in sync and refuses the module's verbs, the
    new primary holds the lease's row and deadline byte for byte as the old primary granted them
    (its stamp the old primary's run_id, which is not the new primary's), and the new primary's
    sweep, max_stalled 1, finds the lease exempt. Both servers are started for the check alone,
    and stopped afterwards, however it ends (so `live`, taken as every checker takes it, is not
    used). Whatever hand_over does, the answer is a finding,
    never an exception."""
    needs_servers_of_its_own("The check's two servers of its own")
    exercise = "hand the primary role to the replica"
    if isinstance(attempts.screen(hand_over, library=(), library_names=set()),
                  attempts.NotAFunction):
        return feedback(exercise, [Finding(WRONG, f"hand_over is {hand_over!r}: define it as "
                                                   "a function, def hand_over(primary, "
                                                   "replica): ...")])
    # By default a primary waits 5 s for more replicas before a diskless sync, and a replica
    # saves the sync to disk in a thread it looks at once a second; a replica with nothing to
    # lose loads it as it comes. Either server is the other's primary at some point.
    quick_sync = ("--repl-diskless-sync-delay", "0", "--repl-diskless-load", "on-empty-db")
    with servers.OwnedServer(extra_args=quick_sync) as primary, \
            servers.OwnedServer(extra_args=quick_sync) as replica:
        granted = servers.LiveExecutor(primary)
        granted.add(queue, JOB, b"hello")
        granted.claim(queue, LEASE_MS)
        granted_row, granted_deadline = granted.row(queue, JOB), granted.deadline(queue, JOB)
        granted_run_id = granted.run_id
        # The lease reaches the replica in the snapshot of its first sync.
        servers.client_of(replica).execute_command("REPLICAOF", primary.host, str(primary.port))
        if not _holds_the_lease(primary, replica, queue, JOB):
            raise LabError(f"the replica was not in sync with the lease within {SETTLE_S:g} s. "
                           f"Its log says:\n{replica.log_tail()}")
        outcome = attempts.run(hand_over, primary, replica, library=(), library_names=set())
        if (failed := _hand_over_failed(outcome)) is not None:
            return feedback(exercise, [Finding(WRONG, failed)])
        if (gone := _gone(primary, replica)) is None:
            try:
                old, new = _settled(primary, replica)
            except servers.ConnectionError:
                # A server shut down from inside hand_over: its process may end only now.
                gone = _gone(primary, replica) or ("a server stopped answering once hand_over "
                                                   "had returned: a handover keeps both running.")
        if gone is not None:
            return feedback(exercise, [Finding(WRONG, gone)])
        if (problem := _roles_problem(old, new, primary, replica)) is not None:
            return feedback(exercise, [Finding(WRONG, problem)])
        findings = [Finding(RIGHT, "the replica answers as a primary, and the old primary "
                                   "follows it, in sync")]
        findings.append(_old_primary_sweeps(primary, queue))
        live = servers.LiveExecutor(replica)
        deadline = live.deadline(queue, JOB)
        if deadline is None:
            findings.append(Finding(WRONG, "the lease the old primary granted is gone from the "
                                           "new primary: the handover lost it"))
            return feedback(exercise, findings)
        if changes := _row_changes(live.row(queue, JOB), granted_row, deadline, granted_deadline):
            findings.append(Finding(WRONG, f"the lease on the new primary is not the one the old "
                                           f"primary granted: {' and '.join(changes)} changed. A "
                                           "handover moves roles, never rows: the new primary "
                                           "must hold the bytes the old one wrote, stamp "
                                           "included, or its sweep's verdict on the lease says "
                                           "nothing about the handover."))
            return feedback(exercise, findings)
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
    return feedback(exercise, findings)
