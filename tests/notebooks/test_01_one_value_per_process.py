"""Notebook 01's exercise, write the shape check: a catalogue of wrong answers the checker must
reject, each with the facts its feedback must name (the value or byte class it gets wrong, and
the exception it raised or the value it returned instead of a verdict) and without printing a
right answer, and of right variants it must accept, as a learner would write them in the
exercise cell. The tests pin those facts, never the feedback's wording."""

import ast
import random
import re
import textwrap
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from byte_classes import IN_CLASS

from trafikey_lab import epoch, near_misses
from trafikey_lab.course.feedback import RIGHT, WRONG, Feedback, Finding
from trafikey_lab.course.one_value_per_process import MADE_UP, SHAPE_CASES, check_shape_check
from trafikey_lab.module import native
from trafikey_lab.near_misses import Operation, Position


def define(body: str):
    """The learner's cell: `body` is the function's body, or a whole cell that defines
    my_valid_run_id; it runs in a namespace of its own, as a notebook's globals."""
    source = textwrap.dedent(body).strip()
    if "my_valid_run_id" not in source:
        source = "def my_valid_run_id(value):\n" + textwrap.indent(source, "    ")
    scope: dict = {}
    exec(compile(source, "<exercise cell>", "exec"), scope)
    return scope["my_valid_run_id"]


IDS = (*SHAPE_CASES, *near_misses.CLASSES, near_misses.REMOVED)
"""What a finding can be about: a named value, or a class of the near misses."""


def about(feedback: Feedback, id_: str) -> list[Finding]:
    """The findings about one named value or byte class: a checker opens each with its id and a
    colon (Feedback.about), and a class may have one per thing the check did."""
    return [f for f in feedback.findings if f.text.startswith(f"{id_}: ")]


def unnamed(feedback: Feedback) -> list[Finding]:
    """The wrong findings about no named value and no class: the run_ids made up for the run."""
    return [f for f in feedback.findings
            if f.kind == WRONG and not any(f.text.startswith(f"{id_}: ") for id_ in IDS)]


def where(operation: Operation, position: Position | None = None) -> str:
    """The near misses' own words for a place, so that the tests name a place, not a wording."""
    return next(words for op, pos, words in near_misses.PLACES
                if (op, pos) == (operation, position))


NOTHING = object()


@dataclass(frozen=True)
class Named:
    """Caught on a named value: its one finding is wrong, and names the exception the check
    raised, or the value it returned in place of a verdict, when it did so."""
    case: str
    raised: type[BaseException] | None = None
    returned: object = NOTHING

    def check(self, feedback: Feedback) -> None:
        found = about(feedback, self.case)
        assert [f.kind for f in found] == [WRONG], feedback
        if self.raised is not None:
            assert self.raised.__name__ in found[0].text, feedback
        if self.returned is not NOTHING:
            assert repr(self.returned) in found[0].text, feedback


@dataclass(frozen=True)
class Near:
    """Caught on a class of the near misses, at the places given, with the members given."""
    kind: str
    places: tuple[tuple[Operation, Position | None], ...] = ()
    members: tuple[bytes, ...] = ()

    def check(self, feedback: Feedback) -> None:
        found = about(feedback, self.kind)
        assert found, feedback
        assert {f.kind for f in found} == {WRONG}, feedback
        text = "\n".join(f.text for f in found)
        assert all(where(*place) in text for place in self.places), feedback
        assert all(repr(member) in text for member in self.members), feedback


@dataclass(frozen=True)
class Fresh:
    """Caught on the run_ids made up for the run: `right` of MADE_UP answered right."""
    right: int

    def check(self, feedback: Feedback) -> None:
        found = unnamed(feedback)
        assert len(found) == 1, feedback
        assert f"{self.right} of {MADE_UP}" in found[0].text, feedback


@dataclass(frozen=True)
class Borrowed:
    """Handed to the library's own function `name`: the one finding, whatever it answered."""
    name: str

    def check(self, feedback: Feedback) -> None:
        assert feedback.kinds == [WRONG], feedback
        assert self.name in feedback.text, feedback


ONE_BYTE_ANYWHERE = tuple((Operation.ONE_BYTE, position) for position in Position)

