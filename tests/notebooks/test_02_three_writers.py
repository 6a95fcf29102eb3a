"""Notebook 02's exercise checker, check_lease_move, held like a verb: a catalogue of wrong moves
it must reject, each with a message that helps and does not hand over the answer, and of right
variants it must accept; the worker's history it plays; and 02's diagnostic question."""

from pathlib import Path

import pytest
from stored_cells import exercise_namespace

from trafikey_lab import ModelExecutor, Queue, ReplyError
from trafikey_lab.course.feedback import EXERCISE_QUEUE, NOTE, RIGHT, WRONG
from trafikey_lab.course.three_writers import (
    _MODEL_READS,
    _READONLY,
    _READS,
    MOVE_HISTORIES,
    SPARE_JOB,
    _hold,
    _model_read,
    _Watched,
    check_lease_move,
    judge_on,
)
from trafikey_lab.questions import THREE_WRITERS

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "02_three_writers.ipynb"

GIVEAWAYS = ("EMQ.EXTEND", "extend(", "extends(", "native verb", "use the verb")
"""Words that would hand over the answer: no feedback on a wrong move may contain them."""


def triples(queue, claims):
    return [part for job, attempt in claims for part in (job, queue.row_key(job), attempt)]


# -- right variants -----------------------------------------------------------------------------

RIGHT_MOVES = {
    "one EXTENDS of every claim": lambda ex, q, claims: ex.extends(q, 60_000, claims),
    "EXTENDS with a 2 min lease": lambda ex, q, claims: ex.extends(q, 120_000, claims),
    "one EXTEND per claim, keeping the replies of 1": lambda ex, q, claims: [
        job for job, attempt in claims if ex.extend(q, job, attempt, 60_000) == 1],
    "EMQ.EXTENDS sent with call": lambda ex, q, claims: ex.call(
        "EMQ.EXTENDS", q.active, 75_000, *triples(q, claims)),
    "EMQ.EXTEND sent with call": lambda ex, q, claims: [
        job for job, attempt in claims
        if ex.call("EMQ.EXTEND", q.active, q.row_key(job), job, attempt, 90_000) == 1],
    "the lost claim skipped by reading the row, the claim's own attempt used": (
        lambda ex, q, claims: ex.extends(q, 60_000, [
            (job, attempt) for job, attempt in claims
            if ex.row(q, job)[b"attempts"] == str(attempt).encode()])),
    "the lost claim skipped by HGET of attempts": lambda ex, q, claims: ex.extends(q, 60_000, [
        (job, attempt) for job, attempt in claims
        if ex.call("HGET", q.row_key(job), "attempts") == str(attempt).encode()]),
    "the lost claim skipped by HKEYS and HVALS of the row": lambda ex, q, claims: ex.extends(
        q, 60_000, [(job, attempt) for job, attempt in claims
                    if dict(zip(ex.call("HKEYS", q.row_key(job)),
                                ex.call("HVALS", q.row_key(job)), strict=True))[b"attempts"]
                    == str(attempt).encode()]),
    "the claims checked with HMGET, ZSCORE, TYPE and EXISTS first": lambda ex, q, claims: [
        job for job, attempt in claims
        if ex.call("TYPE", q.row_key(job)) == b"hash" and ex.call("EXISTS", q.row_key(job)) == 1
        and ex.call("ZSCORE", q.active, job) is not None
        and ex.call("HMGET", q.row_key(job), "state", "attempts") == [b"active",
                                                                    str(attempt).encode()]
        and ex.extend(q, job, attempt, 60_000) == 1],
    "ids returned as text": lambda ex, q, claims: [
        job.decode() for job in ex.extends(q, 60_000, claims)],
    "ids returned as a tuple": lambda ex, q, claims: tuple(ex.extends(q, 60_000, claims)),
}


@pytest.mark.parametrize("name", RIGHT_MOVES)
def test_each_right_move_is_right_in_both_histories_on_the_model(name):
    feedback = check_lease_move(RIGHT_MOVES[name])
    assert feedback.right, repr(feedback)
    assert feedback.kinds == [RIGHT] * len(MOVE_HISTORIES)


