"""make hub: JupyterHub for a workshop, on one machine the instructor owns, started as root.

    sudo make hub [HUB_LEARNERS=30] [HUB_IP=127.0.0.1] [HUB_PORT=8000] [HUB_PREFIX=...]
    sudo /usr/bin/python3 hub/workshop.py remove-learners     # after the workshop

1. The course's environment, built once under the prefix (hub/settings.py) with Debian's
   /usr/bin/python3 -m venv: the lab with its `lab` extra and hub/requirements.txt, from
   -c constraints.txt (the versions CI tested), the module compiled once; root owns it and
   every learner reads it. Built again only when what it is built from changes.
2. configurable-http-proxy, installed with `npm ci` from hub/package-lock.json.
3. The course as a git repository under the prefix, a snapshot of this checkout committed
   again whenever it changed, which the nbgitpuller link pulls from.
4. JupyterHub with hub/jupyterhub_config.py; then HUB_LEARNERS learners (learner01, ...)
   added through it as OS users, with passwords on a sheet only root can read.

It prints the course link and runs until Ctrl-C, which stops the hub and every learner's
server; the learners' accounts and homes stay until `remove-learners`. The same steps serve
`make hub-check` (hub/rehearsal.py), which rehearses the whole thing on a scratch prefix.
"""

import argparse
import contextlib
import functools
import hashlib
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(HERE))

import progress  # noqa: E402
from checkout import copy_repository, repository_files  # noqa: E402
from settings import PREFIX, HubSettings, SettingsError  # noqa: E402

DEBIAN_PYTHON = "/usr/bin/python3"
CONSTRAINTS = REPO / "constraints.txt"
REQUIREMENTS = HERE / "requirements.txt"
CONFIG = HERE / "jupyterhub_config.py"
KERNEL_CULLING = REPO / "binder" / "jupyter_server_config.py"
BUILT_STAMP = ".trafikey-hub-built"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
HUB_START_SECONDS = 120
HUB_STOP_SECONDS = 90
# What a room's JupyterLab should not do: ask every learner about news, or look for updates.
LAB_OVERRIDES = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false",
                                                    "checkForUpdates": False},
}


class SetupFailed(Exception):
    """A step of the set-up failed; the message says which and what to do."""


say = functools.partial(progress.say, "hub")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run(argv: list[str], what: str, timeout: float, **options) -> subprocess.CompletedProcess:
    """Runs a step, bounded; its output is shown only when it fails."""
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **options)
    except subprocess.TimeoutExpired:
        raise SetupFailed(f"{what}: `{' '.join(argv)}` did not finish in {timeout:.0f} s") from None
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip().splitlines()[-25:]
        raise SetupFailed(f"{what}: `{' '.join(argv)}` exited with status "
                          f"{result.returncode}:\n" + "\n".join("    " + line for line in output))
    return result


def require_root() -> None:
    if os.geteuid() != 0:
        raise SetupFailed("the hub runs as root: it creates the learners' accounts and starts "
                          "each learner's server as that learner. Run it with sudo")
    for tool in ("useradd", "userdel", "chpasswd", "git", "npm", "node"):
        if shutil.which(tool, path=SYSTEM_PATH) is None:
            raise SetupFailed(f"{tool} is missing: install it (Debian: apt-get install passwd "
                              f"git nodejs npm)")


# -- 1. the shared environment ---------------------------------------------------------------

def built_from() -> str:
    """A digest of everything the environment is built from: when it changes, build again."""
    digest = hashlib.sha256()
    sources = [name for name in repository_files()
               if name.startswith("trafikey_lab/") or name in ("setup.py", "pyproject.toml")]
    for name in sorted(sources) + [str(path.relative_to(REPO)) for path in
                                   (CONSTRAINTS, REQUIREMENTS, KERNEL_CULLING)]:
        digest.update(name.encode() + b"\0" + (REPO / name).read_bytes() + b"\0")
    return digest.hexdigest()


