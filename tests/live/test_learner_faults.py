"""Faults a learner can cause, each caused the way a learner causes it, and what they see next.

The kernels are real ipykernels driven as JupyterLab drives them (tools/kernels.py): cells,
widget clicks, the interrupt button. What the learner sees after each fault:

- server killed from outside: the next live call raises ServerGone, naming the signal and the
  setup cell; the setup cell says it starts a new server, and everything works again;
- interrupt during a restart: the restart finishes first, then the cell stops with
  KeyboardInterrupt; the server is whole (one process, run_id and pid as the lab reads them);
- interrupt during the sweep: the sweep ran whole on the server or not at all, never half;
- interrupt during Run live: the button comes back and the next run plays the whole history
  and agrees with the model; Run live pressed again while it runs: no run is cut, and every
  run played agrees;
- two notebooks at once: two kernels, two servers, nothing shared;
- a notebook run ten times from the top in one kernel: one server, one port, one folder, and
  no growing count of processes or open descriptors;
- the scratch folder removed under a running server: the restart says so and that the setup
  cell starts a new server, which it does;
- a full disk under the scratch folder: the restart says the disk is full and the server runs
  on with its data; once there is room the restart works.
"""

import errno
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
from kernels import Kernel
from processes import descriptors, lab_processes, listening_sockets

from trafikey_lab import LiveExecutor, ModelExecutor, Queue
from trafikey_lab.errors import RestartFailed
from trafikey_lab.live.choose import choose_server

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("jupyter_client")

SETUP = "import trafikey_lab.course\ncourse = trafikey_lab.course.setup()\n"
STATE = """
import json
print(json.dumps({"pid": course.server.pid, "port": course.server.port,
                  "dir": str(course.server.data_dir), "run_id": course.server.run_id,
                  "server": id(course.server), "secret": course.server.password}))
"""
GONE_WITHIN = 10.0


@pytest.fixture(scope="module")
def kernel():
    """One notebook tab, kept across the faults below: each fault must leave it usable."""
    tab = Kernel()
    yield tab
    tab.close()


def set_up(kernel: Kernel) -> tuple[dict, str]:
    """Runs the notebook's setup cell; returns the server's state and what the cell printed."""
    reply = kernel.run(SETUP)
    assert not reply.error, reply.text
    return kernel.json(STATE), reply.stdout


def one_server(kernel: Kernel, state: dict) -> None:
    """The kernel runs exactly one keeper and one server, the one its LabServer names, and
    that server listens on the LabServer's port and nowhere else."""
    processes = lab_processes(kernel.pid)
    assert len(processes["keepers"]) == 1, processes
    assert processes["servers"] == [state["pid"]], (processes, state)
    assert [port for _, _, port in listening_sockets(state["pid"])] == [state["port"]]


def gone(pid: int) -> bool:
    deadline = time.monotonic() + GONE_WITHIN
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return True
        time.sleep(0.05)
    return False


# -- the server killed from outside ----------------------------------------------------------


def test_a_server_killed_from_outside_names_the_setup_cell_which_then_starts_a_new_one(kernel):
    before, _ = set_up(kernel)
    assert not kernel.run('course.live.add(course.queue, "job-1")').error
    os.kill(before["pid"], signal.SIGKILL)
    assert gone(before["pid"])

    reply = kernel.run("course.live.claim(course.queue, 60_000)")
    assert reply.error.startswith("ServerGone: the lab's valkey-server"), reply.text
    assert "SIGKILL" in reply.error
    assert "setup cell" in reply.error
    assert "Connection refused" not in reply.text
    assert "Error 111" not in reply.text

    after, printed = set_up(kernel)
    assert "has stopped: it was killed with SIGKILL" in printed
    assert "Starting a new one" in printed
    assert after["pid"] != before["pid"]
    assert after["server"] == before["server"], "the widgets' LabServer was replaced, not revived"
    reply = kernel.run('course.live.add(course.queue, "job-2")\n'
                       'print(course.live.claim(course.queue, 60_000)[:2])')
    assert reply.stdout.strip() == "[b'job-2', 1]", reply.text
    one_server(kernel, after)
    assert before["secret"] not in reply.text + printed


# -- interrupts ---------------------------------------------------------------------------------


