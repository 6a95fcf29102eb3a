"""One value read in the run_id's two roles, as notebook 01 teaches them, the dive's test
values under the names its tests give them, and notebook 01's diagnostic question.

As the run_id the module reads at load, a value must pass the shape check (40 bytes, each one
of 0-9 a-f) or the module refuses to load. As a lease_epoch stored on a row, the sweep only
compares it with the current run_id, byte for byte, and never re-checks its shape: a stamp is
exempt because it is not this process's, whatever the reason it is not. `read_value` gives both
readings, with why, and the C module's own answers to the same bytes; `readings_table` gives
them for every named value. The RunIdChecker widget shows a `Reading`.
"""

from dataclasses import dataclass

from trafikey_lab import epoch
from trafikey_lab.course.feedback import (
    RIGHT,
    WRONG,
    Feedback,
    Finding,
    borrowed,
    error_text,
    feedback,
)
from trafikey_lab.model import HOST_CALL_FAILED
from trafikey_lab.module import native
from trafikey_lab.table import Table
from trafikey_lab.widgets.diagnostic import Option, Question

SHAPE_TEST = "run_ids_are_40_lowercase_hex"
EXEMPTION_TEST = "exemption_is_missing_or_different"

NAMED_VALUES: dict[str, bytes | None] = {
    "NOW": epoch.NOW,
    **epoch.SHAPE_REJECTS,
    **{f"lease_epoch {name}": value for name, value in epoch.FOREIGN_EPOCHS.items()},
}
"""The dive's test values, in the order its tests list them, under the names they go by."""

# What each test asserts about a value, in the tests' own words where they give a message.
_EXEMPTION_MESSAGES: dict[bytes | None, str] = {
    epoch.NOW: "same process: counted",
    None: "a missing field is exempt as well: exempt(None, NOW)",
    epoch.ZERO: "another process: exempt",
    b"": "an empty field is not this process",
}

NO_RUN_ID_FIELD = "INFO server has no run_id field"
BAD_SHAPE = "run_id is not 40 characters of 0-9a-f"
"""Two of load_epoch's reasons for not loading an epoch, in trafikey.c's own words."""

LOAD_WARNING = "trafikey: emq epoch not loaded: "
"""The start of the warning OnLoad logs, before the reason, when it refuses the load."""

MODULE_LOAD_REFUSED = "Error loading the extension. Please check the server logs."
"""What Valkey's MODULE LOAD answers (after ERR) when a module's load function refuses."""


@dataclass(frozen=True)
class Reading:
    """Both checks on one value (None: a lease_epoch field that is not there)."""

    value: bytes | None
    length: str
    valid: bool | None
    """The shape check's verdict; None when there are no bytes to check."""
    reason: str
    load: str
    native_valid: bool | None
    exempt: bool
    native_exempt: bool
    sweep: str
    """What the sweep does with the value as a stored lease_epoch, and why."""
    sweep_why: str
    """Why, in a few words: the stamp is this process's, missing, another process's, or other
    bytes (which are not even a run_id)."""
    tests: tuple[str, ...]

    @property
    def native_agrees(self) -> bool:
        return (self.valid, self.exempt) == (self.native_valid, self.native_exempt)


def _length(value: bytes | None) -> str:
    if value is None:
        return "no field: nothing stored"
    text = value.decode("utf-8", errors="replace")
    extra = f" ({len(text)} typed characters, UTF-8)" if len(text) != len(value) else ""
    return f"{len(value)} bytes{extra}"


def _tests(value: bytes | None) -> tuple[str, ...]:
    found = []
    if value == epoch.NOW:
        found.append(f"{SHAPE_TEST}: valid_run_id(NOW) is true")
    if value in epoch.SHAPE_REJECTS.values():
        found.append(f"{SHAPE_TEST}: one of the five values it must reject")
    if value in _EXEMPTION_MESSAGES:
        found.append(f'{EXEMPTION_TEST}: "{_EXEMPTION_MESSAGES[value]}"')
    return tuple(found)


def _refused(reason: str) -> str:
    return (f'refused: OnLoad logs the warning "{LOAD_WARNING}{reason}" and the module does '
            "not load (MODULE LOAD answers an error; a server started with --loadmodule "
            f"stops); the dive's Rust module refuses with {HOST_CALL_FAILED}")


