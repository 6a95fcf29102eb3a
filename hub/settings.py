"""The JupyterHub set-up's settings in one place: where each part lives, where the hub listens,
the course's nbgitpuller link and the culler's rule.

`make hub` (workshop.py) and `make hub-check` (rehearsal.py) build a HubSettings, check it and
hand it to the hub as TRAFIKEY_HUB_* environment variables, which jupyterhub_config.py reads
back with `HubSettings.from_environment()`: one set of values, whoever starts the hub.

Everything lives under one folder, the prefix (/opt/trafikey-hub unless HUB_PREFIX names
another), owned by root and readable by the learners except for state/:

    env/        the course's Python environment, built once with Debian's /usr/bin/python3,
                shared read-only by every learner and the hub
    proxy/      configurable-http-proxy, installed by `npm ci` from hub/package-lock.json
    course.git  the git repository the nbgitpuller link pulls from
    gitconfig   git's system settings for the learners: the repository above is safe
    state/      root's alone (0700): the hub's database, cookie secret, tokens, learners' sheet
"""

import ipaddress
import os
import socket
import urllib.parse
from dataclasses import asdict, dataclass, fields
from pathlib import Path

PREFIX = Path("/opt/trafikey-hub")
ENVIRONMENT_PREFIX = "TRAFIKEY_HUB_"
COURSE_FOLDER = "trafikey-lab"
"""Where the nbgitpuller link puts the course in each learner's home."""
FIRST_NOTEBOOK = "notebooks/00_start_here.ipynb"

ACTIVITY_INTERVAL = 300
"""Seconds between two reports of a learner's activity to the hub: each single-user server
reports its own (JUPYTERHUB_ACTIVITY_INTERVAL) and the hub polls the proxy's; 300 is
JupyterHub's default for both. What the hub knows of a learner is up to this old."""
CULL_TIMEOUT = 3600
"""Seconds without activity after which the culler stops a learner's server: longer than a
break or the plan's catch-up slot, as Zero to JupyterHub's default."""
CULL_EVERY = 300
"""Seconds between two rounds of the culler."""
CULL_MARGIN = 2
"""The timeout is at least this many activity intervals: a learner who is working has been
reported within about one interval (JupyterHub adds up to 10% jitter), so a timeout of two
never culls them. A trial with 150 s against the 300 s interval culled servers whose kernels
had run 90 s before."""


SERVER_PORTS = range(20000, 32000)
"""Ports for the learners' Jupyter servers, below Linux's ephemeral range (32768-60999)."""
FIRST_UID = 1000
"""The first uid Debian's useradd gives an ordinary user."""


def server_port(uid: int) -> int:
    """The port of a learner's own Jupyter server, fixed by their uid; 0 (one drawn at
    random) for a uid outside the range.

    JupyterHub otherwise draws a free port, closes it and hands it to the server, and in a
    room many processes draw ports so at once: in a rehearsal with 30 learners another
    learner's process took one in between, the server could not listen, and that learner
    never got a server. A port below the ephemeral range is one no draw hands out."""
    port = SERVER_PORTS.start + uid - FIRST_UID
    return port if port in SERVER_PORTS else 0


class SettingsError(ValueError):
    """A setting that cannot work; the message says which and what to set instead."""


