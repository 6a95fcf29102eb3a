"""The fair scripted peer: stalled2, stalled2_info and the paged claim2 do what the verbs do; the
run_id race that a caller-supplied run_id loses; and notebook 06's checker of the fix."""

from types import SimpleNamespace

import pytest

from trafikey_lab import LiveExecutor, Queue, scripted, why_natively
from trafikey_lab.scripted import MIXES, ScriptedPeer

QUEUE = Queue("{peer}")


@pytest.fixture
def client(lab):
    lab.client.flushall()
    return lab.client


def state_after(client):
    """Every key of the queue, with the dead set's scores (the sweep's now) left out."""
    data = LiveExecutor(SimpleNamespace(client=client)).dataset()
    if QUEUE.dead in data:
        data[QUEUE.dead] = ("zset", [member for member, _ in data[QUEUE.dead][1]])
    return data


@pytest.mark.parametrize("mix", sorted(MIXES))
@pytest.mark.parametrize("way", ["stalled2", "stalled2_info", "pipelined"])
def test_each_scripted_sweep_replies_and_writes_what_the_verb_does(client, mix, way):
    run_id = scripted.current_run_id(client)
    scripted.lay_out(client, QUEUE, 40, mix, run_id)
    native = scripted.native_sweep(client, QUEUE, MIXES[mix].max_stalled, 30)
    native_state = state_after(client)
    scripted.lay_out(client, QUEUE, 40, mix, run_id)
    peer = ScriptedPeer(client)
    if way == "stalled2":
        reply = peer.sweep(QUEUE, run_id, MIXES[mix].max_stalled, 30)
    elif way == "stalled2_info":
        reply = peer.sweep_reading_info(QUEUE, MIXES[mix].max_stalled, 30)
    else:
        reply = scripted.pipelined_sweep(client, QUEUE, run_id, MIXES[mix].max_stalled, 30)
    assert reply == native
    assert state_after(client) == native_state
    assert any(native), "the mix swept nothing: the comparison would be empty"


def test_stalled2_refuses_what_the_verb_refuses_with_nothing_written(client):
    run_id = scripted.current_run_id(client)
    scripted.lay_out(client, QUEUE, 3, "counted", run_id)
    client.hset(QUEUE.row(b"job-0000002"), "stalled", "x")
    before = state_after(client)
    peer = ScriptedPeer(client)
    for call, text in (
        (lambda: peer.sweep(QUEUE, run_id, 2), "not an integer"),
        (lambda: peer.sweep(QUEUE, run_id, 0), "max_stalled must be a positive integer"),
        (lambda: peer.sweep(QUEUE, run_id, 2, 0), "limit must be a positive integer"),
        (lambda: peer.sweep(QUEUE, b"not a run id", 2), "run_id must be 40 characters"),
    ):
        with pytest.raises(Exception, match=text):
            call()
        assert state_after(client) == before


def test_claim2_reads_pending_in_pages_and_claims_past_more_ghosts_than_a_page(client):
    client.zadd(QUEUE.pending, {b"ghost-%02d" % i: 0 for i in range(40)})
    client.hset(QUEUE.row("real"), mapping={"state": "pending", "attempts": "0"})
    client.zadd(QUEUE.pending, {"real": 1})
    claimed = ScriptedPeer(client).claim(QUEUE, 60_000)
    assert claimed[:2] == [b"real", 1]
    assert client.zcard(QUEUE.pending) == 0
    assert client.hgetall(QUEUE.row("real"))[b"state"] == b"active"


def test_a_sweep_given_the_run_id_read_before_a_restart_counts_the_restart_as_a_stall(lab, client):
    race = why_natively.RunIdRace(LiveExecutor(lab), QUEUE, max_stalled=1)
    assert race.grant().endswith("claimed by process A; its lease has run out")
    assert race.read_run_id().endswith("process A")
    assert race.restart().endswith("now process B is running")
    outcome = race.sweep_with_client_run_id()
    assert "job-1 dead-lettered" in outcome and "compared with: process A" in outcome


@pytest.mark.parametrize("sweep", ["sweep_reading_info", "sweep_natively"])
def test_a_sweep_that_takes_the_running_processs_run_id_exempts_the_restart(lab, client, sweep):
    race = why_natively.RunIdRace(LiveExecutor(lab), QUEUE, max_stalled=1)
    race.grant()
    race.read_run_id()
    race.restart()
    outcome = getattr(race, sweep)()
    assert "job-1 recovered, state pending, stalled absent" in outcome


def naive(client, queue):
    run_id = client.info("server")["run_id"]
    ScriptedPeer(client).sweep(queue, run_id, 1)


def reading_info(client, queue):
    ScriptedPeer(client).sweep_reading_info(queue, 1)


def natively(client, queue):
    scripted.native_sweep(client, queue, 1)


def no_sweep(client, queue):
    client.ping()


@pytest.mark.parametrize("attempt,right,says", [
    (naive, False, "the restart was counted as a stall"),
    (reading_info, True, "no stall counted"),
    (natively, True, "no stall counted"),
    (no_sweep, False, "nothing swept it"),
])
def test_the_restart_race_checker_judges_each_sweep_by_what_it_did_to_the_job(
        lab, client, attempt, right, says):
    feedback = why_natively.check_sweep_survives_restart(attempt, LiveExecutor(lab), QUEUE)
    assert feedback.right is right
    assert says in repr(feedback)
    assert repr(feedback).startswith("RIGHT: " if right else "NOT YET: ")


def test_the_restart_race_checker_turns_an_attempt_that_raises_into_a_finding(lab, client):
    def broken(client, queue):
        raise KeyError("run_id")

    feedback = why_natively.check_sweep_survives_restart(broken, LiveExecutor(lab), QUEUE)
    assert not feedback.right and "KeyError" in repr(feedback)
