"""Every story the course plays, written once: its key, title, steps, why, and what it comes to.

A story is a short list of steps on one job: the verbs (`player.perform` runs them) and the
events around a server (a failover, a restart that replays the append-only file, a crash...).
The course refers to a story by its key: the dive's four histories (HISTORIES) are four keys,
07's decision table (TABLE) sixteen, 04's fifth history and its limits a few more, and the
explorable's presets take their titles from here.

Each story also says what it comes to at each budget of BUDGETS: the sweep's reading of the
stamp and the job's outcome. That is written down by hand, not computed, so that a test can play
every story on the model and hold it to what the course says it shows
(tests/core/test_stories.py), apart from any comparison of the model with a live server.
"""

from dataclasses import dataclass

from trafikey_lab.sweep import Outcome, Reading, Word


class Action(Word):
    """A step on the job: the C's and the model's names for the calls."""

    ADD = "add"
    STALLED = "stalled"
    """(schedules only) the row's stalled count set by hand before the claim"""
    CLAIM = "claim"
    SCRIPTED_CLAIM = "scripted_claim"
    EXTEND = "extend"
    SCRIPTED_EXTEND = "scripted_extend"
    RESTART = "restart"
    EXPIRE = "expire"
    SWEEP = "sweep"


class Event(Word):
    """A step around the server, beside the verbs of `Action`."""

    FAILOVER = "failover"
    """a replica with the data is promoted: another process serves the queue"""
    FAILBACK = "failback"
    """the old primary hands its role to a replica and takes it back, without a restart"""
    AOF_RESTART = "aof_restart"
    """a restart that rebuilds the data by replaying the append-only file"""
    SNAPSHOT = "snapshot"
    """an RDB snapshot (SAVE)"""
    CRASH = "crash"
    """SIGKILL, then a new process that loads the last snapshot: what came after it is lost"""
    FOREIGN = "foreign"
    """the row's stamp overwritten with a plain HSET: the running run_id in upper case"""


CLAIMS = (Action.CLAIM, Action.SCRIPTED_CLAIM)
EXTENSIONS = (Action.EXTEND, Action.SCRIPTED_EXTEND)
GRANTS = CLAIMS + EXTENSIONS
"""The steps that grant or extend a lease; the scripted_ ones write no stamp."""
JOB = b"job-1"
LEASE_MS = 250
"""Short enough that a live story takes well under a second of waiting."""
BUDGETS = (1, 2)
"""The budgets every story's expectation names: where a counted stall dead-letters the job,
and where it does not."""

Expect = tuple[Reading, Outcome]
"""What the last sweep comes to: the reading of the stamp and the job's outcome."""
EXEMPT = (Reading.EXEMPT, Outcome.RECOVERED)
NOT_DUE = (Reading.NOT_READ, Outcome.UNTOUCHED)
DEAD = (Reading.COUNTED, Outcome.DEAD)
BACK = (Reading.COUNTED, Outcome.RECOVERED)


@dataclass(frozen=True)
class Story:
    key: str
    title: str
    steps: tuple[str, ...]
    why: str
    expect: tuple[Expect, ...] = ()
    """At each budget of BUDGETS, in order: the last sweep's reading and the job's outcome."""

    def expected(self, max_stalled: int) -> Expect:
        return self.expect[BUDGETS.index(max_stalled)]


