# JupyterHub's configuration for a trafikey lab workshop on one machine: `make hub` starts the
# hub with it (hub/workshop.py), `make hub-check` rehearses it (hub/rehearsal.py). Every value
# that differs between machines comes from hub/settings.py, handed over as TRAFIKEY_HUB_*
# variables, so the same file serves the instructor's machine and the rehearsal.
#
# Learners are OS users with private homes, logged in with their password (PAM); each gets
# their own single-user Jupyter server, started as that user by LocalProcessSpawner, whose
# kernels each start their own valkey-server (trafikey_lab.live.owned), so what isolates one
# learner from another is the operating system: files, processes and the servers' passwords.
import html
import os
import pwd
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from settings import HubSettings, server_port

# get_config is defined by JupyterHub when it loads this file.
c = get_config()  # type: ignore[name-defined]  # noqa: F821
hub = HubSettings.from_environment(os.environ)

# -- where the hub listens, and what it keeps ------------------------------------------------
c.JupyterHub.ip = hub.ip
c.JupyterHub.port = hub.port
if hub.secure:
    c.JupyterHub.ssl_cert = hub.ssl_cert
    c.JupyterHub.ssl_key = hub.ssl_key
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = hub.hub_port
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{hub.proxy_api_port}"
c.ConfigurableHTTPProxy.command = [str(hub.proxy_command)]
c.ConfigurableHTTPProxy.pid_file = str(hub.state / "jupyterhub-proxy.pid")
c.JupyterHub.pid_file = str(hub.state / "jupyterhub.pid")
c.JupyterHub.db_url = f"sqlite:///{hub.database}"
c.JupyterHub.cookie_secret_file = str(hub.cookie_secret)
# Stopping the hub stops every learner's server, and with it their kernels and valkey-servers.
c.JupyterHub.cleanup_servers = True

# -- who logs in ------------------------------------------------------------------------------
# PAM: a learner signs in with the OS account the instructor made for them (make hub
# HUB_LEARNERS=N makes learner01... with passwords on a sheet). Users the hub adds (its admin
# page, its API) become OS users; Debian's `useradd -m` would make their homes readable by
# every other learner (mode 755), so the home is created 700.
c.JupyterHub.authenticator_class = "pam"
c.LocalAuthenticator.create_system_users = True
c.LocalAuthenticator.add_user_cmd = [
    "useradd", "--create-home", "--key", "HOME_MODE=0700", "--user-group",
    "--shell", "/bin/bash", "--comment", "trafikey lab learner",
]
c.Authenticator.allow_existing_users = True
c.Authenticator.admin_users = {name.strip() for name in hub.admins.split(",") if name.strip()}

# -- each learner's server --------------------------------------------------------------------
c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.Spawner.cmd = [str(hub.env / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
# Nothing of root's environment reaches a learner: their PATH is the shared environment and
# the system's. nbgitpuller runs git as the learner on a repository root owns, which git
# reads only once it is a safe directory: hub.gitconfig says so (settings.py says why there).
c.Spawner.env_keep = []
c.Spawner.environment = {
    "PATH": f"{hub.env / 'bin'}:/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "GIT_CONFIG_SYSTEM": str(hub.gitconfig),
    "JUPYTERHUB_ACTIVITY_INTERVAL": str(hub.activity_interval),
}
# Each learner's server listens on a port fixed by their uid (settings.server_port says why).
def learners_port(spawner):
    spawner.port = server_port(pwd.getpwnam(spawner.user.name).pw_uid)


c.Spawner.pre_spawn_hook = learners_port
# Many learners logging in together start many servers at once on a few cores.
c.Spawner.start_timeout = 300
c.Spawner.http_timeout = 180
# Kernels talk to their server over Unix sockets in the learner's own runtime folder (mode
# 700), not over TCP ports on 127.0.0.1: with a room of learners, a port one server picked for
# a kernel could be taken by another learner's process before the kernel bound it, and the
# kernel died (its restarts retried the same port; seen with 30 learners). No other learner
# can reach the sockets either. A socket's path must stay under 108 bytes, which holds for
# user names up to about 18 characters under /home.
c.Spawner.args = ["--KernelManager.transport=ipc"]
if hub.rehearsal:
    c.Spawner.args += ["--LabApp.expose_app_in_browser=True"]

# -- the idle culler ----------------------------------------------------------------------
# A server with no activity for cull_timeout seconds is stopped, its kernels and their
# valkey-servers with it; settings.py refuses a timeout that would catch a working learner.
c.JupyterHub.last_activity_interval = hub.activity_interval
c.JupyterHub.services = [
    {
        "name": "idle-culler",
        "command": [str(hub.python), "-m", "jupyterhub_idle_culler",
                    f"--timeout={hub.cull_timeout}", f"--cull-every={hub.cull_every}"],
    },
    {
        # The set-up's own token, for make hub and make hub-check to add and remove learners.
        "name": "trafikey-admin",
        "api_token": hub.admin_token.read_text().strip(),
    },
]
c.JupyterHub.load_roles = [
    {
        "name": "idle-culler",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["idle-culler"],
    },
    {
        "name": "trafikey-admin",
        "scopes": ["admin:users", "admin:servers", "admin:server_state", "tokens"],
        "services": ["trafikey-admin"],
    },
]

# -- the course link on the hub's pages ------------------------------------------------------
_link = html.escape("/" + hub.course_path())
c.JupyterHub.template_vars = {
    "announcement_login": (
        f'trafikey lab: sign in with the name and password you were given, then '
        f'<a href="{_link}">open the course</a> (this link copies it into your home the '
        f'first time and brings in the instructor\'s changes later).'),
    "announcement_home": f'<a href="{_link}">Open the trafikey lab course</a>',
}
