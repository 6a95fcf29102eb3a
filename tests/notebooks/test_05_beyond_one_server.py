"""Notebook 05's module (the replica, the failback's INFO fields, the append-only file, the
other queues as 05 shows them) and its exercise.

The other queues: the stored recordings as 05's table shows them, BullMQ's reconnect waits
beside its recorded short restart, and the RQ cell's lines and its keeping of a kernel's play,
held here on the stored recording; RQ itself is played live by 05's cell under nbval (and by
tests/peers/test_rq_live.py), not here.

Notebook 05's exercise, hand the primary role to the replica: the checker against a catalogue
of wrong handovers it must reject, each with a message that helps without naming the commands,
and of right ones it must accept. Every check starts two servers of its own and stops them."""

import contextlib
import copy
import re

import pytest

import peers
import trafikey_lab.course as course
from trafikey_lab.course import beyond_one_server as beyond
from trafikey_lab.course.beyond_one_server import check_promotion
from trafikey_lab.course.feedback import RIGHT, WRONG
from trafikey_lab.errors import LabError
from trafikey_lab.executors import Queue
from trafikey_lab.live.choose import choose_server
from trafikey_lab.live.server import LabServer
from trafikey_lab.module import native

QUEUE = Queue("{beyond}")


def lines(shown):
    return "\n".join(shown.lines)


def value(line: str) -> str:
    """What a line of a Shown reads: the text after its last colon."""
    return line.rsplit(":", 1)[1].strip()


def test_a_replica_holds_the_primarys_stamp_and_refuses_all_four_verbs(lab, live):
    role, same, stamp, *verbs = beyond.replica_copy(lab, QUEUE).lines
    assert (value(role), value(same), value(stamp)) == ("slave", "True", "True")
    assert [line.split()[0] for line in verbs] == list(beyond.VERBS)
    assert [line.rsplit(" ", 1)[1] for line in verbs] == ["READONLY"] * 4
    assert live.dataset() == {}, "the primary's queue is emptied afterwards"


def test_a_failback_changes_the_replication_id_but_never_the_run_id(lab):
    run_id = lab.run_id
    shown = beyond.failback_fields(lab).lines
    changed = {line.split(":")[0]: tuple(re.findall(r"\b(same|changed)\b", line))
               for line in shown}
    assert changed == {"run_id": ("same", "same"), "master_replid": ("changed", "changed"),
                       "role": ("changed", "same")}
    assert lab.client.info("server")["run_id"] == run_id
    assert lab.client.info("replication")["role"] == "master"


def test_a_server_the_lab_did_not_start_is_not_given_a_replica():
    external = choose_server(url="redis://127.0.0.1:1")
    assert "not run: the lab is using a server it did not start" in lines(
        beyond.replica_copy(external, QUEUE))
    assert "Unset TRAFIKEY_VALKEY_URL" in lines(beyond.failback_fields(external))


def test_the_append_only_file_holds_the_claims_writes_not_the_verb_nor_the_password(monkeypatch):
    # In a workshop, TRAFIKEY_VALKEY_URL names the shared server; the file is still read from a
    # server the lab starts for it alone (attaching to the shared one could not restart it).
    monkeypatch.setenv("TRAFIKEY_VALKEY_URL", "redis://127.0.0.1:1")
    # the keys as printed: with the URL set they would carry the learner's namespace
    monkeypatch.setenv("TRAFIKEY_NAMESPACE", "")
    shown = list(beyond.aof_claim(QUEUE).lines)
    commands = [line.split() for line in shown if line.startswith("  ")]
    deadline = commands[3]
    assert deadline[:2] == ["ZADD", "{beyond}:active"]
    assert deadline[3] == "job-1"
    assert deadline[2].isdigit()
    assert commands[:3] + commands[4:] == [
        ["MULTI"],
        ["ZREM", "{beyond}:pending", "job-1"],
        ["HSET", "{beyond}:job:job-1", "state", "active", "attempts", "1", "lease_epoch",
         "<this", "process's", "run_id>"],
        ["EXEC"],
    ]
    verb, password, replayed, not_new = (value(line) for line in shown[-4:])
    assert (verb, password, replayed, not_new) == ("False", "False", "True", "True")


