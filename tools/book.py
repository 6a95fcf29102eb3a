"""make book / make linkcheck: the course as a static site, built with Jupyter Book 1.

Where the course is published is said once, in book/publish.toml; this tool writes it into
every link that needs it.

  sync       rewrite the README's launch paragraph (between its two marker comments) from
             book/publish.toml
  check      exit 1, saying what differs, when the README's launch paragraph is not what
             publish.toml gives
  stage      lay the book out in book/_build/src from the repository as it is now: the home
             page (the README's introduction, its launch paragraph written for the book, and
             the course in order), notebooks/ exactly as stored but for their links, docs/,
             _toc.yml, _config.yml (book/_config.yml plus what publish.toml gives), the
             book's extension and CSS, and the widget renderer from book/node_modules
  build      sync, stage, then `jupyter-book build` with warnings as errors: book/_build/html
  linkcheck  stage, then Sphinx's linkcheck builder over every external link (needs a network)

Nothing runs a notebook: the pages show the outputs the notebooks were stored with. Links to
repository files that are not pages of the book (a C file, a tool) become links to that file
on the code host; anchors in notebook links (JupyterLab's `#The-heading`) become the book's
(`#the-heading`).
"""

import argparse
import functools
import json
import posixpath
import re
import shutil
import subprocess
import sys
import textwrap
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

import progress

REPO = Path(__file__).resolve().parents[1]
BOOK = REPO / "book"
SETTINGS = BOOK / "publish.toml"
BUILD = BOOK / "_build"
SOURCE = BUILD / "src"
SITE = BUILD / "html"
NODE_MODULES = BOOK / "node_modules"
README = REPO / "README.md"

PROJECTOR = "app/projector.ipynb"
NOTEBOOKS = "notebooks"
# The pages after the course, in this order.
DOCS = ("docs/instructor-guide.md", "docs/benchmarks.md")

README_START = ("<!-- launch links: written by tools/book.py (make book) from book/publish.toml; "
                "edit that file, not these lines -->")
README_END = "<!-- end of launch links -->"

# The files of @jupyter-widgets/html-manager's dist/ that the page loads: the AMD bundle and
# the fonts its CSS names, beside it.
RENDERER_FILES = ("embed-amd.js", "*.woff2", "*.woff", "*.ttf", "*.eot", "*.svg")


class BookError(Exception):
    """The book cannot be staged or built; the message says how to fix it."""


say = functools.partial(progress.say, "book")


