"""A learner's notebook seen from outside: a Jupyter kernel driven the way JupyterLab drives it
(cells, widget clicks, the interrupt button), and the processes, sockets and descriptors a
kernel's LabServer holds, read from /proc.
"""

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Reply:
    """What a kernel sent back for one request, as JupyterLab would show it."""

    stdout: str = ""
    stderr: str = ""
    error: str = ""
    """'Name: value' of an exception the request raised, or ''."""
    traceback: str = ""
    updates: list = field(default_factory=list)
    """(model_id, state) of every widget update the request sent."""

    @property
    def text(self) -> str:
        """Everything a learner would read under the cell."""
        return "\n".join((self.stdout, self.stderr, self.error, self.traceback))

    def states(self, model_id: str, key: str = "value") -> list:
        return [state[key] for mid, state in self.updates if mid == model_id and key in state]


class Kernel:
    """One ipykernel, as a notebook tab in JupyterLab has it."""

    def __init__(self, env: dict | None = None):
        import jupyter_client

        self.manager = jupyter_client.KernelManager(kernel_name="python3")
        self.manager.start_kernel(env={**os.environ, **(env or {})}, cwd=str(ROOT))
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=120)
        self._inbox: dict[str, list] = {}
        self._replies: dict[str, Reply] = {}
        self.pid = int(self.run("import os; print(os.getpid())").stdout)

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)

    # -- requests --------------------------------------------------------------------------

    def send(self, code: str) -> str:
        return self.client.execute(code, store_history=False)

    def click(self, model_id: str) -> str:
        """What the browser sends when a learner presses a Button widget."""
        msg = self.client.session.msg("comm_msg", {
            "comm_id": model_id,
            "data": {"method": "custom", "content": {"event": "click"}},
        })
        self.client.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def interrupt(self) -> None:
        """The interrupt button: SIGINT to the kernel process."""
        self.manager.interrupt_kernel()

    def run(self, code: str, timeout: float = 180) -> Reply:
        return self.collect(self.send(code), timeout)

    def json(self, code: str, timeout: float = 180):
        """Runs code whose last line prints one JSON value, and returns that value."""
        reply = self.run(code, timeout)
        assert not reply.error, reply.text
        return json.loads(reply.stdout.strip().splitlines()[-1])

    def collect(self, msg_id: str, timeout: float = 180, until=None) -> Reply:
        """Waits for the kernel to finish the request and returns what it sent. until(reply),
        if given, is checked after each message: once true, collect returns what came so far,
        and a later collect of the same request goes on from there."""
        reply = self._replies.setdefault(msg_id, Reply())
        deadline = time.monotonic() + timeout
        while True:
            pending = self._inbox.pop(msg_id, [])
            for index, msg in enumerate(pending):
                if self._read(msg, reply):
                    del self._replies[msg_id]
                    return reply
                if until is not None and until(reply):
                    self._inbox[msg_id] = pending[index + 1:] + self._inbox.get(msg_id, [])
                    return reply
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"the kernel did not finish within {timeout} s:\n{reply.text}")
            self._pump(min(remaining, 1.0))

    def _pump(self, timeout: float) -> None:
        import queue

        try:
            msg = self.client.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            return
        parent = msg.get("parent_header", {}).get("msg_id")
        if parent:
            self._inbox.setdefault(parent, []).append(msg)

    @staticmethod
    def _read(msg, reply: Reply) -> bool:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            if content["name"] == "stdout":
                reply.stdout += content["text"]
            else:
                reply.stderr += content["text"]
        elif kind == "error":
            reply.error = f"{content['ename']}: {content['evalue']}"
            reply.traceback = ANSI.sub("", "\n".join(content["traceback"]))
        elif kind == "comm_msg" and content["data"].get("method") == "update":
            reply.updates.append((content["comm_id"], content["data"]["state"]))
        elif kind == "status" and content["execution_state"] == "idle":
            return True
        return False


# -- /proc --------------------------------------------------------------------------------


def children(pid: int) -> list[int]:
    """The live processes whose parent is pid."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def lab_processes(kernel_pid: int) -> dict[str, list[int]]:
    """The keepers a kernel started and the valkey-servers they run."""
    keepers = [p for p in children(kernel_pid) if "keeper.py" in command_line(p)]
    servers = [s for k in keepers for s in children(k)]
    return {"keepers": keepers, "servers": servers}


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def open_descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _hex_address(text: str) -> str:
    raw = bytes.fromhex(text)
    if len(raw) == 4:
        return ".".join(str(b) for b in reversed(raw))
    words = [raw[i:i + 4][::-1] for i in range(0, 16, 4)]
    return ":".join(b"".join(words)[i:i + 2].hex() for i in range(0, 16, 2))


def listening_sockets(pid: int) -> list[tuple[str, str, int]]:
    """Every socket the process listens on: ("tcp", address, port) or ("unix", path, 0)."""
    inodes = socket_inodes(pid)
    found = []
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:
                address, port = local.split(":")
                found.append(("tcp", _hex_address(address), int(port, 16)))
    for line in Path(f"/proc/{pid}/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[6] in inodes and len(fields) > 7:
            found.append(("unix", fields[7], 0))
    return found