def test_a_right_move_is_right_on_the_live_server_too_and_says_so_in_one_line(live):
    feedback = check_lease_move(RIGHT_MOVES["one EXTENDS of every claim"],
                                live=live)
    assert feedback.right
    assert feedback.kinds == [RIGHT, RIGHT, RIGHT]
    assert "on the model, history 1: job-1 and job-3 moved" in feedback.text
    assert "job-2 left to the worker that claimed it again" in feedback.text
    assert feedback.text.splitlines()[-1] == (
        "on the live server: the same as on the model, in both histories")


def read_with_zrangebyscore(ex, q, claims):
    """A right move that reads with a command the model is not asked to answer."""
    active = ex.call("ZRANGEBYSCORE", q.active, "-inf", "+inf")
    return ex.extends(q, 60_000, [(job, attempt) for job, attempt in claims
                                  if str(job).encode() in active or job in active])


def test_a_right_move_reading_with_a_command_the_model_does_not_answer_is_right_live(live):
    feedback = check_lease_move(read_with_zrangebyscore, live=live)
    assert feedback.right, repr(feedback)
    assert feedback.kinds == [NOTE, RIGHT, RIGHT], repr(feedback)
    assert feedback.text.startswith(
        "on the model, history 1: not checked here: your function read with ZRANGEBYSCORE, "
        "which the model does not answer")
    assert "NOT YET" not in repr(feedback)
    assert "wrote with" not in feedback.text


def test_on_the_model_alone_such_a_move_is_not_called_wrong_but_not_checked():
    feedback = check_lease_move(read_with_zrangebyscore)
    assert feedback.kinds == [NOTE]
    assert not feedback.right
    assert "executor.row(queue, job) and executor.deadline(queue, job) read a job" in (
        feedback.text)


def test_every_read_only_command_of_the_live_server_counts_as_a_read_and_none_writes(live):
    flags = {name.upper(): set(doc["flags"]) for name, doc in live.client.command().items()}
    readonly = {name for name, flag in flags.items() if "readonly" in flag and "write" not in flag}
    assert readonly == set(_READONLY)
    assert not [name for name in _READS if "write" in flags.get(name, {"write"})]


LAID_OUT = [("HSET", "{r}:job:a", "state", "active", "attempts", "2", "payload", "p"),
            ("ZADD", "{r}:active", 30, "a", 10, "b", 20, "c"), ("SET", "{r}:s", "text")]
MODEL_READS = [("HGET", "{r}:job:a", "attempts"), ("HGET", "{r}:job:a", "nope"),
               ("HGET", "{r}:job:none", "state"), ("HMGET", "{r}:job:a", "state", "x", "attempts"),
               ("HGETALL", "{r}:job:a"), ("HGETALL", "{r}:job:none"),
               ("HEXISTS", "{r}:job:a", "state"), ("HEXISTS", "{r}:job:a", "x"),
               ("HLEN", "{r}:job:a"), ("HKEYS", "{r}:job:a"), ("HVALS", "{r}:job:a"),
               ("ZSCORE", "{r}:active", "b"), ("ZSCORE", "{r}:active", "x"),
               ("ZMSCORE", "{r}:active", "c", "x"), ("ZCARD", "{r}:active"),
               ("ZCARD", "{r}:none"), ("ZRANK", "{r}:active", "a"), ("ZRANK", "{r}:active", "x"),
               ("ZRANGE", "{r}:active", 0, -1), ("ZRANGE", "{r}:active", 1, 1),
               ("ZRANGE", "{r}:active", -2, 10), ("ZRANGE", "{r}:active", 0, -5),
               ("ZRANGE", "{r}:active", 2, 1), ("TYPE", "{r}:job:a"), ("TYPE", "{r}:active"),
               ("TYPE", "{r}:s"), ("TYPE", "{r}:none"), ("EXISTS", "{r}:job:a", "{r}:x", "{r}:s"),
               ("PING",), ("HGET", "{r}:active", "a"), ("ZSCORE", "{r}:job:a", "a"),
               ("HGET", "{r}:job:a"), ("ZRANGE", "{r}:active", "a", 1)]


@pytest.mark.parametrize("read", MODEL_READS, ids=lambda read: " ".join(map(str, read)))
def test_each_read_the_checker_answers_on_the_model_answers_as_the_live_server(live, read):
    model = ModelExecutor()
    for command in LAID_OUT:
        model.call(*command)
        live.call(*command)

    def answer(executor):
        try:
            return _Watched(executor).call(*read)
        except ReplyError as refusal:
            return refusal.text

    assert answer(model) == answer(live)


