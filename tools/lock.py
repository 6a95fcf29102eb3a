"""make lock: constraints.txt, the exact versions a room installs, written from .venv.

    .venv/bin/python tools/lock.py [constraints.txt]

`make test` installs the lab into .venv with the ranges of pyproject.toml and passes there.
This writes down what that install resolved to: every package the lab needs with the extras
`make setup` installs (lab, test), at the version .venv holds, found by walking the
requirements from the lab's own metadata (so whatever else was installed into .venv by hand
is left out). The JupyterHub set-up's own packages (hub/requirements.txt) are not in .venv:
they are resolved by pip against those pins, without installing anything, so that the hub's
shared environment is the lab's tested one plus the hub.

Binder's postBuild, the hub's shared environment and `make wheelhouse` install with
`-c constraints.txt`; `make lab` on a learner's own machine keeps the ranges. It prints what
moved since the file was last written (new, dropped, changed versions).
"""

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from importlib import metadata
from pathlib import Path

import progress
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
PROJECT = "trafikey-lab"
EXTRAS = ("lab", "test")
"""The extras `make setup` installs into .venv, which `make test` runs in."""
HUB_REQUIREMENTS = REPO / "hub" / "requirements.txt"
HUB_PYTHON = "/usr/bin/python3"
"""The Python the hub's shared environment is built with (Debian's, readable by learners)."""
HEADER = """\
# The exact versions a room installs: Binder's postBuild, the JupyterHub set-up's shared
# environment and `make wheelhouse` install with `-c constraints.txt`. Written by `make lock`
# (tools/lock.py) from the .venv that `make test` passed in, plus hub/requirements.txt
# resolved against it. Do not edit by hand: change pyproject.toml, `make test`, `make lock`.
"""


class LockError(Exception):
    """The lock cannot be written; the message says what to do."""


say = functools.partial(progress.say, "lock")


def top_requirements(pyproject: Path = REPO / "pyproject.toml") -> list[Requirement]:
    project = tomllib.loads(pyproject.read_text())["project"]
    wanted = [Requirement(text) for text in project.get("dependencies", [])]
    for extra in EXTRAS:
        wanted += [Requirement(text) for text in project.get("optional-dependencies", {})
                   .get(extra, [])]
    return wanted


def applies(requirement: Requirement, extras: set[str]) -> bool:
    """Whether a requirement holds on this machine's Python for the extras asked for."""
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": extra}) for extra in extras or {""})


