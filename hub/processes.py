"""What the rehearsal reads of the machine's processes from /proc: who runs what, under whom,
holding which memory, descriptors and listening ports."""

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

LISTEN = "0A"
"""The state of a listening socket in /proc/net/tcp."""


@dataclass(frozen=True)
class Process:
    pid: int
    ppid: int
    uids: tuple[int, int, int, int]
    """Real, effective, saved and filesystem uid: a process runs as a learner only if all four
    are the learner's."""
    command: str

    @property
    def kind(self) -> str:
        """What the process is to the lab, from its command line."""
        for marker, kind in (("jupyterhub-singleuser", "server"), ("ipykernel_launcher", "kernel"),
                             ("keeper.py", "keeper"), ("valkey-server", "valkey-server"),
                             ("configurable-http-proxy", "proxy"),
                             ("jupyterhub_idle_culler", "culler"), ("bin/jupyterhub", "hub")):
            if marker in self.command:
                return kind
        return "other"


def read(pid: int) -> Process | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
            errors="replace").strip()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    uids = tuple(int(value) for value in fields["Uid"].split())
    return Process(pid, int(fields["PPid"]), uids, command)  # type: ignore[arg-type]


def every() -> dict[int, Process]:
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            process = read(int(entry.name))
            if process is not None:
                found[process.pid] = process
    return found


def tree(root: int, table: dict[int, Process] | None = None) -> list[Process]:
    """The process and all its descendants."""
    table = table if table is not None else every()
    children: dict[int, list[int]] = {}
    for process in table.values():
        children.setdefault(process.ppid, []).append(process.pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid in table:
            found.append(table[pid])
        todo += children.get(pid, [])
    return found


def of_user(uid: int, table: dict[int, Process] | None = None) -> list[Process]:
    table = table if table is not None else every()
    return [process for process in table.values() if uid in process.uids]


def alive(pid: int) -> bool:
    """Whether the process still runs; a zombie (ended, not yet reaped) does not."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def memory_kib(pid: int) -> tuple[int, int]:
    """RSS and PSS (libraries shared fairly among the processes that map them), in KiB."""
    rss = pss = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1])
    except FileNotFoundError:
        pass
    return rss, pss


def descriptors(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except FileNotFoundError:
        return 0


def listening_ports(pid: int) -> list[int]:
    """The TCP ports the process listens on, from its sockets' inodes."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except FileNotFoundError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except FileNotFoundError:
        return []
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            columns = line.split()
            if columns[3] == LISTEN and columns[9] in inodes:
                ports.append(int(columns[1].rsplit(":", 1)[1], 16))
    return sorted(set(ports))


def kill_all(pids: list[int], wait: float = 10.0) -> list[int]:
    """SIGKILLs the processes (each named by its id) and waits for them to go; returns those
    that were still alive when killed."""
    killed = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + wait
    while any(alive(pid) for pid in killed) and time.monotonic() < deadline:
        time.sleep(0.1)
    return killed
