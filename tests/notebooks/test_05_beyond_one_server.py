"""Notebook 05's module (the replica, the failback's INFO fields, the append-only file) and the
model of what other queues charge for a restart (restart_costs.py), its figure and its widget.

Notebook 05's exercise, hand the primary role to the replica: the checker against a catalogue
of wrong handovers it must reject, each with a message that helps without naming the commands,
and of right ones it must accept. Every check starts two servers of its own and stops them."""

import contextlib
import decimal
import math

import pytest

from trafikey_lab import restart_costs
from trafikey_lab.course import beyond_one_server as beyond
from trafikey_lab.course.beyond_one_server import check_promotion
from trafikey_lab.course.feedback import RIGHT, WRONG
from trafikey_lab.errors import LabError
from trafikey_lab.executors import Queue
from trafikey_lab.live.choose import choose_server
from trafikey_lab.live.server import LabServer
from trafikey_lab.plots import alt, dead_letters
from trafikey_lab.widgets.restart_costs import RestartCosts

QUEUE = Queue("{beyond}")


def lines(shown):
    return "\n".join(shown.lines)


def test_a_replica_holds_the_primarys_stamp_and_refuses_all_four_verbs(lab, live):
    assert beyond.replica_copy(lab, QUEUE).lines == (
        "the replica's role: slave",
        "every key of the queue, byte for byte the same on both: True",
        "the replica's stamp is the primary's run_id: True",
        *(f"{verb} on the replica → READONLY" for verb in beyond.VERBS),
    )
    assert live.dataset() == {}, "the primary's queue is emptied afterwards"


def test_a_failback_changes_the_replication_id_but_never_the_run_id(lab):
    run_id = lab.run_id
    shown = beyond.failback_fields(lab).lines
    assert shown == (
        "run_id: while a replica same, after the failback same",
        "master_replid: while a replica changed, after the failback changed",
        "role: while a replica changed, after the failback same",
    )
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
    deadline = shown[4]
    assert deadline.startswith("  ZADD {beyond}:active ")
    assert deadline.endswith(" job-1")
    assert deadline.split()[2].isdigit()
    assert shown[:4] + shown[5:] == [
        "the commands the claim left in the append-only file:",
        "  MULTI",
        "  ZREM {beyond}:pending job-1",
        "  HSET {beyond}:job:job-1 state active attempts 1 lease_epoch <this process's run_id>",
        "  EXEC",
        "a verb of the module among them: False",
        "the password anywhere in the file: False",
        "after a restart, the replayed row's stamp is the one written: True",
        "and it is not the new process's run_id: True",
    ]


def test_resp_text_is_read_command_by_command_and_anything_else_is_refused():
    data = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$4\r\nHSET\r\n$1\r\nk\r\n$0\r\n\r\n"
    assert beyond.parse_resp_commands(data) == [[b"SELECT", b"0"], [b"HSET", b"k", b""]]
    with pytest.raises(LabError, match="not RESP text"):
        beyond.parse_resp_commands(b"SET k v\r\n")


def test_a_quick_restart_and_a_long_one_give_the_same_exempt_verdict():
    shown = beyond.downtime_verdicts(QUEUE, wait_s=1.2, lease_ms=800).lines
    assert shown[0].startswith("a quick restart: back before the lease ran out · sweep "
                               "[[b'job-1'], []] · stalled (none)")
    assert shown[1].startswith("down 1.2 s: back after the lease ran out · sweep [[b'job-1'], []] "
                               "· stalled (none)")
    assert shown[2] == "→ the same verdict: the stamp names a process, not a time"


def test_the_downtime_cell_says_so_when_even_the_quick_restart_outlasts_the_lease():
    # A 1 ms lease has run out before any restart is back: the contrast is not there to show.
    shown = beyond.downtime_verdicts(QUEUE, wait_s=0.2, lease_ms=1).lines
    assert shown[0].startswith("a quick restart: back after the lease ran out")
    assert shown[2] == ("→ the same verdict, but not the contrast: on this machine even the quick "
                        "restart took longer than the 1 ms lease")


