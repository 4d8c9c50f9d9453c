"""The command line of `timerd hall ...` (the tournament desk, `timerd.tools.hall_desk`); its
help in the terminal's language (`argparse_text`, issue 46).

Apart from the desk itself, so that building `timerd`'s argument parser does not import the
desk's MQTT client and round files: `timerd run` starts without them (issue 16: exec to
ready, peak RSS). `timerd.cli` imports `timerd.tools.hall_desk` only to run a `hall` command.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from timerd.tools.argparse_text import said


def add_parser(sub: Any, config_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """`timerd hall ...` under `timerd`'s subcommands."""
    hall = sub.add_parser("hall", help=said("hall.help.hall"))
    desk = hall.add_subparsers(dest="hall_command", required=True)

    def subcommand(name: str, help_text: str, parent: Any = desk,
                   timeout_s: float | None = 5.0) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = parent.add_parser(name, help=help_text)
        config_args(parser)
        parser.add_argument("--store", metavar="DIR", type=Path, help=said("hall.help.store"))
        parser.add_argument("--wait", type=float, default=2.0, metavar="S",
                            help=said("hall.help.wait"))
        if timeout_s is not None:
            parser.add_argument("--timeout", type=float, default=timeout_s, metavar="S",
                                help=said("hall.help.timeout"))
        return parser

    status_p = subcommand("status", said("hall.help.status"), timeout_s=None)
    status_p.add_argument("--once", action="store_true", help=said("hall.help.once"))
    status_p.add_argument("--json", action="store_true", help=said("hall.help.status_json"))
    rounds = desk.add_parser("round", help=said("hall.help.round")).add_subparsers(
        dest="round_command", required=True)
    load_p = subcommand("load", said("hall.help.load"), parent=rounds)
    load_p.add_argument("file", metavar="FILE")
    load_p.add_argument("--round", metavar="NAME", help=said("hall.help.load_round"))
    for name in ("start-round", "pause", "resume", "reset"):
        parser = subcommand(name, said(f"hall.help.{name.replace('-', '_')}"))
        if name == "reset":
            parser.add_argument("table", nargs="*", metavar="TABLE")
            parser.add_argument("--all-finished", action="store_true",
                                help=said("hall.help.all_finished"))
            continue
        parser.add_argument("--table", action="append", default=[], metavar="ID",
                            help=said("hall.help.table"))
        if name == "start-round":
            when = parser.add_mutually_exclusive_group(required=True)
            when.add_argument("--in", dest="in_", metavar="DURATION", help=said("hall.help.in"))
            when.add_argument("--at", metavar="HH:MM:SS", help=said("hall.help.at"))
            parser.add_argument("--round", metavar="NAME", help=said("hall.help.round_name"))
    results_p = subcommand("results", said("hall.help.results"), timeout_s=2.0)
    results_p.add_argument("--round", metavar="NAME", help=said("hall.help.results_round"))
    results_p.add_argument("--csv", metavar="FILE", help=said("hall.help.csv"))
    results_p.add_argument("--json", metavar="FILE", help=said("hall.help.json"))
    results_p.add_argument("--excel", action="store_true", help=said("hall.help.excel"))
    results_p.add_argument("--separator", choices=(",", ";"), help=said("hall.help.separator"))
    secure_p = desk.add_parser("secure", help=said("hall.help.secure"))
    config_args(secure_p)
    secure_p.add_argument("--tables", required=True, metavar="T1,T2,...",
                          help=said("hall.help.tables"))
    secure_p.add_argument("--out", required=True, metavar="DIR", help=said("hall.help.out"))
    secure_p.add_argument("--host", metavar="NAME", help=said("hall.help.host"))
    secure_p.add_argument("--port", type=int, default=1883, help=said("hall.help.port"))
    board_p = subcommand("board", said("hall.help.board"), timeout_s=None)
    board_p.add_argument("--bind", default="127.0.0.1", metavar="ADDRESS",
                         help=said("hall.help.bind"))
    board_p.add_argument("--port", type=int, default=8090, help=said("hall.help.board_port"))
