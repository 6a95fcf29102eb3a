"""The book's own Sphinx extension: what a page built from a stored notebook needs besides it.

- A note beside every control that needs a kernel. A stored widget renders from its saved
  state and shows its saved values, but no callback runs without a kernel: moving a control,
  pressing Run live, choosing an answer do nothing here. An exercise's checker runs the
  learner's code, so its stored output is only its answer to the cell as stored. Both get a
  note right after the cell that says so and links to that notebook on Binder and on a
  JupyterHub (and, beside a widget, to the projector app on Binder). Each note also holds
  what is true once "Run in this page" has started the page's Python, shown in place of the
  first by the runtime's script: the course's widgets work on the model, so their controls
  answer in the page, while their buttons (Run live) and whatever a checker plays on a server
  still need a running notebook.
- The projector app on Binder in the launch menu of every notebook page, beside the theme's
  Binder and JupyterHub buttons.
- A figure stored only as a PNG keeps its alt text: the course's formatters put the sentence
  in the output's text/plain, which the page would drop for the image.
- A "Run in this page" button on every notebook page: the page's cells become editors whose
  Python runs in the reader's browser (book/_assets/trafikey-runtime.js: thebe, its JupyterLite
  kernel and Pyodide, all served by the site), their stored outputs shown until they run.
- A file name the build writes at the site's root (07's decision sheet and its PDF), named in a
  notebook as code, becomes a link to it: in JupyterLab the name stays text, since the file is
  the book's and is not beside the notebook.
- Not sphinx-thebe: 0.3, which Jupyter Book 1 always loads, fetches thebe from a CDN and
  declares its settings twice on every page, a script error in the console.

The links come from the `trafikey_launch` setting, which tools/book.py writes from
book/publish.toml. Nothing here depends on what a cell says beyond the library's names: a
widget is any widget-view output, a checker any call of a function named check_...
"""

import hashlib
import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from widget_state import displayed, models, notebook_state

CHECKER_CALL = re.compile(r"\bcheck_\w+\s*\(")
# What a figure's text/plain says when no alt text was given to it.
NO_ALT = re.compile(r"^\s*<(Figure|matplotlib|IPython)\b")
# What tools/book.py's build writes at the site's root beside the pages (tools/decision_sheet.py;
# tests/book_site/test_decision_sheet.py finds both linked from 07's page).
SITE_FILES = ("decision-table.html", "decision-table.pdf")


def setup(app: Sphinx) -> dict:
    app.add_config_value("trafikey_launch", {}, "env")
    app.connect("doctree-read", annotate_notebook)
    app.add_js_file("trafikey-runtime.js")
    # After sphinx-book-theme builds its launch menu (priority 501).
    app.connect("html-page-context", add_projector_launch, priority=600)
    app.connect("html-page-context", drop_thebe, priority=600)
    # The notes are written into each page's parsed tree, which Sphinx keeps between builds:
    # an edit of this extension changes its env_version, so every page is read again.
    here = Path(__file__).parent
    source = b"".join(path.read_bytes() for path in sorted(here.glob("*.py")))
    return {"parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": int(hashlib.sha256(source).hexdigest()[:8], 16)}


def launch_links(app: Sphinx, docname: str) -> dict[str, str]:
    launch = app.config.trafikey_launch
    if not launch:
        return {}
    path = f"{docname}.ipynb"
    return {"binder": launch["binder"].format(path=path),
            "jupyterhub": launch["jupyterhub"].format(path=path),
            "projector": launch["projector"]}


def annotate_notebook(app: Sphinx, doctree: nodes.document) -> None:
    docname = app.env.docname
    source = Path(app.env.doc2path(docname))
    if source.suffix != ".ipynb":
        return
    notebook = json.loads(source.read_text())
    state = notebook_state(notebook)
    links = launch_links(app, docname)
    add_runtime_button(doctree)
    link_site_files(doctree, "../" * docname.count("/"))
    for cell in list(doctree.findall(_code_cell)):
        give_figures_their_alt(cell)
        stored = notebook["cells"][cell["cell_index"]]
        views = displayed(stored.get("outputs", []))
        if views:
            cell.parent.insert(cell.parent.index(cell) + 1,
                               widget_note(buttons(views, state), links))
        elif CHECKER_CALL.search("".join(stored.get("source", ""))):
            cell.parent.insert(cell.parent.index(cell) + 1, checker_note(links))


def link_site_files(doctree: nodes.document, to_root: str) -> None:
    for literal in list(doctree.findall(nodes.literal)):
        if literal.astext() in SITE_FILES:
            link = nodes.reference("", "", internal=False, refuri=to_root + literal.astext())
            literal.replace_self(link)
            link += literal