def test_resp_text_is_read_command_by_command_and_anything_else_is_refused():
    data = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$4\r\nHSET\r\n$1\r\nk\r\n$0\r\n\r\n"
    assert beyond.parse_resp_commands(data) == [[b"SELECT", b"0"], [b"HSET", b"k", b""]]
    with pytest.raises(LabError, match="not RESP text"):
        beyond.parse_resp_commands(b"SET k v\r\n")


def test_a_replica_is_stopped_and_its_folder_removed_when_the_cell_fails_midway(lab, live,
                                                                             monkeypatch):
    started = []
    real_start = LabServer.start

    def start(self):
        server = real_start(self)
        started.append((self, self.data_dir))
        return server

    def fail(live, queue):
        raise RuntimeError("the cell failed here")

    monkeypatch.setattr(LabServer, "start", start)
    monkeypatch.setattr(beyond, "_try_each_verb", fail)
    with pytest.raises(RuntimeError, match="the cell failed here"):
        beyond.replica_copy(lab, QUEUE)
    ((replica, folder),) = [(server, folder) for server, folder in started if server is not lab]
    assert not replica.running
    assert folder is not None
    assert not folder.exists()
    assert live.dataset() == {}


# -- the other queues, measured ----------------------------------------------------------------

COLUMN = {"stalled": "stall", "restarted": "restart", "short_restart": "short restart"}


def test_the_table_shows_each_recording_with_trafikeys_runs_not_measured():
    stored = peers.recordings()
    shown = beyond.other_queues()
    rows = {row["queue"]: row for row in shown.rows}
    assert list(rows) == [r.library for r in stored.values()] + ["trafikey"]
    for recording in stored.values():
        for history, outcome in recording.histories.items():
            assert (f"counted {outcome.counted}, {outcome.fate}"
                    == rows[recording.library][COLUMN[history]])
    lab = stored["rq"].trafikey
    for history, column in COLUMN.items():
        assert rows["trafikey"][column] == (f"counted {lab[history]['counted']}, "
                                            f"{lab[history]['fate']}")
    # the lab's player runs no job: its runs are not set beside the libraries' as a number
    assert not re.search(r"\d", rows["trafikey"]["runs"])


def test_under_the_table_each_queue_has_its_versions_lease_and_downtimes():
    stored = peers.recordings()
    notes = beyond.other_queues().notes
    for recording in stored.values():
        (line,) = [n for n in notes if n.startswith(f"{recording.library}: ")]
        for name, version in recording.versions.items():
            if name != "valkey-server":
                assert f"{name} {version}" in line
        assert recording.lease in line
        downs = [f"{recording.histories[h].settings['down_s']:g} s"
                 for h in ("restarted", "short_restart")]
        assert re.findall(r"down (\S+ s)|one (\S+ s)", line) == [(downs[0], ""), ("", downs[1])]
    (lab,) = [n for n in notes if n.startswith("trafikey: ")]
    assert re.findall(r"([\d.]+) s", lab) == ["1", "2", "0.2"]
    (server,) = {r.versions["valkey-server"] for r in stored.values()}
    assert any(f"valkey-server {server}" in n for n in notes)


def test_the_table_as_text_and_as_html_holds_the_same_cells():
    shown = beyond.other_queues()
    text, page = repr(shown), shown._repr_html_()
    for row in shown.rows:
        assert all(cell in text for cell in row.values())
        assert "".join(f"<td>{cell}</td>" for cell in row.values()).replace("'", "&#x27;") in page
    assert page.count("<th>") == len(shown.columns)


def test_bullmqs_default_waits_put_its_reconnect_attempts_where_its_source_says():
    # max(min(e^n ms, 20 s), 1 s): 1 s for n up to 6, then e^7, e^8, e^9 ms, then 20 s
    assert beyond.bullmq_attempts(25) == pytest.approx(
        [1, 2, 3, 4, 5, 6, 7.0966, 10.0776, 18.1807, 38.1807], abs=1e-3)
    assert beyond.bullmq_delay_ms(1) == 1000
    assert beyond.bullmq_delay_ms(50) == 20_000
    assert beyond.bullmq_attempts(0.5) == [1.0]


