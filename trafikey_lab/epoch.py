"""The lease epoch's two rules, pure: the shape check at load and the exemption at the sweep.

The values are the dive's test values, named the way its tests name them.
"""

RUN_ID_LEN = 40
"""CONFIG_RUN_ID_SIZE in Valkey's server.h: a run_id is 40 bytes (ASCII hex digits)."""

NOW = b"3f2c0d8e9b1a4c5d6e7f8091a2b3c4d5e6f70812"
"""The tests' current process."""

ZERO = b"0" * RUN_ID_LEN
"""Another process: the model's run_id after a restart."""

SHAPE_REJECTS = {
    'b""': b"",
    "&NOW[..39]": NOW[:39],
    "NOW in upper case": NOW.upper(),
    "NOW ending in g": NOW[:39] + b"g",
    "NOW with a 3 appended": NOW + b"3",
}
"""The five strings the load's shape check must reject."""

FOREIGN_EPOCHS = {
    "missing": None,
    "forty 0s": ZERO,
    "empty": b"",
}
"""Three stored lease_epoch values the sweep must treat as another process while run_id is NOW."""

HEX_DIGITS = b"0123456789abcdef"

COUNTER_MAX = 2**53 - 1
"""A counter above this could not be incremented exactly; the module refuses it."""


def shape_problem(value: bytes) -> str | None:
    """Why `value` is not a run_id as Valkey prints it, or None when it is one.

    A value is bytes, so the length and the position (counting from 1) are in bytes: a
    non-ASCII character typed as UTF-8 is two to four of them.
    """
    if len(value) != RUN_ID_LEN:
        return f"{len(value)} bytes, not {RUN_ID_LEN}"
    for position, byte in enumerate(value):
        if byte not in HEX_DIGITS:
            return f"byte {position + 1} is {bytes([byte])!r}, not one of 0-9 a-f"
    return None


def valid_run_id(value: bytes) -> bool:
    """Exactly 40 bytes, each an ASCII 0-9 or a-f: the form Valkey's getRandomHexChars
    produces."""
    return shape_problem(value) is None


def exempt(lease_epoch: bytes | None, current: bytes) -> bool:
    """An expired lease is exempt from the stall count when its stamp is missing or foreign.

    The comparison is byte for byte; a stored stamp is never re-checked for shape, since it was
    a valid run_id when a native verb wrote it.
    """
    return lease_epoch != current


def counter(value: bytes | None) -> int | None:
    """A row counter (attempts, stalled): absent is 0; None when the stored value is unusable.

    A usable value is a canonical non-negative decimal (no sign, no leading zero, no spaces)
    no larger than COUNTER_MAX, so that adding one stays exact.
    """
    if value is None:
        return 0
    if not value.isdigit():
        return None
    if len(value) > 1 and value[:1] == b"0":
        return None
    number = int(value)
    return number if number <= COUNTER_MAX else None


def argument_integer(value: bytes) -> int | None:
    """An integer argument read the way Valkey's StringToLongLong reads it, or None.

    Optional minus, then digits with no leading zero (a lone 0 aside), within a signed 64-bit
    range: no plus sign, no spaces, no "-0".
    """
    text = value[1:] if value[:1] == b"-" else value
    if not text.isdigit() or len(value) > 20:
        return None
    if text[:1] == b"0" and (len(text) > 1 or text != value):
        return None
    number = int(value)
    return number if -(2**63) <= number < 2**63 else None
