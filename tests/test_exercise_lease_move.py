"""Notebook 02's exercise checker, check_lease_move, held like a verb: a catalogue of wrong moves
it must reject, each with a message that helps and does not hand over the answer, and of right
variants it must accept; the worker's history it plays; and 02's diagnostic question."""

from pathlib import Path

import nbformat
import pytest

from trafikey_lab import ModelExecutor, Queue
from trafikey_lab.exercises import (
    EXERCISE_QUEUE,
    MOVE_HISTORIES,
    RIGHT,
    SPARE_JOB,
    WRONG,
    _hold,
    check_lease_move,
    stamp_question,
)

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "02_three_writers.ipynb"

GIVEAWAYS = ("EMQ.EXTEND", "extend(", "extends(", "native verb", "use the verb")
"""Words that would hand over the answer: no feedback on a wrong move may contain them."""


def kinds(feedback):
    return [f.kind for f in feedback.findings]


def texts(feedback):
    return "\n".join(f.text for f in feedback.findings)


def triples(queue, claims):
    return [part for job, attempt in claims for part in (job, queue.row(job), attempt)]


# -- right variants -----------------------------------------------------------------------------

RIGHT_MOVES = {
    "one EXTENDS of every claim": lambda ex, q, claims: ex.extends(q, 60_000, claims),
    "EXTENDS with a 1 s lease": lambda ex, q, claims: ex.extends(q, 1_000, claims),
    "EXTENDS with a 2 min lease": lambda ex, q, claims: ex.extends(q, 120_000, claims),
    "one EXTEND per claim, keeping the replies of 1": lambda ex, q, claims: [
        job for job, attempt in claims if ex.extend(q, job, attempt, 30_000) == 1],
    "EMQ.EXTENDS sent with call": lambda ex, q, claims: ex.call(
        "EMQ.EXTENDS", q.active, 45_000, *triples(q, claims)),
    "EMQ.EXTEND sent with call": lambda ex, q, claims: [
        job for job, attempt in claims
        if ex.call("EMQ.EXTEND", q.active, q.row(job), job, attempt, 90_000) == 1],
    "the lost claim skipped by reading the row, the claim's own attempt used": (
        lambda ex, q, claims: ex.extends(q, 60_000, [
            (job, attempt) for job, attempt in claims
            if ex.row(q, job)[b"attempts"] == str(attempt).encode()])),
    "ids returned as text": lambda ex, q, claims: [
        job.decode() for job in ex.extends(q, 60_000, claims)],
    "ids returned as a tuple": lambda ex, q, claims: tuple(ex.extends(q, 60_000, claims)),
}


@pytest.mark.parametrize("name", RIGHT_MOVES)
def test_each_right_move_is_right_in_both_histories_on_the_model(name):
    feedback = check_lease_move(RIGHT_MOVES[name])
    assert feedback.right, repr(feedback)
    assert kinds(feedback) == [RIGHT] * len(MOVE_HISTORIES)


def test_a_right_move_is_right_on_the_live_server_too_and_says_so_in_one_line(live):
    feedback = check_lease_move(RIGHT_MOVES["one EXTENDS of every claim"],
                                executors=(ModelExecutor(), live))
    assert feedback.right and kinds(feedback) == [RIGHT, RIGHT, RIGHT]
    assert "on the model, history 1: job-1 and job-3 moved" in texts(feedback)
    assert "job-2 left to the worker that claimed it again" in texts(feedback)
    assert texts(feedback).splitlines()[-1] == (
        "on the live server: the same as on the model, in both histories")


def test_a_right_move_checked_on_the_live_server_alone_is_right(live):
    feedback = check_lease_move(RIGHT_MOVES["EMQ.EXTEND sent with call"], executors=(live,))
    assert feedback.right and kinds(feedback) == [RIGHT, RIGHT]
    assert "on the live server, history 2: job-2 and job-3 moved" in texts(feedback)


# -- the catalogue of wrong moves ---------------------------------------------------------------


def forge_with_hset_and_zadd(ex, q, claims):
    """The stamp and a deadline written by hand, for the claims whose row still says their
    attempt: the bytes a right move leaves, without a verb."""
    moved = []
    for job, attempt in claims:
        if ex.row(q, job)[b"attempts"] == str(attempt).encode():
            ex.call("HSET", q.row(job), "lease_epoch", ex.run_id)
            ex.call("ZADD", q.active, ex.now_ms() + 60_000, job)
            moved.append(job)
    return moved


