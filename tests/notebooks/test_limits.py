"""The lease epoch's limits beyond one server (course/limits.py: the promoted replica and the
failback 05 shows), each played on a real server, and the histories 04 states the limits of one
server with (a scripted extension, scripts only, a script's lease on a stamped row) on both
executors. 04 shows the row with no stamp (on its time axis), has the scripted extension as its
exercise, and says a script's lease on a row this process stamped is counted. The tests read
what each limit showed by its values (booleans, the sweep's reply, stalled and state), not by
the wording of its lines."""

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from trafikey_lab import LabServer, LiveExecutor, ModelExecutor, Queue, choose_server, compare, play
from trafikey_lab.course import limits
from trafikey_lab.live import replicas
from trafikey_lab.live.owned import OwnedServer
from trafikey_lab.plots.timeline import draw_timeline
from trafikey_lab.stories import STORIES

QUEUE = Queue("{caveat}")


def said(line: str) -> str:
    """The value a line of a limit ends with, after its last ": " (True, a reply, a row)."""
    return line.rsplit(": ", 1)[1]


def swept(line: str) -> tuple[str, str, str]:
    """A sweep's line: its reply, and the row's stalled and state after it."""
    found = re.search(r"(\[\[.*\]\]) · stalled (\S+) · state (\w+)", line)
    assert found, f"no sweep reply and row in {line!r}"
    return found[1], found[2], found[3]


@pytest.mark.parametrize("history", [STORIES["scripts_only"], STORIES["fifth"]],
                         ids=lambda h: h.key)
def test_a_lease_whose_row_holds_no_stamp_of_the_sweeper_is_exempt_on_model_and_live(live,
                                                                                      history):
    on_model = play(history, 1, ModelExecutor())
    on_live = play(history, 1, live)
    assert [row for row in compare(on_model, on_live) if not row[1]] == []
    assert on_live.exempt
    assert on_live.outcome == "recovered"
    assert b"stalled" not in on_live.steps[-1].row


def test_a_scripts_lease_on_a_row_this_process_stamped_is_counted_on_model_and_live(live):
    traces = [play(STORIES["claim2_on_stamped_row"], 2, executor) for executor in (ModelExecutor(),
                                                                                live)]
    assert [row for row in compare(*traces) if not row[1]] == []
    on_live = traces[1]
    first_sweep, claim2 = on_live.steps[3], on_live.steps[4]
    assert (first_sweep.action, claim2.action) == ("sweep", "scripted_claim")
    assert first_sweep.row[b"stalled"] == b"1"
    assert first_sweep.row[b"state"] == b"pending"
    assert claim2.row[b"lease_epoch"] == on_live.sweep_run_id.encode(), "claim2 left the stamp"
    assert len(on_live.run_ids) == 1
    assert not on_live.exempt
    assert on_live.outcome == "dead"
    assert on_live.steps[-1].row[b"stalled"] == b"2"
    dead = live.dataset()[Queue("{lease}").dead]
    assert [member for member, _ in dead[1]] == [b"job-1"]


def test_a_scripted_extension_moves_the_deadline_and_keeps_the_first_processs_stamp(live):
    trace = play(STORIES["fifth"], 1, live)
    before, after = (trace.steps[i] for i in (2, 3))
    assert (before.action, after.action) == ("restart", "scripted_extend")
    assert after.reply == 1
    assert after.row[b"lease_epoch"] == trace.run_ids[0].encode() != after.run_id.encode()


def test_the_timeline_draws_a_scripted_extension_hollow_and_names_the_stamp_it_kept():
    drawn = draw_timeline(play(STORIES["fifth"], 1, ModelExecutor()))
    try:
        assert [t.get_text() for t in drawn["stamp_labels"]] == [
            "stamp 3f2c…0812", "no new stamp\n(3f2c…0812 stays)"]
        assert drawn["stamps"][1].get_markerfacecolor() == "white"
        assert drawn["ax"].get_xlabel().startswith("the history's steps, in order")
    finally:
        plt.close(drawn["figure"])


def test_a_promoted_replica_exempts_the_old_primarys_lease_and_stops_its_replica(lab):
    shown = limits.promoted_replica(lab, QUEUE)
    holds, own, sweep = shown.lines[:3]
    assert (said(holds), said(own)) == ("True", "True")
    assert swept(sweep) == ("[[b'job-1'], []]", "(none)", "pending"), "exempt"
    assert LiveExecutor(lab).dataset() == {} or QUEUE.active not in LiveExecutor(lab).dataset()
    assert lab.client.info("replication")["connected_slaves"] == 0


def test_a_primary_that_fails_back_without_a_restart_counts_its_old_lease(lab):
    before = lab.run_id
    shown = limits.failback(lab, QUEUE)
    same, kept, sweep = shown.lines[:3]
    assert (said(same), said(kept)) == ("True", "True")
    assert swept(sweep) == ("[[], [b'job-1']]", "1", "dead"), "counted"
    assert lab.client.info("server")["run_id"] == before
    assert lab.client.info("replication")["role"] == "master"


def test_with_a_server_the_lab_did_not_start_the_replica_caveats_say_why_they_did_not_run(lab):
    attached = choose_server(url=lab.connection_url).start()
    try:
        for show in (limits.promoted_replica, limits.failback):
            (line,) = show(attached, QUEUE).lines
            assert line.startswith("not run: the lab is using a server it did not start")
            assert "Unset TRAFIKEY_VALKEY_URL" in line
            assert lab.password not in line
    finally:
        attached.stop()


def test_a_replica_that_cannot_sync_is_stopped_and_the_error_says_where_to_look(lab, monkeypatch):
    monkeypatch.setattr(replicas, "SYNC_TIMEOUT_S", 0.0)
    started = []
    real_start = LabServer.start

    def spy(self):
        started.append(self)
        return real_start(self)

    monkeypatch.setattr(LabServer, "start", spy)
    with pytest.raises(replicas.LabError, match="did not catch up"), replicas.replica_of(lab):
        pass
    assert started
    assert not started[0].running
    assert started[0].data_dir is None


def test_a_primary_on_ipv6_loopback_is_followed_failed_over_and_failed_back_at_its_own_host():
    """The replica and the failover reach each server at its own host, not at 127.0.0.1."""
    with OwnedServer(bind="::1") as primary:
        assert primary.host == "::1"
        shown = limits.promoted_replica(primary, QUEUE)
        assert said(shown.lines[0]) == "True", "the replica holds the primary's stamp"
        shown = limits.failback(primary, QUEUE)
        assert said(shown.lines[0]) == "True", "the failed-back primary keeps its run_id"
        assert primary.client.info("replication")["role"] == "master"


def test_the_course_names_the_limits_module_by_its_name_not_the_old_one():
    package = Path(limits.__file__).resolve().parents[1]
    named = [path.name for path in sorted(package.rglob("*.py")) if "caveats" in path.read_text()]
    assert named == []
