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
             book's extension and CSS, the widget renderer from book/node_modules, and the
             page's Python runtime: thebe, thebe-lite and Pyodide from book/node_modules,
             the wheels its kernel imports from the package index (RUNTIME below)
  build      sync, stage, then `jupyter-book build` with warnings as errors: book/_build/html,
             and 07's decision table as a one-page sheet beside it (tools/decision_sheet.py)
  linkcheck  stage, then Sphinx's linkcheck builder over every external link (needs a network)
  timings    write what the book's checks measured of the page's Python (the runtime tests'
             screenshots/runtime.json) into docs/benchmarks.md's section on the book's page;
             `make book-check` does it when its runtime tests have all run

Nothing runs a notebook: the pages show the outputs the notebooks were stored with. Links to
repository files that are not pages of the book (a C file, a tool) become links to that file
on the code host; anchors in notebook links (JupyterLab's `#The-heading`) become the book's
(`#the-heading`).
"""

import argparse
import functools
import hashlib
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import tomllib
import zipfile
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
BENCHMARKS = REPO / "docs" / "benchmarks.md"
RUNTIME_TIMINGS = REPO / "tests" / "book_site" / "screenshots" / "runtime.json"
PAGE_SECTION = "## The book's page: the course's Python in the reader's browser"
"""The heading of docs/benchmarks.md's section that this tool writes and `make bench` keeps."""

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


# -- the runtime: the page's Python run in the reader's browser ---------------------------
# thebe (its cells and widget manager) with thebe-lite (a JupyterLite server and its Pyodide
# kernel in a worker), Pyodide's core, all from book/node_modules; the Python packages the
# kernel imports as pure wheels from PyPI, named in a rewritten pyodide-lock.json so that
# Pyodide loads them from the site: its own lock names its content-delivery network.
RUNTIME = "runtime"
PYODIDE_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip")
# What the kernel needs of Pyodide's lock: micropip (piplite runs on it) and IPython.
PYODIDE_ROOTS = ("micropip", "ipython")
# IPython from Pyodide 0.27's lock (8.23) imports sqlite3, which Pyodide serves only from its
# CDN; IPython 9 runs without it, with pyodide_kernel 0.8.6 (below) to drive it.
IPYTHON = {"ipython": ("9.17.1", ["ipython_pygments_lexers"]),
           "ipython-pygments-lexers": ("1.1.1", [])}
# The course's own imports, at the versions constraints.txt gives the lab: name -> (import
# names, depends in the lock).
COURSE_PACKAGES = {
    "comm": (["comm"], ["traitlets"]),
    "jupyterlab-widgets": (["jupyterlab_widgets"], []),
    "ipywidgets": (["ipywidgets"], ["comm", "traitlets", "jupyterlab-widgets", "ipython"]),
    "redis": (["redis"], []),
}
LIBRARY = "trafikey-lab"
# Two strings of the bundles that name another host or a module the site cannot serve, each
# rewritten, and the build stopped when one is no longer there exactly once:
#  - thebe-lite's kernel installs CPython's ssl and sqlite3 from Pyodide's CDN at start;
#    the course needs neither (IPython 9 runs without sqlite3).
#  - thebe's widget manager fetches require.js from a CDN; the site serves its own
#    (the widget renderer's, _static/widgets/require.js), named by the runtime's script.
BUNDLE_PATCHES = {
    "thebe-lite": ('["ssl","sqlite3","ipykernel","comm","pyodide_kernel","ipython"]',
                   '["ipykernel","comm","pyodide_kernel","ipython"]', 2),
    "thebe": ('fetch("https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min.js")',
              "fetch(window.trafikeyRuntime.requireJs)", 1),
}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


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
        "its outputs, and the controls the values they were saved with; “Run in this page”, "
        "at the top of each, runs the page's Python in your browser (the model, its widgets "
        "and the checkers' model side), while the live server's parts need a running "
        f"notebook. Start with [{notebook_title(first)}]({NOTEBOOKS}/{first.name}), "
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


def constraint(name: str) -> str:
    """The version constraints.txt gives `name`: the one the lab is tested with."""
    for line in (REPO / "constraints.txt").read_text().splitlines():
        found = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)", line.strip())
        if found and normalized(found.group(1)) == normalized(name):
            return found.group(2)
    raise BookError(f"constraints.txt names no version of {name}: run `make lock`")


