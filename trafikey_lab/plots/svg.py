"""SVG for the course's figures that move, built as text by the library itself.

A widget redraws its timeline on every move of a control, in JupyterLab, in Voila, in the
book's stored pages and in the page's own Python (which has no matplotlib): a string of SVG
is the one drawing all four show alike, costs far less to build than a PNG, and keeps its
text as text (found by the page's search, crisp on a projector, read by a screen reader).

The figure is one `<svg role="img">` named by its `<title>` and described by its `<desc>`.
Every mark carries a class that says what it is (band, band-label, grant, sweep, ...), so
that a test reads the drawing by meaning, and hatching is a pattern, so that a cue never
rests on colour alone.
"""

import hashlib
from html import escape

FONT_SIZE = 12
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
CHAR_WIDTH = 0.62
"""A text's width per character, in font sizes: above the mean width of lower-case letters
and digits in the sans-serif fonts above, so that a label that fits by this measure fits on
the page."""


def text_width(text: str, size: float = FONT_SIZE) -> float:
    return len(text) * CHAR_WIDTH * size


def fitting(labels: tuple[str, ...], room: float, size: float = FONT_SIZE) -> str | None:
    """The first (longest) of the labels that fits in `room`, or None when none does."""
    return next((label for label in labels if text_width(label, size) <= room), None)


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _attributes(attrs: dict) -> str:
    return "".join(f' {name.rstrip("_").replace("_", "-")}="{escape(str(value), quote=True)}"'
                   for name, value in attrs.items() if value is not None)


class Drawing:
    """One figure, `width` by `height` user units, its marks appended in drawing order."""

    def __init__(self, width: int, height: int, title: str, desc: str):
        if not title.strip() or not desc.strip():
            raise ValueError("a figure needs a title and a description that say what it shows")
        self.width, self.height = width, height
        self.title, self.desc = title, " ".join(desc.split())
        # ids unique to what is drawn: two different figures on one page must not share a
        # pattern or a title, and the same figure drawn twice stays the same text
        self.key = "tk-" + hashlib.sha1(self.desc.encode()).hexdigest()[:10]
        self.defs: list[str] = []
        self.marks: list[str] = []

    def element(self, tag: str, content: str | None = None, **attrs) -> None:
        opened = f"<{tag}{_attributes(attrs)}"
        self.marks.append(f"{opened}/>" if content is None
                          else f"{opened}>{escape(content, quote=False)}</{tag}>")

    def rect(self, x: float, y: float, width: float, height: float, **attrs) -> None:
        self.element("rect", x=_number(x), y=_number(y), width=_number(max(width, 0)),
                     height=_number(height), **attrs)

    def line(self, x1: float, y1: float, x2: float, y2: float, **attrs) -> None:
        self.element("line", x1=_number(x1), y1=_number(y1), x2=_number(x2), y2=_number(y2),
                     **attrs)

    def circle(self, cx: float, cy: float, r: float, **attrs) -> None:
        self.element("circle", cx=_number(cx), cy=_number(cy), r=_number(r), **attrs)

    def polygon(self, points: list[tuple[float, float]], **attrs) -> None:
        self.element("polygon", points=" ".join(f"{_number(x)},{_number(y)}"
                                                 for x, y in points), **attrs)

    def text(self, x: float, y: float, content: str, anchor: str = "start",
             size: float = FONT_SIZE, **attrs) -> None:
        """Text whose baseline is at y; anchor is start, middle or end, as in SVG. Text that
        would run past the figure's left or right edge is moved inside it."""
        width = text_width(content, size)
        left = x - {"start": 0, "middle": width / 2, "end": width}[anchor]
        if left + width > self.width:
            x, anchor = self.width - 1, "end"
        elif left < 0:
            x, anchor = 1, "start"
        self.element("text", content, x=_number(x), y=_number(y), text_anchor=anchor,
                     font_size=_number(size), **attrs)

    def hatch(self, name: str, path: str, colour: str = "#555555",
              background: str | None = None) -> str:
        """Defines a hatch pattern (once per figure) and returns its fill, url(#...)."""
        pattern = f"{self.key}-{name}"
        if not any(f'id="{pattern}"' in d for d in self.defs):
            under = f'<rect width="8" height="8" fill="{background}"/>' if background else ""
            self.defs.append(f'<pattern id="{pattern}" patternUnits="userSpaceOnUse" '
                             f'width="8" height="8">{under}<path d="{path}" '
                             f'stroke="{colour}" stroke-width="1.2" fill="none"/></pattern>')
        return f"url(#{pattern})"

    def svg(self) -> str:
        title, desc = f"{self.key}-title", f"{self.key}-desc"
        return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" '
                f'aria-labelledby="{title} {desc}" viewBox="0 0 {self.width} {self.height}" '
                f'width="100%" style="max-width: {self.width}px; height: auto" '
                f'font-family="{FONT}">'
                f'<title id="{title}">{escape(self.title, quote=False)}</title>'
                f'<desc id="{desc}">{escape(self.desc, quote=False)}</desc>'
                + (f"<defs>{''.join(self.defs)}</defs>" if self.defs else "")
                + "".join(self.marks) + "</svg>")


CROSS_HATCH = "M0,0 L8,8 M8,0 L0,8"
DIAGONAL_HATCH = "M0,8 L8,0 M-2,2 L2,-2 M6,10 L10,6"