def test_an_interrupt_during_a_restart_lets_it_finish_and_the_next_cell_works(kernel):
    set_up(kernel)
    assert not kernel.run('course.live.add(course.queue, "job-1")').error
    cell = kernel.send('print("restarting", flush=True)\n'
                       'for _ in range(40):\n'
                       '    course.server.restart()\n')
    kernel.collect(cell, until=lambda reply: "restarting" in reply.stdout)
    time.sleep(0.5)
    kernel.interrupt()
    reply = kernel.collect(cell)
    assert reply.error.startswith("KeyboardInterrupt: interrupted during the restart"), reply.text

    state = kernel.json(STATE)
    check = kernel.json(
        'import json\n'
        'row = course.live.row(course.queue, "job-1")\n'
        'print(json.dumps([course.live.run_id, row[b"state"].decode()]))'
    )
    assert check == [state["run_id"], "pending"], "the lab's run_id or the row did not survive"
    one_server(kernel, state)


LAY_OUT = """
local n, stamp = tonumber(ARGV[1]), ARGV[2]
for i = 1, n do
  local id = 'j' .. i
  redis.call('HSET', KEYS[2] .. id, 'state', 'active', 'attempts', '1', 'lease_epoch', stamp)
  redis.call('ZADD', KEYS[1], 1, id)
end
return n
"""
"""Expired leases of this process, stamped by it: the sweep counts each one (recovered)."""

COUNT_ROWS = """
local n, whole = tonumber(ARGV[1]), {untouched = 0, swept = 0, other = 0}
for i = 1, n do
  local id = 'j' .. i
  local row = redis.call('HGETALL', KEYS[3] .. id)
  local fields = {}
  for k = 1, #row, 2 do fields[row[k]] = row[k + 1] end
  local active = redis.call('ZSCORE', KEYS[1], id)
  local pending = redis.call('ZSCORE', KEYS[2], id)
  if active and not pending and fields.state == 'active' and not fields.stalled then
    whole.untouched = whole.untouched + 1
  elseif pending and not active and fields.state == 'pending' and fields.stalled == '1' then
    whole.swept = whole.swept + 1
  else
    whole.other = whole.other + 1
  end
end
return {whole.untouched, whole.swept, whole.other}
"""
"""Each row with its set: untouched (active), swept whole (pending, stalled 1), or neither."""

MEMBERS = 100_000
"""Enough expired leases that one sweep takes most of a second, long enough to interrupt."""


def test_an_interrupt_during_the_sweep_leaves_no_half_written_row(kernel):
    state, _ = set_up(kernel)
    queue = Queue("{big}")
    cell = kernel.send(
        f'from trafikey_lab import Queue\n'
        f'big = Queue("{{big}}")\n'
        f'course.server.client.eval({LAY_OUT!r}, 2, big.active, big.prefix, {MEMBERS}, '
        f'course.server.run_id)\n'
        f'print("sweeping", flush=True)\n'
        f'course.live.sweep(big, 1000, {MEMBERS})\n'
    )
    kernel.collect(cell, until=lambda reply: "sweeping" in reply.stdout)
    time.sleep(0.05)
    kernel.interrupt()
    reply = kernel.collect(cell)
    assert reply.error.startswith("KeyboardInterrupt"), reply.text
    assert "course.live.sweep(big" in reply.traceback, "the interrupt did not land in the sweep"

    untouched, swept, other = kernel.json(
        f'print(json.dumps(course.server.client.eval({COUNT_ROWS!r}, 3, big.active, big.pending, '
        f'big.prefix, {MEMBERS})))'
    )
    assert other == 0, f"{other} rows are half-written: their state and their set disagree"
    assert (untouched, swept) in ((MEMBERS, 0), (0, MEMBERS)), "the sweep was cut part-way"

    # What the model writes for one such lease is what every swept row holds.
    model = ModelExecutor()
    model.call("HSET", queue.row_key("j1"), "state", "active", "attempts", "1",
               "lease_epoch", model.run_id)
    model.call("ZADD", queue.active, 1, "j1")
    model.sweep(queue, 1000)
    expected = {k.decode(): v.decode() for k, v in model.row(queue, "j1").items()}
    expected["lease_epoch"] = "<this process>"
    if swept:
        row = kernel.json('print(json.dumps({k.decode(): v.decode() for k, v in '
                          'course.server.client.hgetall(big.row_key("j1")).items()}))')
        assert row.pop("lease_epoch") == state["run_id"]
        assert {**row, "lease_epoch": "<this process>"} == expected

    assert kernel.run("course.server.client.flushall()").error == ""
    state, _ = set_up(kernel)
    one_server(kernel, state)


