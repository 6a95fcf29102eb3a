"""Fixtures shared by the tests (one live server per session, fresh executors per test), and the
fast suite's hypothesis profile.

The suite owns every server it writes to: live tests empty theirs with FLUSHALL. So the
settings that would point the lab at another server (TRAFIKEY_VALKEY_URL, a workshop's) or
rename its keys (TRAFIKEY_NAMESPACE) are dropped from this process's environment before any
test runs, and with them from every kernel and subprocess a test starts. A test of an
attached server starts its own and attaches to it with url=.
"""

import os

import pytest
from hypothesis import settings

from trafikey_lab import LiveExecutor, ModelExecutor, OwnedServer, Queue, choose_server
from trafikey_lab.executors import NAMESPACE_ENV, URL_ENV

FOREIGN_SETTINGS = (URL_ENV, NAMESPACE_ENV)


def pytest_configure(config):
    for name in FOREIGN_SETTINGS:
        os.environ.pop(name, None)

# The property tests of the fast suite take no per-example deadline: on a busy two-core machine
# one example can outlast hypothesis's default 200 ms, and a missed deadline there is a flaky
# failure, not a finding. (The reliability suite selects its own profiles per test.)
settings.register_profile("trafikey-fast", deadline=None)
settings.load_profile("trafikey-fast")


@pytest.fixture(scope="session")
def lab():
    with OwnedServer() as server:
        yield server


@pytest.fixture
def live(lab):
    lab.client.flushall()
    return LiveExecutor(lab)


@pytest.fixture
def model():
    return ModelExecutor()


@pytest.fixture(params=["model", "live"])
def executor(request):
    """Each test that takes it runs twice: on the model, then on the module."""
    return request.getfixturevalue(request.param)


@pytest.fixture
def queue():
    return Queue("{jobs}")


@pytest.fixture
def servers():
    """Makes extra LabServers for a test and stops every one of them afterwards."""
    made = []

    def make(**options):
        server = choose_server(**options).start()
        made.append(server)
        return server

    yield make
    for server in made:
        server.stop()