def extend_then_restamp_by_hand(ex, q, claims):
    moved = ex.extends(q, 60_000, claims)
    ex.call("HSET", q.row(moved[0]), "lease_epoch", ex.run_id)
    return moved


def extend_every_claim_and_return_every_id(ex, q, claims):
    ex.extends(q, 60_000, claims)
    return [job for job, _ in claims]


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
        lambda ex, q, claims: [ex.call("HSET", q.row(job), "lease_epoch", ex.run_id)
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
        "refused with ERR EMQ lease must be a positive integer; a refusal writes nothing"),
    "a restart of its own": (
        lambda ex, q, claims: (ex.restart(), ex.extends(q, 60_000, claims)),
        "the checker has restarted the server already"),
    "a function that raises": (lambda ex, q, claims: 1 / 0,
                               "your function raised ZeroDivisionError"),
    "a function of two arguments": (lambda ex, q: ex.extends(q, 60_000, []),
                                    "your function raised TypeError"),
    "a function that sends nothing": (lambda ex, q, claims: [],
                                      "your function sent nothing to the server"),
}


@pytest.mark.parametrize("name", WRONG_MOVES)
def test_each_wrong_move_is_rejected_with_a_reason_that_does_not_give_the_answer(name):
    move, reason = WRONG_MOVES[name]
    feedback = check_lease_move(move)
    assert not feedback.right and WRONG in kinds(feedback), repr(feedback)
    assert reason in texts(feedback), repr(feedback)
    assert not [word for word in GIVEAWAYS if word in texts(feedback)], repr(feedback)


@pytest.mark.parametrize("name", ["HSET of lease_epoch and ZADD of a deadline",
                                  "extend2, the script, with each claim's attempt",
                                  "the attempt read from the row"])
def test_a_wrong_move_is_wrong_on_the_live_server_for_the_same_reason(live, name):
    move, reason = WRONG_MOVES[name]
    feedback = check_lease_move(move, executors=(live,))
    assert not feedback.right and reason in texts(feedback)
    assert texts(feedback).startswith("on the live server, history 1: ")


def test_a_script_sent_with_eval_to_write_the_stamp_is_seen_on_the_live_server(live):
    script = "redis.call('HSET', KEYS[1], 'lease_epoch', ARGV[1]) return 1"

    def by_eval(ex, q, claims):
        for job, _ in claims:
            ex.call("EVAL", script, 1, q.row(job), ex.run_id)
        return ex.extends(q, 60_000, claims)

    feedback = check_lease_move(by_eval, executors=(live,))
    assert not feedback.right and "your function wrote with EVAL itself" in texts(feedback)


def test_a_move_that_sends_nothing_is_told_once_not_once_per_history_and_server(live):
    feedback = check_lease_move(lambda ex, q, claims: None, executors=(ModelExecutor(), live))
    assert kinds(feedback) == [WRONG]


def test_something_that_is_not_a_function_is_told_to_be_one():
    feedback = check_lease_move("extends")
    assert kinds(feedback) == [WRONG] and "is not a function" in texts(feedback)


def test_the_checker_leaves_its_queue_empty_on_the_live_server(live):
    check_lease_move(forge_with_hset_and_zadd, executors=(live,))
    check_lease_move(RIGHT_MOVES["one EXTENDS of every claim"], executors=(live,))
    assert not [key for key in live.dataset() if key.startswith(b"{exercise}")]


# -- the notebook's stored attempt --------------------------------------------------------------


def stored_attempt():
    """The exercise cell of notebook 02 as stored, run up to the checker's call."""
    cell = next(c for c in nbformat.read(NOTEBOOK, as_version=4).cells
                if c.cell_type == "code" and "check_lease_move(" in c.source)
    body, call = cell.source.rsplit("\n", 1)
    assert call.startswith("check_lease_move(move_the_leases")
    namespace = {}
    exec(body, namespace)
    return namespace["move_the_leases"]


def test_the_stored_attempt_is_not_right_and_its_feedback_gives_nothing_away():
    feedback = check_lease_move(stored_attempt())
    assert not feedback.right
    assert not [word for word in GIVEAWAYS if word in texts(feedback)]


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
    question = stamp_question()
    assert sum(option.right for option in question.options) == 1
    assert all(option.misconception for option in question.options if not option.right)


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
    right = stamp_question().right
    assert right.text.startswith("It dead-letters job-4 with stalled 2")
    assert "this process's" in right.text
    assert executor.stamped_by(queue, "job-4", executor.run_id)
