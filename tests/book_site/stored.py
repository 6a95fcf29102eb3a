"""What a page built from a stored notebook must show: read from the notebook the site was
built from (its copy in the site's _sources/), not from any particular cell.

`shown(state, model_id)` walks a displayed widget's tree in the saved widget state and says
what a reader must see of it: the texts of its labels, HTML, buttons and outputs, the chosen
option of each selection, each slider's readout and each text field's value. Widgets laid out
hidden (display none, visibility hidden) and their children are left out.
"""

import json
import re
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from .tool import REPO

sys.path.insert(0, str(REPO / "book" / "_ext"))

from widget_state import REFERENCE, displayed, models, notebook_state

__all__ = ["notebook_state"]

SELECTIONS = {"DropdownModel", "RadioButtonsModel", "SelectModel", "ToggleButtonsModel",
              "SelectionSliderModel"}
SLIDERS = {"IntSliderModel", "FloatSliderModel"}
FIELDS = {"TextModel", "TextareaModel", "IntTextModel", "BoundedIntTextModel",
          "FloatTextModel", "BoundedFloatTextModel"}
TEXTS = {"LabelModel", "HTMLModel", "HTMLMathModel"}
BUTTONS = {"ButtonModel", "ToggleButtonModel", "CheckboxModel"}


class _Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag, attrs):
        self.skipping += tag in ("script", "style")

    def handle_endtag(self, tag):
        self.skipping -= tag in ("script", "style") and self.skipping > 0

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


def html_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return "".join(parser.parts)


def squeeze(text: str) -> str:
    """Text compared without its whitespace or case: layout decides those, not the state."""
    return re.sub(r"\s+", "", text).lower()


@dataclass
class Shown:
    texts: list[str] = field(default_factory=list)
    selected: list[str] = field(default_factory=list)
    readouts: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    images: int = 0


def views(notebook: dict) -> list[str]:
    return displayed(output for cell in notebook["cells"] for output in cell.get("outputs", []))


def load(site: Path, page: str) -> dict | None:
    source = site / "_sources" / Path(page).with_suffix(".ipynb")
    return json.loads(source.read_text()) if source.is_file() else None


def _hidden(state: dict, values: dict) -> bool:
    layout = values.get("layout")
    if isinstance(layout, str) and layout.startswith(REFERENCE):
        spec = state.get(layout.removeprefix(REFERENCE), {}).get("state", {})
        return spec.get("display") == "none" or spec.get("visibility") == "hidden"
    return False


def _output_texts(outputs: list[dict], shown: Shown) -> None:
    for output in outputs:
        if output.get("output_type") == "stream":
            shown.texts.append("".join(output.get("text", "")))
            continue
        data = output.get("data", {})
        if "text/html" in data:
            shown.texts.append(html_text("".join(data["text/html"])))
            shown.images += "<img" in "".join(data["text/html"])
        elif any(kind.startswith("image/") for kind in data):
            shown.images += 1
        elif "text/plain" in data:
            shown.texts.append("".join(data["text/plain"]))


def shown(state: dict, model_id: str) -> Shown:
    result = Shown()
    for name, values in models(state, [model_id], prune=lambda values: _hidden(state, values)):
        _show(name, values, result)
    result.texts = [text for text in result.texts if text.strip()]
    return result


def _show(name: str, values: dict, result: Shown) -> None:
    """What one model adds to what a reader sees: its value as its kind shows it, then its
    description (a control's label)."""
    if name == "OutputModel":
        _output_texts(values.get("outputs", []), result)
        return
    if name in TEXTS:
        value = values.get("value") or ""
        result.texts.append(value if name == "LabelModel" else html_text(value))
    elif name in SELECTIONS:
        result.selected += _chosen(values)
    elif name in SLIDERS:
        if values.get("readout", True):
            result.readouts.append(_readout(values))
    elif name in FIELDS:
        result.inputs.append(str(values.get("value", "")))
    elif name not in BUTTONS:
        return
    result.texts.append(values.get("description") or "")


def _chosen(values: dict) -> list[str]:
    index = values.get("index")
    labels = values.get("_options_labels") or []
    return [labels[index]] if isinstance(index, int) and 0 <= index < len(labels) else []


def _readout(values: dict) -> str:
    fmt = values.get("readout_format") or ("d" if isinstance(values.get("value"), int) else ".2f")
    try:
        return format(values["value"], fmt)
    except (KeyError, ValueError, TypeError):
        return str(values.get("value"))
