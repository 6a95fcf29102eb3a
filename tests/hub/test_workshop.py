"""hub/workshop.py's steps that need no root: the course repository the nbgitpuller link
pulls from, and git's settings that let learners read it."""

import subprocess

import pytest
import workshop
from settings import HubSettings


def git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    hub = HubSettings(prefix=tmp_path_factory.mktemp("prefix"))
    first = workshop.publish_course(hub)
    return hub, first


def test_the_course_is_a_bare_repository_holding_the_checkouts_files(published):
    hub, first = published
    assert git("--git-dir", str(hub.course), "rev-parse", "--is-bare-repository").strip() == "true"
    files = set(git("--git-dir", str(hub.course), "ls-tree", "-r", "--name-only",
                    "main").split())
    assert {"notebooks/00_start_here.ipynb", "notebooks/04_one_lease_across_a_restart.ipynb",
            "setup.py", "trafikey_lab/module/trafikey.c"} <= files
    assert not [name for name in files if name.startswith((".venv/", "build/"))]
    assert first == git("--git-dir", str(hub.course), "rev-parse", "--short", "main").strip()


def test_publishing_an_unchanged_checkout_adds_no_commit(published):
    hub, first = published
    assert workshop.publish_course(hub) == first
    assert git("--git-dir", str(hub.course), "rev-list", "--count", "main").strip() == "1"


def test_learners_git_settings_keep_the_machines_and_trust_the_course(published):
    hub, _ = published
    text = hub.gitconfig.read_text()
    assert "[include]\n\tpath = /etc/gitconfig\n" in text
    assert f"[safe]\n\tdirectory = {hub.course}\n" in text


def test_the_link_clones_the_course_with_git(published, tmp_path):
    hub, _ = published
    clone = tmp_path / "trafikey-lab"
    git("clone", "--quiet", "--depth", "1", "--branch", "main", hub.repository, str(clone))
    assert (clone / "notebooks" / "00_start_here.ipynb").is_file()


def test_a_room_s_jupyterlab_asks_nobody_about_news_or_updates():
    settings = workshop.LAB_OVERRIDES["@jupyterlab/apputils-extension:notification"]
    assert settings == {"fetchNews": "false", "checkForUpdates": False}


def test_the_environment_is_built_again_when_what_it_is_built_from_changes():
    assert workshop.built_from() == workshop.built_from()
    assert workshop.CONSTRAINTS.name == "constraints.txt"