@dataclass(frozen=True)
class Publish:
    """book/publish.toml: where the course is published, and every link made from it."""

    repository: str
    branch: str
    binderhub: str
    jupyterhub: str
    site: str

    @classmethod
    def load(cls, path: Path = SETTINGS) -> "Publish":
        raw = tomllib.loads(path.read_text())
        missing = [key for key in ("repository", "branch", "binderhub", "jupyterhub")
                   if not str(raw.get(key, "")).strip()]
        if missing:
            raise BookError(f"{path} sets no {', '.join(missing)}: each needs a value")
        settings = cls(repository=raw["repository"].rstrip("/"), branch=raw["branch"],
                       binderhub=raw["binderhub"].rstrip("/"),
                       jupyterhub=raw["jupyterhub"].rstrip("/"),
                       site=str(raw.get("site", "")).strip())
        settings.owner_and_name()
        return settings

    def owner_and_name(self) -> tuple[str, str]:
        found = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+)", self.repository)
        if not found:
            raise BookError(f"repository = {self.repository!r} in {SETTINGS.name}: it must be "
                            "a GitHub address, https://github.com/OWNER/NAME (Binder's and "
                            "the book's launch buttons read the owner and name from it)")
        return found.group(1), found.group(2)

    @property
    def name(self) -> str:
        return self.owner_and_name()[1]

    @property
    def site_url(self) -> str:
        if self.site:
            return self.site.rstrip("/") + "/"
        owner, name = self.owner_and_name()
        return f"https://{owner.lower()}.github.io/{name}/"

    def binder(self, urlpath: str) -> str:
        owner, name = self.owner_and_name()
        return f"{self.binderhub}/v2/gh/{owner}/{name}/{self.branch}?urlpath={urlpath}"

    def notebook_on_binder(self, path: str) -> str:
        """That notebook (a path from the repository's root) in JupyterLab on Binder."""
        return self.binder(f"lab/tree/{path}")

    def projector_on_binder(self) -> str:
        return self.binder(f"voila/render/{PROJECTOR}")

    def notebook_on_jupyterhub(self, path: str) -> str:
        """nbgitpuller's link: the hub clones the repository into a folder named after it."""
        query = urlencode({"repo": self.repository, "urlpath": f"lab/tree/{self.name}/{path}",
                           "branch": self.branch}, safe="/")
        return f"{self.jupyterhub}/hub/user-redirect/git-pull?{query}"

    def file_on_host(self, path: str) -> str:
        kind = "tree" if (REPO / path).is_dir() else "blob"
        return f"{self.repository}/{kind}/{self.branch}/{path}"

    def book_config(self) -> dict:
        """What book/_config.yml gets from this file when the book is staged."""
        return {
            "repository": {"url": self.repository, "branch": self.branch, "path_to_book": ""},
            "launch_buttons": {"notebook_interface": "jupyterlab",
                               "binderhub_url": self.binderhub,
                               "jupyterhub_url": self.jupyterhub},
            "html": {"baseurl": self.site_url},
            "sphinx": {"config": {
                # book/_ext/trafikey_book.py fills {path} with the page's notebook
                "trafikey_launch": {
                    "binder": self.notebook_on_binder("{path}"),
                    "jupyterhub": self.notebook_on_jupyterhub("{path}").replace(
                        quote("{path}", safe="/"), "{path}"),
                    "projector": self.projector_on_binder(),
                },
                "linkcheck_ignore": [re.escape(self.binderhub) + "/v2/.*",
                                     re.escape(self.jupyterhub) + "/hub/user-redirect/.*"],
            }},
        }


def notebooks() -> list[Path]:
    """The course's notebooks in course order: their names start with their number."""
    found = sorted((REPO / NOTEBOOKS).glob("[0-9][0-9]_*.ipynb"))
    if not found:
        raise BookError(f"no notebooks in {REPO / NOTEBOOKS} (named NN_name.ipynb)")
    return found


def notebook_title(path: Path) -> str:
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    raise BookError(f"{path.name} has no title: its first heading must be a `# ` line")


def readme_launch_block(settings: Publish) -> str:
    """The README's launch paragraph, markers included."""
    first = notebooks()[0]
    start = settings.notebook_on_binder(f"{NOTEBOOKS}/{first.name}")
    paragraph = (
        f"Nothing to install: [open the course on Binder]({start}) (JupyterLab at "
        f"`{first.stem}`), or [the projector app]({settings.projector_on_binder()}) (the three "
        f"widgets, no code), or [read it as a book]({settings.site_url}): every notebook with "
        "its stored outputs, and on each page a button that opens it live on Binder or on a "
        f"JupyterHub. These links point at {settings.repository}: to publish the course "
        "elsewhere, set `repository` in [book/publish.toml](book/publish.toml) and run `make "
        "book` (see [Publishing the book](#publishing-the-book)). Running a workshop? See the "
        "[instructor guide](docs/instructor-guide.md).")
    return "\n".join([README_START, f"[![Binder]({settings.binderhub}/badge_logo.svg)]({start})",
                      wrap(paragraph), README_END])


def wrap(paragraph: str, width: int = 96) -> str:
    """The paragraph filled to `width`, never breaking inside a link or a code span."""
    glue = "\x00"
    kept = re.sub(r"\[[^\]]*\]\([^)]*\)|`[^`]*`",
                  lambda found: found.group(0).replace(" ", glue), paragraph)
    filled = textwrap.fill(kept, width=width, break_long_words=False, break_on_hyphens=False)
    return filled.replace(glue, " ")