WRONG_ANSWERS = {
    "length only": ("return len(value) == 40",
                    Named("NOW in upper case")),
    "int base 16": ("""
        try:
            int(value, 16)
        except ValueError:
            return False
        return len(value) == 40
        """, Named("NOW starting 0x")),
    "a lookup of the test values, unknown ones refused": ("""
        KNOWN = {b"3f2c0d8e9b1a4c5d6e7f8091a2b3c4d5e6f70812": True,
                 b"0000000000000000000000000000000000000000": True}
        def my_valid_run_id(value):
            return KNOWN.get(value, False)
        """, Fresh(right=0)),
    "a lookup of every named value, the rest judged by length": ("""
        from trafikey_lab.module import native
        from trafikey_lab.course.one_value_per_process import SHAPE_CASES
        KNOWN = {value: native.valid_run_id(value) for value in SHAPE_CASES.values()}
        def my_valid_run_id(value):
            return KNOWN.get(value, len(value) == 40)
        """, Near("a letter past f", ONE_BYTE_ANYWHERE)),
    "a regex ending in $": ("""
        import re
        def my_valid_run_id(value):
            return re.match(rb"[0-9a-f]{40}$", value) is not None
        """, Named("NOW with a newline appended")),
    "a regex searched between ^ and $": ("""
        import re
        def my_valid_run_id(value):
            return bool(re.search(rb"^[0-9a-f]{40}$", value))
        """, Named("NOW with a newline appended")),
    "str.isdigit on the decoded text, length in bytes": (
        'return len(value) == 40 and all(c.isdigit() or c in "abcdef" for c in value.decode())',
        Named("NOW ending in an Arabic-Indic 3 (40 bytes)")),
    "str.isdigit on the decoded text, length in characters": ("""
        text = value.decode(errors="replace")
        return len(text) == 40 and all(c.isdigit() or c in "abcdef" for c in text)
        """, Named("NOW ending in a superscript 3 (40 characters)")),
    "str.isdigit on text decoded as Latin-1": ("""
        text = value.decode("latin-1")
        return len(text) == 40 and all(c.isdigit() or c in "abcdef" for c in text)
        """, Named("NOW ending in byte 0xb2 (not UTF-8)")),
    "str.isdecimal on the decoded text": (
        'return len(value) == 40 and all(c.isdecimal() or c in "abcdef" for c in value.decode())',
        Named("NOW ending in byte 0xb2 (not UTF-8)", raised=UnicodeDecodeError)),
    "a range check one below 0": ("return len(value) == 40 and all(47 <= b <= 57 or "
                                  "97 <= b <= 102 for b in value)",
                                  Named("NOW starting with a slash")),
    "a range check one above 9": ("return len(value) == 40 and all(48 <= b <= 58 or "
                                  "97 <= b <= 102 for b in value)",
                                  Named("NOW with a colon inside")),
    "a range check one below a": ("return len(value) == 40 and all(48 <= b <= 57 or "
                                  "96 <= b <= 102 for b in value)",
                                  Named("NOW ending in a backquote")),
    "one range from 0 to f": ("return len(value) == 40 and all(48 <= b <= 102 for b in value)",
                              Named("NOW in upper case")),
    "string.hexdigits": ("""
        import string
        def my_valid_run_id(value):
            return len(value) == 40 and set(value) <= set(string.hexdigits.encode())
        """, Named("NOW in upper case")),
    "bytes.fromhex": ("""
        try:
            bytes.fromhex(value.decode())
        except ValueError:
            return False
        return len(value) == 40
        """, Named("NOW in upper case")),
    "isalnum": ("return len(value) == 40 and value.isalnum()",
                Named("NOW ending in g")),
    "lower-cased before the test": ("""
        value = value.lower()
        return len(value) == 40 and all(b in b"0123456789abcdef" for b in value)
        """, Named("NOW in upper case")),
    "stripped before the test": ("""
        value = value.strip()
        return len(value) == 40 and all(b in b"0123456789abcdef" for b in value)
        """, Named("NOW with a newline appended")),
    "trailing NULs stripped before the test": ("""
        value = value.rstrip(b"\\0")
        return len(value) == 40 and all(b in b"0123456789abcdef" for b in value)
        """, Near("a NUL or another control byte", ((Operation.APPENDED, None),),
                    (b"\x00",))),
    "bytes.fromhex on the decoded text, which skips whitespace": ("""
        if len(value) != 40:
            return False
        try:
            bytes.fromhex(value.decode())
        except ValueError:
            return False
        return value == value.lower()
        """, Near("ASCII whitespace", ((Operation.AS_MANY, Position.FIRST),))),
    "the last byte left out": ('return len(value) == 40 and all(b in b"0123456789abcdef" '
                               'for b in value[:39])',
                               Named("NOW ending in g")),
    "the first byte left out": ('return len(value) == 40 and all(b in b"0123456789abcdef" '
                                'for b in value[1:])',
                                Named("NOW starting with a slash")),
    "equal to NOW": ("return value == b'3f2c0d8e9b1a4c5d6e7f8091a2b3c4d5e6f70812'",
                     Named("forty 0s")),
    "always true": ("return True", Named("NOW in upper case")),
    "always false": ("return False", Named("NOW")),
    "the library's own check": ("""
        from trafikey_lab import epoch, near_misses
        def my_valid_run_id(value):
            return epoch.valid_run_id(value)
        """, Borrowed("valid_run_id")),
    "the C check, under another name": ("""
        from trafikey_lab.module.native import valid_run_id as check
        def my_valid_run_id(value):
            return check(value)
        """, Borrowed("valid_run_id")),
    "the library's check itself": ("from trafikey_lab.epoch import valid_run_id as "
                                   "my_valid_run_id",
                                   Borrowed("valid_run_id")),
    "the readings' read_value, asked for its verdict": ("""
        from trafikey_lab.readings import read_value
        my_valid_run_id = lambda value: read_value(value).valid
        """, Borrowed("read_value")),
    "read_value reached through its module": ("""
        from trafikey_lab import readings
        def my_valid_run_id(value):
            return readings.read_value(value).valid
        """, Borrowed("read_value")),
    "the library's check found with getattr and a name built at run time": ("""
        from trafikey_lab import epoch, near_misses
        def my_valid_run_id(value):
            return getattr(epoch, "valid_" + "run_id")(value)
        """, Borrowed("valid_run_id")),
    "the C check held in a default argument": ("""
        from trafikey_lab.module import native
        def my_valid_run_id(value, check=getattr(native, "valid_" + "run_id")):
            return check(value)
        """, Borrowed("valid_run_id")),
    "the library asked only for the values it does not know": ("""
        from trafikey_lab import epoch, near_misses
        def my_valid_run_id(value):
            if value == b"3f2c0d8e9b1a4c5d6e7f8091a2b3c4d5e6f70812":
                return True
            return vars(epoch)["shape_" + "problem"](value) is None
        """, Borrowed("shape_problem")),
    "the run_id checker widget's reading": ("""
        from trafikey_lab.widgets import run_id_checker
        def my_valid_run_id(value):
            return getattr(run_id_checker, "read_" + "value")(value).valid
        """, Borrowed("read_value")),
    "a match object, not a verdict": ("""
        import re
        def my_valid_run_id(value):
            return re.fullmatch(rb"[0-9a-f]{40}", value)
        """, Named("NOW", returned=re.fullmatch(rb"[0-9a-f]{40}", epoch.NOW))),
    "None for a bad value": ("""
        if len(value) == 40 and all(b in b"0123456789abcdef" for b in value):
            return True
        """, Named('b""', returned=None)),
    "a word, not a verdict": ('return "yes" if len(value) == 40 else "no"',
                              Named("NOW", returned="yes")),
    "an int other than 1 or 0": ("return 2 if len(value) == 40 else 0",
                                 Named("NOW", returned=2)),
    "an index past the end": ('return value[39] in b"0123456789abcdef" and len(value) == 40',
                              Named('b""', raised=IndexError)),
}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", WRONG_ANSWERS)
def test_each_wrong_answer_is_rejected_naming_the_value_or_class_it_gets_wrong(name, seed):
    source, caught = WRONG_ANSWERS[name]
    feedback = check_shape_check(define(source), rng=random.Random(seed))
    assert not feedback.right
    caught.check(feedback)


