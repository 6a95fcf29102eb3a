"""book/_ext/trafikey_book.py on its own: the alt text a PNG-only figure keeps, the buttons a
note names, the note's links. (Collected under make book-check, where Sphinx is installed.)"""

import sys

from docutils import nodes

from .tool import REPO

sys.path.insert(0, str(REPO / "book" / "_ext"))

import trafikey_book

LINKS = {"binder": "https://b.test/nb", "jupyterhub": "https://h.test/nb",
         "projector": "https://b.test/app"}


def bundle(plain: str, *, html: bool = False) -> nodes.container:
    cell = nodes.container(nb_element="cell_code")
    outputs = nodes.container(nb_element="mime_bundle")
    image = nodes.container(mime_type="image/png")
    image += nodes.image(uri="abc.png")
    text = nodes.container(mime_type="text/plain")
    text += nodes.literal_block(text=plain)
    outputs += [image, text]
    if html:
        outputs += nodes.container(mime_type="text/html")
    cell += outputs
    return cell


def test_a_figure_stored_as_a_png_takes_its_alt_text_from_the_text_beside_it():
    cell = bundle("Diagram of one job's three states")
    trafikey_book.give_figures_their_alt(cell)
    assert next(cell.findall(nodes.image))["alt"] == "Diagram of one job's three states"


def test_matplotlibs_repr_is_no_alt_text_so_the_figure_gets_none():
    cell = bundle("<Figure size 800x280 with 1 Axes>")
    trafikey_book.give_figures_their_alt(cell)
    assert "alt" not in next(cell.findall(nodes.image))


def test_a_figure_with_an_html_img_is_left_to_it():
    cell = bundle("Diagram", html=True)
    trafikey_book.give_figures_their_alt(cell)
    assert "alt" not in next(cell.findall(nodes.image))


def test_the_note_names_the_buttons_inside_the_displayed_widget_only():
    state = {
        "box": {"model_name": "VBoxModel", "state": {"children": ["IPY_MODEL_run", "IPY_MODEL_x"]}},
        "run": {"model_name": "ButtonModel", "state": {"description": "Run live"}},
        "x": {"model_name": "DropdownModel", "state": {"description": "history"}},
        "other": {"model_name": "ButtonModel", "state": {"description": "Not shown"}},
    }
    assert trafikey_book.buttons(["box"], state) == ["Run live"]
    text = trafikey_book.widget_note(["Run live"], LINKS).astext()
    assert "Needs a live kernel" in text
    assert "“Run live”" in text


def test_a_widgets_note_offers_the_notebook_and_the_projector_a_checkers_only_the_notebook():
    widget = trafikey_book.widget_note([], LINKS)
    checker = trafikey_book.checker_note(LINKS)
    assert [ref["refuri"] for ref in widget.findall(nodes.reference)] == list(LINKS.values())
    assert [ref["refuri"] for ref in checker.findall(nodes.reference)] == [
        LINKS["binder"], LINKS["jupyterhub"]]



def part(note: nodes.Element, kind: str) -> str:
    """The text of one of a note's two texts (trafikey_book.STORED or IN_PAGE)."""
    (found,) = [n for n in note.findall(nodes.inline) if kind in n["classes"]]
    return found.astext()


def test_each_note_also_says_what_runs_once_the_pages_python_does_and_what_still_needs_a_server():
    widget = trafikey_book.widget_note(["Run live", "Run live at this timing"], LINKS)
    assert part(widget, trafikey_book.STORED).startswith("Needs a live kernel.")
    in_page = part(widget, trafikey_book.IN_PAGE)
    assert in_page.startswith("Runs in this page.")
    assert "answer from the model, in your browser" in in_page
    assert "Pressing “Run live”, “Run live at this timing” still needs the live server" in in_page
    checker = part(trafikey_book.checker_note(LINKS), trafikey_book.IN_PAGE)
    assert "plays on a server (the live server, or servers of its own) still needs" in checker


def test_a_widget_with_no_button_says_nothing_still_needs_the_server():
    assert "still needs" not in part(trafikey_book.widget_note([], LINKS), trafikey_book.IN_PAGE)
