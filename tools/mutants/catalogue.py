"""The mutants `make mutants` puts into the module's C, the model and the lab's rules of time,
one at a time.

Each is a small, plausible bug: the exact text it changes (which must occur exactly once in its
file, so an edit of the code that moves or rewrites that text stops the run until the entry is
brought along), what it becomes, and the tests that must fail because of it. The tests named
are the ones meant to catch that bug; the runner first checks that they pass on the unmutated
copy, so a mutant counts as caught only because of its own change.
"""

from dataclasses import dataclass

MODULE = "trafikey_lab/module/trafikey.c"
MODEL = "trafikey_lab/model.py"
SCHEDULE = "trafikey_lab/schedule.py"
PLAYER = "trafikey_lab/player.py"

VERBS = "tests/live/test_verbs.py::"
NATIVE = "tests/module/test_native.py"
BOUNDARY_LIVE = VERBS + "test_sweep_takes_a_deadline_equal_to_its_now_and_leaves_one_a_millisecond_later"
COUNTERS = "tests/live/test_counters.py::"
BAD_INPUT = "tests/reliability/test_bad_input.py::"
BOUNDARY_DIFFERENTIAL = (
    "tests/reliability/test_differential.py::"
    "test_the_harness_checks_the_sweep_boundary_to_the_millisecond"
)
STREAM = (
    "tests/reliability/test_faults.py::"
    "test_kill_during_a_command_stream_keeps_every_acknowledged_write_and_every_row_whole"
)
REPLICA = (
    "tests/reliability/test_faults.py::"
    "test_replica_holds_the_primarys_stamps_and_deadlines_byte_for_byte"
)
TIME = "tests/core/test_schedule.py::"
STORIES = "tests/core/test_stories.py::"
ACL_ROWS = (
    "tests/reliability/test_isolation.py::"
    "test_acl_user_allowed_another_queues_prefix_but_not_its_rows_is_refused_by_the_module"
)
ACL_ARGUMENT_ROWS = (
    "tests/reliability/test_isolation.py::"
    "test_acl_user_cannot_reach_another_queues_rows_through_a_derived_or_argument_row"
)


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str
    find: str
    replace: str
    tests: tuple[str, ...]


