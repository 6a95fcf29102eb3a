"""What every widget of the course repeats: labels as wide as their text, status lines that
wrap, one box of controls and outputs, and display as that box."""

import ipywidgets as widgets

LABELS = {"description_width": "initial"}
"""Labels as wide as their text, so that none is cut off."""

WRAPS = "trafikey-wraps"
"""The class of a label whose text wraps onto more lines (`status_line`)."""


def status_line() -> widgets.Label:
    """A label for a sentence that may be longer than the widget is wide: it wraps, once the
    widget's box also holds `wrapping()`."""
    return widgets.Label().add_class(WRAPS)


def wrapping() -> widgets.HTML:
    """A stylesheet, shown nowhere, that lets the labels of class WRAPS wrap. ipywidgets draws
    a label on one line clipped to one line's height, by CSS that no Layout or style trait
    reaches: without this, a status line saying what a live run found ran past the widget's
    edge. Being a widget, it reaches JupyterLab, Voila and a stored page alike."""
    # both spellings of ipywidgets' classes: its views still add the older ones
    return widgets.HTML(
        f"<style>.widget-vbox > .widget-label.{WRAPS}, "
        f".jupyter-widget-vbox > .jupyter-widget-label.{WRAPS} {{white-space: normal; "
        "height: auto; overflow: visible; overflow-wrap: anywhere}</style>",
        layout=widgets.Layout(display="none"))


class Widget:
    """A widget of the course: it owns its controls and outputs and lays them out in `box`,
    which a notebook displays. A subclass builds its controls, then calls `lay_out`."""

    box: widgets.Box

    def lay_out(self, *children) -> None:
        self.box = widgets.VBox(list(children))

    def _repr_mimebundle_(self, **kwargs):
        """The box's views; its text is the widget's own words when the widget has them."""
        data = self.box._repr_mimebundle_(**kwargs)
        if type(self).__repr__ is not object.__repr__:
            data["text/plain"] = repr(self)
        return data
