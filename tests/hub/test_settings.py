"""hub/settings.py: the culler's rule, who may listen where, the course link, the hand-over."""

import urllib.parse
from pathlib import Path

import pytest
from settings import (
    ACTIVITY_INTERVAL,
    CULL_TIMEOUT,
    SERVER_PORTS,
    HubSettings,
    SettingsError,
    server_port,
)


def test_the_default_culler_timeout_is_well_above_the_activity_interval():
    assert CULL_TIMEOUT >= 2 * ACTIVITY_INTERVAL
    HubSettings().check()


@pytest.mark.parametrize("timeout", [150, 300, 599])
def test_a_timeout_a_working_learner_could_outlast_is_refused(timeout):
    # A trial with 150 s against the 300 s activity interval culled learners who had run
    # code 90 s before.
    with pytest.raises(SettingsError, match="would stop learners who are working"):
        HubSettings(cull_timeout=timeout).check()


def test_a_short_timeout_is_accepted_only_with_a_shorter_activity_interval():
    HubSettings(cull_timeout=40, cull_every=5, activity_interval=10).check()
    with pytest.raises(SettingsError):
        HubSettings(cull_timeout=40, cull_every=5).check()


def test_listening_beyond_loopback_needs_tls_for_the_passwords():
    with pytest.raises(SettingsError, match="without TLS"):
        HubSettings(ip="0.0.0.0").check()
    with pytest.raises(SettingsError, match="go together"):
        HubSettings(ip="127.0.0.1", ssl_cert="/etc/hub.crt").check()
    secure = HubSettings(ip="0.0.0.0", ssl_cert="/etc/hub.crt", ssl_key="/etc/hub.key",
                         public_url="https://hub.example.org").check()
    assert secure.url == "https://hub.example.org/"


def test_a_bad_address_says_what_to_set():
    with pytest.raises(SettingsError, match="HUB_IP must be one IP address"):
        HubSettings(ip="localhost").check()


def test_the_course_link_pulls_the_course_and_opens_notebook_00():
    hub = HubSettings(prefix=Path("/opt/trafikey-hub"), port=8000)
    link = urllib.parse.urlsplit(hub.course_link())
    assert f"{link.scheme}://{link.netloc}" == "http://127.0.0.1:8000"
    assert link.path == "/hub/user-redirect/git-pull"
    assert dict(urllib.parse.parse_qsl(link.query)) == {
        "repo": "file:///opt/trafikey-hub/course.git", "branch": "main",
        "targetPath": "trafikey-lab",
        "urlpath": "lab/tree/trafikey-lab/notebooks/00_start_here.ipynb"}


def test_a_published_repository_can_stand_in_for_the_local_one():
    hub = HubSettings(course_repo="https://github.com/OWNER/trafikey-lab")
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(hub.course_link()).query))
    assert query["repo"] == "https://github.com/OWNER/trafikey-lab"


def test_the_hubs_secrets_all_sit_in_the_state_folder():
    hub = HubSettings(prefix=Path("/srv/x"))
    assert hub.database.parent == hub.cookie_secret.parent == hub.admin_token.parent == hub.state
    assert {hub.state, hub.database, hub.cookie_secret, hub.admin_token} <= set(hub.secrets)
    for shared in (hub.env, hub.course, hub.proxy, hub.gitconfig):
        assert hub.state not in shared.parents


def test_the_settings_reach_the_hub_unchanged_through_the_environment():
    hub = HubSettings(prefix=Path("/srv/hub"), ip="0.0.0.0", port=9000, hub_port=9001,
                      ssl_cert="/c", ssl_key="/k", admins="ann,bo", cull_timeout=1800,
                      rehearsal=True)
    assert HubSettings.from_environment(hub.to_environment()) == hub
    assert HubSettings.from_environment({}) == HubSettings()


def test_the_hub_refuses_bad_settings_handed_over_too():
    with pytest.raises(SettingsError):
        HubSettings.from_environment({"TRAFIKEY_HUB_CULL_TIMEOUT": "150"})


def test_each_learner_s_server_port_is_theirs_and_never_one_a_random_draw_hands_out():
    ephemeral = range(32768, 61000)  # Linux's default ip_local_port_range
    ports = [server_port(uid) for uid in range(1000, 1000 + len(SERVER_PORTS))]
    assert len(set(ports)) == len(ports)
    assert not [port for port in ports if port in ephemeral]
    assert server_port(999) == server_port(1000 + len(SERVER_PORTS)) == 0
