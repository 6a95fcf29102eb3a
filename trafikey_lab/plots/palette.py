"""The course's one palette: Okabe and Ito's eight colours, readable by colour-blind readers.

Every figure takes its colours from here by name, and never lets a colour carry meaning alone:
each one also has a label, a marker, a hatch or a line style.
"""

OKABE_ITO = {
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
    "black": "#000000",
}
GREY = "#999999"
"""For what is over (a dead job): not one of the eight, and never the only cue."""


def colour(name: str) -> str:
    return OKABE_ITO[name]