def _load(value: bytes | None, valid: bool | None) -> str:
    if value is None:
        return _refused(NO_RUN_ID_FIELD)
    if valid:
        return (f"cached: load_epoch copies these {len(value)} bytes into cached_run_id and the "
                "module loads with them as its epoch, until the process ends or the module "
                "is unloaded")
    return _refused(BAD_SHAPE)


def _sweep(value: bytes | None, current: bytes) -> tuple[str, str]:
    """The sweep's reading of a stored lease_epoch under `current`, long and short."""
    if not epoch.exempt(value, current):
        return (("counted: the stamp is this process's run_id, so the lease ran out under a "
                 "live server and the worker is charged: stalled + 1 against max_stalled "
                 "(recovered while it is below max_stalled, dead once it reaches or passes it)"),
                "this process's stamp")
    back = "; back to pending with stalled untouched, listed among the recovered"
    if value is None:
        return ("exempt: there is no stamp, so it is not this process's: no native verb left "
                "one on this row (every native claim and extension writes one, the scripts "
                "none)" + back, "no stamp")
    if epoch.valid_run_id(value):
        return ("exempt: a well-formed run_id, but another server process's (this server "
                "before a restart, or another server), so the sweep puts the expiry down to "
                "that process, not to the worker" + back, "another process's stamp")
    if value.lower() == current:
        differs = "only in case, and the comparison is byte for byte"
        short = "other bytes: capitals"
    elif len(value) != len(current):
        differs, short = f"({len(value)} bytes against {len(current)})", "other bytes"
    else:
        differs, short = "", "other bytes"
    return (f"exempt: these bytes differ from this process's run_id {differs}".rstrip()
            + ", so they are not its stamp. No native verb wrote them (they are not even a "
              "run_id: a plain command or another tool did), and the sweep never checks a "
              "stamp's shape, it only compares bytes" + back, short)


def read_value(value: bytes | None, current: bytes = epoch.NOW) -> Reading:
    """The shape check and the load as the server's run_id; the exemption as a stored
    lease_epoch while the run_id is `current`; the C module's answers to the same bytes."""
    if value is None:
        valid = native_valid = None
        reason = "there are no bytes to check"
    else:
        problem = epoch.shape_problem(value)
        valid, native_valid = problem is None, native.valid_run_id(value)
        reason = problem or f"{epoch.RUN_ID_LEN} bytes, each one of 0-9 a-f"
    sweep, sweep_why = _sweep(value, current)
    return Reading(
        value=value,
        length=_length(value),
        valid=valid,
        reason=reason,
        load=_load(value, valid),
        native_valid=native_valid,
        exempt=epoch.exempt(value, current),
        native_exempt=native.exempt(value, current),
        sweep=sweep,
        sweep_why=sweep_why,
        tests=_tests(value),
    )


def readings_table(current: bytes = epoch.NOW) -> Table:
    """Every named value read both ways, one row each: the shape check's verdict, what the
    load does, the exemption while the run_id is `current`, what the sweep does and why, and
    why the shape check said so. A missing field has no bytes to check, so its load is
    refused."""
    rows = []
    for name, value in NAMED_VALUES.items():
        r = read_value(value, current)
        rows.append((name, str(r.valid), "cached" if r.valid else "refused", str(r.exempt),
                     "exempt" if r.exempt else "counted", r.sweep_why, r.reason))
    return Table(("value", "valid", "at load", "exempt", "sweep", "why (sweep)",
                  "why (shape check)"), tuple(rows))