def build_environment(hub: HubSettings, python: str = DEBIAN_PYTHON, fresh: bool = False) -> bool:
    """The course's environment under the prefix; False when the one there is up to date."""
    stamp = hub.env / BUILT_STAMP
    wanted = built_from()
    if not fresh and stamp.exists() and stamp.read_text() == wanted:
        say(f"the environment in {hub.env} is up to date")
        return False
    if not Path(python).exists():
        raise SetupFailed(f"{python} is missing: the learners' environment is built with "
                          f"Debian's Python (apt-get install python3 python3-venv)")
    if not CONSTRAINTS.exists():
        raise SetupFailed(f"{CONSTRAINTS.name} is missing: run `make lock` after `make test`")
    shutil.rmtree(hub.env, ignore_errors=True)
    run([python, "-m", "venv", str(hub.env)], "the environment",
        300, env={"PATH": SYSTEM_PATH, "LANG": "C.UTF-8"})
    with tempfile.TemporaryDirectory(prefix="trafikey-hub-source-") as scratch:
        # Built from a copy, so that the build leaves nothing in the checkout.
        source = Path(scratch) / "trafikey-lab"
        copy_repository(source)
        run([str(hub.python), "-m", "pip", "install", "--no-cache-dir", "-c", str(CONSTRAINTS),
             f"{source}[lab]", "-r", str(REQUIREMENTS)], "installing the lab", 1800,
            env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    prefix = Path(run([str(hub.python), "-c", "import sys; print(sys.prefix)"], "the prefix",
                      60).stdout.strip())
    # Kernels that no page is connected to are shut down after a few idle minutes, and their
    # valkey-servers with them (why: in the file itself); the same file as on Binder.
    (prefix / "etc" / "jupyter").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(KERNEL_CULLING, prefix / "etc" / "jupyter" / "jupyter_server_config.py")
    overrides = prefix / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    overrides.parent.mkdir(parents=True, exist_ok=True)
    overrides.write_text(json.dumps(LAB_OVERRIDES, indent=2) + "\n")
    # Run from the prefix: from a checkout, `python -m` would import the source tree first,
    # whose module is not the one this environment built.
    run([str(hub.python), "-m", "trafikey_lab", "doctor"], "the doctor in the environment", 300,
        cwd=hub.prefix)
    stamp.write_text(wanted)
    return True


# -- 2. the proxy ----------------------------------------------------------------------------

def install_proxy(hub: HubSettings) -> bool:
    """configurable-http-proxy from the committed lock; False when it is already there."""
    lock = HERE / "package-lock.json"
    installed = hub.proxy / "package-lock.json"
    if hub.proxy_command.exists() and installed.exists() and \
            installed.read_bytes() == lock.read_bytes():
        return False
    hub.proxy.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(HERE / name, hub.proxy / name)
    # npm warns that a dependency asks for a newer Node (EBADENGINE); the proxy runs on 20.
    run(["npm", "ci", "--omit=dev", "--no-audit", "--no-fund", "--loglevel=error"],
        "installing configurable-http-proxy", 600, cwd=hub.proxy)
    run([str(hub.proxy_command), "--version"], "configurable-http-proxy", 60)
    return True


# -- 3. the course's repository ------------------------------------------------------------

def git(course: Path, *args: str, work_tree: Path | None = None) -> str:
    where = ["--git-dir", str(course)] + (["--work-tree", str(work_tree)] if work_tree else [])
    return run(["git", *where, "-c", "user.name=trafikey lab hub",
                "-c", "user.email=hub@localhost", *args], "the course's repository",
               120).stdout


def publish_course(hub: HubSettings) -> str:
    """The checkout's files committed to the course repository (a bare one, created if
    missing); returns the commit the nbgitpuller link now brings, which a learner's next
    visit merges. Also writes the git settings that let the learners read it."""
    course = hub.course
    if not (course / "HEAD").exists():
        run(["git", "init", "--quiet", "--bare", "--initial-branch", hub.course_branch,
             str(course)], "the course's repository", 120)
    with tempfile.TemporaryDirectory(prefix="trafikey-hub-course-") as scratch:
        snapshot = Path(scratch)
        copy_repository(snapshot)
        git(course, "add", "--all", work_tree=snapshot)
        if git(course, "status", "--porcelain", work_tree=snapshot).strip():
            git(course, "commit", "--quiet", "-m",
                "The course as the instructor's checkout has it", work_tree=snapshot)
    hub.gitconfig.write_text(f"[include]\n\tpath = /etc/gitconfig\n"
                             f"[safe]\n\tdirectory = {course}\n")
    return git(course, "rev-parse", "--short", "HEAD").strip()


# -- 4. the hub ------------------------------------------------------------------------------

def prepare_state(hub: HubSettings) -> None:
    hub.state.mkdir(parents=True, exist_ok=True)
    os.chmod(hub.state, 0o700)
    if not hub.admin_token.exists():
        hub.admin_token.write_text(secrets.token_hex(32) + "\n")
    os.chmod(hub.admin_token, 0o600)


class Hub:
    """A running JupyterHub started with hub/jupyterhub_config.py, and its REST API."""

    def __init__(self, settings: HubSettings, log: Path | None = None):
        self.settings = settings
        self.log = log
        self.process: subprocess.Popen | None = None

    def start(self) -> "Hub":
        settings = self.settings
        env = {"PATH": f"{settings.env / 'bin'}:{SYSTEM_PATH}", "LANG": "C.UTF-8",
               "HOME": pwd.getpwuid(0).pw_dir, **settings.to_environment()}
        argv = [str(settings.env / "bin" / "jupyterhub"), "-f", str(CONFIG)]
        # The hub's output goes to the log, or to this terminal when there is none.
        with open(self.log, "ab") if self.log else contextlib.nullcontext() as sink:
            self.process = subprocess.Popen(argv, cwd=settings.state, env=env,
                                            stdin=subprocess.DEVNULL, stdout=sink,
                                            stderr=subprocess.STDOUT if sink else None,
                                            start_new_session=True)
        deadline = time.monotonic() + HUB_START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SetupFailed(f"JupyterHub exited with status {self.process.returncode} "
                                  f"before it answered" + self.log_tail())
            try:
                if self.api("GET", "")["version"]:
                    return self
            except (OSError, ValueError, KeyError):
                time.sleep(0.5)
        raise SetupFailed(f"JupyterHub did not answer within {HUB_START_SECONDS} s"
                          + self.log_tail())

    def log_tail(self, lines: int = 40) -> str:
        if not self.log or not self.log.exists():
            return ""
        tail = self.log.read_text(errors="replace").splitlines()[-lines:]
        return ":\n" + "\n".join("    " + line for line in tail)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int:
        if self.process is None:
            raise SetupFailed("JupyterHub was not started")
        return self.process.pid

    def wait(self) -> None:
        if self.process is not None:
            self.process.wait()

    def api(self, method: str, path: str, body: object = None, timeout: float = 60):
        """The hub's REST API with the set-up's own token; None for an empty answer."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.settings.api_url + path, data=data, method=method)
        request.add_header("Authorization",
                           f"token {self.settings.admin_token.read_text().strip()}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read()
        return json.loads(text) if text else None

    def user(self, name: str) -> dict | None:
        try:
            return self.api("GET", f"users/{name}")
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise

    def stop(self) -> float:
        """SIGTERM, as Ctrl-C: the hub stops every learner's server, the proxy and the
        services; killed after HUB_STOP_SECONDS. Returns how long it took."""
        process = self.process
        if process is None or process.poll() is not None:
            return 0.0
        began = time.monotonic()
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(HUB_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            say(f"JupyterHub did not stop within {HUB_STOP_SECONDS} s; killing it")
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)
        return time.monotonic() - began


# -- learners ---------------------------------------------------------------------------------

def create_learners(hub: Hub, names: list[str]) -> dict[str, str]:
    """Adds the learners through the hub, which creates their OS accounts (private homes),
    then gives each a random password for the login page. Returns name -> password."""
    missing = [name for name in names if hub.user(name) is None]
    if missing:
        hub.api("POST", "users", {"usernames": missing}, timeout=300)
    passwords = {name: secrets.token_urlsafe(9) for name in missing}
    if passwords:
        run(["chpasswd"], "setting the learners' passwords", 120,
            input="".join(f"{name}:{password}\n" for name, password in passwords.items()))
    for name in names:
        home = Path(pwd.getpwnam(name).pw_dir)
        if home.stat().st_mode & 0o077:
            raise SetupFailed(f"{name}'s home {home} is open to other users "
                              f"({oct(home.stat().st_mode & 0o777)}); it must be 700")
    return passwords


def remove_learner(name: str, hub: Hub | None = None) -> None:
    """The learner out of the hub (their server stopped) and off the machine, home and all."""
    if hub is not None and hub.running:
        try:
            hub.api("DELETE", f"users/{name}", timeout=120)
        except urllib.error.HTTPError as error:
            if error.code != 404:
                raise
    try:
        pwd.getpwnam(name)
    except KeyError:
        return
    run(["userdel", "--remove", name], f"removing {name}", 120)


def write_sheet(settings: HubSettings, passwords: dict[str, str]) -> None:
    """Appends new learners to the instructor's sheet, which only root can read."""
    with open(settings.learners_sheet, "a") as sheet:
        os.chmod(settings.learners_sheet, 0o600)
        for name, password in passwords.items():
            sheet.write(f"{name} {password}\n")


def sheet_names(settings: HubSettings) -> list[str]:
    if not settings.learners_sheet.exists():
        return []
    return [line.split()[0] for line in settings.learners_sheet.read_text().splitlines()
            if line.strip()]


# -- make hub ---------------------------------------------------------------------------------

def settings_from(args: argparse.Namespace) -> HubSettings:
    return HubSettings(prefix=args.prefix, ip=args.ip, port=args.port,
                       hub_port=args.hub_port or free_port(),
                       proxy_api_port=args.proxy_api_port or free_port(),
                       public_url=args.url, ssl_cert=args.ssl_cert, ssl_key=args.ssl_key,
                       course_repo=args.course_repo, admins=args.admins,
                       cull_timeout=args.cull_timeout).check()


def interrupted(*_) -> None:
    """SIGTERM ends make hub as Ctrl-C does: in the hub's own clean shutdown."""
    raise KeyboardInterrupt


def serve(args: argparse.Namespace) -> int:
    require_root()
    settings = settings_from(args)
    # Root owns everything under the prefix and every learner reads it (but state/): a
    # stricter umask of root's would leave the environment unreadable to them.
    os.umask(0o022)
    say(f"everything under {settings.prefix}")
    settings.prefix.mkdir(parents=True, exist_ok=True)
    os.chmod(settings.prefix, 0o755)
    began = time.monotonic()
    if build_environment(settings):
        say(f"built the environment in {settings.env} ({time.monotonic() - began:.0f} s)")
    install_proxy(settings)
    say(f"the course repository {settings.course} is at {publish_course(settings)}")
    prepare_state(settings)
    hub = Hub(settings)
    signal.signal(signal.SIGTERM, interrupted)
    try:
        hub.start()
        names = [f"{args.learner_prefix}{number:02d}" for number in range(1, args.learners + 1)]
        created = create_learners(hub, names)
        if created:
            write_sheet(settings, created)
            say(f"{len(created)} new learners; names and passwords in {settings.learners_sheet} "
                f"(root only): print it and hand each learner their line")
        say(f"JupyterHub is at {settings.url} (culler: {settings.cull_timeout} s idle)")
        say(f"the course link to hand out:\n\n    {settings.course_link()}\n")
        say("Ctrl-C stops the hub and every learner's server")
        hub.wait()
    except KeyboardInterrupt:
        pass
    finally:
        took = hub.stop()
        say(f"JupyterHub stopped ({took:.0f} s); the learners' accounts stay until "
            f"`{DEBIAN_PYTHON} hub/workshop.py remove-learners`")
    return 0


def remove_learners(args: argparse.Namespace) -> int:
    require_root()
    settings = HubSettings(prefix=args.prefix)
    names = sheet_names(settings)
    for name in names:
        remove_learner(name)
    if names:
        settings.learners_sheet.unlink()
    say(f"removed {len(names)} learners and their homes" + (
        "; a hub still running may list them until its next start" if names else ""))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hub/workshop.py", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serving = commands.add_parser("serve", help="set up and start the hub (make hub)")
    serving.add_argument("--prefix", type=Path, default=PREFIX)
    serving.add_argument("--ip", default="127.0.0.1")
    serving.add_argument("--port", type=int, default=8000)
    serving.add_argument("--hub-port", type=int, default=0)
    serving.add_argument("--proxy-api-port", type=int, default=0)
    serving.add_argument("--url", default="", help="the hub's address as learners reach it")
    serving.add_argument("--ssl-cert", default="")
    serving.add_argument("--ssl-key", default="")
    serving.add_argument("--course-repo", default="",
                         help="a repository for the link instead of the prefix's course.git")
    serving.add_argument("--admins", default="", help="comma-separated OS users")
    serving.add_argument("--learners", type=int, default=0)
    serving.add_argument("--learner-prefix", default="learner")
    serving.add_argument("--cull-timeout", type=int, default=HubSettings.cull_timeout)
    removing = commands.add_parser("remove-learners",
                                   help="remove the learners on the sheet, homes included")
    removing.add_argument("--prefix", type=Path, default=PREFIX)
    args = parser.parse_args(argv)
    try:
        return serve(args) if args.command == "serve" else remove_learners(args)
    except (SetupFailed, SettingsError) as failure:
        say(f"FAILED: {failure}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
