"""The fair scripted peer: stalled2, stalled2_info and the paged claim2 do what the verbs do; and
notebook 06's small measurement, fair as `make bench` is. (The run_id race and the exercise's
checker are in tests/notebooks/test_06_why_natively.py.)"""

from types import SimpleNamespace

import pytest

from trafikey_lab import LiveExecutor, Queue, scripts
from trafikey_lab.live import scripted
from trafikey_lab.live.scripted import MIXES, ScriptedPeer

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
    scripted.lay_out_expired(client, QUEUE, 40, mix, run_id)
    native = scripted.native_sweep(client, QUEUE, MIXES[mix].max_stalled, 30)
    native_state = state_after(client)
    scripted.lay_out_expired(client, QUEUE, 40, mix, run_id)
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
    scripted.lay_out_expired(client, QUEUE, 3, "counted", run_id)
    client.hset(QUEUE.row_key(b"job-0000002"), "stalled", "x")
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
    client.hset(QUEUE.row_key("real"), mapping={"state": "pending", "attempts": "0"})
    client.zadd(QUEUE.pending, {"real": 1})
    claimed = ScriptedPeer(client).claim(QUEUE, 60_000)
    assert claimed[:2] == [b"real", 1]
    assert client.zcard(QUEUE.pending) == 0
    assert client.hgetall(QUEUE.row_key("real"))[b"state"] == b"active"


def test_the_small_measurement_gives_each_way_a_server_of_its_own_and_stops_it(monkeypatch):
    started = []
    real = scripted.OwnedServer

    def owned(**options):
        server = real(**options)
        started.append(server)
        return server

    monkeypatch.setattr(scripted, "OwnedServer", owned)
    lines = scripted.small_measurement(n=30, repeats=2, info_calls=10).splitlines()
    assert lines[0] == ("each on a server of its own, best of 2 runs, the server's time inside "
                        "the commands:")
    assert [line.split()[0] for line in lines[1:]] == [
        "EMQ.STALLED.CHECK", "stalled2", "stalled2_info", "INFO"]
    # Server time, from INFO commandstats: not the wall clock the word "elapsed" would suggest.
    assert all(line.endswith(" ms of server time") for line in lines[1:])
    assert "30 expired leases in" in lines[1]
    assert "10 calls in" in lines[4]
    # Three sweeps and one INFO run per repeat, each on a server started for it alone.
    assert len(started) == 8
    assert len({id(server) for server in started}) == 8
    assert not any(server.running for server in started)


class ClockAtASecondsEdge:
    """A client whose TIME answers (s, 999999) then (s + 1, 0), as two calls a microsecond
    apart across a second's edge would; everything else goes to the real client."""

    def __init__(self, client, seconds):
        self.client, self.answers, self.ranges = client, [(seconds, 999_999), (seconds + 1, 0)], []

    def time(self):
        return self.answers.pop(0)

    def zrange(self, *args, **kwargs):
        self.ranges.append(args)
        return self.client.zrange(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.client, name)


def test_the_pipelined_sweep_takes_its_now_from_one_time_call(client):
    """Seconds from one TIME and microseconds from another made a now up to a second off:
    here 1000 ms early (s * 1000 + 0 instead of s * 1000 + 999)."""
    seconds = 1_800_000_000
    edge = ClockAtASecondsEdge(client, seconds)
    scripted.pipelined_sweep(edge, QUEUE, scripted.current_run_id(client), 1)
    (_, _, now), = [(key, low, high) for key, low, high in edge.ranges]
    assert now == seconds * 1000 + 999


def test_the_executor_and_the_peer_send_one_text_for_a_script_the_shared_rules_first(client):
    LiveExecutor(SimpleNamespace(client=client)).scripted_claim(QUEUE, 1000)
    peer = ScriptedPeer(client)
    assert peer.scripts["claim2"].script == scripts.source("claim2")
    assert scripts.source("claim2").startswith(scripts.text("common"))
    # one script on the server for both: the executor's claim2 is the peer's, byte for byte
    assert client.script_exists(peer.scripts["claim2"].sha) == [True]
    with pytest.raises(ValueError, match="no script named 'nope'"):
        scripts.text("nope")
