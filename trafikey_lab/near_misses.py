"""Near misses of a run_id: the values a checker tries so that a learner's function which
differs from the rule on some bytes cannot pass by never being shown them.

The corpus is enumerated, not drawn: every member of every byte class goes to the first, a
middle and the last place of a run_id, in place of one byte there and inserted there, and is
prepended and appended; a member of several bytes (a character outside ASCII in UTF-8, or the
line ending CR LF) also goes in place of as many bytes, so that the value keeps its 40 bytes.
Then one byte is removed at either end. Every run tries the same set; only the run_id they are
made of is the caller's, drawn afresh so that no table written before the run holds the
values. The words that name a near miss (its class and where it is) never depend on that
run_id, so that feedback built from them is the same on every run. Pure: no server, no I/O.
"""

import enum
import random
from dataclasses import dataclass

from trafikey_lab import epoch

_WHITESPACE = b" \t\n\r\x0b\x0c"
_OTHER_TEXT = "éßñøÿ€…中ёΩ𝄞"
"""Characters outside ASCII that are no digit, in valid UTF-8: two, three and four bytes."""
_NOT_UTF8 = (b"\xc0\xb0", b"\xed\xa0\x80", b"\xe2\x82", b"\xf4\x90\x80\x80")
"""Sequences of several bytes that are not UTF-8: an overlong 0, a surrogate, a sequence cut
short, a code point past U+10FFFF. (Every single byte at or above 0x80 is not UTF-8 alone.)"""
_OTHER_DIGITS = "٠١٢٣٤٥٦٧٨٩۰۳۷०३९০৩߃๓០３９²³¹𝟑"
"""Digits of other scripts (str.isdigit says True of each), all outside ASCII: in UTF-8 each
is two bytes (Arabic-Indic, NKo, the superscripts), three (Devanagari, Bengali, Thai, Khmer,
fullwidth) or four (the mathematical bold 3)."""

CLASSES: dict[str, tuple[bytes, ...]] = {
    "ASCII whitespace": (*(bytes([b]) for b in _WHITESPACE), b"\r\n"),
    "a NUL or another control byte": tuple(bytes([b]) for b in [*range(32), 127]
                                           if b not in _WHITESPACE),
    "a byte at or above 0x80": (*(bytes([b]) for b in range(0x80, 0x100)),
                                *(c.encode() for c in _OTHER_TEXT), *_NOT_UTF8),
    "an upper-case hex digit": tuple(bytes([b]) for b in b"ABCDEF"),
    "a letter past f": tuple(bytes([b]) for b in b"ghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ"),
    "a digit of another script (UTF-8)": tuple(c.encode() for c in _OTHER_DIGITS),
}
"""Each byte class, named as feedback names it, with every member the corpus puts in."""


class Operation(enum.Enum):
    ONE_BYTE = "in place of one byte"
    """The member stands where one byte of the run_id stood: a member of n bytes makes the
    value n - 1 bytes longer, and keeps its count of characters."""
    AS_MANY = "in place of as many bytes"
    """The member covers as many bytes of the run_id as it has: the value keeps its length.
    Only for a member of several bytes (for one byte it is ONE_BYTE)."""
    INSERTED = "inserted"
    PREPENDED = "prepended"
    APPENDED = "appended"
    REMOVED = "one byte removed"


class Position(enum.Enum):
    FIRST = "first"
    MIDDLE = "middle"
    LAST = "last"


PLACES: tuple[tuple[Operation, Position | None, str], ...] = (
    (Operation.ONE_BYTE, Position.FIRST, "in place of the first byte"),
    (Operation.ONE_BYTE, Position.MIDDLE, "in place of a middle byte"),
    (Operation.ONE_BYTE, Position.LAST, "in place of the last byte"),
    (Operation.AS_MANY, Position.FIRST, "in place of as many bytes at the start"),
    (Operation.AS_MANY, Position.MIDDLE, "in place of as many bytes in the middle"),
    (Operation.AS_MANY, Position.LAST, "in place of as many bytes at the end"),
    (Operation.INSERTED, Position.FIRST, "inserted after the first byte"),
    (Operation.INSERTED, Position.MIDDLE, "inserted in the middle"),
    (Operation.INSERTED, Position.LAST, "inserted before the last byte"),
    (Operation.PREPENDED, None, "prepended"),
    (Operation.APPENDED, None, "appended"),
)
"""Where a class's member goes, with the words that say so, in the order the near misses are
made."""

REMOVED = "one byte removed"
REMOVALS: tuple[tuple[Position, str], ...] = ((Position.FIRST, "at the start"),
                                              (Position.LAST, "at the end"))

DESCRIBED = ("every member of each byte class at the first, a middle and the last place, in "
             "place of one byte, of as many bytes as it has and inserted, then prepended and "
             "appended, and one byte removed at either end")
"""The corpus in words, for a checker's feedback."""


@dataclass(frozen=True)
class NearMiss:
    kind: str
    """The byte class (a key of CLASSES), or REMOVED."""
    member: bytes
    """The class's member put in; b"" for a removal."""
    operation: Operation
    position: Position | None
    """None when prepended or appended."""
    where: str
    """The words of PLACES (or of REMOVALS) that say where it is."""
    value: bytes


def run_id(rng: random.Random) -> bytes:
    """A fresh run_id: 40 bytes of 0-9 a-f."""
    return bytes(rng.choice(epoch.HEX_DIGITS) for _ in range(epoch.RUN_ID_LEN))


def placed(value: bytes, member: bytes, operation: Operation, position: Position | None) -> bytes:
    """`value` with `member` put in as the operation says, at the position given (None for
    prepended or appended)."""
    if position is None:
        return member + value if operation is Operation.PREPENDED else value + member
    middle = len(value) // 2
    if operation is Operation.INSERTED:
        # After the first byte and before the last: at the very ends it would be prepended or
        # appended, which are made apart.
        at = {Position.FIRST: 1, Position.MIDDLE: middle, Position.LAST: len(value) - 1}[position]
        return value[:at] + member + value[at:]
    n = len(member) if operation is Operation.AS_MANY else 1
    at = {Position.FIRST: 0, Position.MIDDLE: middle, Position.LAST: len(value) - n}[position]
    return value[:at] + member + value[at + n:]


def near_misses(value: bytes) -> list[NearMiss]:
    """The near misses of `value` (a run_id): every member of every class at every place, then
    the removals. None of them is a run_id."""
    made = [NearMiss(kind, member, operation, position, where,
                     placed(value, member, operation, position))
            for kind, members in CLASSES.items()
            for operation, position, where in PLACES
            for member in members
            if operation is not Operation.AS_MANY or len(member) > 1]
    made += [NearMiss(REMOVED, b"", Operation.REMOVED, Position.FIRST, REMOVALS[0][1], value[1:]),
             NearMiss(REMOVED, b"", Operation.REMOVED, Position.LAST, REMOVALS[1][1], value[:-1])]
    return made


def missed_members(kind: str, missed: list[NearMiss]) -> str:
    """Which of a class's members the near misses given hold, in a few words: "" when they
    hold all of them, the members themselves when they are three or fewer, else how many."""
    held = list(dict.fromkeys(m.member for m in missed))
    if kind not in CLASSES or len(held) == len(CLASSES[kind]):
        return ""
    if len(held) <= 3:
        return f"{', '.join(repr(m) for m in held)} only"
    return f"{len(held)} of its {len(CLASSES[kind])} members"


def wheres(missed: list[NearMiss]) -> str:
    """The places of the near misses given, each once, in the order the near misses are made."""
    return ", ".join(dict.fromkeys(m.where for m in missed))