@pytest.fixture
def widget(kernel):
    """Notebook 04's widget on this kernel's server, set to a history with a restart."""
    set_up(kernel)
    ids = kernel.run(
        "from trafikey_lab.widgets.lease_across_restart import LeaseAcrossRestart\n"
        "w = LeaseAcrossRestart(live=course.live)\n"
        "w.history.value = 'restarted'\n"
        "print(w.run_live.model_id, w.status.model_id)\n"
    )
    assert not ids.error, ids.text
    return ids.stdout.split()


def agreed(status: str) -> bool:
    return status.startswith("done:") and status.endswith("model and live agree at every step")


def test_an_interrupt_during_run_live_gives_the_button_back_and_the_next_run_agrees(kernel, widget):
    button, status = widget
    click = kernel.click(button)
    kernel.collect(click, until=lambda reply: any("restart" in s for s in reply.states(status)))
    kernel.interrupt()
    reply = kernel.collect(click)
    assert not any(agreed(s) for s in reply.states(status)), "the run finished before the interrupt"
    assert reply.states(status)[-1].startswith("interrupted"), reply.states(status)

    after = kernel.run("print(w.run_live.disabled)\n"
                       "w.run_live.click()\n"
                       "print(w.status.value)\n")
    disabled, status_line = after.stdout.strip().splitlines()
    assert disabled == "False", "the button stayed disabled after the interrupt"
    assert agreed(status_line), after.text
    state = kernel.json(STATE)
    one_server(kernel, state)


def test_run_live_pressed_again_while_it_runs_ends_in_whole_runs_that_agree(kernel, widget):
    """Two presses sent at once, as a quick double click sends them before the page shows the
    button disabled. The kernel may play the second after the first, or the widget may ignore
    it while the first runs; either way no run is cut, and each run played agrees."""
    button, status = widget
    first, second = kernel.click(button), kernel.click(button)
    replies = [kernel.collect(first), kernel.collect(second)]
    played = replies[0].states(status)
    assert played, played
    assert agreed(played[-1]), played
    for reply in replies:
        played = reply.states(status)
        assert not played or agreed(played[-1]), played
        assert not reply.error, reply.text
        assert "Traceback" not in reply.stderr, reply.text
    last = kernel.run("print(w.run_live.disabled)\nprint(w.status.value)").stdout.splitlines()
    assert last[0] == "False", last
    assert agreed(last[1]), last
    one_server(kernel, kernel.json(STATE))


# -- the scratch folder ------------------------------------------------------------------------


def test_a_scratch_folder_removed_under_the_server_fails_the_restart_and_setup_recovers(kernel):
    before, _ = set_up(kernel)
    assert not kernel.run('course.live.add(course.queue, "job-1")').error
    shutil.rmtree(before["dir"])  # as `rm -rf` of old temporary folders, or a cleaner, would

    reply = kernel.run("course.server.restart()")
    assert reply.error.startswith("RestartFailed: the server could not be restarted"), reply.text
    assert "was removed while it ran" in reply.error
    assert "setup cell" in reply.error
    still = kernel.run('print(course.live.row(course.queue, "job-1")[b"state"])')
    assert still.stdout.strip() == "b'pending'", "the server stopped serving after the refusal"

    after, printed = set_up(kernel)
    assert "lost its scratch folder" in printed
    assert "Starting a new one" in printed
    assert after["dir"] != before["dir"]
    assert Path(after["dir"]).is_dir()
    assert kernel.json("print(json.dumps(course.server.restart() == course.live.run_id))")
    one_server(kernel, kernel.json(STATE))


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs: a disk a learner's scratch folder can fill. Needs root (mount)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root; CI runs as root")
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"this machine lets root mount no tmpfs here ({made.stderr.strip()}), so "
                    f"there is no small disk to fill")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def fill(folder: Path) -> Path:
    """Writes a file into folder until its disk has no room left; returns the file."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    def fill() -> None:
        while True:
            os.write(fd, bytes(4096))

    try:
        with pytest.raises(OSError, match=os.strerror(errno.ENOSPC)):
            fill()
    finally:
        os.close(fd)
    return filler


def test_a_full_disk_under_the_scratch_folder_fails_the_restart_naming_the_cause(small_disk,
                                                                                monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(small_disk))
    server = choose_server().start()
    try:
        live, queue = LiveExecutor(server), Queue()
        live.add(queue, "job-1")
        run_id = server.run_id
        filler = fill(small_disk)

        with pytest.raises(RestartFailed) as caught:
            server.restart()
        message = str(caught.value)
        assert "No space left on device" in message
        assert "bytes free" in message
        assert "Free some space on that disk" in message
        assert server.running, "the refused restart stopped the server"
        assert live.run_id == run_id, "the refused restart stopped the server"
        assert live.row(queue, "job-1")[b"state"] == b"pending"

        filler.unlink()
        assert server.restart() != run_id
        assert live.row(queue, "job-1")[b"state"] == b"pending", "the data did not survive"
    finally:
        server.stop()


# -- several notebooks, and one notebook many times ------------------------------------------


def code_cells(name: str) -> list[str]:
    """The notebook's code cells, in order, as Run All runs them."""
    (path,) = (ROOT / "notebooks").glob(f"{name}_*.ipynb")
    cells = json.loads(path.read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"
            and "raises-exception" not in c["metadata"].get("tags", [])]


