"""Notebook 01's exercise, write the shape check: a catalogue of wrong answers the checker must
reject, each with a message that points at what is wrong without printing a right answer, and
of right variants it must accept, as a learner would write them in the exercise cell."""

import ast
import random
import textwrap
import threading
from pathlib import Path

import pytest
from byte_classes import IN_CLASS

from trafikey_lab import near_misses
from trafikey_lab.course.feedback import RIGHT
from trafikey_lab.course.one_value_per_process import SHAPE_CASES, check_shape_check
from trafikey_lab.module import native


def define(body: str):
    """The learner's cell: `body` is the function's body, or a whole cell that defines
    my_valid_run_id; it runs in a namespace of its own, as a notebook's globals."""
    source = textwrap.dedent(body).strip()
    if "my_valid_run_id" not in source:
        source = "def my_valid_run_id(value):\n" + textwrap.indent(source, "    ")
    scope: dict = {}
    exec(compile(source, "<exercise cell>", "exec"), scope)
    return scope["my_valid_run_id"]


WRONG_ANSWERS = {
    "length only": ("return len(value) == 40",
                    "NOW in upper case: your check says True, the module says False: byte 2"),
    "int base 16": ("""
        try:
            int(value, 16)
        except ValueError:
            return False
        return len(value) == 40
        """, "NOW starting 0x: your check says True"),
    "a lookup of the test values, unknown ones refused": ("""
        KNOWN = {b"3f2c0d8e9b1a4c5d6e7f8091a2b3c4d5e6f70812": True,
                 b"0000000000000000000000000000000000000000": True}
        def my_valid_run_id(value):
            return KNOWN.get(value, False)
        """, "no table of known values can answer them): 0 of 3 answered as the module answers"),
    "a lookup of every named value, the rest judged by length": ("""
        from trafikey_lab.module import native
        from trafikey_lab.course.one_value_per_process import SHAPE_CASES
        KNOWN = {value: native.valid_run_id(value) for value in SHAPE_CASES.values()}
        def my_valid_run_id(value):
            return KNOWN.get(value, len(value) == 40)
        """, "a letter past f: your check says True when it is in place of the first byte, in "
             "place of a middle byte, in place of the last byte"),
    "a regex ending in $": ("""
        import re
        def my_valid_run_id(value):
            return re.match(rb"[0-9a-f]{40}$", value) is not None
        """, "NOW with a newline appended: your check says True"),
    "a regex searched between ^ and $": ("""
        import re
        def my_valid_run_id(value):
            return bool(re.search(rb"^[0-9a-f]{40}$", value))
        """, "NOW with a newline appended: your check says True"),
    "str.isdigit on the decoded text, length in bytes": (
        'return len(value) == 40 and all(c.isdigit() or c in "abcdef" for c in value.decode())',
        "NOW ending in an Arabic-Indic 3 (40 bytes): your check says True"),
    "str.isdigit on the decoded text, length in characters": ("""
        text = value.decode(errors="replace")
        return len(text) == 40 and all(c.isdigit() or c in "abcdef" for c in text)
        """, "NOW ending in a superscript 3 (40 characters): your check says True"),
    "str.isdigit on text decoded as Latin-1": ("""
        text = value.decode("latin-1")
        return len(text) == 40 and all(c.isdigit() or c in "abcdef" for c in text)
        """, "NOW ending in byte 0xb2 (not UTF-8): your check says True"),
    "str.isdecimal on the decoded text": (
        'return len(value) == 40 and all(c.isdecimal() or c in "abcdef" for c in value.decode())',
        "NOW ending in byte 0xb2 (not UTF-8): your check raised UnicodeDecodeError"),
    "a range check one below 0": ("return len(value) == 40 and all(47 <= b <= 57 or "
                                  "97 <= b <= 102 for b in value)",
                                  "NOW starting with a slash: your check says True"),
    "a range check one above 9": ("return len(value) == 40 and all(48 <= b <= 58 or "
                                  "97 <= b <= 102 for b in value)",
                                  "NOW with a colon inside: your check says True"),
    "a range check one below a": ("return len(value) == 40 and all(48 <= b <= 57 or "
                                  "96 <= b <= 102 for b in value)",
                                  "NOW ending in a backquote: your check says True"),
    "one range from 0 to f": ("return len(value) == 40 and all(48 <= b <= 102 for b in value)",
                              "NOW in upper case: your check says True"),
    "string.hexdigits": ("""
        import string
        def my_valid_run_id(value):
            return len(value) == 40 and set(value) <= set(string.hexdigits.encode())
        """, "NOW in upper case: your check says True"),
    "bytes.fromhex": ("""
        try:
            bytes.fromhex(value.decode())
        except ValueError:
            return False
        return len(value) == 40
        """, "NOW in upper case: your check says True"),
    "isalnum": ("return len(value) == 40 and value.isalnum()",
                "NOW ending in g: your check says True"),
    "lower-cased before the test": ("""
        value = value.lower()
        return len(value) == 40 and all(b in b"0123456789abcdef" for b in value)
        """, "NOW in upper case: your check says True"),
    "stripped before the test": ("""
        value = value.strip()
        return len(value) == 40 and all(b in b"0123456789abcdef" for b in value)
        """, "NOW with a newline appended: your check says True"),
    "trailing NULs stripped before the test": ("""
        value = value.rstrip(b"\\0")
        return len(value) == 40 and all(b in b"0123456789abcdef" for b in value)
        """, "a NUL or another control byte: your check says True when it is appended "
             "(b'\\x00' only"),
    "bytes.fromhex on the decoded text, which skips whitespace": ("""
        if len(value) != 40:
            return False
        try:
            bytes.fromhex(value.decode())
        except ValueError:
            return False
        return value == value.lower()
        """, "ASCII whitespace: your check says True when it is in place of as many bytes at "
             "the start"),
    "the last byte left out": ('return len(value) == 40 and all(b in b"0123456789abcdef" '
                               'for b in value[:39])',
                               "NOW ending in g: your check says True"),
    "the first byte left out": ('return len(value) == 40 and all(b in b"0123456789abcdef" '
                                'for b in value[1:])',
                                "NOW starting with a slash: your check says True"),
    "equal to NOW": ("return value == b'3f2c0d8e9b1a4c5d6e7f8091a2b3c4d5e6f70812'",
                     "forty 0s: your check says False, the module says True"),
    "always true": ("return True", "NOW in upper case: your check says True"),
    "always false": ("return False", "NOW: your check says False, the module says True"),
    "the library's own check": ("""
        from trafikey_lab import epoch, near_misses
        def my_valid_run_id(value):
            return epoch.valid_run_id(value)
        """, "hands the question to the library's own valid_run_id"),
    "the C check, under another name": ("""
        from trafikey_lab.module.native import valid_run_id as check
        def my_valid_run_id(value):
            return check(value)
        """, "hands the question to the library's own valid_run_id"),
    "the library's check itself": ("from trafikey_lab.epoch import valid_run_id as "
                                   "my_valid_run_id",
                                   "hands the question to the library's own valid_run_id"),
    "the readings' read_value, asked for its verdict": ("""
        from trafikey_lab.readings import read_value
        my_valid_run_id = lambda value: read_value(value).valid
        """, "hands the question to the library's own read_value"),
    "read_value reached through its module": ("""
        from trafikey_lab import readings
        def my_valid_run_id(value):
            return readings.read_value(value).valid
        """, "hands the question to the library's own read_value"),
    "the library's check found with getattr and a name built at run time": ("""
        from trafikey_lab import epoch, near_misses
        def my_valid_run_id(value):
            return getattr(epoch, "valid_" + "run_id")(value)
        """, "hands the question to the library's own valid_run_id"),
    "the C check held in a default argument": ("""
        from trafikey_lab.module import native
        def my_valid_run_id(value, check=getattr(native, "valid_" + "run_id")):
            return check(value)
        """, "hands the question to the library's own valid_run_id"),
    "the library asked only for the values it does not know": ("""
        from trafikey_lab import epoch, near_misses
        def my_valid_run_id(value):
            if value == b"3f2c0d8e9b1a4c5d6e7f8091a2b3c4d5e6f70812":
                return True
            return vars(epoch)["shape_" + "problem"](value) is None
        """, "hands the question to the library's own shape_problem"),
    "the run_id checker widget's reading": ("""
        from trafikey_lab.widgets import run_id_checker
        def my_valid_run_id(value):
            return getattr(run_id_checker, "read_" + "value")(value).valid
        """, "hands the question to the library's own read_value"),
    "a match object, not a verdict": ("""
        import re
        def my_valid_run_id(value):
            return re.fullmatch(rb"[0-9a-f]{40}", value)
        """, "NOW: your check returned <re.Match"),
    "None for a bad value": ("""
        if len(value) == 40 and all(b in b"0123456789abcdef" for b in value):
            return True
        """, "b\"\": your check returned None, not True or False"),
    "a word, not a verdict": ('return "yes" if len(value) == 40 else "no"',
                              "NOW: your check returned 'yes', not True or False"),
    "an int other than 1 or 0": ("return 2 if len(value) == 40 else 0",
                                 "NOW: your check returned 2, not True or False"),
    "an index past the end": ('return value[39] in b"0123456789abcdef" and len(value) == 40',
                              "b\"\": your check raised IndexError"),
}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", WRONG_ANSWERS)
def test_each_wrong_answer_is_rejected_with_a_message_that_names_what_it_got_wrong(name, seed):
    source, message = WRONG_ANSWERS[name]
    feedback = check_shape_check(define(source), rng=random.Random(seed))
    assert not feedback.right
    assert repr(feedback).startswith("NOT YET: ")
    assert message in feedback.text


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
    assert [f.kind for f in feedback.findings] == [RIGHT, RIGHT], feedback
    assert repr(feedback).startswith("RIGHT: ")


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
    made_up = [f.text for f in feedback.findings if f.text.endswith("made up for this run)")]
    assert [text.split(":")[0] for text in made_up] == [kind], feedback
    assert made_up[0].startswith(f"{kind}: your check says True when it is ")
    # The same words on any draw, so a stored attempt's feedback stays; and no verdict of the
    # module's is printed for a near miss.
    assert made_up == [f.text for f in check_shape_check(BLIND[kind], rng=random.Random(
        seed + 100)).findings if f.text.endswith("made up for this run)")]
    assert "the module says" not in made_up[0]


def test_a_check_that_strips_the_value_first_is_caught_where_strip_reaches():
    stripping = define("""
        value = value.strip()
        return len(value) == 40 and all(b in b"0123456789abcdef" for b in value)
        """)
    made_up = [f.text for f in check_shape_check(stripping).findings
               if f.text.endswith("made up for this run)")]
    assert made_up == ["ASCII whitespace: your check says True when it is prepended, appended "
                       "(in a run_id made up for this run)"]


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
    assert [f.kind for f in feedback.findings] == ["wrong"]


def test_an_attempt_that_raises_or_loops_over_text_never_makes_the_checker_raise():
    def raising(value):
        raise RuntimeError("unfinished")

    feedback = check_shape_check(raising)
    assert not feedback.right
    assert "your check raised RuntimeError: unfinished" in feedback.text
    assert "on one, your check raised RuntimeError" in feedback.text


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
    assert "NOW: your check ran for more than 0.05 s; it must answer at once" in feedback.text


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
