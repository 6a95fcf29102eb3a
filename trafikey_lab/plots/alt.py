"""Alt text for the course's figures, so that a screen reader (and a reader of the stored
notebook's text) hears what a figure shows instead of matplotlib's "<Figure size ...>".

A plot function calls describe(fig, sentence) with a sentence built from what it drew. The
notebooks' setup call installs two display formatters, so that a described figure shows as an
<img alt="..."> (JupyterLab's own image renderer writes no alt attribute; its HTML renderer
keeps ours) and its text/plain is the sentence. Widgets that put a figure into an Output widget
use bundle(fig) for the same representation.
"""

import base64
import html
import io

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


def png_base64(fig: Figure, tight: bool = True) -> str:
    """The figure as the inline backend draws it (tight bounding box), base64-encoded. Not
    tight: as laid out, in one drawing pass instead of two (for a figure redrawn on every move
    of a control)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight" if tight else None)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def img_html(fig: Figure, png: str | None = None) -> str:
    alt = required_alt_text(fig)
    return (f'<img src="data:image/png;base64,{png or png_base64(fig)}" '
            f'alt="{html.escape(alt, quote=True)}" style="max-width: 100%">')


def bundle(fig: Figure, tight: bool = True) -> tuple[dict, dict]:
    """(data, metadata) for IPython.display.display(data, raw=True, metadata=metadata): the
    PNG, the <img> with its alt text, and the alt text as text/plain."""
    png = png_base64(fig, tight)
    alt = alt_text(fig) or ""
    data = {"image/png": png, "text/html": img_html(fig, png), "text/plain": alt}
    return data, {"image/png": {"alt": alt}}


def output(fig: Figure, tight: bool = True) -> dict:
    """The figure as one display_data output for an Output widget's `outputs`: the PNG, and an
    <img> with the figure's alt text, which JupyterLab shows in its place (`bundle`).

    Setting `outputs` changes the widget's state and nothing else. Drawing inside `with
    output:` instead tags the kernel's messages with the widget's msg_id, and under Voila the
    server-side executor then captures them and writes the widget's state back to the kernel;
    that write now and then goes unsent, and the page waits for the cell forever (seen as the
    projector app hanging in about 1 load of 10 on a busy machine)."""
    data, metadata = bundle(fig, tight)
    return {"output_type": "display_data", "data": data, "metadata": metadata}


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
    # The inline backend, when it loads (at a kernel's first figure), takes every formatter
    # off Figure and puts back its own: load it now, so that ours are the ones that stay.
    try:
        import matplotlib_inline.backend_inline  # noqa: F401
    except ImportError:
        pass
    formatters = shell.display_formatter.formatters

    def plain(fig, printer, cycle):
        printer.text(alt_text(fig) or repr(fig))

    def as_html(fig):
        return img_html(fig) if alt_text(fig) is not None else None

    formatters["text/plain"].for_type(Figure, plain)
    formatters["text/html"].for_type(Figure, as_html)
