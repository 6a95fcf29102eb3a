"""hub/jupyterhub_config.py, loaded as JupyterHub loads it: the values it gives the hub."""

import urllib.parse

import pytest
from settings import HubSettings
from traitlets.config.loader import PyFileConfigLoader

from .conftest import REPO


def load(tmp_path, monkeypatch, **settings):
    hub = HubSettings(prefix=tmp_path, **settings)
    hub.state.mkdir(parents=True)
    hub.admin_token.write_text("a-token\n")
    for name, value in hub.to_environment().items():
        monkeypatch.setenv(name, value)
    return hub, PyFileConfigLoader("jupyterhub_config.py", path=str(REPO / "hub")).load_config()


@pytest.fixture
def config(tmp_path, monkeypatch):
    return load(tmp_path, monkeypatch, port=8123, hub_port=8124, proxy_api_port=8125)


def test_learners_log_in_with_pam_and_are_created_as_os_users_with_private_homes(config):
    _, c = config
    assert c.JupyterHub.authenticator_class == "pam"
    assert c.LocalAuthenticator.create_system_users is True
    command = c.LocalAuthenticator.add_user_cmd
    assert command[0] == "useradd"
    assert "--create-home" in command
    assert command[command.index("--key") + 1] == "HOME_MODE=0700"
    assert c.Authenticator.allow_existing_users is True


def test_each_learner_gets_a_local_process_server_from_the_shared_environment(config):
    hub, c = config
    assert c.JupyterHub.spawner_class == "jupyterhub.spawner.LocalProcessSpawner"
    assert c.Spawner.cmd == [str(hub.env / "bin" / "jupyterhub-singleuser")]
    assert c.Spawner.default_url == "/lab"


def test_nothing_of_roots_environment_reaches_a_learner(config):
    hub, c = config
    assert c.Spawner.env_keep == []
    path = c.Spawner.environment["PATH"].split(":")
    assert path[0] == str(hub.env / "bin")
    assert not [entry for entry in path if entry.startswith("/root")]


def test_git_may_read_the_root_owned_course_repository(config):
    hub, c = config
    assert c.Spawner.environment["GIT_CONFIG_SYSTEM"] == str(hub.gitconfig)


def test_the_hub_and_its_proxy_api_stay_on_loopback_and_keep_state_in_the_state_folder(config):
    hub, c = config
    assert (c.JupyterHub.ip, c.JupyterHub.port) == ("127.0.0.1", 8123)
    assert (c.JupyterHub.hub_ip, c.JupyterHub.hub_port) == ("127.0.0.1", 8124)
    assert c.ConfigurableHTTPProxy.api_url == "http://127.0.0.1:8125"
    assert c.ConfigurableHTTPProxy.command == [str(hub.proxy_command)]
    assert c.JupyterHub.db_url == f"sqlite:///{hub.state}/jupyterhub.sqlite"
    assert c.JupyterHub.cookie_secret_file == str(hub.cookie_secret)
    assert c.JupyterHub.cleanup_servers is True


def test_the_culler_runs_as_a_service_with_a_timeout_above_the_activity_interval(config):
    hub, c = config
    culler = next(service for service in c.JupyterHub.services if service["name"] == "idle-culler")
    assert culler["command"][1:3] == ["-m", "jupyterhub_idle_culler"]
    assert f"--timeout={hub.cull_timeout}" in culler["command"]
    assert hub.cull_timeout >= 2 * c.JupyterHub.last_activity_interval
    assert c.Spawner.environment["JUPYTERHUB_ACTIVITY_INTERVAL"] == str(hub.activity_interval)
    role = next(role for role in c.JupyterHub.load_roles if role["name"] == "idle-culler")
    assert set(role["scopes"]) == {"list:users", "read:users:activity", "read:servers",
                                   "delete:servers"}


def test_the_login_page_gives_the_course_link(config):
    hub, c = config
    announcement = c.JupyterHub.template_vars["announcement_login"]
    href = announcement.split('href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    assert href == "/" + hub.course_path()
    assert dict(urllib.parse.parse_qsl(href.split("?", 1)[1]))["targetPath"] == "trafikey-lab"


def test_kernels_use_unix_sockets_in_the_learners_own_folder_not_loopback_ports(config):
    _, c = config
    assert c.Spawner.args == ["--KernelManager.transport=ipc"]


def test_only_the_rehearsal_exposes_jupyterlab_to_the_page(tmp_path, monkeypatch, config):
    _, c = config
    assert "--LabApp.expose_app_in_browser=True" not in c.Spawner.args
    _, rehearsed = load(tmp_path / "rehearsal", monkeypatch, rehearsal=True)
    assert rehearsed.Spawner.args == ["--KernelManager.transport=ipc",
                                      "--LabApp.expose_app_in_browser=True"]


def test_tls_is_handed_to_the_hub_when_it_listens_beyond_loopback(tmp_path, monkeypatch):
    _, c = load(tmp_path, monkeypatch, ip="0.0.0.0", ssl_cert="/etc/hub.crt",
                ssl_key="/etc/hub.key")
    assert (c.JupyterHub.ssl_cert, c.JupyterHub.ssl_key) == ("/etc/hub.crt", "/etc/hub.key")


def test_a_learner_s_server_gets_the_port_of_their_uid(config):
    _, c = config

    class Spawner:
        class user:
            name = "root"

    spawner = Spawner()
    c.Spawner.pre_spawn_hook(spawner)
    assert spawner.port == 0  # root's uid is outside the learners' range
