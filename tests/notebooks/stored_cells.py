"""A notebook's exercise cell as stored, run up to its checker's call: what the learner's
attempt defines, for the tests that hold the stored feedback to giving nothing away."""

import nbformat


def exercise_namespace(notebook, checker: str) -> dict:
    """Runs the stored code cell that calls `checker(`, all but its last line (the call)."""
    cell = next(c for c in nbformat.read(notebook, as_version=4).cells
                if c.cell_type == "code" and f"{checker}(" in c.source)
    body, call = cell.source.rsplit("\n", 1)
    assert call.startswith(f"{checker}("), call
    namespace: dict = {}
    exec(body, namespace)
    return namespace