def home_launch_paragraph(settings: Publish) -> str:
    """The launch paragraph as the book's home page says it."""
    first = notebooks()[0]
    return (
        "Nothing to install: every notebook page has a launch button (the rocket at its top) "
        "that opens that notebook live in JupyterLab on Binder or on a JupyterHub, or opens "
        "the projector app on Binder. These pages show each notebook as it was stored, with "
        "its outputs; the controls show the values they were saved with, and move only in a "
        f"running notebook. Start with [{notebook_title(first)}]({NOTEBOOKS}/{first.name}), "
        "or [open the course on Binder]"
        f"({settings.notebook_on_binder(f'{NOTEBOOKS}/{first.name}')}) "
        f"(JupyterLab at `{first.stem}`), or [the projector app]"
        f"({settings.projector_on_binder()}) (the three widgets, no code). Running a workshop? "
        "See the [instructor guide](docs/instructor-guide.md).")


def launch_block_span(readme: str) -> tuple[int, int]:
    start, end = readme.find(README_START), readme.find(README_END)
    if start < 0 or end < start:
        raise BookError(f"README.md has no launch paragraph between `{README_START}` and "
                        f"`{README_END}`: put the two marker lines where it goes")
    return start, end + len(README_END)


def sync(settings: Publish) -> bool:
    """Write the README's launch paragraph; True when it changed."""
    readme = README.read_text()
    start, end = launch_block_span(readme)
    updated = readme[:start] + readme_launch_block(settings) + readme[end:]
    if updated == readme:
        return False
    README.write_text(updated)
    say(f"README.md: launch links rewritten from {SETTINGS.relative_to(REPO)}")
    return True


def check(settings: Publish) -> list[str]:
    """What in the README disagrees with publish.toml; empty when nothing does."""
    readme = README.read_text()
    start, end = launch_block_span(readme)
    problems = []
    if readme[start:end] != readme_launch_block(settings):
        problems.append("README.md's launch paragraph is not what book/publish.toml gives: "
                        "run `make book` (or `.venv/bin/python tools/book.py sync`)")
    if "GITHUB-OWNER" in readme:
        problems.append("README.md still says GITHUB-OWNER")
    return problems


# -- staging -------------------------------------------------------------------------------

LINK = re.compile(r"(\]\()([^)\s]+)(\))")


def slug(anchor: str) -> str:
    """The book's id for a heading anchor, from JupyterLab's (`#The-load-rule`) or GitHub's
    (`#the-load-rule`): myst-parser's default slug of the same text."""
    return re.sub(r"[^\w\- ]", "", anchor.lower().replace(" ", "-"))


def rewrite_links(text: str, origin: str, staged: set[str], settings: Publish) -> str:
    """Relative links in markdown at `origin` (the folder, from the repository's root): kept
    when they name a staged file, to the code host when they name another repository file."""

    def one(match: re.Match) -> str:
        target = match.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            return match.group(0)
        path, _, fragment = target.partition("#")
        if not path:
            return f"{match.group(1)}#{slug(fragment)}{match.group(3)}"
        resolved = posixpath.normpath(posixpath.join(origin, path))
        if resolved in staged:
            new = path + (f"#{slug(fragment)}" if fragment else "")
        elif (REPO / resolved).exists() and not resolved.startswith(".."):
            new = settings.file_on_host(resolved) + (f"#{fragment}" if fragment else "")
        else:
            return match.group(0)  # left for the build to report as a broken link
        return f"{match.group(1)}{new}{match.group(3)}"

    return LINK.sub(one, text)


def write_if_changed(path: Path, content: str | bytes) -> None:
    """Unchanged files keep their times, so Sphinx rebuilds only the pages that changed."""
    data = content.encode() if isinstance(content, str) else content
    if path.exists() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def readme_introduction(settings: Publish) -> str:
    """The README up to its first `## ` section, its launch paragraph said for the book."""
    readme = README.read_text()
    start, end = launch_block_span(readme)
    readme = readme[:start] + home_launch_paragraph(settings) + readme[end:]
    section = re.search(r"^## ", readme, re.MULTILINE)
    return (readme[:section.start()] if section else readme).rstrip() + "\n"


