"""make binder-check: a rehearsal, on this machine, of the session a Binder link starts.

Binder (repo2docker) copies the repository into a fresh image, runs binder/postBuild there as
an unprivileged user with the Python of binder/environment.yml, then starts Jupyter from the
repository's root, which is also the user's home. This does the same, step by step:

1. a scratch copy of the repository (the files git tracks, and new ones not ignored);
2. as root, a throwaway unprivileged user who owns that copy (Binder sessions are not root);
3. a fresh virtual environment with binder/environment.yml's Python version;
4. binder/postBuild itself, executed as that user from the copy's root;
5. JupyterLab started as a session starts it (`jupyter lab --ip ... --no-browser --port ...
   --ServerApp.token=...`, from the copy's root);
6. every `urlpath=` link in the README answered by that server;
7. the browser tests of notebooks 00 and 04 (tests/browser) against that server.

Whatever happens, the server and everything it started are stopped, and the copy and the
user removed. Exit status 0 only when every step passed.
"""

import contextlib
import functools
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import processes
import progress
from checkout import REPO, copy_repository

from trafikey_lab.live.client import free_port

# What an unprivileged account finds on a stock system: nothing installed in root's home.
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
# How this machine reaches a package index, passed on to the rehearsal's pip; nothing else of
# the caller's environment is (a Binder session starts from a clean one).
PASSED_ON = re.compile(r"^(PIP_\w+|(HTTPS?|NO|ALL)_PROXY|(https?|no|all)_proxy|SSL_CERT_\w+|"
                       r"REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE)$")
BROWSER_SELECTION = "00 or 04"
SERVER_START_SECONDS = 120
SERVER_STOP_SECONDS = 60


class RehearsalFailed(Exception):
    """A step of the rehearsal failed; the message says which and what to do."""


say = functools.partial(progress.say, "binder-check")
step = functools.partial(progress.step, "binder-check")


def binder_python() -> str:
    """The Python version binder/environment.yml asks for, e.g. "3.11"."""
    text = (REPO / "binder" / "environment.yml").read_text()
    found = re.search(r"^\s*-\s*python\s*=\s*(\d+\.\d+)", text, re.MULTILINE)
    if not found:
        raise RehearsalFailed("binder/environment.yml names no `python=X.Y` dependency; "
                              "Binder would pick a Python of its own, so pin one there")
    return found.group(1)


def readme_urlpaths() -> list[str]:
    paths = re.findall(r"[?&]urlpath=([^)\s\"'&#]+)", (REPO / "README.md").read_text())
    if not any(path.startswith("lab/tree/") for path in paths):
        raise RehearsalFailed("README.md has no Binder link with `?urlpath=lab/tree/...`; "
                              "the rehearsal checks that every such link opens")
    return list(dict.fromkeys(paths))


