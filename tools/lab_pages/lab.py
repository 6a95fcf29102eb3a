"""The JupyterLab the browser suite drives: one it starts itself, or one already running.

`JupyterLab.start()` runs a server on 127.0.0.1 over a scratch copy of the course, so the
suite never writes into the working tree; `JupyterLab.attach()` wraps a server someone else
runs. Either way `stop()` leaves nothing behind that the suite made: its kernels are shut
down through the REST API, its scratch files removed, and a server it started is terminated.
"""

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from trafikey_lab.live.client import free_port

START_TIMEOUT = 120
"""Seconds for JupyterLab to answer; generous, because the machine may be busy."""

LOG_LINES_QUOTED = 30

# Settings a scratch JupyterLab starts with: no news or update check (the suite has no
# network, and their prompt would sit over the notebook in every screenshot).
SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False,
    },
    # Every cell rendered, not only those in view: the accessibility test reads every output.
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


class LabError(Exception):
    """The suite's JupyterLab did not start or did not answer; the message says why."""


def warm_matplotlib() -> None:
    """Builds matplotlib's font cache in a throwaway process. On a fresh install the first
    import prints "Matplotlib is building the font cache" on stderr, once per machine; the
    suite fails on any stderr a notebook shows, and that one line says nothing about the
    course."""
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)