def test_the_recorded_short_restart_is_under_bullmqs_lock_and_its_workers_came_back_past_it():
    short = peers.recording("bullmq").histories["short_restart"]
    down, back = short.timings["down_s"], short.timings["workers_back_s"]
    assert down < beyond.BULLMQ_LOCK_S < down + back
    # the first attempt the default waits give after the server is back is when a worker's
    # connection was seen again: the back-off, not anything else, kept the workers away
    assert beyond.bullmq_attempts(down)[-1] == pytest.approx(down + back, abs=1.0)
    assert (short.counted, short.fate, short.runs) == (1, "completed", 2)
    shown = beyond.bullmq_backoff().lines
    assert [float(t) for t in value(shown[1]).split()] == pytest.approx(
        beyond.bullmq_attempts(down), abs=0.05)
    assert f"{down:.1f} s" in shown[2]
    assert f"{down + back:.1f} s" in shown[4]
    assert re.findall(r"\d+", shown[5]) == ["1", "2"]


@pytest.fixture
def stored_rq(monkeypatch):
    """peers.play_rq standing in with the stored recording, counting its calls: the lines and
    the kept play are held here; RQ itself is played by 05's cell under nbval."""
    calls = []

    def play():
        calls.append(1)
        played = copy.deepcopy(peers.recording("rq"))
        played.histories.pop("short_restart")
        played.trafikey.pop("short_restart")
        return played

    monkeypatch.setattr(beyond, "_rq_played", None)
    monkeypatch.setattr(peers, "play_rq", play)
    return calls


def test_the_rq_cell_says_why_it_takes_a_minute_first_then_each_history_beside_trafikeys(
        stored_rq, capsys):
    shown = beyond.play_rq().lines
    assert capsys.readouterr().out.strip() == peers.RQ_LIVE_WHY
    stored = peers.recording("rq")
    for history in peers.LIVE_RQ_HISTORIES:
        (line,) = [line for line in shown if line.startswith(peers.TITLES[history])]
        rq, lab = stored.histories[history], stored.trafikey[history]
        assert re.findall(r"counted (\d+), ([a-z -]+?)(?:,| ·|$)", line) == [
            (str(rq.counted), rq.fate), (str(lab["counted"]), lab["fate"])]
        assert f"ran {rq.runs} times" in line
    assert shown[-1].endswith(": yes")
    assert f"RQ {stored.versions['rq']}" in shown[0]


def test_run_again_in_one_kernel_the_rq_cell_shows_its_play_at_once_unless_asked_anew(
        stored_rq, capsys):
    first = beyond.play_rq()
    capsys.readouterr()
    assert beyond.play_rq() is first
    assert stored_rq == [1]
    said = capsys.readouterr().out
    assert "again=True" in said
    assert peers.RQ_LIVE_WHY not in said
    beyond.play_rq(again=True)
    assert stored_rq == [1, 1]


def test_a_play_that_differs_from_the_recording_says_where(stored_rq, monkeypatch):
    def changed():
        played = copy.deepcopy(peers.recording("rq"))
        played.histories["restarted"].runs = 3
        return played

    monkeypatch.setattr(peers, "play_rq", changed)
    last = beyond.play_rq().lines[-1]
    assert ": no: " in last
    assert "runs was 2, now 3" in last


def test_in_a_page_the_recordings_read_as_outside_one_and_the_rq_play_refuses(monkeypatch):
    outside = (beyond.other_queues(), beyond.bullmq_backoff())
    monkeypatch.setattr(native, "in_page", lambda: True)
    assert (beyond.other_queues(), beyond.bullmq_backoff()) == outside
    monkeypatch.setattr(peers, "play_rq", lambda: pytest.fail("RQ played in a page"))
    with pytest.raises(course.NoServerHere, match="is not in this page"):
        beyond.play_rq()


# -- the exercise: the promotion -------------------------------------------------------------------

def does_nothing(primary, replica):
    pass


