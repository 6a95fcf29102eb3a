"""binder/ as Binder's builder, repo2docker, reads it: the build pack, the files, the compiler,
and what the image leaves out. Rendered with repo2docker itself, so no Docker is needed."""

import contextlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

# repo2docker's logging imports an older name of python-json-logger, which warns about it.
pytestmark = pytest.mark.filterwarnings(
    "ignore:pythonjsonlogger.jsonlogger has been moved:DeprecationWarning")

REPO = Path(__file__).resolve().parents[2]
REPO2DOCKER = Path(sys.executable).with_name("repo2docker")
# Binder builds the image for this user and platform; repo2docker's defaults are whoever
# runs it, on whatever machine.
BINDER_PLATFORM = "linux/amd64"
BINDER = ["--user-id", "1000", "--user-name", "jovyan", f"--Repo2Docker.platform={BINDER_PLATFORM}"]


def tracked_files() -> list[str]:
    """The files Binder's clone would hold: tracked ones, and new ones not yet committed."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0")
    return sorted(name for name in listed if name and (REPO / name).is_file())


def ignored_examples() -> list[str]:
    """One path for each .gitignore pattern, at the root and one level down: what a working
    checkout holds (a venv, a build, a compiled module, caches) and the image must not."""
    examples = []
    for line in (REPO / ".gitignore").read_text().splitlines():
        pattern = line.strip()
        if not pattern or pattern.startswith(("#", "!")):
            continue
        is_dir = pattern.endswith("/")
        path = pattern.strip("/").replace("**", "deep").replace("*", "junk")
        places = [path] if "/" in pattern.strip("/") else [path, f"trafikey_lab/{path}"]
        examples += [f"{place}/junk" if is_dir else place for place in places]
    return [*examples, ".git/HEAD"]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("checkout")
    for name in tracked_files():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, root / name)
    for name in ignored_examples():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        if not (root / name).exists():
            (root / name).write_text("left by a local build or run\n")
    return root


@pytest.fixture(scope="module")
def dockerfile(checkout) -> str:
    result = subprocess.run([str(REPO2DOCKER), "--no-build", *BINDER, str(checkout)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def build_pack(checkout):
    """The build pack repo2docker picks for the checkout, found the way its app finds it."""
    from repo2docker.app import Repo2Docker

    app = Repo2Docker()
    with contextlib.chdir(checkout):
        for candidate in app.buildpacks:
            pack = candidate(base_image=app.base_image)
            pack.platform = BINDER_PLATFORM
            if pack.detect():
                # Read what it detected while still in the checkout: paths are relative.
                base_environment = {Path(source).name for source in pack.get_build_script_files()
                                    if source.endswith(".lock")}
                return pack, pack.environment_yaml_path, base_environment, \
                    pack.get_post_build_scripts()
    pytest.fail("repo2docker picked no build pack for the checkout")


def test_repo2docker_picks_the_conda_build_pack_with_binders_own_files(build_pack):
    pack, environment, base_environment, post_build = build_pack
    assert type(pack).__name__ == "CondaBuildPack"
    assert environment == "binder/environment.yml"
    # The base environment (JupyterLab and the rest) is repo2docker's, for python=3.11.
    assert base_environment == {"environment.py-3.11-linux-64.lock"}
    assert post_build == ["binder/postBuild"]


def test_the_recipe_updates_the_environment_from_binder_not_the_top_level_file(dockerfile):
    assert '--file "binder/environment.yml"' in dockerfile
    assert '--file "environment.yml"' not in dockerfile
    # setup.py beside a binder/ folder is not installed by repo2docker: postBuild does it.
    assert "pip install" not in dockerfile


def test_the_recipe_runs_postbuild_as_the_session_user_after_copying_the_repository(dockerfile):
    lines = dockerfile.splitlines()
    run = lines.index("RUN ./binder/postBuild")
    assert lines.index("COPY --chown=1000:1000 src/ ${REPO_DIR}/") < run
    user = [line for line in lines[:run] if line.startswith("USER ")][-1]
    assert user == "USER ${NB_USER}"


def test_the_image_starts_from_buildpack_deps_whose_gcc_builds_the_module(dockerfile):
    assert dockerfile.lstrip().splitlines()[0].startswith("FROM docker.io/library/buildpack-deps:")


def test_binder_environment_has_no_conda_compiler_and_postbuild_names_gcc():
    environment = (REPO / "binder" / "environment.yml").read_text()
    dependencies = [line.strip().removeprefix("- ") for line in environment.splitlines()
                    if line.strip().startswith("- ")]
    assert dependencies == ["conda-forge", "python=3.11", "pip"]
    post_build = (REPO / "binder" / "postBuild").read_text()
    assert 'CC="$(command -v gcc)"' in post_build
    assert "export CC" in post_build


def test_postbuild_is_executable_and_stops_at_the_first_failure(tmp_path):
    """Run with a python that fails: the install fails, and nothing after it runs (no config
    installed, no doctor), with postBuild's own exit status non-zero."""
    post_build = REPO / "binder" / "postBuild"
    assert os.access(post_build, os.X_OK)
    calls = tmp_path / "calls"
    stub = tmp_path / "bin" / "python"
    stub.parent.mkdir()
    stub.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexit 3\n')
    stub.chmod(0o755)
    # Were postBuild to run on past the failure, its install step must not write anywhere.
    (stub.parent / "install").write_text(f'#!/bin/sh\necho "install $@" >> {calls}\n')
    (stub.parent / "install").chmod(0o755)
    done = subprocess.run([str(post_build)], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "PATH": f"{stub.parent}:{os.environ['PATH']}"},
                          timeout=60)
    assert done.returncode == 3, done.stdout + done.stderr
    assert calls.read_text().splitlines() == [
        "-m pip install --no-cache-dir -c constraints.txt -e .[lab]"]