def home_page(settings: Publish) -> str:
    course = "\n".join(f"{number}. [{notebook_title(path)}]({NOTEBOOKS}/{path.name})"
                       for number, path in enumerate(notebooks(), start=1))
    docs = " and ".join(f"[{doc_title(REPO / doc)}]({doc})" for doc in DOCS)
    return (f"{readme_introduction(settings)}\n## The course, in order\n\n{course}\n\n"
            f"For instructors and maintainers: {docs}. The course's source, its library and "
            f"its C module are at [{settings.repository}]({settings.repository}).\n")


def doc_title(path: Path) -> str:
    for line in path.read_text().splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise BookError(f"{path.relative_to(REPO)} has no `# ` title")


def toc() -> str:
    # The course's order is its registry's; a notebook there but not on disk fails the build.
    from trafikey_lab.course.registry import NOTEBOOKS as REGISTERED

    missing = [entry.file for entry in REGISTERED if not (REPO / NOTEBOOKS / entry.file).exists()]
    if missing:
        raise BookError(f"the course registry names {', '.join(missing)}, not in {NOTEBOOKS}/")
    chapters = "".join(f"      - file: {NOTEBOOKS}/{entry.stem}\n" for entry in REGISTERED)
    docs = "".join(f"      - file: {doc.removesuffix('.md')}\n" for doc in DOCS)
    return ("# Written by tools/book.py: the notebooks in course order, then the guides.\n"
            "format: jb-book\nroot: index\nparts:\n"
            f"  - caption: The course\n    chapters:\n{chapters}"
            f"  - caption: For instructors and maintainers\n    chapters:\n{docs}")


def merged(base: dict, extra: dict) -> dict:
    out = dict(base)
    for key, value in extra.items():
        out[key] = merged(out.get(key) or {}, value) if isinstance(value, dict) else value
    return out


def book_config(settings: Publish) -> str:
    import yaml  # PyYAML comes with Jupyter Book; `sync` and `check` do without it

    base = yaml.safe_load((BOOK / "_config.yml").read_text())
    return ("# Written by tools/book.py: book/_config.yml plus what book/publish.toml gives.\n"
            + yaml.safe_dump(merged(base, settings.book_config()), sort_keys=False))


