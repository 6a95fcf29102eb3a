"""Sizing a shared host: what one learner's kernel and server hold, and how long many take to start.

    .venv/bin/python tools/sizing.py [--kernels 20]

1. One kernel runs every code cell of every notebook, in order, as Run All in each notebook
   would; then the memory (RSS, and PSS, which shares libraries fairly among processes) and
   open descriptors of the kernel, its keeper and its valkey-server are read from /proc.
2. N kernels are started at once, as N learners opening 00_start_here together, and each runs
   the setup cell; the time from asking for the kernel to the setup cell's end is reported per
   kernel, with the memory of all of them together afterwards.

It prints the figures; it changes nothing but its own kernels, which it shuts down.
"""

import argparse
import os
import statistics
import threading
import time
from pathlib import Path

from kernels import Kernel
from processes import descriptors, lab_processes, memory_kib

ROOT = Path(__file__).resolve().parents[1]

SETUP = "import trafikey_lab.course\ncourse = trafikey_lab.course.setup()\n"


def learner_processes(kernel: Kernel) -> dict[str, int]:
    held = lab_processes(kernel.pid)
    return {"kernel": kernel.pid, "keeper": held["keepers"][0], "valkey-server": held["servers"][0]}


def code_cells(path: Path) -> list[str]:
    import json

    cells = json.loads(path.read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def one_learner() -> None:
    print("1. one kernel after every notebook, Run All in each")
    kernel = Kernel()
    try:
        started = time.monotonic()
        failed = []
        for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
            for number, code in enumerate(code_cells(path), 1):
                reply = kernel.run(code, timeout=600)
                if reply.error:
                    failed.append(f"{path.name} code cell {number}: {reply.error[:100]}")
        print(f"   all notebooks ran in {time.monotonic() - started:.1f} s")
        for line in failed:
            print(f"   (this cell failed, so the figures may be a little low: {line})")
        total = {"rss": 0, "pss": 0, "fds": 0}
        for name, pid in learner_processes(kernel).items():
            rss, pss = memory_kib(pid)
            figures = {"rss": rss, "pss": pss, "fds": descriptors(pid)}
            for key in total:
                total[key] += figures[key]
            print(f"   {name:13} RSS {figures['rss'] / 1024:6.1f} MiB  PSS "
                  f"{figures['pss'] / 1024:6.1f} MiB  {figures['fds']:3} open descriptors")
        print(f"   {'together':13} RSS {total['rss'] / 1024:6.1f} MiB  PSS "
              f"{total['pss'] / 1024:6.1f} MiB  {total['fds']:3} open descriptors")
        folder = kernel.json("import json; print(json.dumps(str(course.server.data_dir)))")
        size = sum(f.stat().st_size for f in Path(folder).rglob("*") if f.is_file())
        print(f"   scratch folder: {size / 1024:.0f} KiB")
    finally:
        kernel.close()


def many_learners(count: int) -> None:
    print(f"2. {count} kernels started at once, each running the setup cell")
    kernels: list[Kernel] = []
    times: list[float] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def learner():
        asked = time.monotonic()
        try:
            kernel = Kernel()
            reply = kernel.run(SETUP, timeout=600)
            if reply.error:
                raise RuntimeError(reply.error)
        except BaseException as exc:
            errors.append(exc)
            return
        with lock:
            kernels.append(kernel)
            times.append(time.monotonic() - asked)

    began = time.monotonic()
    threads = [threading.Thread(target=learner) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - began
    try:
        if errors:
            print(f"   {len(errors)} of {count} failed: {errors[:3]}")
        times.sort()
        print(f"   all {len(times)} ready after {wall:.1f} s; per kernel: fastest "
              f"{times[0]:.1f} s, "
              f"median {statistics.median(times):.1f} s, slowest {times[-1]:.1f} s")
        rss = pss = fds = 0
        for kernel in kernels:
            for pid in learner_processes(kernel).values():
                held_rss, held_pss = memory_kib(pid)
                rss, pss = rss + held_rss, pss + held_pss
                fds += descriptors(pid)
        print(f"   after the setup cell, all {len(kernels)} together: RSS {rss / 1024:.0f} MiB, "
              f"PSS {pss / 1024:.0f} MiB, {fds} open descriptors")
    finally:
        for kernel in kernels:
            kernel.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=20)
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"{os.cpu_count()} cores; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
          f"at the start")
    one_learner()
    many_learners(args.kernels)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end")


if __name__ == "__main__":
    main()