def question() -> Question:
    """Notebook 01's diagnostic question: which stored stamps the sweep counts."""
    return Question(
        "A lease has run out, and the sweep reads its row's lease_epoch. The server's run_id "
        "is R. Which stored lease_epoch makes the sweep count the stall?",
        [
            Option("Any well-formed run_id: 40 bytes of 0-9 and a-f.",
                   misconception="the sweep re-checks the stamp's shape rather than whose it is",
                   why="The sweep never looks at a stamp's shape: trafikey_exempt compares "
                       "lengths and bytes, nothing else. Forty 0s are a well-formed run_id, and "
                       "exempt under any R but forty 0s itself. The shape check runs once, at "
                       "load, on the server's own run_id."),
            Option("R, written in lower or in upper case.",
                   misconception="the stamp comparison ignores case",
                   why="The comparison is memcmp, byte for byte, and 'F' (0x46) is not 'f' "
                       "(0x66): R in capitals is exempt, like any other bytes that are not R."),
            Option("R's 40 bytes exactly, and nothing else.", right=True,
                   why="trafikey_exempt decides the exemption: the lease is exempt unless the "
                       "field is there and equals the current run_id in length and in every "
                       "byte. Every other value, a missing field included, is exempt: back to "
                       "pending, stalled untouched. A lease it does not exempt, "
                       "trafikey_decide_member counts: stalled + 1. (It reads lease_epoch only "
                       "on a hash row without group, so it never counts a lane row.)"),
            Option("Any value, as long as the server has not restarted since the claim.",
                   misconception="exempt means the server restarted",
                   why="The sweep cannot see restarts; it sees only the stamp. With no restart "
                       "at all, a missing stamp or bytes another tool wrote are exempt, because "
                       "they are not R. A restart is only the usual way a stamp stops being R."),
            Option("R, or no lease_epoch at all, since nothing says another process granted "
                   "the lease.",
                   misconception="a missing stamp counts as this process's",
                   why="A missing field is exempt: trafikey_exempt returns 1 when there is no "
                       "field. A row that no native verb ever stamped is never charged."),
        ],
    )


# -- 01: write the shape check ---------------------------------------------------------------

SHAPE_CASES: dict[str, bytes] = {
    "NOW": epoch.NOW,
    **epoch.SHAPE_REJECTS,
    "forty 0s": epoch.ZERO,
    # What a check built on int(value, 16) lets through.
    "NOW starting 0x": b"0x" + epoch.NOW[2:],
    "NOW with an underscore": epoch.NOW[:20] + b"_" + epoch.NOW[21:],
    "NOW ending in a space": epoch.NOW[:39] + b" ",
    # The bytes just outside 0-9 and a-f, where a range test is off by one.
    "NOW starting with a slash": b"/" + epoch.NOW[1:],
    "NOW with a colon inside": epoch.NOW[:20] + b":" + epoch.NOW[21:],
    "NOW ending in a backquote": epoch.NOW[:39] + b"`",
    # What a regex ending in $ lets through: $ also matches just before a final newline.
    "NOW with a newline appended": epoch.NOW + b"\n",
    # What str.isdigit() on decoded text lets through: the digits of other scripts, counted
    # in bytes or in characters, and a byte that only some decodings read as a digit.
    "NOW ending in an Arabic-Indic 3 (40 bytes)": epoch.NOW[:38] + "٣".encode(),
    "NOW ending in a superscript 3 (40 characters)": epoch.NOW[:39] + "³".encode(),
    "NOW ending in byte 0xb2 (not UTF-8)": epoch.NOW[:39] + b"\xb2",
}
"""The dive's test values, then values that the usual shortcuts get wrong."""

MADE_UP = 3
"""How many run_ids, and how many with one bad byte, the checker makes up on each run."""

_NOT_HEX = bytes(b for b in range(256) if b not in epoch.HEX_DIGITS)
def made_up_values(rng) -> dict[str, list[bytes]]:
    """Fresh run_ids, and fresh run_ids with one byte that is not 0-9 a-f at a random place:
    values no table written before the run can hold."""
    def run_id() -> bytearray:
        return bytearray(rng.choice(epoch.HEX_DIGITS) for _ in range(epoch.RUN_ID_LEN))

    broken = []
    for _ in range(MADE_UP):
        value = run_id()
        value[rng.randrange(epoch.RUN_ID_LEN)] = rng.choice(_NOT_HEX)
        broken.append(bytes(value))
    return {"fresh run_ids": [bytes(run_id()) for _ in range(MADE_UP)],
            "fresh run_ids with one byte outside 0-9 a-f": broken}


def _as_verdict(answer) -> bool | None:
    """True or False, or the C's int 1 or 0; None for anything else."""
    if isinstance(answer, bool):
        return answer
    if type(answer) is int and answer in (0, 1):
        return bool(answer)
    return None


def _library_calls(candidate, value: bytes, used: list[str]):
    """candidate(value), with the name of every function of the trafikey_lab package that
    runs meanwhile appended to `used`, however the candidate reached it: by name, through
    getattr with a name built at run time, a default argument or a container."""
    import os
    import sys

    package = os.path.join(os.path.dirname(epoch.__file__), "")

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(package):
            used.append(frame.f_code.co_name)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        return candidate(value)
    finally:
        sys.setprofile(previous)