def download_wheels(pins: list[str], into: Path) -> None:
    """Pure wheels for Pyodide's Python (3.12) from the package index; kept between builds."""
    into.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
               "--only-binary=:all:", "--python-version", "3.12", "--implementation", "py",
               "--abi", "none", "--platform", "any", "--dest", str(into), *pins]
    if subprocess.run(command, check=False).returncode != 0:
        raise BookError(f"pip could not download the page's wheels ({' '.join(pins)}): the "
                        "book's build needs the package index (PyPI) for them")


def wheel_of(folder: Path, name: str, version: str) -> Path:
    for path in folder.glob("*.whl"):
        wheel_name, wheel_version = path.name.split("-")[:2]
        if normalized(wheel_name) == normalized(name) and wheel_version == version:
            return path
    raise BookError(f"no wheel of {name} {version} in {folder}")


def library_wheel(into: Path) -> Path:
    """The library as a pure wheel: setup.py leaves the module out under TRAFIKEY_PURE_WHEEL."""
    with tempfile.TemporaryDirectory() as scratch:
        # A copy, so that the checkout's build/ (which may hold a built module) stays out.
        source = Path(scratch) / "src"
        shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "book", "node_modules", "*.so", "*.egg-info", "tests",
            "__pycache__", "wheelhouse"))
        command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                   "--wheel-dir", scratch, str(source)]
        env = {**os.environ, "TRAFIKEY_PURE_WHEEL": "1"}
        if subprocess.run(command, check=False, env=env).returncode != 0:
            raise BookError("pip could not build the library's pure wheel for the page")
        built = next(Path(scratch).glob("trafikey_lab-*-py3-none-any.whl"), None)
        if built is None:
            raise BookError("pip built no pure wheel (py3-none-any) of trafikey_lab: setup.py "
                            "must leave the module out under TRAFIKEY_PURE_WHEEL=1")
        with zipfile.ZipFile(built) as archive:
            if any(name.endswith(".so") for name in archive.namelist()):
                raise BookError(f"{built.name} holds a shared library: the page cannot load it")
        into.mkdir(parents=True, exist_ok=True)
        for old in into.glob("trafikey_lab-*.whl"):
            old.unlink()
        return Path(shutil.copy(built, into))