class Session:
    """The scratch copy, its user and the processes started as that user."""

    def __init__(self) -> None:
        self.root_mode = os.geteuid() == 0
        self.scratch = Path(tempfile.mkdtemp(prefix="trafikey-binder-check-"))
        self.repo = self.scratch / "repo"  # Binder's REPO_DIR, which is also $HOME
        self.venv = self.scratch / "venv"
        self.tmp = self.scratch / "tmp"
        self.user: str | None = None
        self.uid: int | None = None
        self.gid: int | None = None
        self.server: subprocess.Popen | None = None
        self.server_log = self.scratch / "jupyter.log"
        self.started_pids: set[int] = set()

    # -- the copy and the user ---------------------------------------------------------

    def copy_repository(self) -> None:
        copy_repository(self.repo)
        self.tmp.mkdir()

    def create_user(self) -> None:
        if not self.root_mode:
            say(f"running as {os.environ.get('USER', os.geteuid())}, already unprivileged")
            return
        name = f"tkbinder{os.getpid()}"
        created = subprocess.run(
            ["useradd", "--home-dir", str(self.repo), "--no-create-home", "--user-group",
             "--shell", "/bin/bash", name], capture_output=True, text=True)
        if created.returncode != 0:
            raise RehearsalFailed(
                f"could not create the session's unprivileged user with useradd "
                f"({created.stderr.strip() or created.returncode}). Binder sessions are not "
                f"root, so the rehearsal is not either: install useradd (Debian: passwd) or "
                f"run `make binder-check` as an unprivileged user")
        self.user = name
        entry = pwd.getpwnam(name)
        self.uid, self.gid = uid, gid = entry.pw_uid, entry.pw_gid
        for path in [self.scratch, *self.scratch.rglob("*")]:
            os.lchown(path, uid, gid)
        say(f"session user {name} (uid {uid}) owns the copy at {self.repo}")

    # -- running as the session's user --------------------------------------------------

    def environment(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if PASSED_ON.match(key)}
        home = str(self.repo)
        env.update({
            "HOME": home,
            "USER": self.user or os.environ.get("USER", ""),
            "SHELL": "/bin/bash",
            "LANG": "C.UTF-8",
            "TMPDIR": str(self.tmp),
            # As in a Binder image: ~/.local/bin (the repository's own, since the repository
            # is the home) before the environment's bin.
            "PATH": f"{home}/.local/bin:{self.venv}/bin:{SYSTEM_PATH}",
        })
        return env

    def as_user(self) -> dict:
        if not self.root_mode:
            return {}
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def run(self, argv: list[str], timeout: float) -> None:
        result = subprocess.run(argv, cwd=self.repo, env=self.environment(), timeout=timeout,
                                **self.as_user())
        if result.returncode != 0:
            raise RehearsalFailed(f"`{' '.join(argv)}` exited with status {result.returncode}")

    def find_python(self, version: str) -> str:
        python = shutil.which(f"python{version}", path=SYSTEM_PATH)
        if python is None:
            raise RehearsalFailed(
                f"no python{version} on {SYSTEM_PATH}, where the session's user looks. "
                f"binder/environment.yml asks for Python {version}: install it (Debian/Ubuntu: "
                f"apt-get install python{version} python{version}-venv)")
        return python

    def create_venv(self, python: str, version: str) -> None:
        self.run([python, "-m", "venv", str(self.venv)], timeout=300)
        reported = subprocess.run(
            [str(self.venv / "bin" / "python"), "-c",
             "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, env=self.environment(), **self.as_user()
        ).stdout.strip()
        if reported != version:
            raise RehearsalFailed(f"the fresh environment runs Python {reported}, not {version}")

    def post_build(self) -> None:
        # The file itself, as Binder runs it: from the repository's root, its own shebang.
        self.run([str(self.repo / "binder" / "postBuild")], timeout=1800)

    # -- the session's server -------------------------------------------------------------

    def check_culling(self) -> None:
        """The settings postBuild installs are the ones the session's server reads."""
        shown = subprocess.run(
            [str(self.venv / "bin" / "jupyter"), "server", "--show-config-json"], cwd=self.repo,
            capture_output=True, text=True, env=self.environment(), timeout=120, **self.as_user())
        if shown.returncode != 0:
            raise RehearsalFailed(f"`jupyter server --show-config-json` exited with status "
                                  f"{shown.returncode}")
        culling = json.loads(shown.stdout).get("MappingKernelManager", {})
        if not culling.get("cull_idle_timeout") or culling.get("cull_connected", True):
            raise RehearsalFailed(
                f"the session's server does not cull kernels left without a page ({culling}): "
                f"binder/postBuild must install binder/jupyter_server_config.py")
        say(f"kernels without a page are culled after {culling['cull_idle_timeout']} s idle")

    def start_jupyter(self) -> tuple[str, str]:
        port, token = free_port(), secrets.token_hex(24)
        argv = [str(self.venv / "bin" / "jupyter"), "lab", "--ip", "127.0.0.1", "--no-browser",
                "--port", str(port), f"--IdentityProvider.token={token}",
                # The one flag a Binder session lacks: the browser tests read each notebook's
                # execution state from the application, since the page renders only the
                # cells in view.
                "--LabApp.expose_app_in_browser=True"]
        with open(self.server_log, "wb") as log:
            self.server = server = subprocess.Popen(argv, cwd=self.repo, env=self.environment(),
                                                    stdout=log, stderr=subprocess.STDOUT,
                                                    start_new_session=True, **self.as_user())
        self.started_pids.add(server.pid)
        base = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + SERVER_START_SECONDS
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise RehearsalFailed(f"JupyterLab exited with status {server.returncode} "
                                      f"before it answered")
            try:
                if fetch(base + "api/status", token)[0] == 200:
                    say(f"JupyterLab answers at {base} (pid {server.pid})")
                    return base, token
            except OSError:
                pass
            time.sleep(0.5)
        raise RehearsalFailed(f"JupyterLab did not answer within {SERVER_START_SECONDS} s")

    def remember_descendants(self) -> None:
        """Kernels run in sessions of their own: note them while their parent is alive."""
        if self.server is None:
            return
        children: dict[int, list[int]] = {}
        for status in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = status.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(status.parent.name))
        todo = [self.server.pid]
        while todo:
            pid = todo.pop()
            for child in children.get(pid, []):
                if child not in self.started_pids:
                    self.started_pids.add(child)
                    todo.append(child)

    def stop(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.remember_descendants()
            # SIGTERM lets the server shut its kernels down, and each kernel its Valkey.
            self.server.terminate()
            try:
                self.server.wait(SERVER_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                say("JupyterLab did not stop on SIGTERM; killing it")
                os.killpg(self.server.pid, signal.SIGKILL)
                self.server.wait()
        leftovers = [pid for pid in self.started_pids if self.owned_and_alive(pid)]
        if self.uid is not None:
            leftovers += [pid for pid in self.pids_of_user() if pid not in leftovers]
        for pid in leftovers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if leftovers:
            say(f"killed {len(leftovers)} process(es) the session left running: {leftovers}")
            time.sleep(0.5)

    def owned_and_alive(self, pid: int) -> bool:
        """Whether the pid is still a live process of the session's user: a pid the session
        started may by now name another user's process."""
        try:
            owner = os.stat(f"/proc/{pid}").st_uid
        except FileNotFoundError:
            return False
        return owner == (self.uid if self.uid is not None else os.geteuid()) and \
            processes.alive(pid)

    def pids_of_user(self) -> list[int]:
        pids = []
        for entry in Path("/proc").glob("[0-9]*"):
            try:
                if entry.stat().st_uid == self.uid:
                    pids.append(int(entry.name))
            except FileNotFoundError:
                continue
        return pids

    def show_server_log(self, lines: int = 40) -> None:
        if self.server_log.exists():
            tail = self.server_log.read_text(errors="replace").splitlines()[-lines:]
            say("the last lines of JupyterLab's log:")
            print("\n".join("    " + line for line in tail), flush=True)

    def clean_up(self) -> None:
        self.stop()
        shutil.rmtree(self.scratch, ignore_errors=True)
        if self.user:
            removed = subprocess.run(["userdel", self.user], capture_output=True, text=True)
            if removed.returncode != 0:
                say(f"could not remove user {self.user}: {removed.stderr.strip()}")
        say("stopped the server, removed the copy" + (" and the user" if self.user else ""))


def fetch(url: str, token: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def check_links(base: str, token: str) -> None:
    """Each README link's urlpath opens, and names a file that is there."""
    for urlpath in readme_urlpaths():
        known = re.fullmatch(r"(lab/tree|voila/render)/(.+)", urlpath)
        if not known:
            raise RehearsalFailed(f"README link urlpath={urlpath}: the rehearsal knows "
                                  f"lab/tree/... and voila/render/... only; check it by hand")
        path = known.group(2)
        try:
            exists, _ = fetch(f"{base}api/contents/{path}?content=0", token)
            opens, _ = fetch(base + urlpath, token)
        except OSError as exc:
            raise RehearsalFailed(f"README link urlpath={urlpath}: no answer ({exc})") from exc
        if exists != 200:
            raise RehearsalFailed(f"README link urlpath={urlpath}: {path} is not in the "
                                  f"repository (the contents API answered {exists})")
        if opens != 200:
            raise RehearsalFailed(f"README link urlpath={urlpath} answered {opens}: is what "
                                  f"serves it installed by binder/postBuild?")
        say(f"README link urlpath={urlpath}: opens")


def browser_tests(base: str, token: str) -> None:
    suite = REPO / "tests" / "browser"
    if not suite.is_dir():
        raise RehearsalFailed("tests/browser is missing: the rehearsal's last step is its "
                              "browser test of notebooks 00 and 04")
    report = Path(tempfile.mkdtemp(prefix="trafikey-binder-check-report-")) / "junit.xml"
    # The suite attaches to a running JupyterLab named by its URL, the token as a query; a
    # missing browser must fail the rehearsal, not skip its last step.
    env = {**os.environ, "TRAFIKEY_LAB_URL": f"{base}?token={token}",
           "TRAFIKEY_REQUIRE_BROWSER": "1"}
    try:
        result = subprocess.run(
            [sys.executable, "-m", "pytest", str(suite), "-k", BROWSER_SELECTION,
             f"--junitxml={report}", "-p", "no:cacheprovider"],
            cwd=REPO, env=env, timeout=1800)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        if report.exists():
            for suite_node in ElementTree.parse(report).getroot().iter("testsuite"):
                for key in counts:
                    counts[key] += int(suite_node.get(key, 0))
    finally:
        shutil.rmtree(report.parent, ignore_errors=True)
    say(f"browser tests ({BROWSER_SELECTION}): {counts['tests']} run, {counts['failures']} "
        f"failed, {counts['errors']} errors, {counts['skipped']} skipped")
    if result.returncode != 0 or counts["failures"] or counts["errors"]:
        raise RehearsalFailed(f"the browser tests failed (pytest exit status "
                              f"{result.returncode})")
    if counts["tests"] == 0 or counts["skipped"]:
        raise RehearsalFailed(f"the browser tests did not all run: `-k {BROWSER_SELECTION!r}` "
                              f"selected {counts['tests']}, skipped {counts['skipped']}")


def main() -> int:
    started = time.monotonic()
    # SIGTERM (a CI timeout, say) cleans up like Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    session = Session()
    try:
        version = binder_python()
        with step("copy the repository"):
            session.copy_repository()
            session.create_user()
        with step(f"a fresh Python {version} environment"):
            python = session.find_python(version)
            session.create_venv(python, version)
            say(f"{python} -> {session.venv}")
        with step("binder/postBuild"):
            session.post_build()
        with step("JupyterLab as a Binder session starts it"):
            session.check_culling()
            base, token = session.start_jupyter()
            check_links(base, token)
        with step("browser tests of notebooks 00 and 04"):
            browser_tests(base, token)
    except (RehearsalFailed, subprocess.TimeoutExpired) as failure:
        session.show_server_log()
        say(f"FAILED: {failure}")
        return 1
    finally:
        session.clean_up()
    say(f"passed in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