@dataclass(frozen=True)
class HubSettings:
    prefix: Path = PREFIX
    ip: str = "127.0.0.1"
    """Where learners reach the hub: loopback unless the instructor names an address."""
    port: int = 8000
    hub_port: int = 8081
    """The hub's own API, always on loopback: the proxy and the services talk to it."""
    proxy_api_port: int = 8001
    public_url: str = ""
    """The hub as learners' browsers reach it, for the link the guide hands out; derived
    from ip and port when empty (the machine's name when the hub listens on every address)."""
    ssl_cert: str = ""
    ssl_key: str = ""
    course_repo: str = ""
    """The repository the nbgitpuller link names; empty for the prefix's course.git."""
    course_branch: str = "main"
    admins: str = ""
    """Comma-separated OS users who may use the hub's admin page (an instructor)."""
    cull_timeout: int = CULL_TIMEOUT
    cull_every: int = CULL_EVERY
    activity_interval: int = ACTIVITY_INTERVAL
    rehearsal: bool = False
    """make hub-check: its JupyterLab exposes the application to the page for the browser
    test, as tests/browser needs."""

    # -- where things are -----------------------------------------------------------------

    @property
    def env(self) -> Path:
        return self.prefix / "env"

    @property
    def python(self) -> Path:
        return self.env / "bin" / "python"

    @property
    def proxy(self) -> Path:
        return self.prefix / "proxy"

    @property
    def proxy_command(self) -> Path:
        return self.proxy / "node_modules" / ".bin" / "configurable-http-proxy"

    @property
    def course(self) -> Path:
        return self.prefix / "course.git"

    @property
    def gitconfig(self) -> Path:
        """Git's system configuration for the learners' servers (GIT_CONFIG_SYSTEM): the
        machine's own, plus the course repository as a safe directory. Git refuses to read a
        repository another user owns ("dubious ownership") unless it is one, and honours the
        setting only from system or global configuration: its command-line form
        (GIT_CONFIG_COUNT) does not reach the upload-pack that a clone runs."""
        return self.prefix / "gitconfig"

    @property
    def state(self) -> Path:
        return self.prefix / "state"

    @property
    def database(self) -> Path:
        return self.state / "jupyterhub.sqlite"

    @property
    def cookie_secret(self) -> Path:
        return self.state / "jupyterhub_cookie_secret"

    @property
    def admin_token(self) -> Path:
        """The token of the set-up's own service, which creates and removes learners."""
        return self.state / "admin_token"

    @property
    def learners_sheet(self) -> Path:
        """Names and passwords of the learners make hub created, for the instructor."""
        return self.state / "learners.txt"

    @property
    def secrets(self) -> list[Path]:
        """What no learner may read: the hub's database and every secret beside it."""
        return [self.state, self.database, self.cookie_secret, self.admin_token,
                self.learners_sheet]

    # -- addresses ---------------------------------------------------------------------------

    @property
    def secure(self) -> bool:
        return bool(self.ssl_cert and self.ssl_key)

    @property
    def loopback(self) -> bool:
        return ipaddress.ip_address(self.ip).is_loopback

    @property
    def url(self) -> str:
        """The hub's public URL, ending in /."""
        if self.public_url:
            return self.public_url.rstrip("/") + "/"
        host = self.ip
        if ipaddress.ip_address(host).is_unspecified:
            host = socket.getfqdn()
        elif ":" in host:
            host = f"[{host}]"
        return f"{'https' if self.secure else 'http'}://{host}:{self.port}/"

    @property
    def api_url(self) -> str:
        """The hub's REST API, reached on loopback without the proxy or TLS."""
        return f"http://127.0.0.1:{self.hub_port}/hub/api/"

    @property
    def repository(self) -> str:
        return self.course_repo or f"file://{self.course}"

    def course_path(self) -> str:
        """The part of the nbgitpuller link after the hub's address: /hub/user-redirect sends
        a logged-in learner to their own server (spawning it), whose git-pull clones the
        course into ~/trafikey-lab on the first visit, merges new commits on later ones
        without touching the learner's edits, then opens 00_start_here."""
        query = urllib.parse.urlencode({
            "repo": self.repository,
            "branch": self.course_branch,
            "targetPath": COURSE_FOLDER,
            "urlpath": f"lab/tree/{COURSE_FOLDER}/{FIRST_NOTEBOOK}",
        })
        return f"hub/user-redirect/git-pull?{query}"

    def course_link(self) -> str:
        return self.url + self.course_path()

    # -- checks and hand-over -------------------------------------------------------------

    def check(self) -> "HubSettings":
        """Refuses settings that would expose passwords or cull learners who are working."""
        try:
            ipaddress.ip_address(self.ip)
        except ValueError:
            raise SettingsError(f"HUB_IP must be one IP address such as 127.0.0.1 or 0.0.0.0, "
                                f"not {self.ip!r}") from None
        if not self.loopback and not self.secure:
            raise SettingsError(
                f"refusing to listen on {self.ip} without TLS: learners type their passwords "
                f"into the login page, and plain HTTP would carry them to anyone on the "
                f"network. Set HUB_SSL_CERT and HUB_SSL_KEY (a certificate for the machine's "
                f"name), or keep HUB_IP=127.0.0.1 behind a reverse proxy that serves HTTPS")
        if bool(self.ssl_cert) != bool(self.ssl_key):
            raise SettingsError("HUB_SSL_CERT and HUB_SSL_KEY go together: set both or neither")
        if self.activity_interval <= 0 or self.cull_every <= 0:
            raise SettingsError("the activity interval and the culler's round must be positive")
        if self.cull_timeout < CULL_MARGIN * self.activity_interval:
            raise SettingsError(
                f"a culler timeout of {self.cull_timeout} s would stop learners who are "
                f"working: the hub hears of their activity only every "
                f"{self.activity_interval} s, so the timeout must be at least "
                f"{CULL_MARGIN * self.activity_interval} s")
        if self.cull_every > self.cull_timeout:
            raise SettingsError(f"the culler's round ({self.cull_every} s) is longer than its "
                                f"timeout ({self.cull_timeout} s)")
        return self

    def to_environment(self) -> dict[str, str]:
        return {ENVIRONMENT_PREFIX + name.upper(): str(value)
                for name, value in asdict(self).items()}

    @classmethod
    def from_environment(cls, environ: "os._Environ[str] | dict[str, str]") -> "HubSettings":
        values: dict[str, object] = {}
        for field in fields(cls):
            text = environ.get(ENVIRONMENT_PREFIX + field.name.upper())
            if text is None:
                continue
            if field.type in (int, "int"):
                values[field.name] = int(text)
            elif field.type in (bool, "bool"):
                values[field.name] = text == "True"
            elif field.type in (Path, "Path"):
                values[field.name] = Path(text)
            else:
                values[field.name] = text
        return cls(**values).check()  # type: ignore[arg-type]
