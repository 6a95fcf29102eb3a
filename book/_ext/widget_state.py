"""A notebook's stored widgets, read from its saved widget state: the one walk that both the
book's extension (the buttons a note names) and the book's tests (what a page must show) use.

A notebook saves every widget model under metadata.widgets; a cell's output names only the
model it displayed, and a model names its children, layout and style by "IPY_MODEL_<id>".
"""

from collections.abc import Callable, Iterable, Iterator

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
REFERENCE = "IPY_MODEL_"


def notebook_state(notebook: dict) -> dict:
    """Every saved widget model of the notebook, by model id."""
    return notebook.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def displayed(outputs: Iterable[dict]) -> list[str]:
    """The model ids of the widgets these outputs display, in order."""
    return [output["data"][WIDGET_VIEW]["model_id"] for output in outputs
            if WIDGET_VIEW in output.get("data", {})]


def models(state: dict, roots: Iterable[str],
           prune: Callable[[dict], bool] = lambda values: False) -> Iterator[tuple[str, dict]]:
    """(model name, saved values) of each model reachable from the roots, each once, a model
    before its children in the order the values name them; a model missing from the state is
    passed over, and one for which prune(values) holds is left out with all below it."""
    seen: set[str] = set()

    def walk(model_id: str) -> Iterator[tuple[str, dict]]:
        if model_id in seen or model_id not in state:
            return
        seen.add(model_id)
        model = state[model_id]
        values = model.get("state", {})
        if prune(values):
            return
        yield model.get("model_name", ""), values
        for value in values.values():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and item.startswith(REFERENCE):
                    yield from walk(item.removeprefix(REFERENCE))

    for root in roots:
        yield from walk(root)
