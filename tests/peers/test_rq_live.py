"""RQ played for real, both histories, against lab servers this test starts (issue 34): what
notebook 05 plays live, held to what RQ does and to the stored recording. About 75 s: RQ counts
a lost run only once its started-registry entry has expired, 61 s past the last heartbeat here
(peers.RQ_LIVE_WHY), and the two histories play at once, each on a server of its own."""

import time

import pytest

import peers
from peers import harness


@pytest.fixture(scope="module")
def played():
    began = time.monotonic()
    recording = peers.play_rq()
    return recording, time.monotonic() - began


def test_a_killed_worker_spends_the_retry_and_the_job_runs_again(played):
    stalled = played[0].histories["stalled"]
    assert (stalled.counted, stalled.fate, stalled.runs) == (1, "completed", 2)
    assert stalled.overlap is False  # the killed run was over before the retry started
    # The retry waited for the started-registry entry: a minute after the kill at least.
    assert stalled.timings["decided_s"] - stalled.timings["event_s"] >= 60


def test_a_restart_longer_than_the_entry_spends_the_retry_as_the_kill_does(played):
    restarted = played[0].histories["restarted"]
    assert restarted.timings["down_s"] > peers.record.RQ_ENTRY_S
    assert (restarted.counted, restarted.fate, restarted.runs) == (1, "completed", 2)


def test_trafikey_beside_it_on_the_same_servers_counts_the_kill_and_exempts_the_restart(played):
    lab = played[0].trafikey
    assert (lab["stalled"]["counted"], lab["stalled"]["fate"]) == (1, "dead-lettered")
    assert (lab["restarted"]["counted"], lab["restarted"]["fate"]) == (0, "back to pending")
    assert lab["restarted"]["reading"] == "exempt"


def test_the_live_play_reproduces_the_stored_recording(played):
    assert peers.differences(peers.recording("rq"), played[0]) == []
    assert played[0].versions["rq"] == peers.recording("rq").versions["rq"]


def test_the_play_takes_about_what_the_api_says_and_leaves_no_process(played):
    assert played[1] < peers.RQ_LIVE_SECONDS + 30
    assert harness.SESSIONS, "the play started workers"
    assert not [sid for sid in harness.SESSIONS if harness.alive(sid)]
