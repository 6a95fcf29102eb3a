"""Notebook 02's exercise checker, check_lease_move, held like a verb: a catalogue of wrong moves
it must reject, each with a message that names the facts of what went wrong (the job, the
attempt, the command, the reply) and does not hand over the answer, and of right variants it
must accept; the worker's history it plays; 02's diagnostic question; and the history 02 plays,
on both executors and in its stored cells. The tests pin facts, not the checker's wording."""

import re
from pathlib import Path

import nbformat
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
    first, second, on_live = (finding.text for finding in feedback.findings)
    # history 1: job-1 and job-3 moved, job-2 lost; history 2: job-2 and job-3 moved, job-1 lost
    assert all(fact in first for fact in ("model", "history 1", "job-1", "job-2", "job-3"))
    assert all(fact in second for fact in ("model", "history 2", "job-1", "job-2", "job-3"))
    # the live server agrees with the model: one finding for it, naming no job again
    assert "live server" in on_live
    assert "job-" not in on_live


def read_with_zrangebyscore(ex, q, claims):
    """A right move that reads with a command the model is not asked to answer."""
    active = ex.call("ZRANGEBYSCORE", q.active, "-inf", "+inf")
    return ex.extends(q, 60_000, [(job, attempt) for job, attempt in claims
                                  if str(job).encode() in active or job in active])


def test_a_right_move_reading_with_a_command_the_model_does_not_answer_is_right_live(live):
    feedback = check_lease_move(read_with_zrangebyscore, live=live)
    assert feedback.right, repr(feedback)
    assert feedback.kinds == [NOTE, RIGHT, RIGHT], repr(feedback)
    note = feedback.findings[0].text
    assert all(fact in note for fact in ("model", "history 1", "ZRANGEBYSCORE"))
    assert "NOT YET" not in repr(feedback)


def test_on_the_model_alone_such_a_move_is_not_called_wrong_but_not_checked():
    feedback = check_lease_move(read_with_zrangebyscore)
    assert feedback.kinds == [NOTE]
    assert not feedback.right
    # the note names the reads that work on either executor
    assert "executor.row(queue, job)" in feedback.text
    assert "executor.deadline(queue, job)" in feedback.text


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
    second = feedback.findings[1].text
    assert all(fact in second for fact in ("live server", "history 2", "job-2", "job-3"))


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


LEASE_REFUSED = "ERR EMQ lease must be a positive integer"

WRONG_MOVES = {
    # name: (the move, the facts its feedback must name: the job, the attempt, the command, the
    # reply or the exception; history 1 holds job-1 and job-3 live and job-2 lost, history 2
    # job-2 and job-3 live and job-1 lost; job-4 is the spare pending job)
    "extend2, the script, with each claim's attempt": (
        lambda ex, q, claims: [job for job, attempt in claims
                               if ex.scripted_extend(q, job, attempt, 60_000) == 1],
        ("history 1", "job-1", "lease_epoch")),
    "the attempt read from the row": (
        lambda ex, q, claims: [job for job, _ in claims if ex.extend(
            q, job, int(ex.row(q, job)[b"attempts"]), 60_000) == 1],
        ("history 1", "job-2", "attempt 1")),
    "attempt 1 for every claim": (
        lambda ex, q, claims: ex.extends(q, 60_000, [(job, 1) for job, _ in claims]),
        ("history 1", "job-3", "attempt 1")),
    "attempt 0 for every claim": (
        lambda ex, q, claims: ex.extends(q, 60_000, [(job, 0) for job, _ in claims]),
        ("history 1", "job-1", "attempt 0")),
    "the first history's ids and attempts, hard-coded": (
        lambda ex, q, claims: ex.extends(q, 60_000, [("job-1", 1), ("job-3", 2)]),
        ("history 2", "job-2")),
    "HSET of lease_epoch and ZADD of a deadline": (forge_with_hset_and_zadd, ("HSET", "ZADD")),
    "HSET of lease_epoch alone": (
        lambda ex, q, claims: [ex.call("HSET", q.row_key(job), "lease_epoch", ex.run_id)
                               for job, _ in claims],
        ("HSET",)),
    "a right extension followed by a stamp written by hand": (
        extend_then_restamp_by_hand, ("HSET",)),
    "ZREM of a lease": (
        lambda ex, q, claims: ex.call("ZREM", q.active, claims[0][0]), ("ZREM",)),
    "a new claim": (
        lambda ex, q, claims: [ex.claim(q, 60_000)[0]], ("job-4",)),
    "a new claim with claim2": (
        lambda ex, q, claims: [ex.scripted_claim(q, 60_000)[0]], ("job-4",)),
    "only the first claim extended": (
        lambda ex, q, claims: ex.extends(q, 60_000, claims[:1]), ("history 1", "job-3")),
    "extended on another queue's keys": (
        lambda ex, q, claims: ex.extends(Queue("{elsewhere}"), 60_000, claims),
        ("history 1", "job-1", "job-3")),
    "a sweep instead of an extension": (
        lambda ex, q, claims: ex.sweep(q, 1), ("history 1", "job-1", "job-3")),
    "every lease moved, every id returned": (
        extend_every_claim_and_return_every_id, ("[b'job-1', b'job-2', b'job-3']",)),
    "every lease moved, nothing returned": (
        lambda ex, q, claims: ex.extends(q, 60_000, claims) and None, ("None",)),
    "a lease of 0 ms": (
        lambda ex, q, claims: ex.extends(q, 0, claims), (LEASE_REFUSED,)),
    "a lease of 1 ms": (
        lambda ex, q, claims: ex.extends(q, 1, claims), ("job-1", "job-3", "60_000")),
    "a lease of 1 s": (
        lambda ex, q, claims: ex.extends(q, 1_000, claims), ("job-1", "job-3", "60_000")),
    "a lease of 59 s, later than the one the restart left, short of a minute": (
        lambda ex, q, claims: ex.extends(q, 59_000, claims), ("job-1", "job-3", "60_000")),
    "one EXTEND per claim with a 1 ms lease": (
        lambda ex, q, claims: [job for job, attempt in claims if ex.extend(q, job, attempt, 1)],
        ("job-1", "job-3", "60_000")),
    "every lease moved, then a call refused": (extend_then_send_a_refused_call, (LEASE_REFUSED,)),
    "HDEL of the stamp, which the model does not run": (
        lambda ex, q, claims: [ex.call("HDEL", q.row_key(job), "lease_epoch") for job, _ in claims],
        ("HDEL",)),
    "a restart of its own": (
        lambda ex, q, claims: (ex.restart(), ex.extends(q, 60_000, claims)), ("RuntimeError",)),
    "a function that raises": (lambda ex, q, claims: 1 / 0, ("ZeroDivisionError",)),
    "a function of two arguments": (lambda ex, q: ex.extends(q, 60_000, []), ("TypeError",)),
    "a function that sends nothing": (lambda ex, q, claims: [], ("model", "history 1")),
}


