"""python -m trafikey_lab {doctor,module-path,server}"""

import argparse
import signal
import sys

from . import doctor
from .build import module_path
from .errors import LabError
from .server import LabServer


def cmd_module_path(_args) -> int:
    print(module_path())
    return 0


def cmd_doctor(_args) -> int:
    checks = doctor.run()
    for check in checks:
        print(check.line())
    passed = all(c.ok for c in checks)
    print("all checks passed" if passed else "some checks failed: see the fixes above")
    return 0 if passed else 1


def cmd_server(args) -> int:
    lab = LabServer(port=args.port, persistence=args.persistence)
    lab.start()
    print(f"valkey-server with the trafikey module on {lab.address}")
    print(f"run_id {lab.run_id}, data in {lab.data_dir}")
    print(f"connect: redis-cli -p {lab.port}, or redis.Redis(port={lab.port}) in Python,")
    print(f"or TRAFIKEY_VALKEY_URL={lab.address} for the notebooks")
    print("Ctrl-C stops it.", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        lab.wait()
    except KeyboardInterrupt:
        pass
    finally:
        lab.stop()
        print("stopped")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trafikey_lab")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("doctor", help="check the setup step by step").set_defaults(
        run=cmd_doctor)
    commands.add_parser("module-path", help="print the built module's path").set_defaults(
        run=cmd_module_path)
    serve = commands.add_parser("server", help="run a module-loaded valkey-server for a workshop")
    serve.add_argument("--port", type=int, default=None, help="port (default: a free one)")
    serve.add_argument("--persistence", choices=("rdb", "aof"), default="rdb")
    serve.set_defaults(run=cmd_server)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except LabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
