"""What the executors answer about a lease beyond the verbs' replies, on the model and the module.

Each test runs twice through the `executor` fixture: once on the model, once on a real
valkey-server with the module loaded.
"""

import pytest
import redis

from trafikey_lab import schedule as S
from trafikey_lab.epoch import NOW, ZERO
from trafikey_lab.errors import ReplyError
from trafikey_lab.executors import Executor, Queue, glob_escaped
from trafikey_lab.live.executor import LiveExecutor, error_text

FAR = 10**9
"""A lease long enough never to run out during a test."""


def test_a_claimed_lease_is_stamped_by_the_process_that_granted_it_and_no_other(executor, queue):
    executor.add(queue, "job-1")
    executor.claim(queue, FAR)
    here = executor.run_id
    assert executor.stamped_by(queue, "job-1", here)
    assert executor.stamped_by(queue, "job-1", here.encode())
    others = {NOW, ZERO, here.upper().encode(), here[:39].encode(), b""} - {here.encode()}
    assert not any(executor.stamped_by(queue, "job-1", other) for other in others)


def test_after_a_restart_the_stamp_names_the_old_process_until_an_extension(executor, queue):
    executor.add(queue, "job-1")
    executor.add(queue, "job-2")
    executor.claim(queue, FAR)
    executor.claim(queue, FAR)
    old = executor.run_id
    new = executor.restart()
    assert new != old
    for job in ("job-1", "job-2"):
        assert executor.stamped_by(queue, job, old)
        assert not executor.stamped_by(queue, job, new)
    assert executor.extend(queue, "job-1", 1, FAR) == 1
    assert executor.stamped_by(queue, "job-1", new)
    assert not executor.stamped_by(queue, "job-1", old)
    assert executor.stamped_by(queue, "job-2", old), "an extension restamps only its own lease"


def test_a_scripted_lease_or_a_missing_row_is_stamped_by_no_process(executor, queue):
    executor.add(queue, "job-1")
    executor.scripted_claim(queue, FAR)
    assert not executor.stamped_by(queue, "job-1", executor.run_id)
    assert not executor.stamped_by(queue, "no-such-job", executor.run_id)


# -- the reads a step makes, and the refusals' text ------------------------------------------

def _commands_sent(client) -> dict[str, int]:
    stats = client.info("commandstats")
    return {name.removeprefix("cmdstat_").upper(): fields["calls"]
            for name, fields in stats.items()}


def test_a_row_and_a_deadline_are_read_from_their_own_keys_never_by_scanning(lab, live, queue):
    live.add(queue, b"job-1")
    live.claim(queue, FAR)
    for other in range(50):  # another learner's keys, which a step must not even read
        lab.client.hset(f"{{other}}:job:{other}", "state", "pending")
    lab.client.config_resetstat()
    row, deadline = live.row(queue, b"job-1"), live.deadline(queue, b"job-1")
    sent = _commands_sent(lab.client)
    for own in ("CONFIG|RESETSTAT", "INFO"):  # this count's own calls
        sent.pop(own, None)
    assert row[b"state"] == b"active"
    assert deadline is not None
    assert sent == {"HGETALL": 1, "ZSCORE": 1}


def test_clear_deletes_the_queue_s_keys_and_rows_and_no_other_queue_s(executor):
    mine, other = Queue("{a*b}"), Queue("{a}")
    for queue in (mine, other):
        executor.add(queue, b"job-1")
        executor.claim(queue, FAR)
    executor.clear(mine)
    assert all(not key.startswith(b"{a*b}") for key in executor.dataset())
    assert executor.row(other, b"job-1")[b"state"] == b"active"


def test_a_queues_dataset_holds_its_keys_alike_on_both_executors_and_no_other_queues(
        executor):
    mine, other = Queue("{a*b}"), Queue("{a}")
    for queue in (mine, other):
        executor.add(queue, b"job-1")
        executor.claim(queue, FAR)
    data = executor.dataset(mine)
    assert sorted(data) == sorted([mine.active, mine.row_key(b"job-1")])  # pending emptied
    assert data == {key: value for key, value in executor.dataset().items() if key in data}


