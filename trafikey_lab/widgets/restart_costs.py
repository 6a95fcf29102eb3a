"""What other queues charge for a restart: the model of `trafikey_lab.restart_costs` with a
number field for each input, its table and its figure redrawn into one HTML area on each change
(no Output area, so a stored notebook holds only the widget's text).

Number fields, not sliders: an ipywidgets slider's handle has no accessible name, while a
number field's label names it, and its arrow keys step it as a slider's do.

The figure is SVG the library builds as text (`plots.dead_letters.figure_svg`), so the page
that runs the course's Python (the book, in Pyodide, with no matplotlib) draws it as
JupyterLab does.
"""

import ipywidgets as widgets

from trafikey_lab.plots.dead_letters import figure_svg
from trafikey_lab.restart_costs import restart_dead_letters, table_html
from trafikey_lab.widgets.base import LABELS, Widget


class RestartCosts(Widget):
    def __init__(self):
        # The labels carry their units and are never cut off (LABELS).
        number = widgets.BoundedIntText
        self.controls = {
            "jobs_in_flight": number(200, 0, 2000, 50, description="jobs in flight",
                                     style=LABELS),
            "restarts_per_week": number(2, 0, 20, 1, description="restarts a week", style=LABELS),
            "job_minutes": number(30, 1, 240, 1, description="job length (min)", style=LABELS),
            "lease_s": number(30, 5, 300, 5, description="lease (s)", style=LABELS),
            "down_s": number(60, 1, 600, 1, description="each restart down (s)", style=LABELS),
        }
        self.shown = widgets.HTML()
        self.lay_out(*self.controls.values(), self.shown)
        for control in self.controls.values():
            control.observe(self.update, names="value")
        self.update()

    def update(self, _change=None):
        self.rows = restart_dead_letters(**{k: c.value for k, c in self.controls.items()})
        self.shown.value = table_html(self.rows) + figure_svg(self.rows)

    def __repr__(self) -> str:
        return "RestartCosts: five number fields, the table and the figure of the model"
