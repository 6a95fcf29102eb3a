"""Fixtures shared by the tests: one live server per session, and fresh executors per test."""

import pytest

from trafikey_lab import LabServer, LiveExecutor, ModelExecutor, Queue


@pytest.fixture(scope="session")
def lab():
    with LabServer() as server:
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
        server = LabServer(**options).start()
        made.append(server)
        return server

    yield make
    for server in made:
        server.stop()
