"""constraints.txt and tools/lock.py: the exact versions a room installs are the ones make
test ran with, pyproject.toml keeps ranges bounded below the next major, and make lock says
what moved."""

import tomllib

import lock
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from .conftest import REPO

CONSTRAINTS = REPO / "constraints.txt"


def pins() -> dict:
    return lock.read_lock(CONSTRAINTS)


def every_requirement() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    texts = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        texts += extra
    return [Requirement(text) for text in texts]


def test_every_dependency_of_the_lab_is_a_range_capped_below_the_next_major():
    for requirement in every_requirement():
        operators = {spec.operator for spec in requirement.specifier}
        assert {">=", "<"} <= operators, str(requirement)


def test_the_lock_pins_what_make_setup_installs_within_pyprojects_ranges():
    locked = {name: version for (name, marker), version in pins().items() if not marker}
    for requirement in lock.top_requirements():
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} is not in constraints.txt: run make lock"
        assert requirement.specifier.contains(locked[name]), (name, locked[name])


def test_the_lock_pins_the_hubs_own_packages_too():
    locked = {name for name, _ in pins()}
    assert {"jupyterhub", "jupyterhub-idle-culler", "nbgitpuller", "pamela"} <= locked


def test_the_lock_never_pins_the_lab_itself_nor_pips_own_tools():
    locked = {name for name, _ in pins()}
    assert not locked & {"trafikey-lab", "pip", "setuptools", "wheel"}


def test_a_pin_that_the_hubs_python_cannot_install_is_split_by_python_version():
    pinned = lock.pins_for({"soupsieve": "4.1.3", "redis": "8.1.0"},
                           {"soupsieve": "3.0.1", "redis": "8.1.0", "pamela": "1.2.0"},
                           "3.11.2", {"soupsieve"})
    assert pinned == {
        ("soupsieve", 'python_full_version != "3.11.2"'): "4.1.3",
        ("soupsieve", 'python_full_version == "3.11.2"'): "3.0.1",
        ("redis", ""): "8.1.0",
        ("pamela", ""): "1.2.0",
    }


def test_the_lock_file_reads_back_what_it_wrote(tmp_path):
    written = {("redis", ""): "8.1.0",
               ("soupsieve", 'python_full_version == "3.11.2"'): "2.10"}
    path = tmp_path / "constraints.txt"
    path.write_text(lock.render(written))
    assert lock.read_lock(path) == written
    assert path.read_text().startswith("# The exact versions a room installs")


def test_make_lock_says_what_moved():
    old = {("redis", ""): "8.0.0", ("six", ""): "1.16.0", ("jupyterlab", ""): "4.6.6"}
    new = {("redis", ""): "8.1.0", ("jupyterlab", ""): "4.6.6", ("nbgitpuller", ""): "1.3.0"}
    assert lock.moved(old, new) == ["new      nbgitpuller==1.3.0",
                                    "moved    redis 8.0.0 -> 8.1.0",
                                    "dropped  six==1.16.0"]
    assert lock.moved(new, new) == []


def test_a_package_missing_from_the_venv_says_to_set_up_first():
    missing = Requirement("surely-not-installed-package>=1")
    with pytest.raises(lock.LockError, match="make setup"):
        lock.installed_closure([missing])
