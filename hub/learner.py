"""A learner as the hub sees them, driven from outside for make hub-check: the login page,
a token of their own, the nbgitpuller link, and notebooks run in their server through the
hub's proxy (the Jupyter server's REST API and the kernel websocket, as JupyterLab uses them).

The kernel's messages are read by tools/kernels.py's reader, which the tests' kernel driver
uses too (the rehearsal puts tools/ on the path). Nothing here is privileged: every request
goes to the hub's public address with the learner's own cookies or token, as the learner's
browser would send it.
"""

import http.cookiejar
import json
import queue
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field

import websocket
from kernels import Reply, read

REQUEST_SECONDS = 60
CELL_SECONDS = 300
"""A cell of the course on a busy machine: notebook 04's live cells restart servers."""
SPAWN_SECONDS = 300
PULL_SECONDS = 300
KERNEL_READY_SECONDS = 180
MATPLOTLIB_CACHE = re.compile(
    r"^Matplotlib is building the font cache; this may take a moment\.\s*$")
"""The one line a learner's first figure prints on stderr (their own font cache, once)."""


class LearnerFailed(Exception):
    """What a learner met that a learner should not; the message names the learner."""


class TabClosed(LearnerFailed):
    """The kernel's websocket closed: the server gives up on a kernel that has not answered
    within a minute (a busy machine), and JupyterLab then connects again."""


@dataclass
class CellResult(Reply):
    code: str = ""
    seconds: float = 0.0


@dataclass
class NotebookResult:
    path: str
    seconds: float = 0.0
    cells: list[CellResult] = field(default_factory=list)

    @property
    def failures(self) -> list[str]:
        found = []
        for number, cell in enumerate(self.cells, 1):
            if cell.status != "ok":
                found.append(f"code cell {number}: {cell.error or cell.status}")
            stderr = [line for line in cell.stderr.splitlines()
                      if line.strip() and not MATPLOTLIB_CACHE.match(line)]
            if stderr:
                found.append(f"code cell {number} wrote to stderr: {stderr[:3]}")
        return found