def lock_entry(name: str, wheel: Path, imports: list[str], depends: list[str]) -> dict:
    return {"name": name, "version": wheel.name.split("-")[1], "file_name": wheel.name,
            "install_dir": "site", "package_type": "package", "imports": imports,
            "depends": depends, "unvendored_tests": False, "shared_library": False,
            "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()}


def pyodide_lock(lock: dict, wheels: Path) -> tuple[dict, list[Path]]:
    """Pyodide's lock with only what the site serves: the kernel's packages and the course's,
    each naming its wheel beside the lock."""
    packages = {normalized(name): entry for name, entry in lock["packages"].items()}
    for name, (version, extra) in IPYTHON.items():
        entry = packages.setdefault(name, {"name": name, "imports": [normalized(name).replace(
            "-", "_")], "depends": []})
        entry.update(version=version, depends=[d for d in entry["depends"] if d != "sqlite3"]
                     + extra)
    needed: dict[str, dict] = {}

    def walk(name: str) -> None:
        name = normalized(name)
        if name not in needed:
            needed[name] = packages[name]
            for dependency in packages[name]["depends"]:
                walk(dependency)

    for root in PYODIDE_ROOTS:
        walk(root)
    pins = [f"{name}=={entry['version']}" for name, entry in needed.items()]
    pins += [f"{name}=={constraint(name)}" for name in COURSE_PACKAGES]
    download_wheels(pins, wheels)
    entries = {name: lock_entry(name, wheel_of(wheels, name, entry["version"]),
                                entry["imports"], [normalized(d) for d in entry["depends"]])
               for name, entry in needed.items()}
    for name, (imports, depends) in COURSE_PACKAGES.items():
        entries[name] = lock_entry(name, wheel_of(wheels, name, constraint(name)), imports,
                                   depends)
    library = library_wheel(wheels)
    entries[LIBRARY] = lock_entry(LIBRARY, library, ["trafikey_lab"], ["redis", "ipywidgets"])
    return {**lock, "packages": entries}, [wheels / entry["file_name"] for entry in
                                           entries.values()]


def stage_bundle(package: str, source: Path, target: Path) -> list[Path]:
    """A bundle's files but its source maps and type declarations, its patch applied."""
    old, new, count = BUNDLE_PATCHES[package]
    found, written = 0, []
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if not path.is_file() or path.suffix == ".map" or "types" in relative.parts:
            continue
        data = path.read_bytes()
        if path.suffix == ".js":
            text = data.decode()
            found += text.count(old)
            data = text.replace(old, new).encode()
        write_if_changed(target / relative, data)
        written.append(target / relative)
    if found != count:
        raise BookError(f"{package} in {NODE_MODULES} no longer holds {old!r} {count} time(s) "
                        f"(found {found}): its version changed; look again at BUNDLE_PATCHES")
    return written


def stage_runtime(target: Path) -> set[str]:
    """The runtime under target (the site's _static/runtime); returns the files it wrote."""
    pyodide = NODE_MODULES / "pyodide"
    thebe_lite = NODE_MODULES / "thebe-lite" / "dist" / "lib"
    kernel_wheels = NODE_MODULES / "@jupyterlite" / "pyodide-kernel" / "pypi"
    missing = [str(path) for path in (pyodide / "pyodide-lock.json", thebe_lite,
                                      NODE_MODULES / "thebe" / "lib", kernel_wheels)
               if not path.exists()]
    if missing:
        raise BookError(f"the page's runtime is not installed ({', '.join(missing)}): run "
                        "`npm ci` in book/ (make book does)")
    written: list[Path] = []

    def write(path: Path, content: str | bytes) -> None:
        write_if_changed(path, content)
        written.append(path)

    for name in PYODIDE_FILES:
        write(target / "pyodide" / name, (pyodide / name).read_bytes())
    lock, wheels = pyodide_lock(json.loads((pyodide / "pyodide-lock.json").read_text()),
                                BUILD / "wheels")
    write(target / "pyodide" / "pyodide-lock.json", json.dumps(lock, indent=1))
    for wheel in wheels:
        write(target / "pyodide" / wheel.name, wheel.read_bytes())
    written += stage_bundle("thebe", NODE_MODULES / "thebe" / "lib", target / "thebe")
    written += stage_bundle("thebe-lite", thebe_lite, target / "thebe-lite")
    # piplite's index, for the kernel's own packages: pyodide_kernel 0.8.6 (it drives IPython
    # 9) in place of the 0.4.7 that thebe-lite carries.
    index = json.loads((thebe_lite / "pypi" / "all.json").read_text())
    newer = json.loads((kernel_wheels / "all.json").read_text())
    index["pyodide-kernel"] = newer["pyodide-kernel"]
    for release in newer["pyodide-kernel"]["releases"].values():
        for artifact in release:
            write(target / "thebe-lite" / "pypi" / artifact["filename"],
                  (kernel_wheels / artifact["filename"]).read_bytes())
    write(target / "thebe-lite" / "pypi" / "all.json", json.dumps(index, indent=1))
    return {str(path.relative_to(target)) for path in written}


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
        wanted |= {f"_assets/{RUNTIME}/{name}"
                   for name in stage_runtime(SOURCE / "_assets" / RUNTIME)}
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
    # 07's decision table as a printable sheet (HTML and PDF), into the site Sphinx just wrote.
    import decision_sheet

    try:
        say(f"decision table's sheet: {', '.join(p.name for p in decision_sheet.write(SITE))}")
    except decision_sheet.SheetError as exc:
        say(f"FAILED: {exc}")
        return 1
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


# -- the page's timings in docs/benchmarks.md ------------------------------------------------

# What the runtime tests measure (tests/book_site/page.py's record), each with what it times
# and its goal (issue 28's): none is asserted, the machine being shared.
TIMINGS = (
    ("load_to_kernel_ready_s", "s", "00's page: load to the kernel ready", None),
    ("load_to_first_answer_s", "s", "00's page: load to the first answer (a cell edited and "
     "run, then a typed value answered by its widget in Pyodide)", ("within 10 s cold", 10)),
    ("change_to_updated_text_ms", "ms", "00's page: one change to the updated text", None),
    ("move_by_keyboard_ms", "ms", "04's explorable lease: the sweep moved by keyboard (the up "
     "arrow), to the updated reading and SVG timeline", ("within 100 ms", 100)),
    ("move_by_mouse_ms", "ms", "04's explorable lease: the restart moved by mouse (its "
     "field's step-up arrow), to the updated reading and SVG timeline", ("within 100 ms", 100)),
    ("history_move_ms", "ms", "04's history player: a history and a budget chosen, to the "
     "updated reading line and SVG timeline", ("within 100 ms", 100)),
)


def page_section(text: str) -> str:
    """docs/benchmarks.md's section on the book's page, heading included; "" when it has none."""
    found = re.search(rf"^{re.escape(PAGE_SECTION)}\n.*?(?=^## |\Z)", text, re.S | re.M)
    return found.group(0).rstrip("\n") + "\n" if found else ""


def with_page_section(text: str, section: str) -> str:
    """text with its section on the book's page replaced by section (or added at its end)."""
    old = page_section(text)
    if old:
        return text.replace(old, section)
    return text.rstrip("\n") + "\n\n" + section if section else text


def timings_section(measured: dict) -> str:
    missing = [key for key, *_ in TIMINGS if key not in measured]
    if missing:
        raise BookError(f"{RUNTIME_TIMINGS.relative_to(REPO)} has no {', '.join(missing)}: run "
                        "every runtime test of the book (`make book-check`), not some of them")
    rows = []
    for key, unit, what, goal in TIMINGS:
        value = measured[key]
        verdict = "none set" if goal is None else (
            f"{goal[0]}: {'met' if value <= goal[1] else 'missed'}")
        rows.append(f"| {what} | {value:g} {unit} | {verdict} |")
    about = (
        "Written by `make book-check` (`tools/book.py timings`, from what the runtime tests in "
        "`tests/book_site` measured) in headless Chromium on this machine: "
        f"{measured['cores']} cores, load average {measured['load_average']} (1, 5 and 15 "
        "minutes) when the last was taken, other work sharing the machine. The built site is "
        "served on loopback with every request to another host refused; each page opens in a "
        "fresh browser context, so Pyodide and the wheels load cold, and “Run in "
        "this page” is pressed at once. 04's moves are timed in the page, from the key or "
        "mouse press (or a drop-down list's change) to the moment the widget's text and its "
        "SVG's description both show what the library gives in CPython for the same fields; "
        "00's change and the loads are timed by the test, from Playwright's side, so they "
        "include its polling. The goals are reported, never asserted; two runs minutes apart "
        "can differ by a second in the loads.")
    return "\n".join([PAGE_SECTION, "", wrap(about), "", "| what | measured | goal |",
                      "|---|---:|---|", *rows, ""])


def timings(path: Path = RUNTIME_TIMINGS) -> None:
    """docs/benchmarks.md with its section on the book's page written from path."""
    if not path.is_file():
        raise BookError(f"{path.relative_to(REPO)} is missing: `make book-check` writes it")
    section = timings_section(json.loads(path.read_text()))
    BENCHMARKS.write_text(with_page_section(BENCHMARKS.read_text(), section))
    say(f"{BENCHMARKS.relative_to(REPO)}: the book's page section written from "
        f"{path.relative_to(REPO)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("sync", "check", "stage", "build", "linkcheck",
                                            "timings"))
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
        if command == "timings":
            timings()
            return 0
        return linkcheck(settings)
    except BookError as exc:
        say(f"FAILED: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