@pytest.mark.parametrize("name", WRONG_MOVES)
def test_each_wrong_move_is_rejected_naming_the_facts_and_not_giving_the_answer(name):
    move, facts = WRONG_MOVES[name]
    feedback = check_lease_move(move)
    assert not feedback.right, repr(feedback)
    assert WRONG in feedback.kinds, repr(feedback)
    assert [fact for fact in facts if fact not in feedback.text] == [], repr(feedback)
    assert not [word for word in GIVEAWAYS if word in feedback.text], repr(feedback)


@pytest.mark.parametrize(("one", "other"), [
    ("a lease of 1 s", "a lease of 59 s, later than the one the restart left, short of a minute"),
    ("a lease of 0 ms", "every lease moved, then a call refused"),
    ("HSET of lease_epoch alone", "HSET of lease_epoch and ZADD of a deadline"),
])
def test_the_checker_tells_apart_wrong_moves_that_share_their_facts(one, other):
    """A lease cut short against one short of a minute; a refusal before anything was sent
    against one after the leases moved; a stamp written by hand with or without a deadline."""
    told = [check_lease_move(WRONG_MOVES[name][0]).text for name in (one, other)]
    assert told[0] != told[1]


def test_the_first_history_hard_coded_is_right_in_history_1_and_wrong_in_history_2():
    feedback = check_lease_move(WRONG_MOVES["the first history's ids and attempts, hard-coded"][0])
    assert feedback.kinds == [RIGHT, WRONG, WRONG]
    assert "history 1" in feedback.findings[0].text
    assert all("history 2" in finding.text for finding in feedback.findings[1:])


@pytest.mark.parametrize("name", ["HSET of lease_epoch and ZADD of a deadline",
                                  "extend2, the script, with each claim's attempt",
                                  "the attempt read from the row", "a lease of 1 ms",
                                  "every lease moved, then a call refused"])
def test_a_wrong_move_is_wrong_on_the_live_server_for_the_same_reason(live, name):
    move, facts = WRONG_MOVES[name]
    feedback = judge_on(move, (live,))
    assert not feedback.right
    assert [fact for fact in facts if fact not in feedback.text] == []
    first = feedback.findings[0].text
    assert "live server" in first
    assert "history 1" in first


def test_a_script_sent_with_eval_to_write_the_stamp_is_seen_on_the_live_server(live):
    script = "redis.call('HSET', KEYS[1], 'lease_epoch', ARGV[1]) return 1"

    def by_eval(ex, q, claims):
        for job, _ in claims:
            ex.call("EVAL", script, 1, q.row_key(job), ex.run_id)
        return ex.extends(q, 60_000, claims)

    feedback = judge_on(by_eval, (live,))
    assert not feedback.right
    assert WRONG in feedback.kinds
    assert "EVAL" in feedback.text


