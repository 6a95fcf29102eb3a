"""Fixtures shared by the tests (one live server per session, fresh executors per test), and the
fast suite's hypothesis profile."""

import pytest
from hypothesis import settings

from trafikey_lab import LiveExecutor, ModelExecutor, Queue, choose_server

# The property tests of the fast suite take no per-example deadline: on a busy two-core machine
# one example can outlast hypothesis's default 200 ms, and a missed deadline there is a flaky
# failure, not a finding. (The reliability suite selects its own profiles per test.)
settings.register_profile("trafikey-fast", deadline=None)
settings.load_profile("trafikey-fast")


@pytest.fixture(scope="session")
def lab():
    with choose_server() as server:
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
