"""Without a browser the suite says how to get one: it skips, or fails when CI requires it."""

import os
import subprocess
import sys

import chromium
import pytest
from chromium import CHROMIUM_ENV, find_chromium

from . import conftest
from .conftest import LAB_URL_ENV, REQUIRE_ENV, ROOT


def test_with_no_browser_the_reason_names_the_install_command(monkeypatch, tmp_path):
    monkeypatch.delenv(CHROMIUM_ENV, raising=False)
    monkeypatch.setattr(chromium, "DEBIAN_CHROMIUM", tmp_path / "chromium")
    path, reason = find_chromium()
    assert path is None
    assert "apt-get install chromium" in reason
    assert CHROMIUM_ENV in reason


def test_a_named_browser_that_is_not_an_executable_is_named_in_the_reason(monkeypatch, tmp_path):
    monkeypatch.setenv(CHROMIUM_ENV, str(tmp_path / "chrome"))
    path, reason = find_chromium()
    assert path is None
    assert f"{CHROMIUM_ENV}={tmp_path / 'chrome'} is not an executable file" in reason


def test_a_named_browser_is_preferred(monkeypatch, tmp_path):
    named = tmp_path / "chrome"
    named.write_text("#!/bin/sh\n")
    named.chmod(0o755)
    monkeypatch.setenv(CHROMIUM_ENV, str(named))
    assert find_chromium() == (named, "")


def test_a_missing_browser_skips_the_suite_saying_why():
    # One notebook's test of this suite, in a pytest of its own, with no browser to find.
    environment = {key: value for key, value in os.environ.items()
                   if key not in (REQUIRE_ENV, LAB_URL_ENV)}
    environment[CHROMIUM_ENV] = "/nonexistent/chromium"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", "-q",
         "tests/browser/test_notebooks_in_lab.py", "-k", "start_here"],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    # 00's tests of that file (its run and its axe check), each skipped, none run
    assert "2 skipped" in result.stdout
    assert "passed" not in result.stdout
    assert "is not an executable file" in result.stdout
    assert "apt-get install chromium" in result.stdout


def test_a_missing_browser_fails_when_one_is_required_and_skips_otherwise(monkeypatch):
    monkeypatch.setenv(REQUIRE_ENV, "1")
    failing = f"no chromium here \\({REQUIRE_ENV}=1: a missing browser is a failure"
    with pytest.raises(pytest.fail.Exception, match=failing):
        conftest.missing("no chromium here")
    monkeypatch.delenv(REQUIRE_ENV)
    with pytest.raises(pytest.skip.Exception, match="no chromium here"):
        conftest.missing("no chromium here")
