"""LiveExecutor: the module on a real server, through redis-py, and how its refusals read.

Apart from executors.py so that the histories, the schedule and the model load no redis client.
"""

import time

import redis

from trafikey_lab import scripts
from trafikey_lab.errors import LabError, ReplyError
from trafikey_lab.executors import SCRIPTS, Executor, Queue, glob_escaped
from trafikey_lab.live.server import client_of
from trafikey_lab.text import plain


def server_now_ms(client) -> int:
    """The server's clock in ms, from one TIME call: its seconds and microseconds belong
    together, and two calls may straddle a second."""
    seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def error_text(exc: redis.ResponseError) -> str:
    """The server's whole error line, code first, so both executors' refusals read the same.

    redis-py's parser cuts the code off the lines whose code it maps to a class (ERR, OOM,
    NOSCRIPT, READONLY, EXECABORT...) and keeps it in `status_code`; a line with any other
    code (WRONGTYPE, BUSYGROUP) it leaves whole. So the code is put back from `status_code`,
    never guessed from the words that follow: `ERR DEBUG ...` is an ERR, not a DEBUG."""
    message = str(exc)
    code = exc.status_code
    if code and not message.startswith(f"{code} "):
        return f"{code} {message}"
    return message


class LiveExecutor(Executor):
    """The module on a real server: a LabServer, or any redis-py client of a module-loaded one."""

    name = "live"
    where = "on the live server"

    def __init__(self, server):
        self.server = server
        self._scripts = {}

    @property
    def client(self) -> redis.Redis:
        return client_of(self.server)

    def call(self, *args):
        try:
            return self.client.execute_command(*args)
        except redis.ResponseError as exc:
            raise ReplyError(error_text(exc)) from None

    def run_script(self, name, keys, args):
        if name not in SCRIPTS:
            raise ValueError(f"no script named {name!r}")
        if name not in self._scripts:
            self._scripts[name] = self.client.register_script(scripts.source(name))
        try:
            return self._scripts[name](keys=list(keys), args=list(args), client=self.client)
        except redis.ResponseError as exc:
            raise ReplyError(error_text(exc)) from None

    def restart(self) -> str:
        return self.server.restart()

    @property
    def run_id(self) -> str:
        return self.client.info("server")["run_id"]

    def now_ms(self) -> int:
        return server_now_ms(self.client)

    def counters(self) -> dict[str, int]:
        fields = self.client.info("trafikey")
        if not fields:
            raise LabError(
                "the server has no INFO trafikey section, so the trafikey module is not loaded "
                "there: start the lab's server (it loads the module), or load "
                "trafikey_lab/module/trafikey.so into this one with --loadmodule"
            )
        return {name.removeprefix("trafikey_"): int(value) for name, value in fields.items()}

    def wait_until(self, ms: int) -> None:
        while (now := self.now_ms()) <= ms:
            time.sleep(min((ms - now + 1) / 1000, 0.5))

    def dataset(self, queue: Queue | None = None) -> dict:
        """Every key on the server (SCAN, then TYPE and a read per key): other learners' keys
        too on a shared one. With a queue, its keys alone: its sorted sets and the keys SCAN
        MATCH finds under its prefix."""
        out: dict[bytes, tuple[str, object]] = {}
        if queue is None:
            keys = set(self.client.scan_iter(count=1000))
        else:
            keys = {*queue.keys, *self.client.scan_iter(match=glob_escaped(queue.prefix) + b"*",
                                                        count=1000)}
        for key in sorted(keys):
            kind = plain(self.client.type(key))
            if kind == "hash":
                out[key] = ("hash", self.client.hgetall(key))
            elif kind == "zset":
                out[key] = ("zset", self.client.zrange(key, 0, -1, withscores=True))
            elif kind == "string":
                out[key] = ("string", self.client.get(key))
            elif kind != "none":  # a queue's sorted set not yet written is no key
                out[key] = (kind, None)
        return out
