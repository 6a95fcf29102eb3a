"""Near misses of a run_id, drawn afresh: the values a checker tries so that a learner's function
which differs from the rule on some bytes cannot pass by never being shown them.

Each byte class is put into a run_id at the first, a middle and the last place (in place of
the bytes there), inserted in the middle, prepended and appended; then one byte is removed at
either end. A member of a class written with several bytes in UTF-8 replaces as many bytes, so
that the near miss keeps the run_id's length in bytes. Which member, which middle place and
which run_id are drawn from the caller's `random.Random`, so no table written before the run
holds them; the words that name a near miss (its class and where it is) never depend on the
draw, so that feedback built from them is the same on every run. Pure: no server, no I/O.
"""

import random
from dataclasses import dataclass

from trafikey_lab import epoch

_WHITESPACE = b" \t\n\r\x0b\x0c"
_OTHER_DIGITS = "٠١٢٣٤٥٦٧٨٩۰۳۷०३९০৩߃๓០３９²³¹"
"""Digits of other scripts (str.isdigit says True of each), all outside ASCII."""
_OTHER_TEXT = "éßñøÿ€…中ёΩ"
"""Characters outside ASCII that are no digit, in valid UTF-8."""

CLASSES: dict[str, tuple[bytes, ...]] = {
    "ASCII whitespace": tuple(bytes([b]) for b in _WHITESPACE),
    "a NUL or another control byte": tuple(bytes([b]) for b in [*range(32), 127]
                                           if b not in _WHITESPACE),
    "a byte at or above 0x80": (*(bytes([b]) for b in range(0x80, 0x100)),
                                *(c.encode() for c in _OTHER_TEXT)),
    "an upper-case hex digit": tuple(bytes([b]) for b in b"ABCDEF"),
    "a letter past f": tuple(bytes([b]) for b in b"ghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ"),
    "a digit of another script (UTF-8)": tuple(c.encode() for c in _OTHER_DIGITS),
}
"""Each byte class, named as feedback names it, with the members a near miss draws from."""

FIRST_DRAWS = {
    "a NUL or another control byte": (b"\x00",),
    "a byte at or above 0x80": (b"\x80", "é".encode()),
}
"""Members every run puts in, at the first places, so that NUL, a byte that is not UTF-8 and
valid UTF-8 outside ASCII are each tried on every run, not only when drawn."""

PLACES = ("in place of the first byte", "in place of a middle byte", "in place of the last byte",
          "inserted in the middle", "prepended", "appended")
"""Where a class's member goes, in the order the near misses are made."""

REMOVED = "one byte removed"
REMOVALS = ("at the start", "at the end")


@dataclass(frozen=True)
class NearMiss:
    kind: str
    """The byte class (a key of CLASSES), or REMOVED."""
    where: str
    """One of PLACES, or of REMOVALS."""
    value: bytes


def run_id(rng: random.Random) -> bytes:
    """A fresh run_id: 40 bytes of 0-9 a-f."""
    return bytes(rng.choice(epoch.HEX_DIGITS) for _ in range(epoch.RUN_ID_LEN))


def _placed(value: bytes, member: bytes, where: str, middle: int) -> bytes:
    n = len(member)
    return {
        PLACES[0]: member + value[n:],
        PLACES[1]: value[:middle] + member + value[middle + n:],
        PLACES[2]: value[:len(value) - n] + member,
        PLACES[3]: value[:middle] + member + value[middle:],
        PLACES[4]: member + value,
        PLACES[5]: value + member,
    }[where]


def near_misses(value: bytes, rng: random.Random) -> list[NearMiss]:
    """The near misses of `value` (a run_id): every class at every place, then the removals.
    None of them is a run_id."""
    made = []
    for kind, members in CLASSES.items():
        first = FIRST_DRAWS.get(kind, ())
        for n, where in enumerate(PLACES):
            member = first[n] if n < len(first) else rng.choice(members)
            # A middle place leaves room on both sides for the longest member (3 bytes).
            middle = rng.randrange(4, len(value) - 7)
            made.append(NearMiss(kind, where, _placed(value, member, where, middle)))
    made += [NearMiss(REMOVED, REMOVALS[0], value[1:]), NearMiss(REMOVED, REMOVALS[1], value[:-1])]
    return made


def by_kind(missed: list[NearMiss]) -> dict[str, list[str]]:
    """The places of the near misses given, by class, in the order they were made."""
    places: dict[str, list[str]] = {}
    for miss in missed:
        places.setdefault(miss.kind, []).append(miss.where)
    return places
