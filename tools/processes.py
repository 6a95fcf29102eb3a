"""What the tools and the tests read of the machine's processes from /proc: who runs what,
under whom, whether it still runs, holding which memory, descriptors and listening sockets.
(make hub-check's rehearsal, tools/sizing.py, tools/binder_check.py and the tests that look
at a kernel's processes from outside.)"""

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
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    uids = tuple(int(value) for value in fields["Uid"].split())
    return Process(pid, int(fields["PPid"]), uids, command_line(pid))  # type: ignore[arg-type]


def command_line(pid: int) -> str:
    """The process's arguments joined by spaces; '' once it is gone."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


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


def children(pid: int) -> list[int]:
    """The processes whose parent is pid and that still run."""
    return [child.pid for child in every().values() if child.ppid == pid and alive(child.pid)]


def lab_processes(kernel_pid: int) -> dict[str, list[int]]:
    """The keepers a kernel started and the valkey-servers they run."""
    keepers = [p for p in children(kernel_pid) if "keeper.py" in command_line(p)]
    servers = [s for k in keepers for s in children(k)]
    return {"keepers": keepers, "servers": servers}


def descriptors(pid: int) -> int:
    """How many descriptors the process holds open; 0 once it is gone."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except FileNotFoundError:
        return 0


def _socket_inodes(pid: int) -> set[str]:
    inodes: set[str] = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return inodes
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def _hex_address(text: str) -> str:
    raw = bytes.fromhex(text)
    if len(raw) == 4:
        return ".".join(str(b) for b in reversed(raw))
    words = [raw[i:i + 4][::-1] for i in range(0, 16, 4)]
    return ":".join(b"".join(words)[i:i + 2].hex() for i in range(0, 16, 2))


def listening_sockets(pid: int) -> list[tuple[str, str, int]]:
    """Every socket the process listens on: ("tcp", address, port) or ("unix", path, 0);
    none once it is gone. Read from the process's own view of the network (its namespace)."""
    inodes = _socket_inodes(pid)
    if not inodes:
        return []
    found = []
    try:
        for table in ("tcp", "tcp6"):
            for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
                columns = line.split()
                local, state, inode = columns[1], columns[3], columns[9]
                if state == LISTEN and inode in inodes:
                    address, port = local.split(":")
                    found.append(("tcp", _hex_address(address), int(port, 16)))
        for line in Path(f"/proc/{pid}/net/unix").read_text().splitlines()[1:]:
            columns = line.split()
            if columns[6] in inodes and len(columns) > 7:
                found.append(("unix", columns[7], 0))
    except FileNotFoundError:
        return []
    return found


def listening_ports(pid: int) -> list[int]:
    """The TCP ports the process listens on."""
    return sorted({port for kind, _, port in listening_sockets(pid) if kind == "tcp"})


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