def test_the_models_time_is_its_clock_in_seconds_and_microseconds():
    model = ModelExecutor()
    assert _model_read(model, "TIME", ()) == (model.now_ms() // 1000, model.now_ms() % 1000 * 1000)
    answered_by_the_model = {name for name in _READS if model.answers(name)}
    assert {read[0] for read in MODEL_READS} == (set(_MODEL_READS) | answered_by_the_model) - {
        "TIME", "SCAN"}


def test_a_right_move_checked_on_the_live_server_alone_is_right(live):
    feedback = judge_on(RIGHT_MOVES["EMQ.EXTEND sent with call"], (live,))
    assert feedback.right
    assert feedback.kinds == [RIGHT, RIGHT]
    assert "on the live server, history 2: job-2 and job-3 moved" in feedback.text


# -- the catalogue of wrong moves ---------------------------------------------------------------


def forge_with_hset_and_zadd(ex, q, claims):
    """The stamp and a deadline written by hand, for the claims whose row still says their
    attempt: the bytes a right move leaves, without a verb."""
    moved = []
    for job, attempt in claims:
        if ex.row(q, job)[b"attempts"] == str(attempt).encode():
            ex.call("HSET", q.row_key(job), "lease_epoch", ex.run_id)
            ex.call("ZADD", q.active, ex.now_ms() + 60_000, job)
            moved.append(job)
    return moved


def extend_then_restamp_by_hand(ex, q, claims):
    moved = ex.extends(q, 60_000, claims)
    ex.call("HSET", q.row_key(moved[0]), "lease_epoch", ex.run_id)
    return moved


def extend_every_claim_and_return_every_id(ex, q, claims):
    ex.extends(q, 60_000, claims)
    return [job for job, _ in claims]


def extend_then_send_a_refused_call(ex, q, claims):
    """Every lease moved, then a call refused: what was sent before the refusal stands."""
    moved = ex.extends(q, 60_000, claims)
    ex.extend(q, claims[0][0], claims[0][1], 0)
    return moved


WRONG_MOVES = {
    "extend2, the script, with each claim's attempt": (
        lambda ex, q, claims: [job for job, attempt in claims
                               if ex.scripted_extend(q, job, attempt, 60_000) == 1],
        "its deadline moved, but its stamp still names the process before the restart"),
    "the attempt read from the row": (
        lambda ex, q, claims: [job for job, _ in claims if ex.extend(
            q, job, int(ex.row(q, job)[b"attempts"]), 60_000) == 1],
        "this worker no longer holds it, but your function changed its lease"),
    "attempt 1 for every claim": (
        lambda ex, q, claims: ex.extends(q, 60_000, [(job, 1) for job, _ in claims]),
        "named attempt 1, which is not the attempt of this worker's claim"),
    "attempt 0 for every claim": (
        lambda ex, q, claims: ex.extends(q, 60_000, [(job, 0) for job, _ in claims]),
        "named attempt 0"),
    "the first history's ids and attempts, hard-coded": (
        lambda ex, q, claims: ex.extends(q, 60_000, [("job-1", 1), ("job-3", 2)]),
        "history 2: job-2: not moved"),
    "HSET of lease_epoch and ZADD of a deadline": (
        forge_with_hset_and_zadd, "your function wrote with HSET, ZADD itself"),
    "HSET of lease_epoch alone": (
        lambda ex, q, claims: [ex.call("HSET", q.row_key(job), "lease_epoch", ex.run_id)
                               for job, _ in claims],
        "your function wrote with HSET itself"),
    "a right extension followed by a stamp written by hand": (
        extend_then_restamp_by_hand, "your function wrote with HSET itself"),
    "ZREM of a lease": (
        lambda ex, q, claims: ex.call("ZREM", q.active, claims[0][0]),
        "your function wrote with ZREM itself"),
    "a new claim": (
        lambda ex, q, claims: [ex.claim(q, 60_000)[0]],
        "a job this worker never claimed, was changed"),
    "a new claim with claim2": (
        lambda ex, q, claims: [ex.scripted_claim(q, 60_000)[0]],
        "a job this worker never claimed, was changed"),
    "only the first claim extended": (
        lambda ex, q, claims: ex.extends(q, 60_000, claims[:1]),
        "not moved: its deadline and its stamp are as the restart left them"),
    "extended on another queue's keys": (
        lambda ex, q, claims: ex.extends(Queue("{elsewhere}"), 60_000, claims),
        "nothing your function sent extended it"),
    "a sweep instead of an extension": (
        lambda ex, q, claims: ex.sweep(q, 1), "not moved"),
    "every lease moved, every id returned": (
        extend_every_claim_and_return_every_id, "return the ids of the leases it moved"),
    "every lease moved, nothing returned": (
        lambda ex, q, claims: ex.extends(q, 60_000, claims) and None,
        "but your function returned None"),
    "a lease of 0 ms": (
        lambda ex, q, claims: ex.extends(q, 0, claims),
        ("refused with ERR EMQ lease must be a positive integer: that call wrote nothing, and "
         "it was the first your function sent, so no lease moved")),
    "a lease of 1 ms": (
        lambda ex, q, claims: ex.extends(q, 1, claims),
        ("its new deadline is less than a minute (60_000 ms) from now and sooner than the one "
         "the restart left it, so the move cut the lease short")),
    "a lease of 1 s": (
        lambda ex, q, claims: ex.extends(q, 1_000, claims),
        "sooner than the one the restart left it"),
    "a lease of 59 s, later than the one the restart left, short of a minute": (
        lambda ex, q, claims: ex.extends(q, 59_000, claims),
        "its new deadline is less than a minute (60_000 ms) from now: the worker still needs"),
    "one EXTEND per claim with a 1 ms lease": (
        lambda ex, q, claims: [job for job, attempt in claims if ex.extend(q, job, attempt, 1)],
        "its new deadline is less than a minute"),
    "every lease moved, then a call refused": (
        extend_then_send_a_refused_call,
        ("refused with ERR EMQ lease must be a positive integer: that call wrote nothing, but "
         "what your function sent before it stands")),
    "HDEL of the stamp, which the model does not run": (
        lambda ex, q, claims: [ex.call("HDEL", q.row_key(job), "lease_epoch") for job, _ in claims],
        "your function wrote with HDEL itself"),
    "a restart of its own": (
        lambda ex, q, claims: (ex.restart(), ex.extends(q, 60_000, claims)),
        "the checker has restarted the server already"),
    "a function that raises": (lambda ex, q, claims: 1 / 0,
                               "your function raised ZeroDivisionError"),
    "a function of two arguments": (lambda ex, q: ex.extends(q, 60_000, []),
                                    "your function raised TypeError"),
    "a function that sends nothing": (lambda ex, q, claims: [],
                                      "your function sent nothing, so every lease"),
}


@pytest.mark.parametrize("name", WRONG_MOVES)
def test_each_wrong_move_is_rejected_with_a_reason_that_does_not_give_the_answer(name):
    move, reason = WRONG_MOVES[name]
    feedback = check_lease_move(move)
    assert not feedback.right, repr(feedback)
    assert WRONG in feedback.kinds, repr(feedback)
    assert reason in feedback.text, repr(feedback)
    assert not [word for word in GIVEAWAYS if word in feedback.text], repr(feedback)


@pytest.mark.parametrize("name", ["HSET of lease_epoch and ZADD of a deadline",
                                  "extend2, the script, with each claim's attempt",
                                  "the attempt read from the row", "a lease of 1 ms",
                                  "every lease moved, then a call refused"])
def test_a_wrong_move_is_wrong_on_the_live_server_for_the_same_reason(live, name):
    move, reason = WRONG_MOVES[name]
    feedback = judge_on(move, (live,))
    assert not feedback.right
    assert reason in feedback.text
    assert feedback.text.startswith("on the live server, history 1: ")


def test_a_script_sent_with_eval_to_write_the_stamp_is_seen_on_the_live_server(live):
    script = "redis.call('HSET', KEYS[1], 'lease_epoch', ARGV[1]) return 1"

    def by_eval(ex, q, claims):
        for job, _ in claims:
            ex.call("EVAL", script, 1, q.row_key(job), ex.run_id)
        return ex.extends(q, 60_000, claims)

    feedback = judge_on(by_eval, (live,))
    assert not feedback.right
    assert "your function wrote with EVAL itself" in feedback.text


def test_a_move_that_sends_nothing_is_told_once_not_once_per_history_and_server(live):
    feedback = check_lease_move(lambda ex, q, claims: None, live=live)
    assert feedback.kinds == [WRONG]


def test_something_that_is_not_a_function_is_told_to_be_one():
    feedback = check_lease_move("extends")
    assert feedback.kinds == [WRONG]
    assert "is not a function" in feedback.text


def test_the_checker_leaves_its_queue_empty_on_the_live_server(live):
    judge_on(forge_with_hset_and_zadd, (live,))
    judge_on(RIGHT_MOVES["one EXTENDS of every claim"], (live,))
    assert not [key for key in live.dataset() if key.startswith(b"{exercise}")]


# -- the notebook's stored attempt --------------------------------------------------------------


def stored_attempt():
    """The exercise cell of notebook 02 as stored, run up to the checker's call."""
    return exercise_namespace(NOTEBOOK, "check_lease_move")["move_the_leases"]


def test_the_stored_attempt_is_not_right_and_its_feedback_gives_nothing_away():
    feedback = check_lease_move(stored_attempt())
    assert not feedback.right
    assert not [word for word in GIVEAWAYS if word in feedback.text]


# -- the worker's history the checker plays -----------------------------------------------------


def test_each_history_has_one_lost_claim_and_the_two_differ_in_attempts_and_which_is_lost():
    assert [sum(job.stale for job in history) for history in MOVE_HISTORIES] == [1, 1]
    first, second = ([(job.attempt, job.stale) for job in history] for history in MOVE_HISTORIES)
    assert first != second
    assert [job.stale for job in MOVE_HISTORIES[0]] != [job.stale for job in MOVE_HISTORIES[1]]


@pytest.mark.parametrize("number", range(len(MOVE_HISTORIES)))
def test_the_played_history_leaves_the_claims_the_prompt_describes(executor, number):
    history = MOVE_HISTORIES[number]
    old_run_id = executor.run_id
    try:
        claims = _hold(executor, EXERCISE_QUEUE, history)
        assert executor.run_id != old_run_id
        assert claims == [(job.id, job.attempt) for job in history]
        for job in history:
            row = executor.row(EXERCISE_QUEUE, job.id)
            # the lost claim's job was claimed again since: its row names a later attempt
            assert row[b"attempts"] == str(job.attempt + job.stale).encode()
            assert row[b"state"] == b"active"
            assert executor.stamped_by(EXERCISE_QUEUE, job.id, old_run_id)
            assert executor.deadline(EXERCISE_QUEUE, job.id) > executor.now_ms()
        _, pending = executor.dataset()[EXERCISE_QUEUE.pending]
        assert [member for member, _ in pending] == [SPARE_JOB]
    finally:
        executor.clear(EXERCISE_QUEUE)


# -- 02's diagnostic question -------------------------------------------------------------------


def test_the_question_has_exactly_one_right_option_and_each_wrong_one_names_a_misconception():
    question = THREE_WRITERS
    assert sum(option.right for option in question.options) == 1
    assert all(option.misconception for option in question.options if not option.right)


def test_no_wrong_option_names_the_right_options_outcome_for_another_reason():
    question = THREE_WRITERS
    outcome = question.right.text.split(":")[0]
    assert outcome == "It dead-letters job-4 with stalled 2"
    # a wrong outcome that the right one only narrows ("It dead-letters job-4") is the same
    assert not [o.text for o in question.options
                if not o.right and outcome.startswith(o.text.split(":")[0])]


def test_the_questions_right_option_is_what_both_executors_do(executor, queue):
    executor.add(queue, "job-4")
    replies = []
    for claim in (executor.claim, executor.scripted_claim):
        claim(queue, 1)
        executor.wait_until(executor.deadline(queue, "job-4"))
        replies.append(executor.sweep(queue, 2))
    row = executor.row(queue, "job-4")
    assert replies == [[[b"job-4"], []], [[], [b"job-4"]]]
    assert (row[b"state"], row[b"stalled"]) == (b"dead", b"2")
    right = THREE_WRITERS.right
    assert right.text.startswith("It dead-letters job-4 with stalled 2")
    assert "this process's" in right.text
    assert executor.stamped_by(queue, "job-4", executor.run_id)