@pytest.mark.parametrize("name", WRONG_ANSWERS)
def test_no_message_to_a_wrong_answer_prints_a_right_answer(name):
    feedback = check_shape_check(define(WRONG_ANSWERS[name][0]))
    for code in ("fullmatch(", "all(", "set(", "translate(", r"\Z", "0123456789abcdef",
                 "[0-9a-f]"):
        assert code not in feedback.text.replace("<re.Match object; span=(0, 40), match=b'", "")


RIGHT_ANSWERS = {
    "all() over the bytes": 'return len(value) == 40 and all(b in b"0123456789abcdef" '
                            'for b in value)',
    "a set of bytes": 'return len(value) == 40 and set(value) <= set(b"0123456789abcdef")',
    "re.fullmatch": """
        import re
        def my_valid_run_id(value):
            return re.fullmatch(rb"[0-9a-f]{40}", value) is not None
        """,
    r"a regex ending in \Z": """
        import re
        def my_valid_run_id(value):
            return bool(re.match(rb"[0-9a-f]{40}\\Z", value))
        """,
    "bytes.translate": 'return len(value) == 40 and not value.translate(None, '
                       'b"0123456789abcdef")',
    "ranges of byte values": "return len(value) == 40 and all(48 <= b <= 57 or 97 <= b <= 102 "
                             "for b in value)",
    "the C's loop, returning 1 or 0": """
        if len(value) != 40:
            return 0
        for c in value:
            if not (ord("0") <= c <= ord("9") or ord("a") <= c <= ord("f")):
                return 0
        return 1
        """,
    "int() of a test": 'return int(len(value) == 40 and all(b in b"0123456789abcdef" '
                       'for b in value))',
    "the library's HEX_DIGITS": """
        from trafikey_lab import epoch, near_misses
        def my_valid_run_id(value):
            return len(value) == 40 and all(b in epoch.HEX_DIGITS for b in value)
        """,
    "bytes.fromhex, there and back": """
        if len(value) != 40:
            return False
        try:
            text = value.decode()
            return bytes.fromhex(text).hex() == text
        except ValueError:
            return False
        """,
    "a helper of the learner's own named valid_run_id": """
        def valid_run_id(value):
            return len(value) == 40 and all(b in b"0123456789abcdef" for b in value)
        def my_valid_run_id(value):
            return valid_run_id(value)
        """,
}


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("name", RIGHT_ANSWERS)
def test_each_right_variant_is_accepted_on_every_value_named_and_made_up(name, seed):
    feedback = check_shape_check(define(RIGHT_ANSWERS[name]), rng=random.Random(seed))
    assert feedback.right, feedback
    assert feedback.kinds == [RIGHT, RIGHT], feedback