def run_all(kernel: Kernel, name: str) -> str:
    """Runs the notebook's cells in the kernel; returns what they printed; fails on an error."""
    printed = []
    for code in code_cells(name):
        reply = kernel.run(code)
        assert not reply.error, f"notebook {name}, cell:\n{code}\n{reply.text}"
        printed.append(reply.text)
    return "\n".join(printed)


def test_two_notebooks_open_at_once_each_get_their_own_server():
    kernels = [Kernel(), Kernel()]
    try:
        printed, errors = {}, []

        def run(kernel, name):
            try:
                printed[name] = run_all(kernel, name)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=run, args=pair)
                   for pair in zip(kernels, ("01", "02"), strict=True)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
        assert not errors, errors
        states = [k.json(STATE) for k in kernels]
        for key in ("pid", "port", "dir", "secret"):
            assert states[0][key] != states[1][key], key
        for kernel, state in zip(kernels, states, strict=True):
            one_server(kernel, state)
        kernels[0].run('course.server.client.set("written by", "the first notebook")')
        assert kernels[1].json('print(json.dumps(course.server.client.exists("written by")))') == 0
        for state, name in zip(states, ("01", "02"), strict=True):
            assert state["secret"] not in printed[name]
    finally:
        for kernel in kernels:
            kernel.close()


RUNS = 10


def census(kernel: Kernel, scratch: Path) -> dict:
    """What the kernel's lab holds: processes, ports, scratch folders, the LabServer, fds."""
    state = kernel.json(STATE)
    processes = lab_processes(kernel.pid)
    return {
        "keepers": len(processes["keepers"]),
        "servers": len(processes["servers"]),
        "ports": sorted(port for pid in processes["servers"]
                        for _, _, port in listening_sockets(pid)),
        "folders": sorted(p.name for p in scratch.iterdir()),
        "server": state["server"],
        "descriptors": descriptors(kernel.pid),
    }


def test_a_notebook_run_from_the_top_ten_times_keeps_one_server_and_leaks_nothing(tmp_path):
    kernel = Kernel(env={"TMPDIR": str(tmp_path)})
    try:
        counts = []
        secret = None
        for _ in range(RUNS):
            printed = run_all(kernel, "01")
            counts.append(census(kernel, tmp_path))
            secret = secret or kernel.json(STATE)["secret"]
            assert secret not in printed, "a stored output would show the server's password"
        first = counts[0]
        assert (first["keepers"], first["servers"], len(first["ports"]), len(first["folders"])) \
            == (1, 1, 1, 1), first
        # The first run imports and opens what a kernel keeps (matplotlib, sockets); from the
        # second on, nothing may grow.
        assert all(c == counts[1] for c in counts[1:]), counts
        assert all({**c, "descriptors": 0} == {**first, "descriptors": 0} for c in counts), counts
    finally:
        kernel.close()