def _ask(candidate, value: bytes, used: list[str]) -> tuple[bool | None, str]:
    """The candidate's verdict on value, or None and what it did instead; the library
    functions it called are appended to `used`."""
    try:
        answer = _library_calls(candidate, value, used)
    except Exception as exc:  # the learner's code may raise anything: say what it was
        return None, f"raised {error_text(exc)}"
    verdict = _as_verdict(answer)
    return verdict, "" if verdict is not None else f"returned {answer!r}"


def _handed_over(exercise: str, name: str) -> Feedback:
    return feedback(exercise, [Finding(WRONG, f"your check hands the question to the "
                                        f"library's own {name}: write the test yourself, "
                                        "from the C function above")])


def check_shape_check(candidate, rng=None) -> Feedback:
    """Runs the learner's `candidate(value: bytes) -> bool` (or 1/0, as the C returns) over
    SHAPE_CASES and over values made up for this run (`rng`, a random.Random; a fresh one
    when not given), and compares each answer with the module's own C shape check,
    trafikey_valid_run_id.

    A check that hands the question to the library is wrong whatever it answers. Before it
    runs, its code is read for the library's checks (epoch's, native's, one_value.read_value)
    by name or as objects in its scope; while it runs, any call into the trafikey_lab
    package is seen (sys.setprofile), so a name built at run time for getattr, or a function
    held in a default argument, is caught too. Not caught: the module's C function called
    through a ctypes handle the learner opened and named with a built string, since no Python
    code of the package runs then."""
    import random

    from trafikey_lab.course import one_value

    exercise = ("the shape check, on the dive's test values, the shortcuts' traps and made-up "
                "values")
    if not callable(candidate):
        return feedback(exercise, [Finding(WRONG, f"{candidate!r} is not a function: define "
                                            "one that takes bytes and returns True or False")])
    library = (epoch.valid_run_id, epoch.shape_problem, native.valid_run_id,
               one_value.read_value)
    if (name := borrowed(candidate, library)) is not None:
        return _handed_over(exercise, name)
    findings: list[Finding] = []
    agreed: list[str] = []
    used: list[str] = []  # the library functions the candidate called, however it reached them
    for name, value in SHAPE_CASES.items():
        expected = native.valid_run_id(value)
        why = epoch.shape_problem(value) or "40 bytes, each one of 0-9 a-f"
        verdict, instead = _ask(candidate, value, used)
        if instead.startswith("raised"):
            findings.append(Finding(WRONG, f"{name}: your check {instead}; it must answer True "
                                           f"or False for any bytes ({why})"))
        elif instead:
            findings.append(Finding(WRONG, f"{name}: your check {instead}, not True or False "
                                           "(1 or 0, as the C's int, will do too); wrap the "
                                           "test in bool(...)"))
        elif verdict != expected:
            findings.append(Finding(WRONG, f"{name}: your check says {verdict}, the module says "
                                           f"{expected}: {why}"))
        else:
            agreed.append(name)
    if len(agreed) == len(SHAPE_CASES):
        findings.insert(0, Finding(RIGHT, f"all {len(SHAPE_CASES)} named values answered as the "
                                          "module answers"))
    elif agreed:
        findings.insert(0, Finding(RIGHT, f"{len(agreed)} of {len(SHAPE_CASES)} named values "
                                          f"answered as the module answers: {', '.join(agreed)}"))
    findings.append(_made_up_finding(candidate, made_up_values(rng or random.Random()), used))
    if used:
        return _handed_over(exercise, used[0])
    return feedback(exercise, findings)


def _made_up_finding(candidate, made_up: dict[str, list[bytes]], used: list[str]) -> Finding:
    """One finding for the made-up values, in words that do not depend on the values drawn."""
    counts, instead, missed = [], "", 0
    for kind, values in made_up.items():
        right = 0
        for value in values:
            verdict, did = _ask(candidate, value, used)
            right += int(verdict == native.valid_run_id(value))
            instead = instead or did
        missed += len(values) - right
        counts.append(f"{right} of {len(values)} {kind}")
    if not missed:
        return Finding(RIGHT, f"all {sum(map(len, made_up.values()))} values made up for this "
                              "run answered as the module answers")
    return Finding(WRONG, "values made up for this run (new each time, so no table of known "
                          f"values can answer them): {' and '.join(counts)} answered as the "
                          "module answers" + (f"; on one, your check {instead}" if instead else ""))


