"""A replica beside a server the lab started, and a failover and failback with no restart:
the choreography notebooks 04, 05 and 07 play, written once."""

import time
from contextlib import contextmanager

from trafikey_lab.errors import LabError
from trafikey_lab.live.owned import OwnedServer
from trafikey_lab.live.server import LabServer, client_of

SYNC_TIMEOUT_S = 10.0


def wait_in_sync(primary: LabServer, replica: LabServer) -> None:
    deadline = time.monotonic() + SYNC_TIMEOUT_S
    while time.monotonic() < deadline:
        link = client_of(replica).info("replication").get("master_link_status")
        if link == "up" and client_of(primary).wait(1, 1000) >= 1:
            return
        time.sleep(0.02)
    raise LabError(
        f"the replica on port {replica.port} did not catch up with the server on port "
        f"{primary.port} within {SYNC_TIMEOUT_S:g} s. Its log says:\n{replica.log_tail()}"
    )


@contextmanager
def replica_of(primary: LabServer):
    """A second module-loaded server, a replica of `primary`, in sync on entry; stopped (and its
    folder removed) on exit, however the block ends."""
    # A primary waits 5 s for more replicas before a diskless sync by default; one is enough.
    client_of(primary).config_set("repl-diskless-sync-delay", 0)
    host = primary.host
    if host is None or primary.port is None:
        raise LabError(f"{primary.address} has no host and port to follow: start it first")
    # On the primary's own address, which the replica follows: loopback is not always 127.0.0.1.
    replica = OwnedServer(bind=host,
                          extra_args=("--replicaof", host, str(primary.port),
                                      "--repl-diskless-sync-delay", "0"))
    try:
        replica.start()
        wait_in_sync(primary, replica)
        yield replica
    finally:
        replica.stop()


@contextmanager
def failed_over(server: LabServer):
    """A failover and a failback with no restart: a replica of `server` is promoted and
    `server` follows it, in sync, for the block (which gets the new primary); then `server` is
    promoted back, however the block ends, and the other server stopped."""
    with replica_of(server) as other:
        client_of(other).execute_command("REPLICAOF", "NO", "ONE")
        client_of(server).execute_command("REPLICAOF", other.host, str(other.port))
        try:
            # The replication id a replica reports is its primary's only once it has synced.
            wait_in_sync(other, server)
            yield other
        finally:
            client_of(server).execute_command("REPLICAOF", "NO", "ONE")