def test_the_long_restart_must_outlast_the_lease():
    with pytest.raises(ValueError, match="longer than the lease"):
        beyond.downtime_verdicts(QUEUE, wait_s=0.5, lease_ms=1000)


def exact_tail(mean: str, at_least: int) -> float:
    """P(N >= at_least) as 1 - P(N < at_least), in 200-digit decimals: exact where floats are
    noise."""
    with decimal.localcontext() as context:
        context.prec = 200
        m = decimal.Decimal(mean)
        below = sum(m ** k / math.factorial(k) for k in range(at_least)) * (-m).exp()
        return float(1 - below)


def test_the_poisson_tail_matches_its_complement_and_is_never_noise():
    for mean, at_least in [(0.5, 1), (2.0, 3), (7.0, 4)]:
        below = sum(math.exp(-mean) * mean ** k / math.factorial(k) for k in range(at_least))
        assert restart_costs.poisson_tail(mean, at_least) == pytest.approx(1 - below)
    # Far in the tail, 1 - P(N < 26) in floats is 0.0: the value is about 2.5e-105.
    for mean, at_least in [("0.001", 26), ("0.00595", 5), ("0.3", 2)]:
        assert restart_costs.poisson_tail(float(mean), at_least) == pytest.approx(
            exact_tail(mean, at_least), rel=1e-12)
    assert restart_costs.poisson_tail(0.001, 26) == pytest.approx(2.4772e-105, rel=1e-4)
    assert restart_costs.poisson_tail(0.0, 1) == 0.0
    assert restart_costs.poisson_tail(0.0, 0) == 1.0


def test_trafikey_dead_letters_no_job_for_restarts_whatever_the_load():
    rows = restart_costs.restart_dead_letters(5000, 50, 240, 5, 600)
    by_queue = {r["queue"]: r["dead_per_week"] for r in rows}
    assert by_queue["trafikey"] == 0.0
    assert by_queue["BullMQ"] > by_queue["Amazon SQS"] > 0


def test_the_model_assumes_a_restart_shorter_than_the_lease_costs_no_queue_anything():
    rows = restart_costs.restart_dead_letters(200, 10, 30, lease_s=60, down_s=30)
    assert all(r["dead_per_week"] == 0.0 for r in rows)


def test_bullmqs_row_is_the_jobs_that_lose_two_leases_at_its_default_budget_of_one():
    rows = restart_costs.restart_dead_letters(100, 2, 60, lease_s=30, down_s=60)
    mean = 2 * 60 / restart_costs.WEEK_MIN
    expected = 100 * restart_costs.WEEK_MIN / 60 * (1 - math.exp(-mean) * (1 + mean))
    assert rows[0]["queue"] == "BullMQ"
    assert rows[0]["dead_per_week"] == pytest.approx(expected)


def test_each_queues_forgiven_leases_follow_its_documented_off_by_one():
    forgiven = {b.queue: (b.limit, b.forgiven) for b in restart_costs.BUDGETS}
    # BullMQ fails a job whose stall count exceeds maxStalledCount; asynq archives at the
    # expiry that finds MaxRetry retries used; SQS moves a message once its receive count
    # exceeds maxReceiveCount, the first receive included.
    assert forgiven["BullMQ"] == ("maxStalledCount 1 (default)", 1)
    assert forgiven["asynq"] == ("MaxRetry 25 (default)", 25)
    assert forgiven["Amazon SQS"] == ("maxReceiveCount 5 (your choice)", 4)
    assert forgiven["trafikey"] == ("max_stalled 1", 0)


def test_trafikeys_forgiven_is_what_the_model_forgives_at_max_stalled_1(model):
    """The first counted stall at max_stalled 1 is a death: nothing is forgiven."""
    queue = Queue("{forgiven}")
    model.add(queue, "job-1", b"p")
    claimed = model.claim(queue, 1000)
    model.wait_until(claimed[2])
    assert model.sweep(queue, 1) == [[], [b"job-1"]]


