"""How the course writes a value for a reader: a run_id in the dive's short form, a stored
value or a reply as plain text.

Replies and rows come back as bytes from a live server and as bytes or str from the model;
every table, label and message in the course goes through these three functions, so the two
executors always print the same thing for the same value.
"""

from trafikey_lab import epoch


def short(run_id: bytes | str | None) -> str:
    """The dive's abbreviation of a run_id: first four and last four characters."""
    if run_id is None:
        return "(none)"
    text = run_id.decode() if isinstance(run_id, bytes) else run_id
    return f"{text[:4]}…{text[-4:]}" if len(text) == epoch.RUN_ID_LEN else repr(text)


def plain(value: object) -> str:
    """A stored value as text: bytes decoded, an absent field as "(none)"."""
    if value is None:
        return "(none)"
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def reply(value: object) -> str:
    """A verb's reply on one line, as a client would show it: nil for no value, a list in
    brackets, and anything as long as a run_id in the dive's short form."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(reply(v) for v in value) + "]"
    if value is None:
        return "nil"
    text = plain(value)
    is_run_id = isinstance(value, (bytes, str)) and len(text) == epoch.RUN_ID_LEN
    return short(text) if is_run_id else text