def replica_follows_itself(primary, replica):
    replica.client.execute_command("REPLICAOF", replica.host, str(replica.port))


def failover_sent_to_the_replica(primary, replica):
    replica.client.execute_command("FAILOVER")


def replica_made_writable(primary, replica):
    replica.client.config_set("replica-read-only", "no")


def promote_sent_to_the_primary(primary, replica):
    primary.client.execute_command("REPLICAOF", "NO", "ONE")


def promote_only(primary, replica):
    replica.client.execute_command("REPLICAOF", "NO", "ONE")


def demote_only(primary, replica):
    primary.client.execute_command("REPLICAOF", replica.host, str(replica.port))


def old_primary_pointed_at_itself(primary, replica):
    replica.client.execute_command("REPLICAOF", "NO", "ONE")
    primary.client.execute_command("REPLICAOF", primary.host, str(primary.port))


def promoted_then_emptied(primary, replica):
    replica.client.execute_command("REPLICAOF", "NO", "ONE")
    replica.client.flushall()
    primary.client.execute_command("REPLICAOF", replica.host, str(replica.port))


def a_typo(primary, replica):
    replica.clinet.execute_command("REPLICAOF", "NO", "ONE")


def hand_over_then(also):
    """A right handover, then `also(primary, replica)`: the wrong part comes after the roles."""
    def hand_over(primary, replica):
        replica.client.execute_command("REPLICAOF", "NO", "ONE")
        also(primary, replica)
        primary.client.execute_command("REPLICAOF", replica.host, str(replica.port))

    hand_over.__name__ = also.__name__
    return hand_over


def _stamp_forged(primary, replica):
    replica.client.hset("{promote}:job:job-1", "lease_epoch", "banana")


def _stamp_deleted(primary, replica):
    replica.client.hdel("{promote}:job:job-1", "lease_epoch")


def _deadline_moved(primary, replica):
    replica.client.zadd("{promote}:active", {"job-1": 1})


def promoted_then_old_primary_stopped(primary, replica):
    replica.client.execute_command("REPLICAOF", "NO", "ONE")
    primary.stop()


def replica_stopped(primary, replica):
    replica.stop()


def old_primary_left_writable(primary, replica):
    replicaof(primary, replica)
    primary.client.config_set("replica-read-only", "no")


def old_primary_shut_down_by_command(primary, replica):
    replica.client.execute_command("REPLICAOF", "NO", "ONE")
    # redis-py raises when the connection closes under it, or not
    with contextlib.suppress(Exception):
        primary.client.shutdown(nosave=True)


WRONG_HANDOVERS = [
    (does_nothing, "nothing changed in the roles"),
    (replica_follows_itself, "the replica now follows itself"),
    (failover_sent_to_the_replica, "FAILOVER is not valid when server is a replica. Check "
                                   "which server each command is sent to"),
    (replica_made_writable, "the replica accepts writes now (replica-read-only no)"),
    (promote_sent_to_the_primary, "nothing changed in the roles"),
    (promote_only, "both servers now answer as primaries"),
    (demote_only, "neither server answers as a primary: the old primary follows the replica, "
                  "and the replica follows the old primary"),
    (old_primary_pointed_at_itself, "the old primary follows itself, not the new primary"),
    (promoted_then_emptied, "the lease the old primary granted is gone from the new primary"),
    (a_typo, "hand_over raised AttributeError: 'OwnedServer' object has no attribute 'clinet'. "
             "Fix it and run the cell again."),
    # A forgery: the sweep finds a stamp that is not the new primary's run_id, so it would call
    # the lease exempt; the stamp must be the old primary's, byte for byte, and the row as granted.
    (hand_over_then(_stamp_forged), "the lease on the new primary is not the one the old primary "
                                    "granted: its lease_epoch changed"),
    (hand_over_then(_stamp_deleted), "the lease on the new primary is not the one the old "
                                     "primary granted: its lease_epoch changed"),
    (hand_over_then(_deadline_moved), "not the one the old primary granted: its deadline changed"),
    (old_primary_left_writable, "the old primary accepted a sweep: it is still writable: a worker "
                                "could extend a lease there."),
    (promoted_then_old_primary_stopped, "hand_over stopped the old primary: its process is gone"),
    (replica_stopped, "hand_over stopped the replica: its process is gone"),
    (old_primary_shut_down_by_command, "hand_over stopped the old primary"),
]