def test_a_queues_dataset_on_a_server_never_reads_another_queues_keys(lab, live, queue):
    live.add(queue, b"job-1")
    for other in range(50):  # another learner's keys, which a step must not even read
        lab.client.hset(f"{{other}}:job:{other}", "state", "pending")
    lab.client.config_resetstat()
    data = live.dataset(queue)
    sent = _commands_sent(lab.client)
    for own in ("CONFIG|RESETSTAT", "INFO"):  # this count's own calls
        sent.pop(own, None)
    assert sorted(data) == sorted([queue.pending, queue.row_key(b"job-1")])
    assert (sent["TYPE"], sent["HGETALL"]) == (4, 1)  # its 3 sorted sets and its 1 row, no other


def test_what_each_executor_answers_and_where_it_says_it_is(live, model):
    assert all(live.answers(name) for name in ("ZRANGE", "HMGET", "OBJECT"))
    assert [name for name in ("HGET", "HGETALL", "ZSCORE", "TYPE", "EXISTS", "SCAN", "ZRANGE",
                              "HMGET") if model.answers(name)] == [
        "HGET", "HGETALL", "ZSCORE", "TYPE", "EXISTS", "SCAN"]
    assert (live.where, model.where) == ("on the live server", "on the model")


def test_a_prefix_is_matched_literally_glob_characters_escaped_braces_not():
    assert glob_escaped(b"{a*?[x]\\}:job:") == b"{a\\*\\?\\[x\\]\\\\}:job:"


def test_the_model_answers_the_plain_reads_as_the_live_client_does(executor, queue):
    executor.add(queue, b"job-1")
    executor.claim(queue, FAR)
    assert executor.call("TYPE", queue.active) == b"zset"
    assert executor.call("EXISTS", queue.active, queue.pending, b"nothing") == 1
    assert executor.call("HGET", queue.row_key(b"job-1"), b"state") == b"active"
    assert isinstance(executor.call("ZSCORE", queue.active, b"job-1"), float)
    with pytest.raises(ReplyError) as caught:
        executor.call("HGETALL", queue.active)
    assert caught.value.code == "WRONGTYPE"


@pytest.mark.parametrize(("line", "cls"), [
    ("ERR DEBUG command not allowed", redis.ResponseError),
    ("ERR EXEC without MULTI", redis.ResponseError),
    ("OOM command not allowed when used memory > 'maxmemory'", redis.exceptions.OutOfMemoryError),
    ("NOPERM this user has no permissions", redis.exceptions.NoPermissionError),
    ("READONLY You can't write against a read only replica.", redis.exceptions.ReadOnlyError),
    ("NOSCRIPT No matching script", redis.exceptions.NoScriptError),
    ("EXECABORT Transaction discarded", redis.exceptions.ExecAbortError),
    ("LOADING Valkey is loading the dataset in memory", redis.exceptions.BusyLoadingError),
    ("WRONGTYPE Operation against a key holding the wrong kind of value", redis.ResponseError),
    ("ERR EMQ lease must be a positive integer", redis.ResponseError),
])
def test_an_error_line_comes_back_whole_with_its_code_as_the_server_sent_it(line, cls):
    # The parser redis-py uses on every reply turns the line into the exception raised.
    exc = redis.connection.DefaultParser.parse_error(line)
    assert isinstance(exc, cls)
    assert error_text(exc) == line


def test_exec_without_multi_reads_as_the_server_s_err_line(live):
    with pytest.raises(ReplyError) as caught:
        live.call("EXEC")
    assert caught.value.text == "ERR EXEC without MULTI"


def test_a_schedule_plays_on_a_live_executor_at_its_own_times(lab):
    schedule = S.Schedule(lease_ms=300, restarts=False, worker="extend", worker_at_ms=100,
                          sweep_at_ms=500, max_stalled=2)
    trace = S.play(schedule, LiveExecutor(lab))
    decision = S.decide(schedule)
    assert (trace.reading, trace.outcome) == (decision.reading, decision.outcome) \
        == ("counted", "recovered")


def test_an_executor_that_leaves_out_a_primitive_cannot_be_made():
    class CallsOnly(Executor):
        def call(self, *args):
            return None

    assert Executor.__abstractmethods__ == {"call", "run_script", "restart", "run_id", "now_ms",
                                            "wait_until", "counters", "dataset"}
    with pytest.raises(TypeError):
        CallsOnly()