A, E = Action, Event
STORIES = {story.key: story for story in (
    # -- the dive's four histories ------------------------------------------------------------
    Story("stalled", "the worker stalled", (A.ADD, A.CLAIM, A.EXPIRE, A.SWEEP),
          "the lease was stamped by the process that sweeps it: the server stayed up and the "
          "worker went away", (DEAD, BACK)),
    Story("restarted", "the server restarted",
          (A.ADD, A.CLAIM, A.RESTART, A.EXPIRE, A.SWEEP),
          "the lease was stamped by the process before the restart: as far as the stamp can "
          "tell, the server stopped, not the worker", (EXEMPT, EXEMPT)),
    Story("extended", "extended after the restart",
          (A.ADD, A.CLAIM, A.RESTART, A.EXTEND, A.EXPIRE, A.SWEEP),
          "the worker extended its lease with EMQ.EXTEND after the restart, so the stamp names "
          "the process that sweeps it: the worker went away under a live server", (DEAD, BACK)),
    Story("upgrade", "claimed by a script before the upgrade",
          (A.ADD, A.SCRIPTED_CLAIM, A.RESTART, A.EXPIRE, A.SWEEP),
          "the lease was granted by a script on a row no native verb had stamped, so the row "
          "has no stamp; a missing stamp is another process's by the same rule, so the "
          "upgrade restart costs the job nothing", (EXEMPT, EXEMPT)),
    # -- 04's fifth history and the idea's limits ---------------------------------------------
    Story("fifth", "extended by a script after the restart",
          (A.ADD, A.CLAIM, A.RESTART, A.SCRIPTED_EXTEND, A.EXPIRE, A.SWEEP),
          "extend2 moved the deadline but left the old native stamp, so the lease still names "
          "the process before the restart: exempt, though the worker lived past the restart",
          (EXEMPT, EXEMPT)),
    Story("scripts_only", "claimed by a script on a row never stamped, no restart",
          (A.ADD, A.SCRIPTED_CLAIM, A.EXPIRE, A.SWEEP),
          "no native verb ever stamped the row, and a missing stamp is exempt: the worker "
          "stalled under a live server, yet nothing is counted", (EXEMPT, EXEMPT)),
    Story("claim2_on_stamped_row", "claimed by a script after a native lease was swept",
          (A.ADD, A.CLAIM, A.EXPIRE, A.SWEEP, A.SCRIPTED_CLAIM, A.EXPIRE, A.SWEEP),
          "the native claim stamped the row and its stall was counted; claim2 then granted a "
          "second lease and left the stamp where it was, so the row still names the sweeping "
          "process and the script's lease is counted too",
          # at 1 the first counted stall is already a death: the second claim never happens
          (DEAD, DEAD)),
    # -- the edges of time and of the server (07's table) -------------------------------------
    Story("ran_out_before_restart", "ran out before the restart, swept after it",
          (A.ADD, A.CLAIM, A.EXPIRE, A.RESTART, A.SWEEP),
          "the worker stalled before the restart, but the sweep runs after it: the stamp names "
          "the old process, so the real stall is forgiven", (EXEMPT, EXEMPT)),
    Story("extended_before_restart", "extended before the restart, not after",
          (A.ADD, A.CLAIM, A.EXTEND, A.RESTART, A.EXPIRE, A.SWEEP),
          "the last extension stamped the old process", (EXEMPT, EXEMPT)),
    Story("not_due", "swept before its deadline", (A.ADD, A.CLAIM, A.SWEEP),
          "the sweep takes only expired leases: it reads no stamp", (NOT_DUE, NOT_DUE)),
    Story("failover", "a replica promoted", (A.ADD, A.CLAIM, E.FAILOVER, A.EXPIRE, A.SWEEP),
          "the promoted replica has a run_id of its own: to the stamp, a failover looks like a "
          "restart", (EXEMPT, EXEMPT)),
    Story("failback", "failed over and back, no restart",
          (A.ADD, A.CLAIM, E.FAILBACK, A.EXPIRE, A.SWEEP),
          "the old primary serves again under its own run_id, so its old leases are counted",
          (DEAD, BACK)),
    Story("aof_replay", "restarted from the append-only file",
          (A.ADD, A.CLAIM, E.AOF_RESTART, A.EXPIRE, A.SWEEP),
          "a replaying process is a new process: the stamp names the old one", (EXEMPT, EXEMPT)),
    Story("foreign_bytes", "a stamp written with HSET, upper case",
          (A.ADD, A.CLAIM, E.FOREIGN, A.EXPIRE, A.SWEEP),
          "the sweep compares bytes: the run_id in upper case is not this process's",
          (EXEMPT, EXEMPT)),
    Story("race_worker_first", "the race after a restart: the worker first",
          (A.ADD, A.CLAIM, A.RESTART, A.EXPIRE, A.EXTEND, A.SWEEP),
          "the extension reaches the new process first: it re-stamps and moves the deadline, "
          "so the sweep finds nothing due", (NOT_DUE, NOT_DUE)),
    Story("race_sweep_first", "the race after a restart: the sweep first",
          (A.ADD, A.CLAIM, A.RESTART, A.EXPIRE, A.SWEEP, A.EXTEND),
          "the sweep reaches the new process first: exempt, and the worker's extension then "
          "finds no live lease and answers 0", (EXEMPT, EXEMPT)),
    Story("crash_rdb", "a crash, the lease in the last snapshot",
          (A.ADD, A.CLAIM, E.SNAPSHOT, A.EXTEND, E.CRASH, A.EXPIRE, A.SWEEP),
          "the crash loses the extension; the snapshot's stamp names the old process",
          (EXEMPT, EXEMPT)),
)}
del A, E

HISTORIES = {key: STORIES[key] for key in ("stalled", "restarted", "extended", "upgrade")}
"""The dive's four histories of one lease, each ending in the same sweep."""
TABLE = tuple(STORIES[key] for key in (
    "stalled", "restarted", "extended", "upgrade", "fifth", "claim2_on_stamped_row",
    "ran_out_before_restart", "extended_before_restart", "not_due", "failover", "failback",
    "aof_replay", "foreign_bytes", "race_worker_first", "race_sweep_first", "crash_rdb"))
"""07's decision table: every story a server's events can tell, in the order it lists them."""