class JupyterLab:
    """A JupyterLab server: its base URL, its token, and whether the suite owns it."""

    def __init__(self, base_url: str, token: str, process: subprocess.Popen | None = None,
                 scratch: Path | None = None):
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.token = token
        self.process = process
        self.scratch = scratch
        self.files: set[str] = set()
        """Files the suite made on a server it does not own, deleted by stop()."""

    @property
    def owned(self) -> bool:
        return self.process is not None

    # -- lifecycle ---------------------------------------------------------------------------

    @classmethod
    def start(cls, folders: dict[str, Path]) -> "JupyterLab":
        """Starts JupyterLab over a scratch root holding a copy of each folder under its key."""
        warm_matplotlib()
        scratch = Path(tempfile.mkdtemp(prefix="trafikey-browser-"))
        try:
            root = scratch / "root"
            for name, folder in folders.items():
                shutil.copytree(folder, root / name,
                                ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
            settings = scratch / "settings"
            for relative, values in SETTINGS.items():
                path = settings / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(values))
            token = secrets.token_hex(24)
            for attempt in range(3):
                lab, process = cls._launch(scratch, root, settings, token)
                try:
                    lab._wait_ready(process)
                    return lab
                except LabError as exc:
                    _terminate(process)
                    if "already in use" not in str(exc) or attempt == 2:
                        raise
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        raise AssertionError("unreachable")

    @classmethod
    def _launch(cls, scratch: Path, root: Path, settings: Path,
                token: str) -> tuple["JupyterLab", subprocess.Popen]:
        port = free_port()
        args = [
            sys.executable, "-m", "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            # Exposes window.jupyterapp: the suite reads execution counts and kernel status
            # from the application, since the page only renders the cells in view.
            "--LabApp.expose_app_in_browser=True",
            # A fresh workspace, or JupyterLab reopens whatever tabs a last run left open.
            f"--LabApp.workspaces_dir={scratch / 'workspaces'}",
            f"--LabApp.user_settings_dir={settings}",
        ]
        if os.geteuid() == 0:
            args.append("--allow-root")  # JupyterLab refuses root without it, as in containers
        env = {
            **os.environ,
            # Nothing from the user's own Jupyter or IPython set-up (a password, startup
            # files, user-level extensions) changes what the suite sees.
            "JUPYTER_CONFIG_DIR": str(scratch / "config"),
            "JUPYTER_DATA_DIR": str(scratch / "data"),
            "JUPYTER_RUNTIME_DIR": str(scratch / "runtime"),
            "IPYTHONDIR": str(scratch / "ipython"),
        }
        with open(scratch / "jupyterlab.log", "ab") as log:
            process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                       env=env, cwd=root, start_new_session=True)
        return cls(f"http://127.0.0.1:{port}/", token, process, scratch), process

    @classmethod
    def attach(cls, url: str, token: str | None = None) -> "JupyterLab":
        """A server that is already running, named by its base URL with `?token=` (or the
        token given apart). A trailing /lab or /tree path is taken as the base URL's."""
        parts = urllib.parse.urlsplit(url)
        query = urllib.parse.parse_qs(parts.query)
        token = token or (query.get("token") or [""])[0]
        path = parts.path
        for suffix in ("/lab", "/tree"):
            if path.rstrip("/").endswith(suffix):
                path = path.rstrip("/")[: -len(suffix)]
        base = urllib.parse.urlunsplit((parts.scheme, parts.netloc, path or "/", "", ""))
        lab = cls(base, token)
        try:
            lab.api("GET", "api/status")
        except (urllib.error.URLError, OSError) as exc:
            raise LabError(f"the JupyterLab at {base} does not answer ({exc}): start it, or "
                           f"check the URL and its ?token=") from exc
        return lab

    def _wait_ready(self, process: subprocess.Popen) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise LabError(f"JupyterLab exited with status {process.returncode} before "
                               f"it answered:\n{self.log_tail()}")
            try:
                self.api("GET", "api/status")
                return
            except (urllib.error.URLError, OSError):
                time.sleep(0.25)
        raise LabError(f"JupyterLab did not answer within {START_TIMEOUT} s:\n{self.log_tail()}")

    def log_tail(self) -> str:
        if self.scratch is None:
            return "(a server the suite did not start: see its own log)"
        path = self.scratch / "jupyterlab.log"
        lines = path.read_text(errors="replace").splitlines() if path.exists() else []
        return "\n".join(lines[-LOG_LINES_QUOTED:])

    def stop(self) -> None:
        """Shuts down the kernels (every one on an owned server; on another, those of the
        suite's files), deletes the suite's files, and terminates an owned server."""
        try:
            if self.owned:
                for kernel in self.kernel_ids():
                    self.shutdown_kernel(kernel)
            for path in sorted(self.files):
                self.shutdown_sessions(path)
                self.delete(path)
        finally:
            if self.process is not None:
                _terminate(self.process)
            if self.scratch is not None:
                shutil.rmtree(self.scratch, ignore_errors=True)

    # -- REST --------------------------------------------------------------------------------

    def url(self, path: str, **query: str) -> str:
        """A URL on this server that carries the token, so a fresh page is let in."""
        if self.token:
            query = {**query, "token": self.token}
        return self.base_url + path + ("?" + urllib.parse.urlencode(query) if query else "")

    def api(self, method: str, path: str, body: dict | None = None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        if self.token:
            request.add_header("Authorization", f"token {self.token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=60) as response:
            text = response.read()
        return json.loads(text) if text else None

    def kernel_ids(self) -> set[str]:
        return {kernel["id"] for kernel in self.api("GET", "api/kernels")}

    def shutdown_kernel(self, kernel: str) -> None:
        try:
            self.api("DELETE", f"api/kernels/{kernel}")
        except urllib.error.HTTPError as exc:
            if exc.code != 404:  # already gone: shut down by its page, or culled
                raise

    def shutdown_sessions(self, path: str) -> None:
        """Shuts down the kernel of every session open on the file (its notebook's kernel)."""
        for session in self.api("GET", "api/sessions"):
            if session.get("path") == path and session.get("kernel"):
                self.shutdown_kernel(session["kernel"]["id"])

    def copy(self, path: str) -> str:
        """A copy of the notebook beside it (same folder, so the same working directory);
        the suite runs copies and never saves over the course's own files."""
        folder = path.rpartition("/")[0]
        made = self.api("POST", f"api/contents/{urllib.parse.quote(folder)}",
                        {"copy_from": path})["path"]
        if not self.owned:
            self.files.add(made)
        return made

    def delete(self, path: str) -> None:
        try:
            self.api("DELETE", f"api/contents/{urllib.parse.quote(path)}")
        except urllib.error.HTTPError as exc:
            if exc.code != 404:
                raise
        self.files.discard(path)


def _terminate(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
