"""Fixtures of the reliability suite: which module build the servers load, and under what.

By default every server here loads the module the package built. `make asan` points the
suite at an AddressSanitizer build instead, through three environment variables that reach
only the servers (never this Python process):

- TRAFIKEY_TEST_MODULE: the path of the module build to load;
- TRAFIKEY_TEST_SERVER_PRELOAD: LD_PRELOAD for the servers (the no-DEEPBIND shim, then libasan);
- TRAFIKEY_TEST_ASAN_OPTIONS: ASAN_OPTIONS for the servers.

The hypothesis profiles live here too: `trafikey-default` for `make test`, `trafikey-soak`
when TRAFIKEY_SOAK=1 (`make soak`). They are selected per test, never loaded globally, so the
rest of the test tree keeps its own hypothesis settings.
"""

import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from trafikey_lab import LabServer, choose_server

MODULE_ENV = "TRAFIKEY_TEST_MODULE"
PRELOAD_ENV = "TRAFIKEY_TEST_SERVER_PRELOAD"
ASAN_OPTIONS_ENV = "TRAFIKEY_TEST_ASAN_OPTIONS"
SOAK = os.environ.get("TRAFIKEY_SOAK") == "1"

# The default profile is sized so that all of `make test` stays under six minutes on a 2-core
# machine; `make soak` is the place for depth.
settings.register_profile(
    "trafikey-default",
    max_examples=200,
    stateful_step_count=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile(
    "trafikey-soak",
    max_examples=3000,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

FIGURES = Counter()
"""What the suite did (sequences, steps, calls fuzzed, faults injected), for the summary."""


def profile() -> settings:
    return settings.get_profile("trafikey-soak" if SOAK else "trafikey-default")


def module_under_test():
    """The module build the servers load: TRAFIKEY_TEST_MODULE, or the package's own."""
    named = os.environ.get(MODULE_ENV)
    if not named:
        return True
    path = Path(named)
    if not path.is_file():
        raise pytest.UsageError(f"{MODULE_ENV}={named} is not a file: build it first (make asan)")
    return str(path.resolve())


def server_env() -> dict[str, str]:
    env = {}
    if os.environ.get(PRELOAD_ENV):
        env["LD_PRELOAD"] = os.environ[PRELOAD_ENV]
    if os.environ.get(ASAN_OPTIONS_ENV):
        env["ASAN_OPTIONS"] = os.environ[ASAN_OPTIONS_ENV]
    return env


def lab_server(**options) -> LabServer:
    """A LabServer (not started) loading the module under test, with the servers' env."""
    options.setdefault("module", module_under_test())
    env = {**server_env(), **options.pop("env", {})}
    return choose_server(env=env, **options)


@pytest.fixture(scope="session")
def rdb_server():
    with lab_server(persistence="rdb") as server:
        yield server


@pytest.fixture(scope="session")
def aof_server():
    with lab_server(persistence="aof") as server:
        yield server


@pytest.fixture
def make_server():
    """Starts LabServers loading the module under test; stops every one after the test."""
    made = []

    def make(**options):
        server = lab_server(**options)
        made.append(server)
        return server.start()

    yield make
    for server in reversed(made):
        server.stop()


def pytest_terminal_summary(terminalreporter):
    if FIGURES:
        terminalreporter.section("trafikey reliability figures")
        for name, count in sorted(FIGURES.items()):
            terminalreporter.write_line(f"{name}: {count}")