def image_files(pack, checkout) -> set[str]:
    """The files repo2docker would send to Docker as the image's copy of the repository."""
    sent = {}

    class Client:
        """Stands in for Docker: keeps the build context repo2docker hands over."""

        def build(self, fileobj, **_):
            sent["context"] = fileobj.getvalue()
            return iter(())

    with contextlib.chdir(checkout):
        list(pack.build(Client(), "trafikey-lab", 0, {"NB_USER": "jovyan", "NB_UID": "1000"},
                        [], {}))
    with tarfile.open(fileobj=io.BytesIO(sent["context"])) as context:
        return {member.name.removeprefix("src/") for member in context.getmembers()
                if member.isfile() and member.name.startswith("src/")}


def test_the_image_gets_every_tracked_file_and_nothing_a_local_run_left(build_pack, checkout):
    copied = image_files(build_pack[0], checkout)
    assert copied == set(tracked_files())
    assert not copied & set(ignored_examples())
    for needed in ("binder/postBuild", "setup.py", "trafikey_lab/module/trafikey.c",
                   "notebooks/00_start_here.ipynb"):
        assert needed in copied


def test_dockerignore_sits_where_repo2docker_reads_it(build_pack, checkout, tmp_path):
    # Moved to the top level, beside a binder/ folder, it is not read: the junk goes in.
    moved = tmp_path / "checkout"
    shutil.copytree(checkout, moved, symlinks=True)
    (moved / "binder" / ".dockerignore").rename(moved / ".dockerignore")
    assert set(ignored_examples()) - {".git/HEAD"} <= image_files(build_pack[0], moved)


def binder_check():
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import binder_check
    finally:
        sys.path.remove(str(REPO / "tools"))
    return binder_check


def test_the_readme_binder_links_open_notebook_00_and_the_projector_app_which_exist():
    urlpaths = binder_check().readme_urlpaths()
    assert urlpaths == ["lab/tree/notebooks/00_start_here.ipynb",
                        "voila/render/app/projector.ipynb"]
    for urlpath in urlpaths:
        assert (REPO / urlpath.split("/", 2)[2]).is_file(), urlpath


def test_the_rehearsal_uses_the_python_version_binder_installs():
    assert binder_check().binder_python() == "3.11"



def test_postbuild_installs_the_versions_ci_tested_from_the_lock():
    post_build = (REPO / "binder" / "postBuild").read_text()
    assert "python -m pip install --no-cache-dir -c constraints.txt -e '.[lab]'" in post_build
    assert (REPO / "constraints.txt").is_file()
