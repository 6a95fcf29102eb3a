"""What every widget of the course repeats: labels as wide as their text, one box of controls
and outputs, and display as that box."""

import ipywidgets as widgets

LABELS = {"description_width": "initial"}
"""Labels as wide as their text, so that none is cut off."""


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
