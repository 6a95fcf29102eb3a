"""python -m trafikey_lab {doctor,module-path,server}"""

import argparse
import ipaddress
import signal
import socket
import sys

from trafikey_lab import doctor
from trafikey_lab.errors import LabError
from trafikey_lab.live.client import redis_url
from trafikey_lab.live.owned import OwnedServer
from trafikey_lab.module.build import module_path


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


def ip_address(text: str) -> str:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an IP address: give one such as 127.0.0.1, or 0.0.0.0 for every "
            f"interface") from None


SHARED = ("  (each learner's notebooks put their OS user's name, or TRAFIKEY_NAMESPACE, in every "
          "queue name, {alice:jobs}: their keys stay apart, though nothing locks them)")
"""Why a room can share the server (executors.namespace), and what that does not do."""


def connect_lines(lab: OwnedServer) -> list[str]:
    """How to reach the workshop server, secret included: the one place the lab prints it."""
    everywhere = ipaddress.ip_address(lab.bind).is_unspecified
    host = socket.gethostname() if everywhere else lab.host
    url = redis_url(host, lab.port, lab.password)
    lines = [f"listening on every interface ({lab.bind}), port {lab.port}"] if everywhere else []
    if not lab.password:
        return [
            *lines,
            "no password: every user of this machine can read and change its rows",
            f"connect: redis-cli -h {host} -p {lab.port}, or "
            f"redis.Redis(host={host!r}, port={lab.port}) in Python,",
            f"  or TRAFIKEY_VALKEY_URL={url} for the notebooks",
            SHARED,
        ]
    return [
        *lines,
        f"password: {lab.password}",
        "  (whoever has it can read and change every row: share it only with your group)",
        f"connect: REDISCLI_AUTH={lab.password} redis-cli -h {host} -p {lab.port}",
        f"  or redis.Redis(host={host!r}, port={lab.port}, password=...) in Python,",
        f"  or TRAFIKEY_VALKEY_URL={url} for the notebooks",
        SHARED,
    ]


def cmd_server(args) -> int:
    lab = OwnedServer(port=args.port, persistence=args.persistence, bind=args.bind,
                    password=not args.no_password)
    lab.start()
    print(f"valkey-server with the trafikey module on {lab.address}")
    print(f"run_id {lab.run_id}, data in {lab.data_dir}")
    for line in connect_lines(lab):
        print(line)
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
    serve.add_argument("--bind", default="127.0.0.1", metavar="ADDRESS", type=ip_address,
                       help="the IP address to listen on (default 127.0.0.1: this machine only; "
                            "0.0.0.0 for every interface)")
    serve.add_argument("--no-password", action="store_true",
                       help="accept clients without a password (only with a loopback --bind)")
    serve.set_defaults(run=cmd_server)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except LabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
