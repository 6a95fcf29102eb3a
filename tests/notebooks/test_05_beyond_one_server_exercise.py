"""Notebook 05's exercise, hand the primary role to the replica: the checker against a catalogue
of wrong handovers it must reject, each with a message that helps without naming the commands,
and of right ones it must accept. Every check starts two servers of its own and stops them."""

import pytest

from trafikey_lab.course.beyond_one_server import check_promotion
from trafikey_lab.course.feedback import RIGHT, WRONG


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
    try:
        primary.client.shutdown(nosave=True)
    except Exception:  # redis-py raises when the connection closes under it, or not
        pass


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


@pytest.mark.parametrize("hand_over,says", WRONG_HANDOVERS,
                         ids=[h.__name__ for h, _ in WRONG_HANDOVERS])
def test_the_handover_checker_rejects_each_wrong_handover_saying_what_is_wrong(hand_over, says):
    feedback = check_promotion(hand_over)  # a finding, never an exception, whatever it does
    assert not feedback.right and WRONG in feedback.kinds
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
    from trafikey_lab.course import beyond_one_server as beyond

    def no_server(*args, **options):
        raise AssertionError("a server was started")

    monkeypatch.setattr(beyond, "OwnedServer", no_server)
    feedback = check_promotion("REPLICAOF NO ONE")
    assert feedback.kinds == [WRONG] and "define it as a function" in feedback.text
