"""Alt text on figures: a described figure shows as an <img> with that alt text, and its text
is the sentence, not matplotlib's "<Figure size ...>"."""

import base64

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest
from IPython.core.interactiveshell import InteractiveShell

from trafikey_lab.plots import alt


@pytest.fixture
def fig():
    figure, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    yield figure
    plt.close(figure)


def test_the_img_carries_the_png_and_the_escaped_sentence(fig):
    alt.describe(fig, 'A line   falling from 1 to 0, "steeply" & <fast>.')
    assert alt.alt_text(fig) == 'A line falling from 1 to 0, "steeply" & <fast>.'
    png = alt.png_base64(fig)
    assert base64.b64decode(png).startswith(b"\x89PNG")
    img = alt.img_html(fig, png)
    assert 'alt="A line falling from 1 to 0, &quot;steeply&quot; &amp; &lt;fast&gt;."' in img
    assert img.startswith(f'<img src="data:image/png;base64,{png}"')


def test_an_empty_alt_text_is_refused(fig):
    with pytest.raises(ValueError, match="say what the figure shows"):
        alt.describe(fig, "  ")


def test_the_installed_formatters_give_a_described_figure_its_alt_and_leave_others_alone(fig):
    shell = InteractiveShell.instance()
    alt.install(shell)
    other, _ = plt.subplots()
    try:
        formats, _ = shell.display_formatter.format(other)
        assert formats["text/plain"].startswith("<Figure size")
        assert "text/html" not in formats
        alt.describe(fig, "A falling line.")
        formats, _ = shell.display_formatter.format(fig)
        assert formats["text/plain"] == "A falling line."
        assert 'alt="A falling line."' in formats["text/html"]
    finally:
        plt.close(other)


def test_in_a_kernel_the_first_figure_after_install_shows_its_alt_text():
    """The inline backend resets Figure's formatters when it loads, at the first figure: the
    setup call's formatters must still be the ones a cell's figure is shown with."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in (
        "from trafikey_lab.plots import alt\nalt.install()",
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([0, 1])\n"
        "alt.describe(fig, 'A rising line from 0 to 1.')\nNone",
    )])
    NotebookClient(notebook, timeout=60, kernel_name="python3").execute()
    (shown,) = notebook.cells[1].outputs
    assert shown["data"]["text/plain"] == "A rising line from 0 to 1."
    assert 'alt="A rising line from 0 to 1."' in shown["data"]["text/html"]
    assert "image/png" in shown["data"]
