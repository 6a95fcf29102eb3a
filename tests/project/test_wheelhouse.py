"""The offline install: what `make wheelhouse` collects, and that `make lab WHEELHOUSE=...`
installs from it alone. The whole install from a full wheelhouse is `make offline-check`."""

import subprocess
import sys
import tomllib
from pathlib import Path

import wheelhouse

REPO = Path(__file__).resolve().parents[2]


def test_the_wheelhouse_holds_the_build_requirements_the_dependencies_and_every_extra(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\n'
        '[project]\nname = "x"\ndependencies = ["redis>=5", "matplotlib"]\n'
        '[project.optional-dependencies]\nlab = ["jupyterlab>=4", "ipykernel"]\n'
        'test = ["pytest", "ipykernel"]\n')
    assert wheelhouse.requirements(pyproject) == [
        "setuptools>=68", "redis>=5", "matplotlib", "jupyterlab>=4", "ipykernel", "pytest"]


def test_the_labs_own_requirements_include_setuptools_to_build_it_offline():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    needed = wheelhouse.requirements()
    assert set(config["build-system"]["requires"]) <= set(needed)
    assert set(config["project"]["dependencies"]) <= set(needed)
    assert set(config["project"]["optional-dependencies"]["lab"]) <= set(needed)


def planned_install(*make_args: str) -> str:
    """The pip command `make setup` would run, printed by make without running it."""
    planned = subprocess.run(["make", "-n", "-B", "-C", str(REPO), ".venv/.installed",
                              *make_args], capture_output=True, text=True, check=True).stdout
    return next(line for line in planned.splitlines() if " -m pip install " in line)


def test_make_installs_from_a_wheelhouse_with_no_index(tmp_path):
    line = planned_install(f"WHEELHOUSE={tmp_path}")
    assert f"-m pip install --no-index --find-links {tmp_path} -e '.[lab,test]'" in line


def test_a_relative_wheelhouse_is_taken_from_the_repository_root():
    line = planned_install("WHEELHOUSE=wheelhouse")
    assert f"--find-links {REPO / 'wheelhouse'} " in line


def test_without_a_wheelhouse_make_installs_from_the_index():
    assert planned_install().endswith("-m pip install  -e '.[lab,test]'")


def test_the_offline_check_fails_when_the_wheelhouse_lacks_what_builds_the_lab(tmp_path):
    # pip.conf on this machine may name indexes and the network may be up: neither may
    # rescue an incomplete wheelhouse, or the check would prove nothing.
    incomplete = tmp_path / "wheelhouse"
    incomplete.mkdir()
    (incomplete / "unrelated-1.0-py3-none-any.whl").write_bytes(b"")
    result = subprocess.run([sys.executable, str(REPO / "tools" / "wheelhouse.py"), "check",
                             str(incomplete)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 1
    assert "setuptools>=68" in result.stdout + result.stderr
    assert "FAILED: `make setup WHEELHOUSE=" in result.stdout


def test_the_offline_check_refuses_an_empty_wheelhouse(tmp_path):
    result = subprocess.run([sys.executable, str(REPO / "tools" / "wheelhouse.py"), "check",
                             str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "holds no wheels: run `make wheelhouse` first" in result.stdout


def test_the_wheelhouse_is_built_at_the_versions_of_the_lock(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(wheelhouse.subprocess, "run",
                        lambda argv, **_: ran.append(argv) or subprocess.CompletedProcess(argv, 1))
    assert wheelhouse.build(tmp_path / "wheelhouse") == 1
    argv = ran[0]
    assert argv[1:4] == ["-m", "pip", "wheel"]
    assert argv[argv.index("-c") + 1] == str(REPO / "constraints.txt")
    assert (REPO / "constraints.txt").is_file()