MUTANTS = (
    # -- the module's C ------------------------------------------------------------------------
    Mutant(
        "sweep selects deadline < now (the live boundary test)",
        MODULE, "(double)sweep->now, 0, 0)", "(double)sweep->now, 0, 1)", (BOUNDARY_LIVE,),
    ),
    Mutant(
        "sweep selects deadline < now (the differential harness)",
        MODULE, "(double)sweep->now, 0, 0)", "(double)sweep->now, 0, 1)", (BOUNDARY_DIFFERENTIAL,),
    ),
    Mutant(
        "sweep dead-letters with a score one past its now",
        MODULE, "&sweep->keys[2], sweep->now, dead,", "&sweep->keys[2], sweep->now + 1, dead,",
        (BOUNDARY_LIVE,),
    ),
    Mutant(
        "exemption ignores the stamp's last byte",
        MODULE,
        "memcmp(epoch, current, epoch_len) != 0",
        "memcmp(epoch, current, epoch_len - 1) != 0",
        (NATIVE,),
    ),
    Mutant(
        "EXTEND replies 0 after it extended (seen by the streaming worker thread)",
        MODULE,
        "    return ValkeyModule_ReplyWithLongLong(ctx, 1);\n}",
        "    return ValkeyModule_ReplyWithLongLong(ctx, 0);\n}",
        (STREAM,),
    ),
    Mutant(
        "CLAIM writes no stamp",
        MODULE,
        "hset_effect(ctx, claim->row, claim->row_name, hset, 6);",
        "hset_effect(ctx, claim->row, claim->row_name, hset, 4);",
        (VERBS + "test_claim_stamps_state_attempts_and_epoch_in_the_row",),
    ),
    Mutant(
        "EXTEND does not re-stamp",
        MODULE,
        "    ValkeyModuleString *hset[] = {lit.lease_epoch, lit.stamp};\n"
        "    hset_effect(ctx, keys[1].handle",
        "    ValkeyModuleString *hset[] = {lit.state, lit.active};\n"
        "    hset_effect(ctx, keys[1].handle",
        (VERBS + "test_extend_of_a_live_lease_moves_the_deadline_and_restamps",),
    ),
    Mutant(
        "EXTENDS does not re-stamp",
        MODULE,
        "        ValkeyModuleString *hset[] = {lit.lease_epoch, lit.stamp};\n"
        "        hset_effect(ctx, ext[i].row",
        "        ValkeyModuleString *hset[] = {lit.state, lit.active};\n"
        "        hset_effect(ctx, ext[i].row",
        (VERBS + "test_extends_extends_the_live_leases_in_argument_order_under_one_deadline",),
    ),
    Mutant(
        "EXTEND's liveness ignores attempts (a stale worker extends)",
        MODULE, "*live = attempts == attempt;", "*live = attempts == attempts;",
        (VERBS + "test_extend_of_a_lease_that_is_not_live_replies_0_and_writes_nothing",),
    ),
    Mutant(
        "an exempt row gets stalled written",
        MODULE,
        "if (member->verdict == VERDICT_EXEMPT) {",
        "if (0) {",
        (VERBS + "test_sweep_recovers_a_foreign_lease_uncounted",),
    ),
    Mutant(
        "the dead rule uses > where it means >=",
        MODULE,
        "out->stalled < max_stalled ? VERDICT_RECOVERED",
        "out->stalled <= max_stalled ? VERDICT_RECOVERED",
        (NATIVE,),
    ),
    Mutant(
        "a ghost is left in active",
        MODULE,
        "if (member->verdict == VERDICT_LANE) continue;",
        "if (member->verdict == VERDICT_LANE || member->verdict == VERDICT_GHOST) continue;",
        (VERBS + "test_sweep_removes_a_ghost_from_active_and_lists_it_nowhere",),
    ),
    Mutant(
        "a lane row is swept like any other",
        MODULE, "} else if (seen->group_present) {", "} else if (0) {", (NATIVE,),
    ),
    Mutant(
        "the sweep skips the ACL check of the rows it derives",
        MODULE,
        "        if (!caller_may_write(caller, row_name)) {\n"
        "            why = REFUSE_NOPERM;\n"
        "            break;\n"
        "        }\n",
        "",
        (ACL_ROWS,),
    ),
    Mutant(
        "CLAIM skips the ACL check of the rows it derives",
        MODULE,
        "        if (!caller_may_write(caller, name)) {\n"
        "            why = REFUSE_NOPERM;\n"
        "            break;\n"
        "        }\n",
        "",
        (ACL_ROWS,),
    ),
    Mutant(
        "EXTENDS skips the ACL check of the rows it is given",
        MODULE,
        "        if (!caller_may_write(caller, row)) return REFUSE_NOPERM;\n",
        "",
        (ACL_ARGUMENT_ROWS,),
    ),
    Mutant(
        "a ZADD's effect is not replicated (CLAIM's deadline among them)",
        MODULE,
        '    ValkeyModule_Replicate(ctx, "ZADD", "sv", key->name, pairs, 2 * count);\n',
        "",
        (REPLICA,),
    ),
    Mutant(
        "a counted stall is written but not replicated",
        MODULE,
        "            hset_effect(ctx, row, row_name, hset, 4);",
        "            ValkeyModule_HashSet(row, VKM_HASH_NONE, hset[0], hset[1], hset[2], hset[3], NULL);",
        (REPLICA,),
    ),
    Mutant(
        "the shape check takes g for a hex digit",
        MODULE, "(c >= 'a' && c <= 'f')", "(c >= 'a' && c <= 'g')", (NATIVE,),
    ),
    Mutant(
        "a counter with a leading zero is read",
        MODULE, "    if (len > 1 && s[0] == '0') return 0;\n", "", (NATIVE,),
    ),
    Mutant(
        "a counter of 2^53, which cannot be incremented exactly, is read",
        MODULE, "const long long max = EXACT_LIMIT - 1;", "const long long max = EXACT_LIMIT;",
        (NATIVE,),
    ),
    Mutant(
        "counters: a refused sweep counts the members it decided before the refusal",
        MODULE,
        "    if (why != REFUSE_NONE) return reply_refusal(ctx, VERB_STALLED_CHECK, why);\n"
        "\n    /* Write pass. */\n    sweep_writes(ctx, &sweep);\n    count_sweep(&sweep);\n",
        "    count_sweep(&sweep);\n"
        "    if (why != REFUSE_NONE) return reply_refusal(ctx, VERB_STALLED_CHECK, why);\n"
        "\n    /* Write pass. */\n    sweep_writes(ctx, &sweep);\n",
        (BAD_INPUT + "test_a_refused_sweep_counts_its_refusal_and_not_the_members_it_decided_first",),
    ),
    Mutant(
        "counters: an arity refusal is not counted",
        MODULE,
        "    counters.refusals[verb]++;\n    if (error == ERR_ARITY) return ValkeyModule_WrongArity(ctx);\n",
        "    if (error == ERR_ARITY) return ValkeyModule_WrongArity(ctx);\n    counters.refusals[verb]++;\n",
        (BAD_INPUT + "test_arity_error_names_the_verb_as_the_server_does_in_any_case",),
    ),
    Mutant(
        "counters: an exempt member counts as recovered, as the reply lists it",
        MODULE,
        "counters.swept[sweep->members[i].verdict]++;",
        "counters.swept[sweep->members[i].verdict == VERDICT_EXEMPT ? VERDICT_RECOVERED\n"
        "                                                                         : sweep->members[i].verdict]++;",
        (COUNTERS + "test_each_history_counts_one_sweep_and_its_job_by_verdict_on_model_and_module",),
    ),
    # -- the model -----------------------------------------------------------------------------
    Mutant(
        "model: the sweep selects deadline < now",
        MODEL, "if m[1] <= now]", "if m[1] < now]", (BOUNDARY_DIFFERENTIAL,),
    ),
    Mutant(
        "model: the exemption ignores the stamp's last byte",
        "trafikey_lab/epoch.py",
        "    return lease_epoch != current\n",
        "    return (lease_epoch is None or len(lease_epoch) != len(current)\n"
        "            or lease_epoch[:-1] != current[:-1])\n",
        ("tests/core/test_epoch.py",),
    ),
    Mutant(
        "model: the dead rule uses > where it means >=",
        "trafikey_lab/sweep.py",
        "Verdict(Kind.RECOVERED if count < max_stalled else Kind.DEAD, count)",
        "Verdict(Kind.RECOVERED if count <= max_stalled else Kind.DEAD, count)",
        ("tests/core/test_sweep.py",),
    ),
    Mutant(
        "model: CLAIM writes no stamp",
        MODEL,
        '        if stamp:\n            fields[b"lease_epoch"] = run_id\n',
        "",
        (VERBS + "test_claim_stamps_state_attempts_and_epoch_in_the_row",),
    ),
    Mutant(
        "model: EXTENDS does not re-stamp",
        MODEL,
        '            cast(dict[bytes, bytes], self.store.data[row])[b"lease_epoch"] = run_id\n'
        "        return [member for member, _ in live]",
        "        return [member for member, _ in live]",
        (VERBS + "test_extends_extends_the_live_leases_in_argument_order_under_one_deadline",),
    ),
    Mutant(
        "model: a ghost is left in active",
        MODEL, '        return [(b"ZREM", active, member)]\n', "        return []\n",
        (VERBS + "test_sweep_removes_a_ghost_from_active_and_lists_it_nowhere",),
    ),
    Mutant(
        "model: an exempt row gets stalled written",
        MODEL,
        "        if verdict.stalled is not None:\n"
        '            fields += (b"stalled", b"%d" % verdict.stalled)\n',
        '        fields += (b"stalled", b"%d" % (verdict.stalled or 0))\n',
        (VERBS + "test_sweep_recovers_a_foreign_lease_uncounted",),
    ),
    Mutant(
        "model: a restart keeps the counters of the process before it",
        MODEL, "        self.counters = new_counters()\n        return self.run_id\n",
        "        return self.run_id\n",
        (COUNTERS + "test_the_model_starts_its_counters_again_at_each_restart",),
    ),
    # -- the lab's rules of time (schedule.moments and decide) ------------------------------------
    Mutant(
        "schedule: at the same millisecond the sweep runs before the extension",
        SCHEDULE,
        "        calls.append(served(schedule.worker, schedule.worker_at_ms, 2))",
        "        calls.append(served(schedule.worker, schedule.worker_at_ms, 4))",
        (TIME + "test_an_extension_and_a_sweep_at_the_same_millisecond_run_extension_first",
         TIME + "test_calls_held_by_the_downtime_run_at_up_the_extension_first_then_the_sweep"),
    ),
    Mutant(
        "schedule: the restart runs after the calls at its own millisecond",
        SCHEDULE,
        '        calls.append((down, 1, Moment("restart", down, down, 1)))',
        '        calls.append((down, 4, Moment("restart", down, down, 1)))',
        (TIME + "test_the_restart_runs_before_a_call_at_its_own_millisecond_which_the_new_"
                "process_serves",),
    ),
    Mutant(
        "schedule: the restart comes before a claim at 0",
        SCHEDULE,
        "    calls = [(0, 0, Moment(schedule.claim, 0, 0, 1))",
        "    calls = [(0, 5, Moment(schedule.claim, 0, 0, 1))",
        (TIME + "test_the_claim_runs_before_a_restart_at_0_so_the_old_process_stamps_it",),
    ),
    Mutant(
        "schedule: a call at the restart's own millisecond is not held by the downtime",
        SCHEDULE,
        "at = up if schedule.restarts and down <= asked < up else asked",
        "at = up if schedule.restarts and down < asked < up else asked",
        (TIME + "test_a_call_at_the_restarts_own_millisecond_is_held_to_up_when_there_is_a_"
                "downtime",),
    ),
    Mutant(
        "schedule: the old process serves a call at the restart's own millisecond",
        SCHEDULE,
        "after = schedule.restarts and at >= down",
        "after = schedule.restarts and at > down",
        (TIME + "test_the_restart_runs_before_a_call_at_its_own_millisecond_which_the_new_"
                "process_serves",),
    ),
    Mutant(
        "schedule: a call asked for while the server is down runs when asked",
        SCHEDULE,
        "at = up if schedule.restarts and down <= asked < up else asked",
        "at = asked",
        (TIME + "test_calls_held_by_the_downtime_run_at_up_the_extension_first_then_the_sweep",
         TIME + "test_a_downtime_longer_than_the_lease_left_it_expired_and_a_shorter_one_did_not"),
    ),
    Mutant(
        "schedule: a held extension's deadline counts from when it was asked",
        SCHEDULE,
        "deadline = worker.at_ms + schedule.lease_ms",
        "deadline = worker.asked_ms + schedule.lease_ms",
        (TIME + "test_a_held_extension_sets_its_deadline_from_when_it_ran_not_when_it_was_asked",),
    ),
    Mutant(
        "schedule: the rule finds a lease due only past its deadline",
        SCHEDULE,
        "due = deadline <= sweep.at_ms",
        "due = deadline < sweep.at_ms",
        (TIME + "test_a_sweep_a_millisecond_before_the_deadline_finds_nothing_and_at_it_reads_"
                "the_stamp",),
    ),
    # -- a story's own set-up (the catalogue's expectations, issue 35) -----------------------
    Mutant(
        "player: the foreign stamp is written as the running run_id itself",
        PLAYER,
        "upper = client.run_id.upper().encode()",
        "upper = client.run_id.encode()",
        (STORIES + "test_each_story_comes_to_the_reading_and_outcome_it_writes_down",),
    ),
)
