"""make mutants: each mutant of catalogue.py put into a scratch copy, built, and run against
the tests that must catch it.

The working tree is never written to. The files git tracks are copied, as they stand in the
working tree, into a scratch folder; the module is compiled there, and pytest runs there, so
its trafikey_lab (`python -m pytest` puts the current folder first on sys.path) and its
module build are the ones under test, and every server the tests start loads that build.

Before any mutant, every catalogue entry's text must occur exactly once in its file, and
each distinct set of tests must pass on the unmutated copy: otherwise a "caught" would mean
nothing. Then one mutant at a time: change the file, rebuild when it is the C source, run its
tests with -x, put the file back.

Prints caught or survived per mutant, with the first test that failed; exits 0 when every
mutant was caught, 1 when one survived, 2 when the catalogue or the unmutated copy is broken.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from catalogue import MUTANTS, Mutant

ROOT = Path(__file__).resolve().parents[2]
SOURCE = "trafikey_lab/module/trafikey.c"
LIBRARY = "trafikey_lab/module/trafikey.so"
CFLAGS = ["-Wall", "-Wextra", "-std=c11", "-O2", "-shared", "-fPIC"]
"""setup.py's flags without -Werror: a mutant may leave a parameter unused, and that warning
is not what the run is about."""
TIMEOUT = 900
PYTEST = ["-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=0"]
DROPPED_ENV = (
    # A test's servers must load the scratch build, on servers the tests start themselves.
    "TRAFIKEY_TEST_MODULE", "TRAFIKEY_TEST_SERVER_PRELOAD", "TRAFIKEY_TEST_ASAN_OPTIONS",
    "TRAFIKEY_VALKEY_URL", "TRAFIKEY_SOAK",
)


class BrokenRun(Exception):
    """The catalogue or the unmutated copy is wrong: no verdict on any mutant can be trusted."""


def catalogue_problems(root: Path, mutants) -> list[str]:
    """Every entry whose text does not occur exactly once in its file, or that changes nothing."""
    problems = []
    for mutant in mutants:
        path = root / mutant.file
        if not path.is_file():
            problems.append(f"{mutant.name}: {mutant.file} does not exist")
            continue
        count = path.read_text().count(mutant.find)
        if count != 1:
            where = "does not occur" if count == 0 else f"occurs {count} times"
            problems.append(
                f"{mutant.name}: its text {where} in {mutant.file}:\n    {mutant.find!r}")
        if mutant.find == mutant.replace:
            problems.append(f"{mutant.name}: its replacement is its own text")
        if not mutant.tests:
            problems.append(f"{mutant.name}: it names no tests to catch it")
    return problems


def copy_tree(root: Path, scratch: Path) -> None:
    """The files git tracks, as they stand in the working tree (edits not yet committed too)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, check=True,
                                capture_output=True).stdout.split(b"\0")
    except (OSError, subprocess.CalledProcessError) as exc:
        raise BrokenRun(f"make mutants copies the files git tracks, and `git ls-files` failed in "
                        f"{root} ({exc}): run it in a git checkout of the lab, with git installed"
                        ) from None  # the message carries git's failure
    for name in filter(None, listed):
        source = root / os.fsdecode(name)
        if source.is_file():
            target = scratch / os.fsdecode(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def build(scratch: Path) -> str | None:
    """Compiles the scratch copy's module; returns the compiler's complaint, or None."""
    compiler = os.environ.get("CC", "cc")
    done = subprocess.run([compiler, *CFLAGS, "-o", LIBRARY, SOURCE], cwd=scratch,
                          capture_output=True, text=True)
    return None if done.returncode == 0 else done.stderr.strip() or f"{compiler} failed"


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_tests(scratch: Path, tests) -> tuple[str, str, float]:
    """("passed" | "failed" | "timed out" | "error <code>", the first failure line, seconds)."""
    # Hypothesis keeps failing examples in .hypothesis/; a fresh one per run keeps each
    # mutant's verdict its own.
    shutil.rmtree(scratch / ".hypothesis", ignore_errors=True)
    began = time.monotonic()
    try:
        done = subprocess.run([sys.executable, *PYTEST, *tests], cwd=scratch, env=environment(),
                              capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return "timed out", f"no verdict within {TIMEOUT} s", time.monotonic() - began
    took = time.monotonic() - began
    output = done.stdout + done.stderr
    first = next((line for line in output.splitlines() if line.startswith(("FAILED", "ERROR"))),
                 output.strip().splitlines()[-1] if output.strip() else "")
    outcome = {0: "passed", 1: "failed"}.get(done.returncode, f"error {done.returncode}")
    if outcome.startswith("error"):
        first = output.strip()[-2000:]
    return outcome, first, took


def check_imports_the_copy(scratch: Path) -> None:
    done = subprocess.run([sys.executable, "-c",
                           "import trafikey_lab; print(trafikey_lab.__file__)"],
                          cwd=scratch, env=environment(), capture_output=True, text=True)
    imported = Path(done.stdout.strip() or "?").resolve()
    if scratch.resolve() not in imported.parents:
        raise BrokenRun(f"python in the scratch copy imports trafikey_lab from {imported}, not "
                        f"from the copy: the mutants would not be the code under test")


def baseline(scratch: Path, mutants) -> None:
    for tests in dict.fromkeys(m.tests for m in mutants):
        outcome, first, took = run_tests(scratch, tests)
        print(f"  unmutated  {outcome:<9} {took:5.1f} s  {' '.join(tests)}", flush=True)
        if outcome != "passed":
            raise BrokenRun(f"the unmutated copy does not pass {' '.join(tests)} ({outcome}): "
                            f"{first}\nFix the suite first; a mutant it 'catches' proves nothing.")


def try_mutant(scratch: Path, mutant: Mutant, pristine_library: bytes) -> tuple[str, str, float]:
    path = scratch / mutant.file
    original = path.read_text()
    path.write_text(original.replace(mutant.find, mutant.replace))
    try:
        if mutant.file == SOURCE:
            complaint = build(scratch)
            if complaint:
                raise BrokenRun(f"{mutant.name}: the mutant does not compile:\n{complaint}")
        return run_tests(scratch, mutant.tests)
    finally:
        path.write_text(original)
        (scratch / LIBRARY).write_bytes(pristine_library)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="only", help="run only the mutants whose name contains this")
    args = parser.parse_args(argv)
    mutants = [m for m in MUTANTS if args.only is None or args.only in m.name]
    began = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="trafikey-mutants-"))
    try:
        print(f"make mutants: {len(mutants)} mutants, in a scratch copy of the working tree",
              flush=True)
        copy_tree(ROOT, scratch)
        problems = catalogue_problems(scratch, mutants)
        if problems:
            raise BrokenRun("the mutant catalogue no longer matches the code; bring these "
                            "entries along in tools/mutants/catalogue.py:\n  "
                            + "\n  ".join(problems))
        complaint = build(scratch)
        if complaint:
            raise BrokenRun(f"the unmutated module does not compile:\n{complaint}")
        pristine_library = (scratch / LIBRARY).read_bytes()
        check_imports_the_copy(scratch)
        baseline(scratch, mutants)
        survivors = []
        for number, mutant in enumerate(mutants, 1):
            outcome, first, took = try_mutant(scratch, mutant, pristine_library)
            if outcome.startswith("error"):
                raise BrokenRun(f"{mutant.name}: pytest ended with {outcome}:\n{first}")
            verdict = "survived" if outcome == "passed" else "caught"
            if outcome == "timed out":
                verdict = "caught (its tests hung)"
            print(f"  {number:2}. {verdict:<8} {took:5.1f} s  {mutant.name}", flush=True)
            if outcome == "failed":
                print(f"      by {first}", flush=True)
            if outcome == "passed":
                survivors.append(mutant)
                print(f"      {' '.join(mutant.tests)} passed with it", flush=True)
        caught = len(mutants) - len(survivors)
        print(f"make mutants: {caught} of {len(mutants)} caught, {len(survivors)} survived, "
              f"in {time.monotonic() - began:.0f} s", flush=True)
        return 1 if survivors else 0
    except BrokenRun as exc:
        print(f"make mutants: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
