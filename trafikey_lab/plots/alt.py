"""Alt text for the course's figures, so that a screen reader (and a reader of the stored
notebook's text) hears what a figure shows instead of matplotlib's "<Figure size ...>".

A plot function calls describe(fig, sentence) with a sentence built from what it drew. The
notebooks' setup call installs two display formatters, so that a described figure shows as an
<img alt="..."> (JupyterLab's own image renderer writes no alt attribute; its HTML renderer
keeps ours) and its text/plain is the sentence. The widgets' moving timelines are SVG with a
title and a description of their own (plots/svg.py), not figures.
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
from typing import TYPE_CHECKING

# matplotlib is loaded by whatever draws a figure; install() loads it for its formatters. So a
# module that only names this one (the restart costs' widget, through its figure) imports in a
# page with no matplotlib (the book, in Pyodide).
if TYPE_CHECKING:
    from matplotlib.figure import Figure

_ALT = "_trafikey_alt"


def describe(fig: Figure, alt: str) -> Figure:
    """Attaches `alt`, one or two plain sentences saying what the figure shows."""
    if not alt or not alt.strip():
        raise ValueError("alt text must say what the figure shows: give it a sentence")
    setattr(fig, _ALT, " ".join(alt.split()))
    return fig


def alt_text(fig: Figure) -> str | None:
    return getattr(fig, _ALT, None)


def required_alt_text(fig: Figure) -> str:
    """The figure's alt text, for a page that shows it: ValueError when it has none."""
    alt = alt_text(fig)
    if alt is None:
        raise ValueError("this figure has no alt text: call describe(fig, sentence) where it is "
                         "drawn")
    return alt


def png_base64(fig: Figure) -> str:
    """The figure as the inline backend draws it (tight bounding box), base64-encoded."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def img_html(fig: Figure, png: str | None = None) -> str:
    alt = required_alt_text(fig)
    return (f'<img src="data:image/png;base64,{png or png_base64(fig)}" '
            f'alt="{html.escape(alt, quote=True)}" style="max-width: 100%">')


def install(shell=None) -> None:
    """Registers the formatters on the running IPython (a no-op outside one). A figure with no
    alt text keeps matplotlib's defaults, so that a test can find it."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return
        shell = get_ipython()
    if shell is None:
        return
    from matplotlib.figure import Figure

    # The inline backend, when it loads (at a kernel's first figure), takes every formatter
    # off Figure and puts back its own: load it now, so that ours are the ones that stay.
    with contextlib.suppress(ImportError):
        import matplotlib_inline.backend_inline  # noqa: F401
    formatters = shell.display_formatter.formatters

    def plain(fig, printer, cycle):
        printer.text(alt_text(fig) or repr(fig))

    def as_html(fig):
        return img_html(fig) if alt_text(fig) is not None else None

    formatters["text/plain"].for_type(Figure, plain)
    formatters["text/html"].for_type(Figure, as_html)
