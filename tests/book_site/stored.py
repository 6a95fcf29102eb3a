"""What a page built from a stored notebook must show: read from the notebook the site was
built from (its copy in the site's _sources/), not from any particular cell.

`shown(state, model_id)` walks a displayed widget's tree in the saved widget state and says
what a reader must see of it: the texts of its labels, HTML, buttons and outputs, the chosen
option of each selection, each slider's readout and each text field's value. Widgets laid out
hidden (display none, visibility hidden) and their children are left out.
"""

import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
REFERENCE = "IPY_MODEL_"

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


def notebook_state(notebook: dict) -> dict:
    return notebook.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def views(notebook: dict) -> list[str]:
    return [output["data"][WIDGET_VIEW]["model_id"]
            for cell in notebook["cells"] for output in cell.get("outputs", [])
            if WIDGET_VIEW in output.get("data", {})]


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
    seen: set[str] = set()

    def walk(key: str) -> None:
        if key in seen or key not in state:
            return
        seen.add(key)
        model = state[key]
        name, values = model.get("model_name", ""), model.get("state", {})
        if _hidden(state, values):
            return
        description = values.get("description") or ""
        if name in TEXTS:
            result.texts.append(html_text(values.get("value") or "") if name != "LabelModel"
                                else values.get("value") or "")
            result.texts.append(description)
        elif name in BUTTONS:
            result.texts.append(description)
        elif name in SELECTIONS:
            index = values.get("index")
            labels = values.get("_options_labels") or []
            if isinstance(index, int) and 0 <= index < len(labels):
                result.selected.append(labels[index])
            result.texts.append(description)
        elif name in SLIDERS:
            if values.get("readout", True):
                result.readouts.append(_readout(values))
            result.texts.append(description)
        elif name in FIELDS:
            result.inputs.append(str(values.get("value", "")))
            result.texts.append(description)
        elif name == "OutputModel":
            _output_texts(values.get("outputs", []), result)
        for value in values.values():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and item.startswith(REFERENCE):
                    walk(item.removeprefix(REFERENCE))

    walk(model_id)
    result.texts = [text for text in result.texts if text.strip()]
    return result


def _readout(values: dict) -> str:
    fmt = values.get("readout_format") or ("d" if isinstance(values.get("value"), int) else ".2f")
    try:
        return format(values["value"], fmt)
    except (KeyError, ValueError, TypeError):
        return str(values.get("value"))