def copy_tree(source: Path, target: Path) -> None:
    for path in sorted(source.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            write_if_changed(target / path.relative_to(source), path.read_bytes())


def stage_renderer(target: Path) -> None:
    manager = NODE_MODULES / "@jupyter-widgets" / "html-manager"
    requirejs = NODE_MODULES / "requirejs" / "require.js"
    if not (manager / "dist" / "embed-amd.js").is_file() or not requirejs.is_file():
        raise BookError(f"the widget renderer is not installed in {NODE_MODULES}: run "
                        "`npm ci` in book/ (make book does), which installs "
                        "@jupyter-widgets/html-manager and requirejs from book/package-lock.json")
    version = json.loads((manager / "package.json").read_text())["version"]
    if not version.startswith("1.0."):
        raise BookError(f"@jupyter-widgets/html-manager {version} in {NODE_MODULES}: the book "
                        "needs 1.0.x (ipywidgets 8's); run `npm ci` in book/")
    for pattern in RENDERER_FILES:
        for path in (manager / "dist").glob(pattern):
            write_if_changed(target / path.name, path.read_bytes())
    write_if_changed(target / "require.js", requirejs.read_bytes())


def stage(settings: Publish, renderer: bool = True) -> Path:
    """book/_build/src, ready for jupyter-book; returns its path."""
    pages = [f"{NOTEBOOKS}/{path.name}" for path in notebooks()] + list(DOCS)
    for page in pages:
        if not (REPO / page).is_file():
            raise BookError(f"{page} is missing: the book has a page for it")
    docs_files = [str(path.relative_to(REPO)) for path in (REPO / "docs").rglob("*")
                  if path.is_file()]
    staged = set(pages) | set(docs_files)
    wanted = {"index.md", "_toc.yml", "_config.yml", *staged}

    write_if_changed(SOURCE / "index.md", rewrite_links(home_page(settings), "", staged, settings))
    write_if_changed(SOURCE / "_toc.yml", toc())
    write_if_changed(SOURCE / "_config.yml", book_config(settings))
    stage_pages(docs_files, staged, settings)
    for folder in ("_ext", "_assets"):
        copy_tree(BOOK / folder, SOURCE / folder)
        wanted |= {str(p.relative_to(BOOK)) for p in (BOOK / folder).rglob("*") if p.is_file()}
    if renderer:
        stage_renderer(SOURCE / "_assets" / "widgets")
        wanted |= {f"_assets/widgets/{p.name}" for p in (SOURCE / "_assets/widgets").iterdir()}
    # A notebook renamed or removed since the last build leaves no stale page behind.
    for path in sorted(SOURCE.rglob("*"), reverse=True):
        relative = str(path.relative_to(SOURCE))
        if path.is_file() and relative not in wanted and "__pycache__" not in path.parts:
            path.unlink()
    return SOURCE


def stage_pages(docs_files: list[str], staged: set[str], settings: Publish) -> None:
    """The notebooks and docs/ under SOURCE, their links rewritten for the site."""
    for path in notebooks():
        notebook = json.loads(path.read_text())
        for cell in notebook["cells"]:
            if cell["cell_type"] == "markdown":
                source = "".join(cell["source"])
                cell["source"] = rewrite_links(source, NOTEBOOKS, staged, settings)
        write_if_changed(SOURCE / NOTEBOOKS / path.name,
                         json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
    for name in docs_files:
        path = REPO / name
        if path.suffix == ".md":
            write_if_changed(SOURCE / name, rewrite_links(path.read_text(),
                                                          posixpath.dirname(name), staged,
                                                          settings))
        else:
            write_if_changed(SOURCE / name, path.read_bytes())


def jupyter_book(builder: str, *extra: str) -> int:
    # Jupyter Book writes its linkcheck report into the HTML folder; as a "custom" builder it
    # goes to book/_build/linkcheck instead, out of the published site.
    how = ["--builder", builder] if builder == "html" else [
        "--builder", "custom", "--custom-builder", builder]
    command = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(SOURCE),
               "--path-output", str(BOOK), *how, *extra]
    return subprocess.run(command, cwd=REPO, check=False).returncode


def build(settings: Publish) -> int:
    started = time.monotonic()
    sync(settings)
    stage(settings)
    # The site is written whole each time (the parsed pages are kept in book/_build/.doctrees),
    # so a page whose notebook was renamed or removed does not stay behind in it.
    shutil.rmtree(SITE, ignore_errors=True)
    status = jupyter_book("html", "--warningiserror", "--keep-going")
    if status != 0:
        say("FAILED: jupyter-book reported the warnings above (warnings are errors here)")
        return status
    pages = sorted(SITE.rglob("*.html"))
    placeholders = [str(page.relative_to(SITE)) for page in pages
                    if "GITHUB-OWNER" in page.read_text()]
    if placeholders:
        say(f"FAILED: GITHUB-OWNER is still on {', '.join(placeholders)}")
        return 1
    say(f"{len(pages)} pages in {SITE.relative_to(REPO)} ({time.monotonic() - started:.0f} s); "
        f"publish that folder on any static host, or preview it with "
        f"`.venv/bin/python -m http.server -d {SITE.relative_to(REPO)} -b 127.0.0.1`")
    return 0


def linkcheck(settings: Publish) -> int:
    stage(settings, renderer=False)
    status = jupyter_book("linkcheck")
    report = BUILD / "linkcheck" / "output.txt"
    say(f"linkcheck {'passed' if status == 0 else 'FAILED'}; its report: "
        f"{report.relative_to(REPO)}")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("sync", "check", "stage", "build", "linkcheck"))
    command = parser.parse_args(argv).command
    try:
        settings = Publish.load()
        if command == "sync":
            if not sync(settings):
                say("README.md's launch links already agree with book/publish.toml")
            return 0
        if command == "check":
            problems = check(settings)
            for problem in problems:
                say(problem)
            return 1 if problems else 0
        if command == "stage":
            say(f"staged in {stage(settings).relative_to(REPO)}")
            return 0
        if command == "build":
            return build(settings)
        return linkcheck(settings)
    except BookError as exc:
        say(f"FAILED: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