COMMANDS = ("REPLICAOF", "SLAVEOF", "NO ONE", "FAILOVER", "replicaof")


@pytest.mark.parametrize(("hand_over", "says"), WRONG_HANDOVERS,
                         ids=[h.__name__ for h, _ in WRONG_HANDOVERS])
def test_the_handover_checker_rejects_each_wrong_handover_saying_what_is_wrong(hand_over, says):
    feedback = check_promotion(hand_over)  # a finding, never an exception, whatever it does
    assert not feedback.right
    assert WRONG in feedback.kinds
    assert says in feedback.text
    if hand_over is not failover_sent_to_the_replica:  # the server's own error names its command
        assert not any(command in feedback.text for command in COMMANDS), feedback.text


def replicaof(primary, replica):
    replica.client.execute_command("REPLICAOF", "NO", "ONE")
    primary.client.execute_command("REPLICAOF", replica.host, str(replica.port))


def slaveof(primary, replica):
    replica.client.execute_command("SLAVEOF", "NO", "ONE")
    primary.client.execute_command("SLAVEOF", replica.host, str(replica.port))


def the_clients_own_methods(primary, replica):
    replica.client.replicaof("NO", "ONE")
    primary.client.replicaof(replica.host, replica.port)


def old_primary_demoted_first(primary, replica):
    primary.client.execute_command("REPLICAOF", replica.host, str(replica.port))
    replica.client.execute_command("REPLICAOF", "NO", "ONE")


def a_coordinated_failover(primary, replica):
    primary.client.execute_command("FAILOVER")


def a_coordinated_failover_to_the_replica(primary, replica):
    primary.client.execute_command("FAILOVER", "TO", replica.host, str(replica.port))


RIGHT_HANDOVERS = [replicaof, slaveof, the_clients_own_methods, old_primary_demoted_first,
                   a_coordinated_failover, a_coordinated_failover_to_the_replica]


@pytest.mark.parametrize("hand_over", RIGHT_HANDOVERS, ids=[h.__name__ for h in RIGHT_HANDOVERS])
def test_the_handover_checker_accepts_each_right_handover(hand_over):
    feedback = check_promotion(hand_over)
    assert feedback.right, repr(feedback)
    assert feedback.kinds == [RIGHT, RIGHT, RIGHT]
    assert "the old primary answers the sweep with READONLY" in feedback.text
    assert "sends the old primary's lease back to pending uncounted" in feedback.text
    assert "the row's stamp is byte for byte the old primary's run_id" in feedback.text


@pytest.mark.parametrize("also", [_stamp_forged, _stamp_deleted])
def test_a_forged_stamp_is_never_called_exempt(also):
    """The sweep would find "banana", or no stamp, exempt too: the checker says the row is not
    the granted one instead of crediting the handover with the sweep's verdict."""
    feedback = check_promotion(hand_over_then(also))
    assert feedback.kinds == [RIGHT, RIGHT, WRONG]
    assert "pending uncounted" not in feedback.text
    assert "the old primary's run_id" not in feedback.text


def test_the_handover_checker_promises_only_what_it_checks():
    """The docstring names what a right answer must show; each part is one the checker looks at."""
    doc = " ".join(check_promotion.__doc__.split())
    assert "a run_id of its own" not in doc
    assert "byte for byte as the old primary granted them" in doc
    assert "never an exception" in doc


def test_a_hand_over_that_is_not_a_function_is_called_wrong_before_any_server_starts(
        monkeypatch):
    from trafikey_lab.live import owned

    def no_server(*args, **options):
        raise AssertionError("a server was started")

    # the checker loads the server's kind when called (05's face imports with no redis)
    monkeypatch.setattr(owned, "OwnedServer", no_server)
    feedback = check_promotion("REPLICAOF NO ONE")
    assert feedback.kinds == [WRONG]
    assert "define it as a function" in feedback.text
