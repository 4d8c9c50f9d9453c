"""The command line of `timerd hall ...` (the tournament desk, `timerd.tools.hall_desk`).

Apart from the desk itself, so that building `timerd`'s argument parser does not import the
desk's MQTT client and round files: `timerd run` starts without them (issue 16: exec to
ready, peak RSS). `timerd.cli` imports `timerd.tools.hall_desk` only to run a `hall` command.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any


def add_parser(sub: Any, config_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """`timerd hall ...` under `timerd`'s subcommands."""
    hall = sub.add_parser("hall", help="the tournament desk for hall mode (docs/hall.md)")
    desk = hall.add_subparsers(dest="hall_command", required=True)

    def subcommand(name: str, help_text: str, parent: Any = desk,
                   timeout_s: float | None = 5.0) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = parent.add_parser(name, help=help_text)
        config_args(parser)
        parser.add_argument("--store", metavar="DIR", type=Path,
                            help="the desk's results and loaded schedule "
                            "(default: $XDG_STATE_HOME/timerd/hall-desk/<hall>)")
        parser.add_argument("--wait", type=float, default=2.0, metavar="S",
                            help="longest wait for the tables' retained state (default 2)")
        if timeout_s is not None:
            parser.add_argument("--timeout", type=float, default=timeout_s, metavar="S",
                                help=f"how long to wait for the tables (default {timeout_s:g})")
        return parser

    status_p = subcommand("status", "every table: state, clock, score, last seen, clock sync",
                          timeout_s=None)
    status_p.add_argument("--once", action="store_true", help="print once and exit")
    status_p.add_argument("--json", action="store_true", help="print what is known as JSON")
    rounds = desk.add_parser("round", help="a round's schedule").add_subparsers(
        dest="round_command", required=True)
    load_p = subcommand("load", "give every table its names and round from a CSV "
                        "(round,table,home,away)", parent=rounds)
    load_p.add_argument("file", metavar="FILE")
    load_p.add_argument("--round", metavar="NAME", help="which round of FILE (default: its "
                        "only one)")
    for name, help_text in (("start-round", "start a round on every table at one instant"),
                            ("pause", "pause every running table (ITHF 10.1)"),
                            ("resume", "resume every paused table"),
                            ("reset", "reset tables for a new match (not a match in play)")):
        parser = subcommand(name, help_text)
        if name == "reset":
            parser.add_argument("table", nargs="*", metavar="TABLE")
            parser.add_argument("--all-finished", action="store_true",
                                help="every table whose match has finished")
            continue
        parser.add_argument("--table", action="append", default=[], metavar="ID",
                            help="only this table (repeatable); default: every known table")
        if name == "start-round":
            when = parser.add_mutually_exclusive_group(required=True)
            when.add_argument("--in", dest="in_", metavar="DURATION",
                              help="start this long from now: 60s, 2m, 1m30s")
            when.add_argument("--at", metavar="HH:MM:SS", help="start at this local time today")
            parser.add_argument("--round", metavar="NAME", help="the round's name (default: "
                                "the round loaded, else the start time)")
    results_p = subcommand("results", "collect, acknowledge and export the round's results; "
                           "name the missing tables", timeout_s=2.0)
    results_p.add_argument("--round", metavar="NAME", help="default: the tables' current round")
    results_p.add_argument("--csv", metavar="FILE", help="export one row per match as CSV "
                           "(- for standard output)")
    results_p.add_argument("--json", metavar="FILE", help="export the round as JSON "
                           "(- for standard output)")
    results_p.add_argument("--excel", action="store_true", help="a CSV that Excel on Windows "
                           "opens as it is: UTF-8 with a byte-order mark, separated by ';' "
                           "when the desk's language ([ui] language, else the locale) is sl "
                           "or sk")
    results_p.add_argument("--separator", choices=(",", ";"), help="the CSV's separator "
                           "(default ',', or as --excel says)")
    secure_p = desk.add_parser("secure", help="the broker's users, passwords and access list "
                               "for this hall, and each table's login (docs/hall.md)")
    config_args(secure_p)
    secure_p.add_argument("--tables", required=True, metavar="T1,T2,...",
                          help="the hall's table ids, comma-separated")
    secure_p.add_argument("--out", required=True, metavar="DIR", help="where to write them "
                          "(never through a symbolic link)")
    secure_p.add_argument("--host", metavar="NAME", help="the broker's host name or address, "
                          "as the tables reach it (default: this machine's host name)")
    secure_p.add_argument("--port", type=int, default=1883, help="the broker's port, in the "
                          "logins and the snippet's listener (default 1883)")
    board_p = subcommand("board", "serve the hall board, a web page for a big screen",
                         timeout_s=None)
    board_p.add_argument("--bind", default="127.0.0.1", metavar="ADDRESS",
                         help="listen on this address (0.0.0.0: every network; default "
                         "127.0.0.1)")
    board_p.add_argument("--port", type=int, default=8090, help="HTTP port (default 8090)")