def installed_closure(wanted: list[Requirement]) -> dict[str, str]:
    """Every distribution the requirements pull in, by canonical name, at its installed version."""
    found: dict[str, str] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [(requirement, frozenset[str]()) for requirement in wanted]
    while todo:
        requirement, parent_extras = todo.pop()
        if not applies(requirement, set(parent_extras)):
            continue
        name = canonicalize_name(requirement.name)
        key = (name, frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise LockError(f"{requirement} is needed but not installed in {sys.prefix}: run "
                            f"`make setup` (or `make test`) first, then `make lock`") from None
        version = distribution.version
        if not requirement.specifier.contains(version, prereleases=True):
            raise LockError(f"{sys.prefix} holds {name} {version}, which {requirement} does not "
                            f"allow: run `make setup` so .venv matches pyproject.toml")
        found[name] = version
        for text in distribution.requires or []:
            todo.append((Requirement(text), frozenset(requirement.extras)))
    return found


def python_version(python: str) -> str:
    result = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                            capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise LockError(f"{python} does not run: the hub's shared environment is built with it "
                        f"(HUB_PYTHON names another)")
    return result.stdout.strip()


def unfit_for(version: str, pins: dict[str, str]) -> set[str]:
    """The pinned packages whose installed version does not allow this Python version."""
    unfit = set()
    for name in pins:
        requires = metadata.distribution(name).metadata["Requires-Python"]
        if requires and not SpecifierSet(requires).contains(version, prereleases=True):
            unfit.add(name)
    return unfit


def resolve_hub(python: str, pins: dict[str, str]) -> dict[str, str]:
    """What the hub's shared environment installs (the lab with `lab`, hub/requirements.txt),
    resolved by pip for the hub's Python against the pins, nothing installed."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = [*project.get("dependencies", []),
              *project.get("optional-dependencies", {}).get("lab", [])]
    with tempfile.TemporaryDirectory(prefix="trafikey-lock-") as scratch:
        venv = Path(scratch) / "venv"
        made = subprocess.run([python, "-m", "venv", str(venv)], capture_output=True, text=True,
                              timeout=300)
        if made.returncode != 0:
            raise LockError(f"`{python} -m venv` failed ({made.stderr.strip()}): install its "
                            f"venv module (Debian: apt-get install python3-venv)")
        constraints = Path(scratch) / "constraints.txt"
        constraints.write_text("".join(f"{name}=={version}\n" for name, version in pins.items()))
        report = Path(scratch) / "report.json"
        result = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--dry-run",
             "--ignore-installed", "--quiet", "--report", str(report), "-c", str(constraints),
             "-r", str(HUB_REQUIREMENTS), *wanted],
            capture_output=True, text=True, timeout=900,
            env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
        if result.returncode != 0:
            raise LockError(f"pip could not resolve the hub's environment for {python} against "
                            f"the lab's versions:\n{result.stderr.strip()}")
        installs = json.loads(report.read_text())["install"]
    return {canonicalize_name(item["metadata"]["name"]): item["metadata"]["version"]
            for item in installs}


Pins = dict[tuple[str, str], str]
"""(name, marker) -> version: marker is "" for a pin every Python gets."""


def read_lock(path: Path) -> Pins:
    pins: Pins = {}
    if path.exists():
        for line in path.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if "==" in line:
                requirement = Requirement(line)
                version = str(next(iter(requirement.specifier)).version)
                pins[canonicalize_name(requirement.name), str(requirement.marker or "")] = version
    return pins


def render(pins: Pins) -> str:
    lines = []
    for (name, marker), version in sorted(pins.items()):
        lines.append(f"{name}=={version}" + (f"; {marker}" if marker else ""))
    return HEADER + "".join(line + "\n" for line in lines)


def moved(old: Pins, new: Pins) -> list[str]:
    """One line per pin that changed, appeared or went."""
    lines = []
    for name, marker in sorted(old.keys() | new.keys()):
        before, after = old.get((name, marker)), new.get((name, marker))
        where = f" ({marker})" if marker else ""
        if before == after:
            continue
        if before is None:
            lines.append(f"new      {name}=={after}{where}")
        elif after is None:
            lines.append(f"dropped  {name}=={before}{where}")
        else:
            lines.append(f"moved    {name} {before} -> {after}{where}")
    return lines


def pins_for(lab: dict[str, str], hub: dict[str, str], hub_version: str,
             unfit: set[str]) -> Pins:
    """The lab's versions for every Python, except those the hub's Python cannot install,
    which get the hub's own resolution for that one Python; then the hub's other packages."""
    this_python = f'python_full_version == "{hub_version}"'
    other_pythons = f'python_full_version != "{hub_version}"'
    pins: Pins = {}
    for name, version in lab.items():
        pins[name, other_pythons if name in unfit else ""] = version
    for name, version in hub.items():
        if name in unfit:
            pins[name, this_python] = version
        elif name not in lab:
            pins[name, ""] = version
        elif lab[name] != version:
            raise LockError(f"pip resolved {name} {version} for the hub but the lab runs "
                            f"{lab[name]}: the constraint was not applied")
    return pins


def lock(path: Path, hub_python: str) -> int:
    lab = installed_closure(top_requirements())
    lab.pop(PROJECT, None)
    hub_version = python_version(hub_python)
    unfit = unfit_for(hub_version, lab)
    hub = resolve_hub(hub_python, {name: v for name, v in lab.items() if name not in unfit})
    hub.pop(PROJECT, None)
    pins = pins_for(lab, hub, hub_version, unfit)
    old = read_lock(path)
    path.write_text(render(pins))
    say(f"{len(pins)} pins in {path}: {len(lab)} packages as .venv has them, "
        f"{len(set(hub) - set(lab))} more for the hub (resolved for {hub_python}, "
        f"Python {hub_version})")
    for name in sorted(unfit):
        say(f"{name} {lab[name]} needs a newer Python than {hub_version}: the hub's Python "
            f"gets {hub.get(name, 'none')}")
    changes = moved(old, pins)
    if not old:
        say("written for the first time")
    elif changes:
        say(f"{len(changes)} changed since the last lock:")
        for line in changes:
            print(f"    {line}", flush=True)
    else:
        say("nothing moved since the last lock")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/lock.py", description=__doc__.splitlines()[0])
    parser.add_argument("constraints", type=Path, nargs="?", default=REPO / "constraints.txt")
    parser.add_argument("--hub-python", default=HUB_PYTHON,
                        help=f"the Python of the hub's shared environment ({HUB_PYTHON})")
    args = parser.parse_args(argv)
    try:
        return lock(args.constraints, args.hub_python)
    except LockError as failure:
        say(f"FAILED: {failure}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
