"""The module's pure C functions, called through ctypes.

The built trafikey.so takes every server API function from a pointer it fetches at load, so
it links against nothing from the server and can be opened here, outside one. These wrappers
take and return what the Python model in `trafikey_lab.epoch` and `trafikey_lab.sweep` does,
so a test can put the same question to both and compare the answers with ==.
"""

import ctypes
import functools
import sys

from trafikey_lab.module import build
from trafikey_lab.sweep import COUNTING, NOT_READ, Kind, Need, Seen, Verdict

# The key type numbers of the C side (the module API's KeyType numbering); TYPE names any
# other type, such as a stream, "other".
TYPE_CODES = {"none": 0, "string": 1, "list": 2, "hash": 3, "set": 4, "zset": 5}
OTHER_TYPE = 6

NEEDS = {1: Need.TYPE, 2: Need.GROUP, 3: Need.EPOCH, 4: Need.STALLED}
VERDICTS = {
    1: "ghost",
    2: "lane",
    3: "exempt",
    4: "recovered",
    5: "dead",
    6: "wrongtype",
    7: "not_integer",
}


class _Seen(ctypes.Structure):
    _fields_ = [
        ("type_read", ctypes.c_int),
        ("type", ctypes.c_int),
        ("group_read", ctypes.c_int),
        ("group_present", ctypes.c_int),
        ("epoch_read", ctypes.c_int),
        ("epoch", ctypes.c_char_p),
        ("epoch_len", ctypes.c_size_t),
        ("stalled_read", ctypes.c_int),
        ("stalled", ctypes.c_char_p),
        ("stalled_len", ctypes.c_size_t),
    ]


class _Step(ctypes.Structure):
    _fields_ = [
        ("need", ctypes.c_int),
        ("verdict", ctypes.c_int),
        ("stalled", ctypes.c_longlong),
    ]


@functools.cache
def in_page() -> bool:
    """True in a browser page that runs the course's Python (Pyodide, the book): no C compiler
    built anything there, so the course shows the model's answers alone and says so."""
    return sys.platform == "emscripten"


@functools.cache  # a checker asks the C of some two thousand values: open it once
def library() -> ctypes.CDLL:
    """The built module, opened once; raises ModuleNotBuilt when it is not there."""
    lib = ctypes.CDLL(str(build.module_path()))
    buffer = (ctypes.c_char_p, ctypes.c_size_t)
    lib.trafikey_valid_run_id.argtypes = buffer
    lib.trafikey_valid_run_id.restype = ctypes.c_int
    lib.trafikey_exempt.argtypes = buffer + buffer
    lib.trafikey_exempt.restype = ctypes.c_int
    lib.trafikey_counter.argtypes = (*buffer, ctypes.POINTER(ctypes.c_longlong))
    lib.trafikey_counter.restype = ctypes.c_int
    lib.trafikey_decide_member.argtypes = (
        *buffer,
        ctypes.c_longlong,
        ctypes.POINTER(_Seen),
        ctypes.POINTER(_Step),
    )
    lib.trafikey_decide_member.restype = None
    return lib


def valid_run_id(value: bytes) -> bool:
    return bool(library().trafikey_valid_run_id(value, len(value)))


def exempt(lease_epoch: bytes | None, current: bytes) -> bool:
    size = 0 if lease_epoch is None else len(lease_epoch)
    return bool(library().trafikey_exempt(lease_epoch, size, current, len(current)))


def counter(value: bytes) -> int | None:
    """A present counter field's value, or None when the module refuses it."""
    out = ctypes.c_longlong()
    if not library().trafikey_counter(value, len(value), ctypes.byref(out)):
        return None
    return out.value


def _field(value) -> tuple[int, bytes | None, int]:
    """(read, bytes or NULL, length) for a Seen field; b"" stays a present, empty field."""
    if value is NOT_READ:
        return 0, None, 0
    if value is None:
        return 1, None, 0
    return 1, value, len(value)


def decide_member(run_id: bytes, max_stalled: int, seen: Seen) -> Need | Verdict:
    """One step of the C sweep decision, for the same Seen the model takes."""
    c_seen = _Seen()
    if seen.type is not None:
        c_seen.type_read = 1
        c_seen.type = TYPE_CODES.get(seen.type, OTHER_TYPE)
    if seen.group is not NOT_READ:
        c_seen.group_read = 1
        c_seen.group_present = seen.group is not None
    # ctypes turns b"" into a valid pointer to an empty string, never into NULL, so an empty
    # stored field stays distinct from an absent one.
    c_seen.epoch_read, c_seen.epoch, c_seen.epoch_len = _field(seen.epoch)
    c_seen.stalled_read, c_seen.stalled, c_seen.stalled_len = _field(seen.stalled)
    step = _Step()
    library().trafikey_decide_member(
        run_id, len(run_id), max_stalled, ctypes.byref(c_seen), ctypes.byref(step)
    )
    if step.need:
        return NEEDS[step.need]
    kind = Kind(VERDICTS[step.verdict])  # the C's word, which must be one of the domain's
    return Verdict(kind, step.stalled if kind in COUNTING else None)
