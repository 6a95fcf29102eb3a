"""The stored recordings notebook 05 shows, the table it builds from them, the check make peers
makes against them, and the harness's promise to stop what it starts. Nothing here plays a
queue (tests/peers/test_rq_live.py plays RQ; make peers plays all four)."""

import copy
import json
import sys
import time
from pathlib import Path

import pytest

import peers
from peers import __main__ as peers_main
from peers import harness


def test_every_queue_has_a_recording_of_all_three_histories_with_its_versions():
    stored = peers.recordings()
    assert list(stored) == ["rq", "arq", "bullmq", "sidekiq"]
    for queue, recording in stored.items():
        assert set(recording.histories) == set(peers.HISTORIES)
        assert set(recording.trafikey) == set(peers.HISTORIES)
        assert recording.versions[queue]
        assert recording.versions["valkey-server"]
        for outcome in recording.histories.values():
            assert outcome.fate in ("completed", "failed", "lost"), (queue, outcome)
            assert outcome.runs >= 1


def test_the_recordings_hold_what_the_libraries_did():
    stored = peers.recordings()
    facts = {q: {h: (o.counted, o.fate, o.runs) for h, o in r.histories.items()}
             for q, r in stored.items()}
    # Each budget forgives one counted loss: a kill, and a restart longer than the lease,
    # each spend it, and the job runs twice.
    for queue in ("rq", "arq", "bullmq"):
        assert facts[queue]["stalled"] == (1, "completed", 2)
        assert facts[queue]["restarted"] == (1, "completed", 2)
    # BullMQ's 25 s restart under its default 30 s lock still costs a stall: its workers come
    # back after their reconnect back-off, past the lock.
    assert facts["bullmq"]["short_restart"] == (1, "completed", 2)
    assert stored["bullmq"].histories["short_restart"].timings["workers_back_s"] > 5
    assert facts["rq"]["short_restart"] == (0, "completed", 1)
    assert facts["arq"]["short_restart"] == (0, "completed", 1)
    # Sidekiq's basic fetch loses a killed worker's job and is indifferent to a restart.
    assert facts["sidekiq"] == {"stalled": (0, "lost", 1), "restarted": (0, "completed", 1),
                                "short_restart": (0, "completed", 1)}
    for recording in stored.values():
        lab = recording.trafikey
        assert (lab["stalled"]["counted"], lab["stalled"]["fate"]) == (1, "dead-lettered")
        for restart in ("restarted", "short_restart"):
            assert (lab[restart]["counted"], lab[restart]["fate"]) == (0, "back to pending")


def test_the_table_has_a_row_for_each_queue_and_one_for_trafikey():
    rows = peers.table()
    assert [row["queue"] for row in rows] == ["RQ", "arq", "BullMQ", "Sidekiq", "trafikey"]
    assert rows[0]["restart"] == "counted 1, completed"
    assert rows[-1]["restart"] == "counted 0, back to pending"
    assert rows[3]["stall"] == "counted 0, lost"
    text, page = peers.table_text(rows), peers.table_html(rows)
    assert all(row["queue"] in text and row["queue"] in page for row in rows)


def test_a_recording_survives_its_json():
    recording = peers.recording("bullmq")
    again = peers.Recording.from_json(json.loads(json.dumps(recording.to_json())))
    assert again == recording


def test_a_changed_fact_is_a_difference_and_a_changed_timing_is_not():
    stored = peers.recording("rq")
    played = copy.deepcopy(stored)
    played.histories["restarted"].timings["decided_s"] = 1.0
    played.trafikey["stalled"]["seconds"] = 99.0
    assert peers.differences(stored, played) == []
    played.histories["restarted"].runs = 3
    played.trafikey["restarted"]["fate"] = "dead-lettered"
    found = peers.differences(stored, played)
    assert len(found) == 2
    assert any("runs was 2, now 3" in line for line in found)


def test_make_peers_fails_on_a_queue_it_cannot_run_and_names_the_install(monkeypatch, capsys):
    monkeypatch.setattr(peers_main, "missing",
                        lambda queue: "Ruby's Sidekiq is not installed: `apt-get install -y "
                                      "ruby-sidekiq`")
    assert peers_main.main(["sidekiq"]) == 1
    said = capsys.readouterr().out
    assert "apt-get install -y ruby-sidekiq" in said
    assert "0 passed, 1 failed" in said


def test_make_peers_fails_when_a_library_no_longer_does_what_its_recording_says(monkeypatch,
                                                                                capsys):
    changed = copy.deepcopy(peers.recording("arq"))
    changed.histories["stalled"].fate = "failed"
    monkeypatch.setattr(peers_main, "missing", lambda queue: None)
    monkeypatch.setattr(peers_main, "play_live", lambda queue, progress=None: changed)
    assert peers_main.main(["arq"]) == 1
    assert "fate was 'completed', now 'failed'" in capsys.readouterr().out
    monkeypatch.setattr(peers_main, "play_live",
                        lambda queue, progress=None: peers.recording("arq"))
    assert peers_main.main(["arq"]) == 0


@pytest.mark.parametrize("queue", peers.QUEUES)
def test_missing_names_an_install_command_or_nothing(queue):
    why = peers.missing(queue)
    assert why is None or "install" in why


def test_a_crew_stops_its_workers_and_what_they_forked_into_groups_of_their_own(tmp_path):
    # Each worker forks a child into a process group of its own (as RQ's work horse does),
    # and ignores SIGTERM: stop() must end both anyway.
    script = ("import os, signal, time\n"
              "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
              "if os.fork() == 0:\n"
              "    os.setpgrp()\n"
              "time.sleep(60)\n")
    crew = harness.Crew([sys.executable, "-c", script], {}, tmp_path, count=2)
    with crew:
        time.sleep(0.5)
        sessions = [w.pid for w in crew.workers]
        members = [int(p.name) for p in Path("/proc").iterdir()
                   if p.name.isdigit() and harness.session_of(int(p.name)) in sessions]
        assert len(members) == 4
    deadline = time.monotonic() + 5
    while any(harness.alive(pid) for pid in members) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in members if harness.alive(pid)]


def test_a_worker_that_exits_is_replaced_as_a_supervisor_would(tmp_path):
    with harness.Crew([sys.executable, "-c", "raise SystemExit(3)"], {}, tmp_path,
                      count=1) as crew:
        deadline = time.monotonic() + 10
        while crew.exits == 0 and time.monotonic() < deadline:
            crew.tick()
            time.sleep(0.1)
        assert crew.exits >= 1
        assert len(list(tmp_path.glob("worker-*.log"))) >= 2


def test_an_interrupted_play_stops_waiting_at_once():
    harness.INTERRUPTED.set()
    try:
        began = time.monotonic()
        with pytest.raises(harness.PlayError, match="interrupted"):
            harness.pause(30)
        assert time.monotonic() - began < 1
    finally:
        harness.INTERRUPTED.clear()
