"""make hub-check: a rehearsal, on this machine, of a workshop on the JupyterHub set-up.

    make hub-check [HUB_LEARNERS=5]      as root; HUB_LEARNERS=30 for the sizing run

What `make hub` does (hub/workshop.py), on a scratch prefix and on loopback, then a room:

 1. the shared environment built from nothing with Debian's /usr/bin/python3 and
    constraints.txt, the proxy with `npm ci`, the course repository;
 2. the hub started; N learners added through its API (OS users, homes 700), passwords set;
 3. all N log in through the login page at once (PAM), which spawns their servers;
 4. all follow the nbgitpuller link at once, which pulls the course into their homes;
 5. all run notebook 00, then notebook 04, in their own servers through the hub's proxy at
    once (REST and the kernel websocket, with each learner's own token);
 6. each learner's kernels, keepers and valkey-servers: under their server, all as them;
    each server on the port of its learner's uid, each kernel on Unix sockets in their home;
 7. from each learner's own kernel, what another learner and the hub have: homes,
    notebooks, scratch folders, valkey-servers (NOAUTH), tokens, the hub's database and
    secrets, the shared environment (read-only); through the proxy, another's server;
 8. one learner in Chromium: the course link, the login page, JupyterLab, notebook 04 run
    and Run live pressed;
 9. the idle culler, with a short timeout here only: every learner but one closes their
    tabs and leaves; the one left keeps running cells across the timeout and keeps their
    server; the others' servers go, with their kernels, valkey-servers and scratch folders;
10. the hub stopped and the learners removed: no process, user, home or folder is left.

Until step 9 every learner keeps their notebooks' tabs open (their websockets, and the
requests an open JupyterLab page makes), as a room does, so the rehearsal's own waits never
count as leaving. It prints sizing figures on the way: memory, descriptors, spawn and run
times. Whatever happens, the hub, the learners' processes, accounts and homes and the scratch
prefix are removed. Exit status 0 only when every check passed.
"""

import argparse
import contextlib
import functools
import json
import os
import pwd
import random
import re
import shutil
import signal
import statistics
import string
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tools"))

import chromium  # noqa: E402
import processes  # noqa: E402
import progress  # noqa: E402
import workshop  # noqa: E402
from learner import Learner, LearnerFailed  # noqa: E402
from settings import COURSE_FOLDER, HubSettings, server_port  # noqa: E402

NOTEBOOKS = {number: next((REPO / "notebooks").glob(f"{number}_*.ipynb")).name
             for number in ("00", "04")}
LEARNER_COMMENT = "trafikey lab learner"
NAME_PREFIX = "tkhub"
STALE_NAME = re.compile(rf"^{NAME_PREFIX}[a-z]{{3}}\d{{2,3}}$")
# The culler, for the rehearsal only: short enough to watch, and still twice the activity
# interval, which settings.py requires of every timeout.
ACTIVITY_INTERVAL = 10
CULL_TIMEOUT = 40
CULL_EVERY = 5
WORK_EVERY = 5
"""Seconds between two cells the working learner runs while the others are culled."""
PAGE_POLLS_EVERY = 5
"""Seconds between two requests of a learner's open JupyterLab page (it polls its sessions
and kernels), which the proxy counts as activity."""
GONE_SECONDS = 30
"""For a culled server's processes and folders to be gone after the hub says it stopped."""


class RehearsalFailed(Exception):
    """A check of the rehearsal failed; the message says which and what was seen."""


@dataclass
class Work:
    """What the learner who stays does while the others are culled: cells, and any failure."""

    cells: int = 0
    failed: str = ""
    stop: threading.Event = field(default_factory=threading.Event)


say = functools.partial(progress.say, "hub-check")
step = functools.partial(progress.step, "hub-check")


def spread(values: list[float]) -> str:
    values = sorted(values)
    return (f"fastest {values[0]:.1f} s, median {statistics.median(values):.1f} s, "
            f"slowest {values[-1]:.1f} s")


def at_once(function, items: list, workers: int | None = None) -> list:
    """function(item) for every item at the same time; the first failure is raised."""
    with ThreadPoolExecutor(max_workers=workers or len(items)) as pool:
        return list(pool.map(function, items))