def test_a_share_below_one_in_a_billion_is_said_in_words_not_in_false_digits():
    rows = {r["queue"]: r for r in restart_costs.restart_dead_letters(200, 2, 30, 30, 60)}
    assert rows["asynq"]["dead_per_week"] < 1e-70
    assert restart_costs.dead_text(rows["asynq"]) == "fewer than one job in a billion"
    assert 1e-9 < rows["Amazon SQS"]["dead_per_week"] < 1e-8
    assert restart_costs.dead_text(rows["Amazon SQS"]) == "fewer than one job in a billion"
    assert restart_costs.dead_text(rows["BullMQ"]) == "1.2"
    assert restart_costs.dead_text(rows["trafikey"]) == "0"
    table = restart_costs.dead_letter_table(list(rows.values()))
    assert "e-" not in table
    assert "0, restarts not counted" in table


def test_the_sqs_row_is_marked_as_a_consumer_outage_trafikey_would_count():
    """SQS has no broker restart: its row counts workers that went away, which trafikey counts
    too, so the table, the figure and its alt text must not set it beside trafikey's 0."""
    rows = restart_costs.restart_dead_letters(200, 2, 30, 30, 60)
    table = restart_costs.dead_letter_table(rows).splitlines()
    assert table[3].startswith("Amazon SQS* ")
    assert table[-1] == ("* SQS has no broker to restart: its row is a consumer outage. trafikey "
                         "would count that outage (a worker gone under a live server), so the SQS "
                         "row cannot be set beside trafikey's 0.")
    assert "<td>Amazon SQS*</td>" in restart_costs.table_html(rows)
    assert "consumer outage" in restart_costs.table_html(rows)
    assert [r["queue"] for r in rows if r["note"]] == ["Amazon SQS"]


def test_a_model_input_out_of_range_is_refused_with_what_it_must_be():
    with pytest.raises(ValueError, match="job_minutes and lease_s more than 0"):
        restart_costs.restart_dead_letters(10, 1, 0, 30, 60)


def test_the_figure_has_one_labelled_bar_per_queue():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = restart_costs.restart_dead_letters(200, 2, 30, 30, 60)
    fig, ax = plt.subplots()
    bars = dead_letters.plot_dead_letters(rows, ax=ax)
    assert len(bars) == len(rows)
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "BullMQ", "asynq", "Amazon SQS*", "trafikey"]
    assert "dead-lettered" in ax.get_xlabel()
    assert len({bar.get_facecolor() for bar in bars}) == len(rows)
    assert alt.alt_text(fig) == (
        "Horizontal bars, one per queue, of the healthy jobs that restarts alone dead-letter in "
        "a week, in the model: BullMQ 1.2; asynq fewer than one job in a billion; Amazon SQS* "
        "fewer than one job in a billion; trafikey 0. * SQS has no broker to restart: its row is "
        "a consumer outage. trafikey would count that outage (a worker gone under a live server), "
        "so the SQS row cannot be set beside trafikey's 0.")
    assert [t.get_text() for t in ax.texts] == [restart_costs.dead_text(r) for r in rows]
    plt.close(fig)


def test_the_restart_costs_widget_redraws_its_table_when_an_input_changes():
    widget = RestartCosts()
    bullmq = "<td>BullMQ</td><td>maxStalledCount 1 (default)</td><td>1</td>"
    assert bullmq + "<td>1.2</td>" in widget.shown.value
    assert 'role="img"' in widget.shown.value
    assert "<desc" in widget.shown.value
    assert ">Horizontal bars, one per queue" in widget.shown.value
    assert "BullMQ 1.2;" in widget.shown.value
    widget.controls["down_s"].value = 10
    assert all(r["dead_per_week"] == 0.0 for r in widget.rows)
    assert bullmq + "<td>0</td>" in widget.shown.value
    assert "BullMQ 0;" in widget.shown.value
    assert all(c.style.description_width == "initial" for c in widget.controls.values())
    assert repr(widget) == "RestartCosts: five number fields, the table and the figure of the model"


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
