"""book/publish.toml says once where the course is published, and every link follows it: the
README's launch paragraph, the book's repository and launch settings, the links to files that
are not pages. These need no npm, no build and no browser, so `make test` runs them; the
built site itself is tested by test_site.py under `make book-check`."""

import json
import re

import pytest

from .tool import REPO, book

FORK = '''repository = "https://github.com/someone/a-fork"
branch = "teaching"
binderhub = "https://binder.example.test"
jupyterhub = "https://hub.example.test/"
'''


@pytest.fixture
def fork(tmp_path):
    path = tmp_path / "publish.toml"
    path.write_text(FORK)
    return book.Publish.load(path)


def test_the_readme_launch_paragraph_is_what_book_publish_toml_gives():
    assert book.check(book.Publish.load()) == []


def test_the_readme_keeps_no_placeholder_for_the_repository():
    readme = (REPO / "README.md").read_text()
    assert "GITHUB-OWNER" not in readme
    assert not re.search(r"\{(owner|repo|name)\}", readme, re.IGNORECASE)


def test_every_binder_link_in_the_readme_names_the_repository_of_the_setting():
    settings = book.Publish.load()
    owner, name = settings.owner_and_name()
    readme = (REPO / "README.md").read_text()
    binder_links = re.findall(r"\(https://mybinder\.org/v2/gh/([^)]+)\)", readme)
    assert binder_links
    assert all(link.startswith(f"{owner}/{name}/{settings.branch}?") for link in binder_links)


def test_the_readme_says_how_to_change_where_the_course_is_published():
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Publishing the book", 1)[1].split("\n## ", 1)[0]
    assert "book/publish.toml" in section
    assert "make book" in section
    assert "ghp-import" in section


def test_another_repository_changes_every_link_and_leaves_none_of_the_old(fork):
    block = book.readme_launch_block(fork)
    config = json.dumps(fork.book_config())
    for text in (block, config):
        assert "trafikey/trafikey-lab" not in text
        assert "mybinder.org" not in text
    assert ("https://binder.example.test/v2/gh/someone/a-fork/teaching"
            "?urlpath=lab/tree/notebooks/") in block
    assert "https://someone.github.io/a-fork/" in block
    assert fork.book_config()["repository"] == {"url": "https://github.com/someone/a-fork",
                                                "branch": "teaching", "path_to_book": ""}
    assert fork.book_config()["launch_buttons"]["jupyterhub_url"] == "https://hub.example.test"


def test_the_jupyterhub_link_is_nbgitpuller_pulling_the_repository_and_opening_the_notebook(fork):
    assert fork.notebook_on_jupyterhub("notebooks/04_x.ipynb") == (
        "https://hub.example.test/hub/user-redirect/git-pull?"
        "repo=https%3A//github.com/someone/a-fork&urlpath=lab/tree/a-fork/notebooks/04_x.ipynb"
        "&branch=teaching")
    template = fork.book_config()["sphinx"]["config"]["trafikey_launch"]["jupyterhub"]
    assert template.format(path="notebooks/04_x.ipynb") == fork.notebook_on_jupyterhub(
        "notebooks/04_x.ipynb")


def test_a_repository_not_on_github_is_refused_with_the_form_it_needs(tmp_path):
    path = tmp_path / "publish.toml"
    path.write_text(FORK.replace("https://github.com/someone/a-fork", "https://example.test/x"))
    with pytest.raises(book.BookError, match=r"https://github.com/OWNER/NAME"):
        book.Publish.load(path)


def test_a_setting_left_empty_is_refused_by_name(tmp_path):
    path = tmp_path / "publish.toml"
    path.write_text(FORK.replace('"https://hub.example.test/"', '""'))
    with pytest.raises(book.BookError, match="jupyterhub"):
        book.Publish.load(path)


def test_the_site_address_is_github_pages_for_the_repository_unless_set(fork, tmp_path):
    assert fork.site_url == "https://someone.github.io/a-fork/"
    path = tmp_path / "publish.toml"
    path.write_text(FORK + 'site = "https://course.example.test/lab"\n')
    assert book.Publish.load(path).site_url == "https://course.example.test/lab/"


def test_a_link_to_a_repository_file_that_is_no_page_goes_to_the_code_host(fork):
    text = "see [the module](../trafikey_lab/module/trafikey.c) and [tools](../tools)"
    assert book.rewrite_links(text, "notebooks", set(), fork) == (
        "see [the module](https://github.com/someone/a-fork/blob/teaching/trafikey_lab/module/"
        "trafikey.c) and [tools](https://github.com/someone/a-fork/tree/teaching/tools)")


def test_jupyterlab_anchors_become_the_books_heading_ids(fork):
    staged = {"notebooks/00_start_here.ipynb", "docs/instructor-guide.md"}
    text = ("[a](00_start_here.ipynb#Glossary) [b](#The-load-rule) "
            "[c](../docs/instructor-guide.md#sizing-a-shared-host) [d](https://x.test/#Keep)")
    assert book.rewrite_links(text, "notebooks", staged, fork) == (
        "[a](00_start_here.ipynb#glossary) [b](#the-load-rule) "
        "[c](../docs/instructor-guide.md#sizing-a-shared-host) [d](https://x.test/#Keep)")


def test_a_link_to_nothing_is_left_for_the_build_to_report(fork):
    text = "[gone](../nowhere.md)"
    assert book.rewrite_links(text, "notebooks", set(), fork) == text


def test_the_book_lists_every_notebook_in_course_order_then_the_guides():
    toc = book.toc()
    files = re.findall(r"- file: (\S+)", toc)
    stems = sorted(path.stem for path in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert files == [f"notebooks/{stem}" for stem in stems] + [
        "docs/instructor-guide", "docs/benchmarks"]
    assert len(stems) == 8


def test_the_home_page_is_the_readmes_introduction_with_the_course_in_order():
    settings = book.Publish.load()
    home = book.home_page(settings)
    readme = (REPO / "README.md").read_text()
    first_paragraph = readme.split("\n\n")[1]
    assert home.startswith("# trafikey lab\n")
    assert first_paragraph in home
    assert book.README_START not in home
    assert "GITHUB-OWNER" not in home
    assert "## Two commands" not in home
    for path in book.notebooks():
        assert f"](notebooks/{path.name})" in home
