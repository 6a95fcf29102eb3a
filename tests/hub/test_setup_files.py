"""What the set-up installs from, and the make targets that start it: the proxy's npm lock,
the hub's Python requirements, and `make hub`, `make hub-check` and `make lock`."""

import json
import re
import subprocess

from packaging.requirements import Requirement

from .conftest import REPO

HUB = REPO / "hub"


def test_the_proxy_is_configurable_http_proxy_5_from_the_committed_lock():
    package = json.loads((HUB / "package.json").read_text())
    assert package["private"] is True
    assert package["dependencies"] == {"configurable-http-proxy": "~5.3.0"}
    lock = json.loads((HUB / "package-lock.json").read_text())
    assert lock["packages"][""]["dependencies"] == package["dependencies"]
    proxy = lock["packages"]["node_modules/configurable-http-proxy"]
    assert proxy["version"].startswith("5.")
    assert proxy["integrity"].startswith("sha512-")


def test_the_npm_lock_names_no_registry_address():
    # npm ci fetches every package by name and checks it against its integrity hash.
    lock = json.loads((HUB / "package-lock.json").read_text())
    assert not [name for name, entry in lock["packages"].items() if "resolved" in entry]


def test_the_hubs_python_packages_are_ranges_bounded_below_the_next_major():
    lines = [line for line in (HUB / "requirements.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    names = set()
    for line in lines:
        requirement = Requirement(line)
        names.add(requirement.name)
        assert any(spec.operator == "<" for spec in requirement.specifier), line
        assert any(spec.operator == ">=" for spec in requirement.specifier), line
    assert names == {"jupyterhub", "jupyterhub-idle-culler", "nbgitpuller"}


def planned(*args: str) -> str:
    return subprocess.run(["make", "-n", "-C", str(REPO), *args], capture_output=True,
                          text=True, check=True).stdout


def test_make_hub_listens_on_loopback_and_creates_no_learners_unless_asked():
    line = planned("hub")
    assert "/usr/bin/python3 hub/workshop.py serve --prefix /opt/trafikey-hub --ip 127.0.0.1 " \
           "--port 8000" in line
    assert re.search(r"--learners 0\b", line)
    line = planned("hub", "HUB_LEARNERS=30", "HUB_IP=0.0.0.0", "HUB_SSL_CERT=/c",
                   "HUB_SSL_KEY=/k", "HUB_URL=https://hub.example.org")
    assert "--ip 0.0.0.0" in line
    assert re.search(r"--learners 30\b", line)
    assert "--ssl-cert /c --ssl-key /k" in line
    assert "--url https://hub.example.org" in line


def test_make_hub_check_rehearses_five_learners_unless_told_otherwise():
    assert "hub/rehearsal.py --learners 5" in planned("-B", "hub-check")
    assert "hub/rehearsal.py --learners 30" in planned("-B", "hub-check", "HUB_LEARNERS=30")


def test_make_lock_writes_constraints_txt_from_the_venv():
    assert ".venv/bin/python tools/lock.py constraints.txt" in planned("-B", "lock")