class KernelTab:
    """One kernel with its websocket held open, as a notebook tab in JupyterLab holds it; a
    thread reads every message (and answers the server's pings) and hands each to the
    request it answers."""

    def __init__(self, url: str, token: str, name: str, kernel_id: str, deadline: float):
        self.name = name
        self.kernel_id = kernel_id
        self.waiting: dict[str, queue.Queue] = {}
        self.opened = threading.Event()
        self.closed = threading.Event()
        self.problem: str | None = None
        self.app = websocket.WebSocketApp(
            url, header=[f"Authorization: token {token}"], on_open=lambda _: self.opened.set(),
            on_message=self._message, on_error=self._error, on_close=self._close)
        self.thread = threading.Thread(target=self.app.run_forever,
                                       kwargs={"ping_interval": 0}, daemon=True)
        self.thread.start()
        while not self.opened.wait(0.5):
            if self.closed.is_set() or time.monotonic() > deadline:
                self.close()
                raise TabClosed(f"{name}: the kernel's websocket did not open "
                                f"({self.problem or 'no answer'})")

    def _message(self, _, text: str) -> None:
        message = json.loads(text)
        parent = message.get("parent_header", {}).get("msg_id")
        inbox = self.waiting.get(parent)
        if inbox is not None:
            inbox.put(message)

    def _error(self, _, error) -> None:
        self.problem = repr(error)

    def _close(self, *_) -> None:
        self.closed.set()
        for inbox in list(self.waiting.values()):
            inbox.put(None)

    def request(self, msg_type: str, content: dict, channel: str = "shell") -> str:
        msg_id = uuid.uuid4().hex
        self.waiting[msg_id] = queue.Queue()
        try:
            self.app.send(json.dumps({
                "header": {"msg_id": msg_id, "msg_type": msg_type, "username": self.name,
                           "session": uuid.uuid4().hex, "version": "5.3",
                           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
                "parent_header": {}, "metadata": {}, "content": content,
                "channel": channel, "buffers": [],
            }))
        except websocket.WebSocketConnectionClosedException:
            del self.waiting[msg_id]
            raise TabClosed(f"{self.name}: the kernel's websocket closed "
                            f"({self.problem or 'by the server'})") from None
        return msg_id

    def ready(self, deadline: float) -> None:
        """Waits until the kernel answers a kernel_info request, as JupyterLab does on opening."""
        while True:
            asked = self.request("kernel_info_request", {})
            try:
                answer = self.waiting[asked].get(timeout=5)
            except queue.Empty:
                answer = False
            finally:
                del self.waiting[asked]
            if answer is None:
                raise TabClosed(f"{self.name}: the kernel's websocket closed before the "
                                f"kernel answered")
            if answer:
                return
            if time.monotonic() > deadline:
                raise LearnerFailed(f"{self.name}: the kernel did not answer within "
                                    f"{KERNEL_READY_SECONDS} s")

    def execute(self, code: str, timeout: float = CELL_SECONDS) -> CellResult:
        """Runs one cell and waits for its reply and for the kernel to go idle after it."""
        if self.closed.is_set():
            raise LearnerFailed(f"{self.name}: the kernel's websocket closed "
                                f"({self.problem or 'by the server'})")
        began = time.monotonic()
        result = CellResult(code=code)
        msg_id = self.request("execute_request", {
            "code": code, "silent": False, "store_history": True, "user_expressions": {},
            "allow_stdin": False, "stop_on_error": True})
        inbox = self.waiting[msg_id]
        # The reply comes on the shell channel, the idle status on iopub: either may be last.
        idle = False
        try:
            while not (result.status and idle):
                left = timeout - (time.monotonic() - began)
                try:
                    message = inbox.get(timeout=max(left, 0.01))
                except queue.Empty:
                    raise LearnerFailed(f"{self.name}: a cell did not finish within {timeout:.0f}"
                                        f" s: {code.splitlines()[0][:80]!r}") from None
                if message is None:
                    raise LearnerFailed(f"{self.name}: the kernel's websocket closed during a "
                                        f"cell ({self.problem or 'by the server'})")
                idle = read(message, result) or idle
        finally:
            del self.waiting[msg_id]
        result.seconds = time.monotonic() - began
        return result

    def json(self, code: str, timeout: float = CELL_SECONDS):
        """Runs code whose last line prints one JSON value, and returns that value."""
        result = self.execute(code, timeout)
        if result.status != "ok":
            raise LearnerFailed(f"{self.name}: {result.error or result.status}\n{result.stderr}")
        return json.loads(result.stdout.strip().splitlines()[-1])

    def close(self) -> None:
        self.app.close()
        self.thread.join(10)


class Learner:
    """One learner: an OS account with a password, and what they do through the hub."""

    def __init__(self, hub_url: str, name: str, password: str):
        self.hub_url = hub_url
        self.name = name
        self.password = password
        self.cookies = http.cookiejar.CookieJar()
        self.browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))
        self.token = ""
        self.tabs: list[KernelTab] = []
        self.spawn_seconds = 0.0

    @property
    def server_url(self) -> str:
        return f"{self.hub_url}user/{self.name}/"

    # -- through the login page, as a browser ------------------------------------------------

    def _page(self, path: str, form: dict | None = None):
        data = None if form is None else urllib.parse.urlencode(form).encode()
        return self.browser.open(self.hub_url + path, data=data, timeout=REQUEST_SECONDS)

    def _xsrf(self, page: str, pattern: str) -> str:
        found = re.search(pattern, page)
        if not found:
            raise LearnerFailed(f"{self.name}: the hub's page carries no XSRF token")
        return found.group(1)

    def log_in(self) -> None:
        """The login form, as a browser posts it; the hub then starts the learner's server.
        Waits until the server answers and records how long that took from the login."""
        form = self._page("hub/login").read().decode()
        xsrf = self._xsrf(form, r'name="_xsrf" value="([^"]+)"')
        began = time.monotonic()
        landed = self._page("hub/login", {"username": self.name, "password": self.password,
                                          "_xsrf": xsrf})
        if "/hub/login" in landed.geturl():
            raise LearnerFailed(f"{self.name}: the hub refused the password (PAM)")
        self.token = self._new_token()
        deadline = began + SPAWN_SECONDS
        while time.monotonic() < deadline:
            try:
                if self.api("GET", "api/status") is not None:
                    self.spawn_seconds = time.monotonic() - began
                    return
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.25)
        raise LearnerFailed(f"{self.name}: the server did not answer within {SPAWN_SECONDS} s "
                            f"of the login")

    def _new_token(self) -> str:
        """A token of the learner's own, asked for as the hub's token page asks for one."""
        page = self._page("hub/token").read().decode()
        xsrf = self._xsrf(page, r'xsrf_token: "([^"]+)"')
        request = urllib.request.Request(
            f"{self.hub_url}hub/api/users/{self.name}/tokens", method="POST",
            data=json.dumps({"note": "make hub-check", "expires_in": 3600}).encode(),
            headers={"X-XSRFToken": xsrf, "Content-Type": "application/json"})
        with self.browser.open(request, timeout=REQUEST_SECONDS) as answer:
            return json.loads(answer.read())["token"]

    # -- the learner's server, with their token -------------------------------------------

    def api(self, method: str, path: str, body: object = None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.server_url + path, data=data, method=method,
                                         headers={"Authorization": f"token {self.token}"})
        if data is not None:
            request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=REQUEST_SECONDS) as answer:
            if "/hub/" in answer.geturl():
                raise ValueError("the hub answered for the server: it is not running")
            text = answer.read()
        return json.loads(text) if text else {}

    def pull(self, link: str) -> float:
        """Follows the course link as a browser does (the hub sends the learner to their
        server's git-pull page), then runs the pull that page asks its server for; returns
        how long the pull took."""
        landed = self.browser.open(link, timeout=REQUEST_SECONDS)
        if f"/user/{self.name}/git-pull" not in landed.geturl():
            raise LearnerFailed(f"{self.name}: the course link led to {landed.geturl()}, not "
                                f"to their server's git-pull page")
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(link).query))
        began = time.monotonic()
        api = self.server_url + "git-pull/api?" + urllib.parse.urlencode(
            {"repo": query["repo"], "branch": query["branch"], "targetpath": query["targetPath"]})
        request = urllib.request.Request(api, headers={"Authorization": f"token {self.token}"})
        phase, said = "", ""
        with urllib.request.urlopen(request, timeout=PULL_SECONDS) as events:
            for raw in events:
                line = raw.decode().strip()
                if line.startswith("data:"):
                    event = json.loads(line[5:])
                    phase = event.get("phase", phase)
                    said = event.get("message") or event.get("output") or said
        if phase != "finished":
            raise LearnerFailed(f"{self.name}: nbgitpuller ended in {phase!r}: {said[-500:]}")
        return time.monotonic() - began

    def open_notebook(self, path: str) -> KernelTab:
        """A session on the notebook (its kernel starts in the notebook's folder, as
        JupyterLab's does) and its kernel's websocket, held open like a tab; connected again,
        as JupyterLab does, when the server drops a kernel that was slow to answer."""
        session = self.api("POST", "api/sessions", {
            "path": path, "name": path.rsplit("/", 1)[-1], "type": "notebook",
            "kernel": {"name": "python3"}})
        kernel = session["kernel"]["id"]
        deadline = time.monotonic() + KERNEL_READY_SECONDS
        while True:
            ws = self.server_url.replace("http", "ws", 1) + \
                f"api/kernels/{kernel}/channels?session_id={uuid.uuid4().hex}"
            tab = None
            try:
                tab = KernelTab(ws, self.token, self.name, kernel, deadline)
                tab.ready(deadline)
                self.tabs.append(tab)
                return tab
            except TabClosed as closed:
                if tab is not None:
                    tab.close()
                if time.monotonic() > deadline:
                    raise LearnerFailed(f"{self.name}: the kernel for {path} did not answer "
                                        f"within {KERNEL_READY_SECONDS} s ({closed})") from None
                time.sleep(2)

    def run_notebook(self, path: str) -> tuple[KernelTab, NotebookResult]:
        """Every code cell of the learner's own copy of the notebook, in order, in a new kernel,
        as Run All does; stops at the first cell that fails."""
        began = time.monotonic()
        notebook = self.api("GET", f"api/contents/{urllib.parse.quote(path)}?content=1")
        tab = self.open_notebook(path)
        result = NotebookResult(path)
        for cell in notebook["content"]["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            result.cells.append(tab.execute(source))
            if result.cells[-1].status != "ok":
                break
        result.seconds = time.monotonic() - began
        return tab, result

    def close_tabs(self) -> None:
        """The learner closes their notebooks' tabs: the kernels stay, as in JupyterLab."""
        for tab in self.tabs:
            tab.close()
        self.tabs.clear()
