"""make peers: every queue re-played and checked against its stored recording.

    python -m peers                  re-play all four; fail where a library no longer does what
                                     its recording says (counted, fate, runs), or cannot run
    python -m peers --record         re-play and store the recordings instead of checking
    python -m peers rq bullmq        only these queues

A queue that cannot run here (no Node, no Ruby's Sidekiq, no arq virtualenv) is a failure that
names the install command, never a skip.
"""

from __future__ import annotations

import argparse
import sys
import time

from peers import (
    QUEUES,
    PlayError,
    differences,
    missing,
    play_live,
    recording,
    store,
    table,
    table_text,
)


def say(text: str) -> None:
    print(f"[peers {time.strftime('%H:%M:%S')}] {text}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m peers", description=__doc__.split("\n")[0])
    parser.add_argument("queues", nargs="*", metavar="QUEUE",
                        help=f"among {', '.join(QUEUES)} (default: all)")
    parser.add_argument("--record", action="store_true",
                        help="store what is played as the recordings instead of checking")
    args = parser.parse_args(argv)
    queues = args.queues or list(QUEUES)
    if unknown := [q for q in queues if q not in QUEUES]:
        parser.error(f"no queue {', '.join(unknown)}: choose among {', '.join(QUEUES)}")
    failed: list[str] = []
    played = {}
    for queue in queues:
        if (why := missing(queue)) is not None:
            failed.append(f"{queue}: cannot be played here: {why}")
            say(failed[-1])
            continue
        began = time.monotonic()
        try:
            played[queue] = now = play_live(queue, progress=say)
        except PlayError as exc:
            failed.append(f"{queue}: the play failed: {exc}")
            say(failed[-1])
            continue
        say(f"{queue}: played in {time.monotonic() - began:.0f} s")
        if args.record:
            say(f"{queue}: stored in {store(now)}")
            continue
        for difference in differences(recording(queue), now):
            failed.append(f"{queue}: {difference}")
            say(f"MISMATCH {failed[-1]}")
    if played:
        print(table_text(table(played)))
    passed = len(queues) - len({line.split(":", 1)[0] for line in failed})
    if failed:
        print("\nmake peers failed:\n" + "\n".join(f"- {line}" for line in failed))
        if not args.record:
            print("A library that changed its behaviour: look at its play, then store the new "
                  "recording with `.venv/bin/python -m peers --record QUEUE` and say so where "
                  "notebook 05 shows it.")
    print(f"peers: {passed} passed, {len(queues) - passed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
