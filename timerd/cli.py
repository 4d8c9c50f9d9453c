"""Command lines: `timerd` (the daemon and its helpers), `timerctl` (talks to a running daemon)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import sys
from pathlib import Path
from typing import Any

from timerd import config as config_mod
from timerd import hall_desk, profiles
from timerd.schema import SchemaError

EXIT_REFUSED = 1
EXIT_USAGE = 2


def _config_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, metavar="PATH",
                        help=f"config file (default: {config_mod.SYSTEM_CONFIG} if present)")
    parser.add_argument("-o", dest="overrides", action="append", default=[],
                        metavar="SECTION.KEY=VALUE", help="override one config key (repeatable)")
    parser.add_argument("--profile", metavar="NAME|PATH",
                        help="rule profile: a built-in name (see `timerd profiles`) or a file")


def _load_config(args: argparse.Namespace) -> config_mod.Config:
    overrides = list(args.overrides)
    if args.profile:
        overrides.append(f'match.profile="{args.profile}"')
    return config_mod.load(args.config, overrides)


def _speed(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("speed must be a positive factor")
    return value


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="timerd", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the match timer daemon")
    _config_args(run)
    run.add_argument("--simulate", action="store_true",
                     help="simulated pins (gpiozero MockFactory); keys act as buttons on a tty")
    run.add_argument("--speed", type=_speed, default=1.0, metavar="FACTOR",
                     help="run time FACTOR times faster (demos, acceptance runs)")
    run.add_argument("--events", metavar="PATH",
                     help="write one JSON line per state change and signal (- for stdout)")
    run.add_argument("--control", type=Path, metavar="PATH", help="control socket path")
    cfg = sub.add_parser("config", help="print the effective config, or every error in it")
    _config_args(cfg)
    sub.add_parser("profiles", help="list the built-in rule profiles")
    hall_desk.add_parser(sub, _config_args)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "profiles":
        for name in profiles.builtin_names():
            print(f"{name:16} {profiles.load(name).description}")
        return 0
    try:
        config = _load_config(args)
    except SchemaError as exc:
        print("timerd: the config has errors:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "config":
        sys.stdout.write(config.to_toml())
        return 0
    if args.command == "hall":
        return hall_desk.main(config, args)
    return _run(config, args)


def _run(config: config_mod.Config, args: argparse.Namespace) -> int:
    from timerd.adapters.gpio import NoGpio  # noqa: PLC0415 (gpiozero only for `run`)
    from timerd.adapters.hall import HallUnavailable  # noqa: PLC0415
    from timerd.app import RunOptions, run  # noqa: PLC0415

    logging.basicConfig(level=config.log.level.upper(), stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    interactive = args.simulate and sys.stdin.isatty() and args.events != "-"
    options = RunOptions(simulate=args.simulate, speed=args.speed, events=args.events,
                         control=args.control, interactive=interactive)
    try:
        run(config, options)
    except (NoGpio, HallUnavailable) as exc:
        print(f"timerd: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0


# -- timerctl -------------------------------------------------------------------------------

def _default_socket() -> Path:
    if env := os.environ.get("TIMERD_SOCKET"):
        return Path(env)
    try:
        return config_mod.load().control_socket()
    except SchemaError:
        return config_mod.Config().control_socket()


def request(path: Path, command: str, args: list[str], timeout_s: float = 5.0) -> dict[str, Any]:
    """Send one command to the daemon at `path` and return its reply."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        sock.connect(str(path))
        sock.sendall(json.dumps({"command": command, "args": args}).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    reply: dict[str, Any] = json.loads(data)
    return reply


def format_status(status: dict[str, Any]) -> str:
    from timerd.core.display import shown_clock  # noqa: PLC0415

    lines = [
        f"profile   {status['profile']}",
        f"phase     {status['phase']}",
        f"clock     {shown_clock(status['remaining_s'])}"
        + (f"  (period {status['period']}/{status['periods']})" if status["periods"] > 1 else ""),
    ]
    if status.get("start_in_s") is not None:
        lines.append(f"start in  {status['start_in_s']:.1f} s")
    if status.get("interruption_s") is not None:
        lines.append(f"paused    {status['interruption_s']:.1f} s (this interruption)")
    lines.append(f"interruptions {status['interruptions']}, "
                 f"{status['paused_total_s']:.1f} s in all")
    if status.get("last_signal"):
        lines.append(f"last      {status['last_signal']}")
    return "\n".join(lines)


def timerctl(argv: list[str] | None = None) -> int:
    top = argparse.ArgumentParser(
        prog="timerctl", description="Control a running timerd: start, pause, resume, toggle, "
        "reset, status, and the commands later profiles add.")
    top.add_argument("--socket", type=Path, metavar="PATH", help="the daemon's control socket")
    top.add_argument("--json", action="store_true", help="print the reply as JSON")
    top.add_argument("command", help="start | pause | resume | toggle | reset | status | ...")
    top.add_argument("args", nargs="*", help="the command's arguments")
    args = top.parse_args(argv)
    if "--json" in args.args:  # `timerctl status --json` reads naturally; accept it there too
        args.args.remove("--json")
        args.json = True
    path = args.socket or _default_socket()
    try:
        reply = request(path, args.command, args.args)
    except (OSError, ValueError) as exc:
        print(f"timerctl: cannot reach timerd at {path}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(reply.get("status", reply), indent=2))
    elif reply.get("ok"):
        print(format_status(reply["status"]))
    if not reply.get("ok"):
        print(f"timerctl: {reply.get('error')}", file=sys.stderr)
        return EXIT_REFUSED
    return 0
