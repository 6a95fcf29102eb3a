"""Runs one valkey-server for a LabServer and ends it when the LabServer's process is gone.

Usage: python keeper.py OUTPUT [--cleanup DIR] SERVER [ARGS...]

The owner holds the write end of this process's standard input and never writes to it. When
the owner exits for any reason, SIGKILL included, the kernel closes that end, standard input
reads end-of-file, and the keeper kills the server (and removes DIR, the owner's scratch
folder) so that no server outlives the notebook or test that started it. The keeper prints the
server's pid on its first line of output, and sends the server's own standard output and
error (where it reports a bad option before its log is open) to the file OUTPUT. It imports
nothing from the lab, so it starts fast.

When the server ends by itself (a crash, or a `kill` from outside) the keeper exits with the
server's status the way a shell reports it, 128 + the signal for a signal, so the LabServer
can tell the learner what ended it; the folder is kept, so the data can be started again.
"""

import os
import select
import shutil
import signal
import subprocess
import sys


def main(argv: list[str]) -> int:
    output, argv = argv[0], argv[1:]
    cleanup = None
    if argv[:1] == ["--cleanup"]:
        cleanup, argv = argv[1], argv[2:]
    with open(output, "ab") as sink:
        server = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink)
    print(server.pid, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: server.terminate())
    while server.poll() is None:
        readable, _, _ = select.select([sys.stdin], [], [], 0.2)
        if readable and not os.read(sys.stdin.fileno(), 64):
            server.kill()
            server.wait()
            if cleanup:
                shutil.rmtree(cleanup, ignore_errors=True)
            return 0
    return 128 - server.returncode if server.returncode < 0 else server.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