def test_a_move_that_sends_nothing_is_told_once_not_once_per_history_and_server(live):
    feedback = check_lease_move(lambda ex, q, claims: None, live=live)
    assert feedback.kinds == [WRONG]


def test_something_that_is_not_a_function_is_told_to_be_one():
    feedback = check_lease_move("extends")
    assert feedback.kinds == [WRONG]
    assert repr("extends") in feedback.text


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
    assert "dead" in outcome
    assert "stalled 2" in outcome
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
    # the right option names what both executors did: job-4 dead, with stalled 2
    right = THREE_WRITERS.right
    assert "dead" in right.text
    assert "stalled 2" in right.text
    assert executor.stamped_by(queue, "job-4", executor.run_id)


# -- the history 02 plays, and what its stored cells show ---------------------------------------

JOBS = (b"job-1", b"job-2", b"job-3")


def test_the_notebooks_history_stamps_moves_and_sweeps_as_02_says(executor, queue):
    """02's main line: a claim stamps the row with the run_id in the HSET that makes it active;
    the restart keeps the rows and their old stamps; an extension after it writes the new
    process's stamp; claim2 writes none; and the sweep, max_stalled 1, dead-letters the lease
    the new process stamped and sends the old stamp and the missing one back uncounted. The
    leases are short, so on the live server they run out before the extension, which still
    extends (liveness ignores the deadline)."""
    for job in JOBS[:2]:
        executor.add(queue, job, b"resize photo")
        executor.claim(queue, 50)
    row = executor.row(queue, "job-1")
    old = executor.run_id
    assert (row[b"state"], row[b"attempts"], row[b"lease_epoch"]) == (b"active", b"1",
                                                                       old.encode())
    new = executor.restart()
    new = new.decode() if isinstance(new, bytes) else new
    assert new != old
    assert executor.run_id == new
    assert [executor.row(queue, job)[b"lease_epoch"] for job in JOBS[:2]] == [old.encode()] * 2
    assert executor.extend(queue, "job-1", 1, 50) == 1
    assert [executor.row(queue, job)[b"lease_epoch"] for job in JOBS[:2]] == [new.encode(),
                                                                           old.encode()]
    executor.add(queue, "job-3", b"resize photo")
    assert list(executor.scripted_claim(queue, 50)[:2]) == [b"job-3", 1]
    assert b"lease_epoch" not in executor.row(queue, "job-3")
    executor.wait_until(max(executor.deadline(queue, job) for job in JOBS))
    assert executor.sweep(queue, 1) == [[b"job-2", b"job-3"], [b"job-1"]]
    assert [(executor.row(queue, job)[b"state"], executor.row(queue, job).get(b"stalled"))
            for job in JOBS] == [(b"dead", b"1"), (b"pending", None), (b"pending", None)]


def test_a_lease_that_ran_out_but_is_not_swept_still_extends(executor, queue):
    """02's note on liveness (it was a live cell of 02 before): the deadline is not part of it."""
    executor.add(queue, "job-0")
    executor.claim(queue, 1)
    executor.wait_until(executor.deadline(queue, "job-0"))
    assert executor.extend(queue, "job-0", 1, 60_000) == 1


def stored_lines(calls: str) -> list[str]:
    """The stored printed lines of 02's code cell whose source contains `calls`."""
    cell = next(c for c in nbformat.read(NOTEBOOK, as_version=4).cells
                if c.cell_type == "code" and calls in c.source)
    return "".join(o.get("text", "") for o in cell.outputs).splitlines()


def facts_by_job(lines: list[str]) -> dict[str, list[str]]:
    """Each job's line, read as its facts: the bytes and the True, False and None it shows."""
    found = {}
    for line in lines:
        job = re.search(r"job-\d", line)
        if job:
            found[job.group()] = re.findall(r"b'[^']*'|True|False|None", line[job.end():])
    return found


def test_the_stored_notebook_shows_the_stamps_move_and_the_sweep_decide_as_played():
    restart = facts_by_job(stored_lines("live.restart()"))
    assert restart == {"job-1": ["b'active'", "True"], "job-2": ["b'active'", "True"]}
    extended = stored_lines("live.extend(queue")
    assert extended[0].endswith(": 1")
    assert facts_by_job(extended[1:]) == {"job-1": ["True"], "job-2": ["False"]}
    scripted = stored_lines("live.scripted_claim(")
    assert scripted[0] == "[b'job-3', 1]"
    assert "lease_epoch" not in scripted[1]
    assert facts_by_job(stored_lines("live.sweep(queue, 1)")) == {
        "job-1": ["b'dead'", "b'1'"], "job-2": ["b'pending'", "None"],
        "job-3": ["b'pending'", "None"]}

