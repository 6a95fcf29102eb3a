"""A Jupyter kernel driven from outside the way JupyterLab drives it (cells, widget clicks, the
interrupt button), and the one reader of what a kernel sends back for a request.

`read` folds one kernel message into a `Reply`. Two drivers use it: `Kernel` here (a local
ipykernel through jupyter_client, for the tests and tools/sizing.py) and the hub rehearsal's
KernelTab (a kernel behind JupyterHub, through its websocket: hub/learner.py).
"""

import json
import os
import queue
import re
import time
from collections.abc import Callable
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
    status: str = ""
    """The execute_reply's status ('ok', 'error', 'aborted'); '' until it came, and for a
    driver that reads only the iopub channel."""

    @property
    def text(self) -> str:
        """Everything a learner would read under the cell."""
        return "\n".join((self.stdout, self.stderr, self.error, self.traceback))

    def states(self, model_id: str, key: str = "value") -> list:
        return [state[key] for mid, state in self.updates if mid == model_id and key in state]


def read(message: dict, reply: Reply) -> bool:
    """Adds one message answering the request to its reply; True when it says the kernel went
    idle after the request, which is the last message the request gets on iopub."""
    kind, content = message["msg_type"], message["content"]
    if kind == "stream":
        if content["name"] == "stdout":
            reply.stdout += content["text"]
        else:
            reply.stderr += content["text"]
    elif kind in ("error", "execute_reply"):
        if kind == "execute_reply":
            reply.status = content["status"]
        if "ename" in content:
            reply.error = f"{content['ename']}: {content['evalue']}"
        if content.get("traceback"):
            reply.traceback = ANSI.sub("", "\n".join(content["traceback"]))
    elif kind == "comm_msg" and content["data"].get("method") == "update":
        reply.updates.append((content["comm_id"], content["data"]["state"]))
    elif kind == "status":
        return content["execution_state"] == "idle"
    return False


class Kernel:
    """One local ipykernel, as a notebook tab in JupyterLab has it."""

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
        if reply.error:
            raise AssertionError(f"the code raised, so it printed no JSON value:\n{reply.text}")
        return json.loads(reply.stdout.strip().splitlines()[-1])

    def collect(self, msg_id: str, timeout: float = 180,
                until: Callable[[Reply], bool] | None = None) -> Reply:
        """Waits for the kernel to finish the request and returns what it sent. until(reply),
        if given, is checked after each message: once true, collect returns what came so far,
        and a later collect of the same request goes on from there."""
        reply = self._replies.setdefault(msg_id, Reply())
        deadline = time.monotonic() + timeout
        while True:
            pending = self._inbox.pop(msg_id, [])
            for index, msg in enumerate(pending):
                if read(msg, reply):
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
        try:
            msg = self.client.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            return
        parent = msg.get("parent_header", {}).get("msg_id")
        if parent:
            self._inbox.setdefault(parent, []).append(msg)