# The probe each learner's own kernel runs against another learner and the hub: every
# attempt should be refused, and the same attempts on the learner's own things succeed.
PROBE = r'''
import json, os, socket
targets = json.loads(%r)

def attempt(path):
    try:
        if os.path.isdir(path):
            os.listdir(path)
            return "listed"
        with open(path, "rb") as handle:
            handle.read(1)
        return "read"
    except PermissionError:
        return "denied"
    except FileNotFoundError:
        return "missing"

def write(folder):
    try:
        with open(os.path.join(folder, "hub-check-was-here"), "w"):
            pass
        return "written"
    except PermissionError:
        return "denied"

def ping(port):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"PING\r\n")
        return sock.makefile("rb").readline().decode().strip()

report = {"theirs": {path: attempt(path) for path in targets["paths"]},
          "servers": {str(port): ping(port) for port in targets["ports"]},
          "environment": write(targets["environment"]),
          "own": {path: attempt(path) for path in targets["own"]},
          "own_server": bool(course.server.client.ping())}
print(json.dumps(report))
'''


class Rehearsal:
    def __init__(self, count: int):
        self.count = count
        self.scratch = Path(tempfile.mkdtemp(prefix="trafikey-hub-check-"))
        os.chmod(self.scratch, 0o755)  # the learners read the environment and the course in it
        self.settings = HubSettings(
            prefix=self.scratch, port=workshop.free_port(), hub_port=workshop.free_port(),
            proxy_api_port=workshop.free_port(), cull_timeout=CULL_TIMEOUT,
            cull_every=CULL_EVERY, activity_interval=ACTIVITY_INTERVAL, rehearsal=True).check()
        self.hub = workshop.Hub(self.settings, log=self.scratch / "jupyterhub.log")
        tag = "".join(random.choice(string.ascii_lowercase) for _ in range(3))
        self.names = [f"{NAME_PREFIX}{tag}{number:02d}" for number in range(1, count + 1)]
        self.created: list[str] = []
        self.uids: dict[str, int] = {}
        self.learners: list[Learner] = []
        self.tabs: dict[str, dict] = {}
        self.scratch_folders: dict[str, set[Path]] = {}
        self.figures: list[str] = []
        self.present: set[str] = set()
        self.last_seen: dict[str, float] = {}
        self.longest_gap: dict[str, float] = {}
        self.leaving = threading.Event()

    # -- 1 and 2: the set-up and the learners ---------------------------------------------

    def set_up(self) -> None:
        began = time.monotonic()
        workshop.build_environment(self.settings, fresh=True)
        say(f"  the shared environment in {time.monotonic() - began:.0f} s "
            f"({self.settings.env}, from {workshop.DEBIAN_PYTHON})")
        began = time.monotonic()
        workshop.install_proxy(self.settings)
        say(f"  configurable-http-proxy in {time.monotonic() - began:.0f} s")
        say(f"  the course repository at {workshop.publish_course(self.settings)}")
        workshop.prepare_state(self.settings)

    def start_hub(self) -> None:
        began = time.monotonic()
        self.hub.start()
        say(f"  JupyterHub answers at {self.settings.url} after "
            f"{time.monotonic() - began:.1f} s")
        login = urllib.request.urlopen(self.settings.url + "hub/login", timeout=60).read().decode()
        link = "/" + self.settings.course_path()
        if link.replace("&", "&amp;") not in login:
            raise RehearsalFailed("the hub's login page does not give the course link")
        say("  the login page gives the course link")

    def add_learners(self) -> None:
        began = time.monotonic()
        self.created = list(self.names)  # removed afterwards even if the call fails half-way
        passwords = workshop.create_learners(self.hub, self.names)
        for name in self.names:
            entry = pwd.getpwnam(name)
            self.uids[name] = entry.pw_uid
            if entry.pw_gecos != LEARNER_COMMENT:
                raise RehearsalFailed(f"{name} was not made by the hub's add_user_cmd")
        self.learners = [Learner(self.settings.url, name, passwords[name]) for name in self.names]
        say(f"  {self.count} learners added through the hub in {time.monotonic() - began:.1f} s"
            f" (OS users, homes 700): {', '.join(self.names[:3])}...")

    # -- 3 to 5: the room -----------------------------------------------------------------

    def open_page(self, learner: Learner) -> None:
        """While the learner is present, their JupyterLab page polls their server; when each
        poll was answered is what the culler's check measures idleness from."""
        while not self.leaving.wait(PAGE_POLLS_EVERY):
            if learner.name in self.present:
                try:
                    learner.api("GET", "api/sessions")
                except Exception:
                    continue  # a server that is gone is the culler's check's business
                now = time.monotonic()
                gap = now - self.last_seen[learner.name]
                self.longest_gap[learner.name] = max(self.longest_gap.get(learner.name, 0), gap)
                self.last_seen[learner.name] = now

    def log_in(self) -> None:
        began = time.monotonic()
        at_once(lambda learner: learner.log_in(), self.learners)
        self.present = set(self.names)
        for learner in self.learners:
            self.last_seen[learner.name] = time.monotonic()
            threading.Thread(target=self.open_page, args=(learner,), daemon=True).start()
        wall = time.monotonic() - began
        spawns = [learner.spawn_seconds for learner in self.learners]
        self.figures.append(f"spawn, {self.count} at once: all ready after {wall:.1f} s; per "
                            f"learner, login to server answering: {spread(spawns)}")
        say("  " + self.figures[-1])

    def pull(self) -> None:
        began = time.monotonic()
        pulls = at_once(lambda learner: learner.pull(self.settings.course_link()), self.learners)
        wall = time.monotonic() - began
        self.figures.append(f"nbgitpuller, {self.count} at once: all pulled after {wall:.1f} s "
                            f"({spread(pulls)})")
        say("  " + self.figures[-1])
        home = Path(pwd.getpwnam(self.names[0]).pw_dir)
        if not (home / COURSE_FOLDER / "notebooks" / NOTEBOOKS["00"]).is_file():
            raise RehearsalFailed(f"the course is not in {home / COURSE_FOLDER}")

    def run_notebook(self, number: str) -> None:
        path = f"{COURSE_FOLDER}/notebooks/{NOTEBOOKS[number]}"

        def run(learner: Learner):
            tab, result = learner.run_notebook(path)
            self.tabs.setdefault(learner.name, {})[number] = tab
            if result.failures:
                raise LearnerFailed(f"{learner.name}: {path}: " + "; ".join(result.failures))
            return result.seconds

        began = time.monotonic()
        seconds = at_once(run, self.learners)
        wall = time.monotonic() - began
        self.figures.append(f"notebook {number}, {self.count} at once: all done after "
                            f"{wall:.1f} s; per learner: {spread(seconds)}")
        say("  " + self.figures[-1])

    # -- sizing -----------------------------------------------------------------------------

    def server_pid(self, name: str) -> int:
        user = self.hub.user(name)
        server = (user or {}).get("servers", {}).get("")
        if not server or not server.get("ready"):
            raise RehearsalFailed(f"{name}'s server is not running")
        return int(server["state"]["pid"])

    def measure(self, when: str) -> None:
        """Memory (RSS, and PSS, which shares libraries fairly) and descriptors of every
        learner's server with all it started, and of the hub, its proxy and the culler."""
        table = processes.every()
        rss, pss, fds = [], [], []
        by_kind: dict[str, list[int]] = {}
        for name in self.names:
            held = processes.tree(self.server_pid(name), table)
            memory = [processes.memory_kib(process.pid) for process in held]
            rss.append(sum(figures[0] for figures in memory) / 1024)
            pss.append(sum(figures[1] for figures in memory) / 1024)
            fds.append(sum(processes.descriptors(process.pid) for process in held))
            for process, figures in zip(held, memory, strict=True):
                by_kind.setdefault(process.kind, []).append(figures[0])
        hub_side = {process.kind: process.pid for process in
                    processes.tree(self.hub.pid, table)
                    if process.kind in ("hub", "proxy", "culler")}
        hub_mib = {kind: processes.memory_kib(pid)[0] / 1024 for kind, pid in hub_side.items()}
        hub_fds = sum(processes.descriptors(pid) for pid in hub_side.values())
        parts = ", ".join(f"{kind} {statistics.median(values) / 1024:.0f}"
                          for kind, values in sorted(by_kind.items()))
        self.figures.append(
            f"memory {when}, per learner: RSS median {statistics.median(rss):.0f} MiB "
            f"(max {max(rss):.0f}), PSS median {statistics.median(pss):.0f} MiB, descriptors "
            f"median {statistics.median(fds):.0f}; by process, median MiB RSS: {parts}; all "
            f"{self.count} together: RSS {sum(rss):.0f} MiB, PSS {sum(pss):.0f} MiB, "
            f"{sum(fds)} descriptors; the hub {hub_mib.get('hub', 0):.0f} MiB, the proxy "
            f"{hub_mib.get('proxy', 0):.0f}, the culler {hub_mib.get('culler', 0):.0f}, "
            f"{hub_fds} descriptors between them; load average {os.getloadavg()[0]:.1f}")
        say("  " + self.figures[-1])

    # -- 6: who runs what --------------------------------------------------------------------

    def check_processes(self) -> None:
        table = processes.every()
        for name in self.names:
            uid = self.uids[name]
            found = processes.tree(self.server_pid(name), table)
            wrong = [f"{process.kind} {process.pid} as uids {process.uids}" for process in found
                     if set(process.uids) != {uid}]
            if wrong:
                raise RehearsalFailed(f"{name}'s server runs processes not as {name}: {wrong}")
            counts = {kind: sum(process.kind == kind for process in found)
                      for kind in ("server", "kernel", "keeper", "valkey-server")}
            if counts != {"server": 1, "kernel": 2, "keeper": 2, "valkey-server": 2}:
                raise RehearsalFailed(f"{name}'s server holds {counts}: one server and, for "
                                      f"notebooks 00 and 04, two of each of the others")
            server = next(process for process in found if process.kind == "server")
            if server_port(uid) not in processes.listening_ports(server.pid):
                raise RehearsalFailed(f"{name}'s server does not listen on {server_port(uid)}, "
                                      f"the port of their uid")
            home = pwd.getpwnam(name).pw_dir
            for kernel in (process for process in found if process.kind == "kernel"):
                channels = self.kernel_channels(kernel)
                if channels.get("transport") != "ipc" or \
                        not str(channels.get("ip", "")).startswith(home + "/"):
                    raise RehearsalFailed(
                        f"{name}'s kernel {kernel.pid} talks to its server over "
                        f"{channels.get('transport')} at {channels.get('ip')}, not over Unix "
                        f"sockets in {home}")
            outside = [process for process in processes.of_user(uid, table)
                       if process not in found]
            if outside:
                raise RehearsalFailed(f"{name} runs processes outside their server: "
                                      f"{[process.command[:80] for process in outside]}")
            self.scratch_folders[name] = self.folders_of(uid)
            if len(self.scratch_folders[name]) != 2:
                raise RehearsalFailed(f"{name} has {len(self.scratch_folders[name])} scratch "
                                      f"folders, not one per kernel")
        say(f"  every learner's kernels, keepers and valkey-servers run under their own "
            f"server, all as that learner (uid {self.uids[self.names[0]]}...); each server on "
            f"the port of its learner's uid, each kernel's channels Unix sockets in its "
            f"learner's home")

    @staticmethod
    def kernel_channels(kernel: processes.Process) -> dict:
        """The kernel's connection file (named by its -f argument), as its server wrote it."""
        words = kernel.command.split()
        try:
            return json.loads(Path(words[words.index("-f") + 1]).read_text())
        except (ValueError, IndexError, OSError):
            return {}

    @staticmethod
    def folders_of(uid: int) -> set[Path]:
        root = Path(tempfile.gettempdir())
        return {path for path in root.glob("trafikey-lab-*")
                if path.is_dir() and path.stat().st_uid == uid}

    # -- 7: what no learner may reach ----------------------------------------------------------

    def check_isolation(self) -> None:
        table = processes.every()
        hub_pids = {process.kind: process.pid for process in processes.tree(
            self.hub.pid, table) if process.kind in ("hub", "proxy", "culler")}
        hub_paths = [str(path) for path in self.settings.secrets if path.exists()] + \
            [f"/proc/{pid}/environ" for pid in hub_pids.values()]

        def probe(index: int) -> None:
            learner, other = self.learners[index], self.learners[(index + 1) % self.count]
            home = pwd.getpwnam(other.name).pw_dir
            mine = pwd.getpwnam(learner.name).pw_dir
            their_tree = processes.tree(self.server_pid(other.name))
            ports = [port for process in their_tree if process.kind == "valkey-server"
                     for port in processes.listening_ports(process.pid)]
            theirs = [home, f"{home}/{COURSE_FOLDER}/notebooks/{NOTEBOOKS['00']}",
                      *(str(folder) for folder in self.scratch_folders[other.name]),
                      *(f"/proc/{process.pid}/environ" for process in their_tree
                        if process.kind in ("server", "kernel"))]
            targets = {"paths": theirs + hub_paths, "ports": ports,
                       "environment": str(self.environment_site_packages()),
                       "own": [mine, f"{mine}/{COURSE_FOLDER}/notebooks/{NOTEBOOKS['00']}"]}
            report = self.tabs[learner.name]["00"].json(PROBE % json.dumps(targets))
            opened = {path: answer for path, answer in report["theirs"].items()
                      if answer != "denied"}
            if opened:
                raise RehearsalFailed(f"{learner.name} reached what is not theirs: {opened}")
            answered = {port: reply for port, reply in report["servers"].items()
                        if not reply.startswith("-NOAUTH")}
            if answered or not ports:
                raise RehearsalFailed(f"{other.name}'s valkey-servers {ports} answered "
                                      f"{learner.name} without their password: {answered}")
            if report["environment"] != "denied":
                raise RehearsalFailed(f"{learner.name} could write into the shared environment")
            if set(report["own"].values()) != {"listed", "read"} or not report["own_server"]:
                raise RehearsalFailed(f"{learner.name}'s own home, notebook or server did not "
                                      f"answer them (so the refusals prove nothing): {report}")
            try:
                urllib.request.urlopen(urllib.request.Request(
                    f"{other.server_url}api/contents/{COURSE_FOLDER}/notebooks",
                    headers={"Authorization": f"token {learner.token}"}), timeout=60)
                raise RehearsalFailed(f"{learner.name}'s token opened {other.name}'s notebooks "
                                      f"through the hub")
            except urllib.error.HTTPError as refused:
                if refused.code != 403:
                    raise RehearsalFailed(f"{learner.name}'s token on {other.name}'s server: "
                                          f"{refused.code}, not 403") from None

        at_once(probe, list(range(self.count)))
        say(f"  from each learner's kernel, the next learner's home, notebook, scratch "
            f"folders, kernel and server environment (their tokens): denied; their "
            f"valkey-servers: NOAUTH; their server through the proxy with the learner's token: "
            f"403; the hub's {len(self.settings.secrets)} secret paths and its, the proxy's and "
            f"the culler's environment: denied; the shared environment: read-only")

    def environment_site_packages(self) -> Path:
        return next((self.settings.env / "lib").glob("python3*/site-packages"))

    # -- 8: Run live in the browser ----------------------------------------------------------

    def browser(self) -> None:
        # Imported here, not at the top: only this step needs Playwright.
        from lab_pages.lab import JupyterLab
        from lab_pages.notebook import NotebookRun
        from lab_pages.widgets import LeaseAcrossRestartView

        class HubLab(JupyterLab):
            """The learner's server behind the hub: the page is let in by the cookies of the
            login, not by a token in the address; the REST calls carry the token."""

            def url(self, path: str, **query: str) -> str:
                return self.base_url + path + ("?" + urllib.parse.urlencode(query)
                                               if query else "")

        path, why = chromium.find_chromium()
        if path is None:
            raise RehearsalFailed(why)
        learner = self.learners[0]
        with chromium.launched(path) as browser:
            context = chromium.new_context(browser)
            page = context.new_page()
            page.goto(self.settings.course_link())
            page.fill("#username_input", learner.name)
            page.fill("#password_input", learner.password)
            page.click("#login_submit")
            opened = f"/user/{learner.name}/lab/tree/{COURSE_FOLDER}/notebooks/" \
                     f"{NOTEBOOKS['00']}"
            page.wait_for_url(re.compile(".*" + re.escape(opened)),
                              timeout=chromium.ACTION_TIMEOUT)
            page.wait_for_selector(".jp-LabShell", timeout=chromium.ACTION_TIMEOUT)
            say(f"  {learner.name}: the course link, the login page, then JupyterLab at "
                f"{opened}")
            lab = HubLab.attach(learner.server_url, token=learner.token)
            run = NotebookRun.open(lab, context, NOTEBOOKS["04"].removesuffix(".ipynb"),
                                   folder=f"{COURSE_FOLDER}/notebooks")
            try:
                run.run_all()
                problems = run.problems()
                if problems:
                    raise RehearsalFailed(f"notebook 04 in the browser: {problems}")
                lease = LeaseAcrossRestartView(run.page)
                lease.run_live.click()
                status = lease.wait_for_agreement()
                run.screenshot("hub-run-live")
            finally:
                run.close()
            say(f"  notebook 04 ran in the browser; Run live: {status}")

    # -- 9: the culler -----------------------------------------------------------------------

    def check_culler(self) -> None:
        working, leaving = self.learners[1], [self.learners[0], *self.learners[2:]]
        before = {learner.name: self.server_pid(learner.name) for learner in self.learners}
        held = {learner.name: [process.pid for process in processes.tree(before[learner.name])]
                for learner in leaving}
        # Everyone closes JupyterLab; the one who stays keeps only their kernel busy.
        self.present.clear()
        left: dict[str, float] = {}

        def leave(learner: Learner) -> None:
            learner.close_tabs()
            left[learner.name] = time.monotonic()

        at_once(leave, leaving)
        idle_since = time.monotonic()
        work = Work()
        worker = threading.Thread(target=self.keep_working, args=(working, work), daemon=True)
        worker.start()
        deadline = idle_since + CULL_TIMEOUT + 3 * ACTIVITY_INTERVAL + 3 * CULL_EVERY + 60
        try:
            culled = self.watch_culls(held, work, idle_since, deadline)
        finally:
            work.stop.set()
            worker.join(60)
        worked = time.monotonic() - idle_since
        if work.failed:
            raise RehearsalFailed(f"{working.name} stopped working: {work.failed}")
        missing = [learner.name for learner in leaving if learner.name not in culled]
        if missing:
            raise RehearsalFailed(f"the culler did not stop the servers of {missing} within "
                                  f"{deadline - idle_since:.0f} s of their leaving")
        # A learner's last activity came after their page's last answered poll, and no later
        # than their leaving: a server stopped within the timeout of that poll was culled early.
        early = {name: round(at - self.last_seen[name]) for name, at in culled.items()
                 if at - self.last_seen[name] < CULL_TIMEOUT}
        if early:
            raise RehearsalFailed(f"the culler stopped servers sooner after their learners' last "
                                  f"activity than its timeout of {CULL_TIMEOUT} s: {early}")
        if self.server_pid(working.name) != before[working.name]:
            raise RehearsalFailed(f"{working.name}'s server was replaced while they worked")
        left_over = self.left_by_culled(held)
        if left_over:
            raise RehearsalFailed(f"culled servers left processes or scratch folders: {left_over}")
        gaps = [self.longest_gap.get(learner.name, 0) for learner in leaving]
        after = [culled[name] - left[name] for name in culled]
        say(f"  {len(leaving)} learner(s) left and were culled {spread(after)} after leaving "
            f"(timeout {CULL_TIMEOUT} s, activity reported every {ACTIVITY_INTERVAL} s, culler "
            f"every {CULL_EVERY} s; their pages polled every {PAGE_POLLS_EVERY} s until then, "
            f"longest gap {max(gaps):.0f} s), with their kernels, keepers, valkey-servers and "
            f"scratch folders; {working.name} ran {work.cells} cells over {worked:.0f} s, past the "
            f"timeout, and kept their server, kernel and data")

    def keep_working(self, working: Learner, work: Work) -> None:
        """The learner who stays runs a cell every WORK_EVERY seconds until work.stop; each
        must read the count of cells run so far, or their kernel or data was lost."""
        tab = self.tabs[working.name]["00"]
        while not work.stop.is_set():
            try:
                count = tab.json("print(course.server.client.incr('hub-check:work'))")
            except Exception as failure:
                work.failed = repr(failure)
                return
            work.cells += 1
            if count != work.cells:
                work.failed = f"the counter read {count} after {work.cells} cells"
                return
            work.stop.wait(WORK_EVERY)

    def watch_culls(self, held: dict[str, list[int]], work: Work, idle_since: float,
                    deadline: float) -> dict[str, float]:
        """When each leaving learner's server was culled (seen gone from the hub), watched
        until all were and the timeout has surely passed, the work failed, or the deadline."""
        long_enough = idle_since + CULL_TIMEOUT + 2 * ACTIVITY_INTERVAL + 2 * CULL_EVERY
        culled: dict[str, float] = {}
        while time.monotonic() < deadline:
            # Processes first, then the hub: a process found gone while the hub still
            # counts the server as running, not stopping, was not culled.
            ended = {name: [pid for pid in pids if not processes.alive(pid)]
                     for name, pids in held.items() if name not in culled}
            servers = {user["name"]: user.get("servers", {}).get("")
                       for user in self.hub.api("GET", "users")}
            for name, gone in ended.items():
                server = servers.get(name)
                if not server:
                    culled[name] = time.monotonic()
                elif gone and not server.get("pending"):
                    raise RehearsalFailed(f"{name}'s processes {gone} ended while their "
                                          f"server still ran: not the culler's doing")
            if work.failed or (len(culled) == len(held) and time.monotonic() > long_enough):
                break
            time.sleep(1)
        return culled

    def left_by_culled(self, held: dict[str, list[int]]) -> dict[str, list]:
        """The processes and scratch folders of culled servers still there after
        GONE_SECONDS (a keeper may take a moment to stop its valkey-server and tidy up)."""
        left_over: dict[str, list] = {}
        settle = time.monotonic() + GONE_SECONDS
        while time.monotonic() < settle:
            left_over = {name: [pid for pid in pids if processes.alive(pid)]
                         for name, pids in held.items()}
            left_over.update({f"{name} folders": [str(folder) for folder in
                                                  self.scratch_folders[name] if folder.exists()]
                              for name in held})
            left_over = {name: found for name, found in left_over.items() if found}
            if not left_over:
                break
            time.sleep(0.5)
        return left_over

    # -- 10: the end ----------------------------------------------------------------------------

    def stop(self) -> None:
        self.leaving.set()
        hub_side = [process.pid for process in processes.tree(self.hub.pid)]
        for learner in self.learners:
            learner.close_tabs()
        took = self.hub.stop()
        self.figures.append(f"the hub stopped on SIGTERM in {took:.1f} s")
        say("  " + self.figures[-1])
        # A kernel notices within a few seconds that its server is gone and stops, and its
        # keeper then stops its valkey-server and removes its scratch folder.
        stopped = time.monotonic()
        settle = stopped + GONE_SECONDS
        while True:
            left = [pid for pid in hub_side if processes.alive(pid)]
            left += [process.pid for uid in self.uids.values()
                     for process in processes.of_user(uid) if processes.alive(process.pid)]
            if not left or time.monotonic() > settle:
                break
            time.sleep(0.5)
        if left:
            table = processes.every()
            raise RehearsalFailed(f"processes outlived the hub by {GONE_SECONDS} s: "
                                  f"{[table[pid].command[:80] for pid in left if pid in table]}")
        say(f"  the hub's processes and every learner's were gone "
            f"{time.monotonic() - stopped:.1f} s after the hub exited")
        for name in self.created:
            workshop.remove_learner(name)
        homes = [f"/home/{name}" for name in self.created if Path(f"/home/{name}").exists()]
        users = [name for name in self.created if self.user_exists(name)]
        folders = [str(folder) for uid in self.uids.values() for folder in self.folders_of(uid)]
        self.created = []
        shutil.rmtree(self.scratch)
        if users or homes or folders or self.scratch.exists():
            raise RehearsalFailed(f"left behind: users {users}, homes {homes}, folders "
                                  f"{folders}, prefix {self.scratch.exists()}")
        say("  no process, user, home, scratch folder or prefix is left")

    @staticmethod
    def user_exists(name: str) -> bool:
        try:
            pwd.getpwnam(name)
            return True
        except KeyError:
            return False

    # -- whatever happened --------------------------------------------------------------------

    def clean_up(self) -> None:
        self.leaving.set()
        for learner in self.learners:
            # A tab that fails to close must not keep the rest of the clean-up from running.
            with contextlib.suppress(Exception):
                learner.close_tabs()
        if self.hub.running:
            self.hub.stop()
        leftovers = [process.pid for uid in self.uids.values()
                     for process in processes.of_user(uid)]
        if processes.kill_all(leftovers):
            say(f"killed {len(leftovers)} process(es) the learners left running")
        for name in self.created:
            try:
                workshop.remove_learner(name)
            except workshop.SetupFailed as failure:
                say(f"could not remove {name}: {failure}")
        for uid in self.uids.values():
            for folder in self.folders_of(uid):
                shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def show_log(self) -> None:
        tail = self.hub.log_tail(60)
        if tail:
            say("the last lines of JupyterHub's log" + tail)


