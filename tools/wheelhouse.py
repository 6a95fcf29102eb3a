"""make wheelhouse / make offline-check: the course installed with no network in the room.

`build DIR` fills DIR with a wheel of everything installing the lab needs: its dependencies,
every extra, and what building the lab itself takes (pyproject's build-system requirements,
setuptools), at the versions constraints.txt names (`make lock`). Packages that publish only
a source archive are built into wheels here, so the room needs no compiler for them. The
wheels fit this machine's platform and Python version.

`check DIR` proves DIR is enough: a fresh copy of the repository, then `make setup
WHEELHOUSE=DIR` (pip with --no-index), with every pip configuration file and PIP_* variable
set aside and the network closed off through a proxy that answers nothing, then the doctor.
"""

import argparse
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import progress
from checkout import REPO, copy_repository

# A proxy nobody listens on: any attempt to reach an index fails at once instead of slipping
# through to the network.
NO_NETWORK = "http://127.0.0.1:9"
CONSTRAINTS = REPO / "constraints.txt"


say = functools.partial(progress.say, "wheelhouse")


def requirements(pyproject: Path = REPO / "pyproject.toml") -> list[str]:
    """Everything pip needs to install the lab with any of its extras, and to build it."""
    config = tomllib.loads(pyproject.read_text())
    project = config["project"]
    needed = [*config["build-system"]["requires"], *project.get("dependencies", [])]
    for extra in project.get("optional-dependencies", {}).values():
        needed += extra
    return list(dict.fromkeys(needed))


def build(wheelhouse: Path) -> int:
    wheelhouse.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    # At the versions CI tested (constraints.txt, written by `make lock`): the room installs
    # what passed, not what was newest on the day the wheelhouse was made.
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--wheel-dir",
                             str(wheelhouse), "-c", str(CONSTRAINTS), *requirements()])
    if result.returncode != 0:
        say("FAILED: pip could not fetch or build every wheel (see above); it needs the "
            "network, or an index this machine's pip is configured with")
        return 1
    wheels = sorted(wheelhouse.glob("*.whl"))
    size = sum(wheel.stat().st_size for wheel in wheels) / 1e6
    say(f"{len(wheels)} wheels, {size:.0f} MB, in {wheelhouse} "
        f"({time.monotonic() - started:.0f} s), for Python "
        f"{sys.version_info.major}.{sys.version_info.minor} on this platform")
    return 0


def offline_environment() -> dict[str, str]:
    """The caller's environment without pip's configuration and with no way out."""
    env = {key: value for key, value in os.environ.items()
           if not key.upper().startswith("PIP_") and key.lower() not in
           ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
    env.update({
        "PIP_CONFIG_FILE": os.devnull,  # no pip.conf anywhere is read (index, find-links)
        "PIP_NO_CACHE_DIR": "1",  # nothing from an earlier, online install is reused
        "http_proxy": NO_NETWORK, "https_proxy": NO_NETWORK,
        "HTTP_PROXY": NO_NETWORK, "HTTPS_PROXY": NO_NETWORK,
    })
    return env


def check(wheelhouse: Path) -> int:
    if not any(wheelhouse.glob("*.whl")):
        say(f"FAILED: {wheelhouse} holds no wheels: run `make wheelhouse` first")
        return 1
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="trafikey-offline-check-"))
    try:
        clone = scratch / "trafikey-lab"
        copy_repository(clone)
        env = offline_environment()
        steps = [
            # PYTHON: the interpreter the wheelhouse was built for.
            ["make", "setup", f"WHEELHOUSE={wheelhouse.resolve()}", f"PYTHON={sys.executable}"],
            [".venv/bin/python", "-m", "pip", "check"],
            ["make", "doctor"],
        ]
        for argv in steps:
            say("$ " + " ".join(argv))
            begun = time.monotonic()
            result = subprocess.run(argv, cwd=clone, env=env, timeout=1800)
            if result.returncode != 0:
                say(f"FAILED: `{' '.join(argv)}` exited with status {result.returncode}. If pip "
                    f"named a package it could not find, the wheelhouse is incomplete: run "
                    f"`make wheelhouse` again")
                return 1
            say(f"  done in {time.monotonic() - begun:.0f} s")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    say(f"offline install passed in {time.monotonic() - started:.0f} s: a fresh copy installed "
        f"from {wheelhouse} alone, with no index and no network, and the doctor passed")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/wheelhouse.py", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("build", "check"))
    parser.add_argument("wheelhouse", type=Path)
    args = parser.parse_args(argv)
    return (build if args.command == "build" else check)(args.wheelhouse)


if __name__ == "__main__":
    sys.exit(main())