def test_the_named_values_catch_each_shortcut_on_a_value_the_c_refuses():
    for name in ("NOW with a newline appended", "NOW ending in an Arabic-Indic 3 (40 bytes)",
                 "NOW ending in a superscript 3 (40 characters)",
                 "NOW ending in byte 0xb2 (not UTF-8)", "NOW starting with a slash",
                 "NOW with a colon inside", "NOW ending in a backquote"):
        assert not native.valid_run_id(SHAPE_CASES[name]), name
    assert len(SHAPE_CASES["NOW ending in an Arabic-Indic 3 (40 bytes)"]) == 40
    assert len(SHAPE_CASES["NOW ending in a superscript 3 (40 characters)"].decode()) == 40
    assert "²".isdigit()
    assert SHAPE_CASES["NOW ending in byte 0xb2 (not UTF-8)"][-1:].decode(
        "latin-1") == "²"


def test_the_feedback_does_not_depend_on_the_values_made_up_so_a_stored_attempt_stays_the_same():
    def length_only(value):
        return len(value) == 40

    assert len({repr(check_shape_check(length_only, rng=random.Random(seed)))
                for seed in range(5)}) == 1




def blind_to(kind):
    """A shape check right on every value but those holding a member of `kind`, which it
    takes for a hex digit."""
    def my_valid_run_id(value):
        text = value.decode("utf-8", "surrogateescape")
        return len(value) == 40 and all(c in "0123456789abcdef" or IN_CLASS[kind](c)
                                        for c in text)
    return my_valid_run_id


def blind_to_a_byte_removed(value):
    return len(value) in (39, 40) and all(b in b"0123456789abcdef" for b in value)


BLIND = {**{kind: blind_to(kind) for kind in near_misses.CLASSES},
         near_misses.REMOVED: blind_to_a_byte_removed}


def test_every_class_of_the_near_misses_has_a_check_blind_to_it_alone():
    assert set(IN_CLASS) == set(near_misses.CLASSES)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("kind", BLIND)