def remove_stale_learners() -> None:
    """Learners a rehearsal that was killed outright left behind (its names, the hub's mark)."""
    for entry in pwd.getpwall():
        if STALE_NAME.match(entry.pw_name) and entry.pw_gecos == LEARNER_COMMENT:
            processes.kill_all([process.pid for process in processes.of_user(entry.pw_uid)])
            workshop.remove_learner(entry.pw_name)
            say(f"removed {entry.pw_name}, left by an earlier rehearsal")


def lock_drift() -> list[str]:
    """Packages whose version in .venv (what make test ran with) differs from the lock."""
    from importlib import metadata

    from packaging.utils import canonicalize_name

    pins = {}
    for line in workshop.CONSTRAINTS.read_text().splitlines():
        requirement = line.split("#", 1)[0].split(";", 1)[0].strip()
        if "==" in requirement and "python_full_version ==" not in line:
            name, version = requirement.split("==", 1)
            pins[canonicalize_name(name)] = version
    drift = []
    for name, version in sorted(pins.items()):
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        if installed != version:
            drift.append(f"{name} {installed} (lock {version})")
    return drift


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hub/rehearsal.py", description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=5)
    args = parser.parse_args(argv)
    if args.learners < 2:
        say("FAILED: the rehearsal needs at least 2 learners (one works while another leaves)")
        return 1
    started = time.monotonic()
    # SIGTERM (a CI timeout, say) cleans up as Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        workshop.require_root()
    except workshop.SetupFailed as failure:
        say(f"FAILED: {failure}")
        return 1
    os.umask(0o022)
    drift = lock_drift()
    if drift:
        say(f"note: make test ran with versions the lock does not have (the rehearsal installs "
            f"the lock's): {', '.join(drift[:8])}; `make lock` records them")
    remove_stale_learners()
    rehearsal = Rehearsal(args.learners)
    say(f"{args.learners} learners; scratch prefix {rehearsal.scratch}; "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    try:
        with step("1. the shared environment, the proxy and the course repository"):
            rehearsal.set_up()
        with step("2. the hub, and the learners added through it"):
            rehearsal.start_hub()
            rehearsal.add_learners()
        with step("3. every learner logs in at once"):
            rehearsal.log_in()
        with step("4. every learner follows the course link"):
            rehearsal.pull()
        with step("5. notebooks 00 and 04 in every learner's server at once"):
            rehearsal.run_notebook("00")
            rehearsal.measure("after notebook 00")
            rehearsal.run_notebook("04")
            rehearsal.measure("after notebooks 00 and 04")
        with step("6. who runs each learner's processes"):
            rehearsal.check_processes()
        with step("7. what no learner may reach"):
            rehearsal.check_isolation()
        with step("8. Run live in the browser, through the hub"):
            rehearsal.browser()
        with step("9. the culler: one learner works, the others leave"):
            rehearsal.check_culler()
        with step("10. the hub stopped, the learners removed"):
            rehearsal.stop()
    except (RehearsalFailed, LearnerFailed, workshop.SetupFailed) as failure:
        rehearsal.show_log()
        say(f"FAILED: {failure}")
        return 1
    except BaseException:
        rehearsal.show_log()
        raise
    finally:
        rehearsal.clean_up()
    say("sizing, this machine:")
    for line in rehearsal.figures:
        print(f"    {line}", flush=True)
    say(f"passed in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