RUNTIME_BUTTON = (
    '<div class="trafikey-runtime"><p><button type="button" class="trafikey-runtime-button">'
    'Run in this page</button> <span class="trafikey-runtime-status" role="status">'
    "This page's Python can run in your browser, with no server: Pyodide, loaded from this "
    "site (about 20 MB the first time). What needs the live server or the C module still "
    "needs a running notebook: the launch links.</span></p></div>")


def add_runtime_button(doctree: nodes.document) -> None:
    """The button that starts the page's Python, right under the page's title."""
    title = next(doctree.findall(nodes.title), None)
    if title is None:
        return
    section = title.parent
    section.insert(section.index(title) + 1, nodes.raw("", RUNTIME_BUTTON, format="html"))


def _code_cell(node: nodes.Node) -> bool:
    return isinstance(node, nodes.container) and node.get("nb_element") == "cell_code"


def give_figures_their_alt(cell: nodes.container) -> None:
    for bundle in cell.findall(lambda n: isinstance(n, nodes.container)
                               and n.get("nb_element") == "mime_bundle"):
        by_type = {child.get("mime_type"): child for child in bundle.children}
        plain = by_type.get("text/plain")
        if "text/html" in by_type or plain is None:
            continue
        text = plain.astext().strip()
        if not text or NO_ALT.match(text):
            continue
        for mime_type, child in by_type.items():
            if mime_type and mime_type.startswith("image/"):
                for image in child.findall(nodes.image):
                    image.setdefault("alt", text)


def buttons(views: list[str], state: dict) -> list[str]:
    """The descriptions of the buttons inside the displayed widgets, in order, each once."""
    return list(dict.fromkeys(values["description"] for name, values in models(state, views)
                              if name == "ButtonModel" and values.get("description")))


# Where the two texts of a note differ: before the page's Python runs, and once it does
# (book/_assets/trafikey-runtime.js marks the notes with RUNS_HERE; the CSS shows one text).
STORED, IN_PAGE, RUNS_HERE = "trafikey-stored", "trafikey-in-page", "trafikey-runs-here"


def widget_note(button_names: list[str], links: dict[str, str]) -> nodes.Element:
    pressed = still = ""
    if button_names:
        named = ", ".join(f"“{name}”" for name in button_names)
        pressed = f", and pressing {named},"
        still = f" Pressing {named} still needs the live server: a running notebook."
    text = (f"These controls show the values they were saved with. Changing them{pressed} "
            "needs a running notebook: this page has no kernel behind it.")
    in_page = ("Run its cell here (its “run” button) and these controls answer from the "
               f"model, in your browser.{still}")
    return note("live-control", text, in_page, links, projector=True)


def checker_note(links: dict[str, str]) -> nodes.Element:
    text = ("This checker runs the code you write, so it needs a running notebook; the "
            "output stored here is its answer to the cell as it stands.")
    in_page = ("Edit the cell and run it here: what the checker plays on the model answers in "
               "your browser. Whatever it plays on a server (the live server, or servers of "
               "its own) still needs a running notebook.")
    return note("live-checker", text, in_page, links, projector=False)


def note(kind: str, text: str, in_page: str, links: dict[str, str],
         projector: bool) -> nodes.Element:
    box = nodes.container(classes=["trafikey-live-note", kind])
    paragraph = nodes.paragraph()
    stored = nodes.inline(classes=[STORED])
    stored += nodes.strong(text="Needs a live kernel. ")
    stored += nodes.Text(text + " ")
    here = nodes.inline(classes=[IN_PAGE])
    here += nodes.strong(text="Runs in this page. ")
    here += nodes.Text(in_page + " ")
    paragraph += [stored, here]
    if links:
        paragraph += nodes.Text("Run it live: ")
        targets = [("this notebook on Binder", links["binder"], "launch-binder"),
                   ("on a JupyterHub", links["jupyterhub"], "launch-jupyterhub")]
        if projector:
            targets.append(("the projector app on Binder (no code)", links["projector"],
                            "launch-projector"))
        for index, (label, url, css) in enumerate(targets):
            if index:
                paragraph += nodes.Text(", " if index < len(targets) - 1 else " or ")
            paragraph += nodes.reference(text=label, refuri=url, classes=[css])
        paragraph += nodes.Text(".")
    box += paragraph
    return box


def add_projector_launch(app: Sphinx, pagename: str, templatename: str, context: dict,
                         doctree) -> None:
    links = launch_links(app, pagename)
    for group in context.get("header_buttons", []):
        if group.get("label") == "launch-buttons":
            group["buttons"].append({
                "type": "link",
                "text": "Projector app",
                "tooltip": "The course's three widgets in Voila on Binder, no code",
                "icon": "fas fa-display",
                "url": links["projector"],
                "label": "launch-projector-button",
            })


def drop_thebe(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    context["script_files"] = [
        script for script in context.get("script_files", [])
        if "sphinx-thebe" not in str(getattr(script, "filename", script) or "")
        and "THEBE_JS_URL" not in str(getattr(script, "attributes", {}).get("body", ""))]