def test_a_check_wrong_only_on_one_byte_class_is_rejected_naming_that_class_alone(kind, seed):
    feedback = check_shape_check(BLIND[kind], rng=random.Random(seed))
    assert not feedback.right
    caught = [id_ for id_ in (*near_misses.CLASSES, near_misses.REMOVED) if about(feedback, id_)]
    assert caught == [kind], feedback
    assert unnamed(feedback) == [], feedback
    # The same findings on any draw, so a stored attempt's feedback stays; and the module's
    # verdict on a near miss, always False, is not printed.
    assert about(feedback, kind) == about(check_shape_check(
        BLIND[kind], rng=random.Random(seed + 100)), kind)
    assert "False" not in "\n".join(f.text for f in about(feedback, kind))


def test_a_check_that_strips_the_value_first_is_caught_where_strip_reaches():
    stripping = define("""
        value = value.strip()
        return len(value) == 40 and all(b in b"0123456789abcdef" for b in value)
        """)
    feedback = check_shape_check(stripping)
    assert [id_ for id_ in near_misses.CLASSES if about(feedback, id_)] == ["ASCII whitespace"]
    text = "\n".join(f.text for f in about(feedback, "ASCII whitespace"))
    assert [words for *_, words in near_misses.PLACES if words in text] == [
        where(Operation.PREPENDED), where(Operation.APPENDED)]


def test_a_check_handed_to_the_library_is_told_so_alone_and_the_profiler_is_put_back():
    import sys

    def profiler(frame, event, arg):
        return None

    sys.setprofile(profiler)
    try:
        feedback = check_shape_check(define(WRONG_ANSWERS[
            "the library's check found with getattr and a name built at run time"][0]))
        assert sys.getprofile() is profiler
    finally:
        sys.setprofile(None)
    assert feedback.kinds == [WRONG]


def test_an_attempt_that_raises_or_loops_over_text_never_makes_the_checker_raise():
    def raising(value):
        raise RuntimeError("unfinished")

    feedback = check_shape_check(raising)
    assert not feedback.right
    for case in SHAPE_CASES:
        Named(case, raised=RuntimeError).check(feedback)
        assert "unfinished" in about(feedback, case)[0].text
    assert "RuntimeError" in unnamed(feedback)[0].text


def test_a_check_that_never_returns_is_told_so_and_the_checker_returns(monkeypatch):
    from trafikey_lab.course import attempts

    monkeypatch.setattr(attempts, "LIMIT_S", 0.05)
    release = threading.Event()

    def my_valid_run_id(value):
        release.wait(5)  # a loop that would never end, let go at the end of the test
        return True

    try:
        feedback = check_shape_check(my_valid_run_id)
    finally:
        release.set()
    assert not feedback.right
    Named("NOW").check(feedback)
    assert "0.05" in about(feedback, "NOW")[0].text


def test_the_shape_checks_module_reads_its_own_names_not_itself_through_an_import():
    from trafikey_lab.course import one_value_per_process as face

    tree = ast.parse(Path(face.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {f"{node.module}.{a.name}" for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) for a in node.names}
    assert face.__name__ not in imported


def test_a_generator_of_the_package_the_collector_closes_meanwhile_is_no_call_of_the_library():
    import gc

    from trafikey_lab import model

    ids = model.run_ids()
    next(ids)
    cycle: list = [ids]
    cycle.append(cycle)  # only the collector frees it, in whichever thread it runs then
    del ids, cycle

    collected = []

    def my_valid_run_id(value):
        if not collected:  # once: a full collection on each of two thousand values is minutes
            collected.append(gc.collect())
        return len(value) == 40 and all(b in b"0123456789abcdef" for b in value)

    assert check_shape_check(my_valid_run_id).right
    assert collected


def test_01s_answers_hold_in_the_c_and_in_the_model_alike():
    """01's prediction is checked on the C alone; the model must give the same readings: a stamp
    of NOW in upper case is exempt under NOW, forty 0s pass the shape check, and a missing
    field is exempt."""
    upper = epoch.NOW.upper()
    for check in (native, epoch):
        assert check.exempt(upper, epoch.NOW)
        assert not check.valid_run_id(upper)
        assert check.valid_run_id(epoch.ZERO)
        assert check.exempt(epoch.ZERO, epoch.NOW)
        assert check.exempt(None, epoch.NOW)
        assert not check.exempt(epoch.NOW, epoch.NOW)
