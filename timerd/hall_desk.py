"""The tournament desk: `timerd hall status | start-round | pause | resume | results`.

The desk is a plain MQTT client of the hall's broker (same `[hall]` config section as the
tables: host, port, TLS, login, hall name). It learns which tables exist from their retained
`state`, `status` and `results` topics, so it needs no list of its own: a table that was ever
online in this hall is known until its retained topics are cleared.

- `status` shows every table: link, phase, clock, score, round, last seen, clock sync, and
  warns about tables whose clock is not synchronised (their start would be off by as much).
- `start-round --in 60s | --at HH:MM:SS` sends one `start_round` with the start instant in
  epoch seconds to the whole hall (or `--table`s) and prints each table's answer.
- `pause` / `resume`: the hall-wide interruption (ITHF 10.1: the lights went out).
- `results` collects the round's results and names the tables still missing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import re
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from timerd.adapters.hall import HallUnavailable, Topics, import_aiomqtt, mqtt_client, table_of
from timerd.config import Config, HallConfig
from timerd.core.display import elapsed_clock, shown_clock

if TYPE_CHECKING:
    import aiomqtt

EXIT_INCOMPLETE = 1  # a table refused, did not answer, or has no result
EXIT_USAGE = 2
#: Retained messages arrive in a burst right after subscribing; this much silence ends it.
QUIET_S = 0.3
#: A table not heard from for this many heartbeats is flagged as stale.
STALE_HEARTBEATS = 3


# -- what the desk knows about each table -------------------------------------------------

@dataclass
class TableView:
    name: str
    link: str | None = None  # "online" / "offline", from the retained status
    state: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    replies: dict[str, dict[str, Any]] = field(default_factory=dict)  # by command id

    @property
    def round(self) -> str | None:
        hall = (self.state or {}).get("hall") or {}
        value = hall.get("round")
        return None if value is None else str(value)

    @property
    def clock(self) -> dict[str, Any]:
        return dict(((self.state or {}).get("hall") or {}).get("clock") or {})


class Hall:
    """Every table's latest state, status, result and command replies, from the broker."""

    def __init__(self, hall: str) -> None:
        self.hall = hall
        self.tables: dict[str, TableView] = {}
        self.changed = asyncio.Event()

    def take(self, topic: str, payload: bytes) -> None:
        table = table_of(topic)
        if table is None or not topic.startswith(f"timerd/{self.hall}/"):
            return
        view = self.tables.setdefault(table, TableView(table))
        kind = topic.rsplit("/", 1)[-1]
        if kind == "status":
            view.link = payload.decode(errors="replace")
        elif kind in ("state", "results", "events"):
            try:
                data = json.loads(payload)
            except ValueError:
                return  # not from a timerd table; the desk shows what it can
            if not isinstance(data, dict):
                return
            if kind == "state":
                view.state = data
            elif kind == "results":
                view.result = data
            elif data.get("type") == "reply" and isinstance(data.get("id"), str):
                view.replies[data["id"]] = data
        self.changed.set()

    def online(self) -> list[TableView]:
        return [v for v in self.tables.values() if v.link == "online"]

    def current_round(self) -> str | None:
        """The round most tables are in (the last start_round they took)."""
        rounds = Counter(v.round for v in self.tables.values() if v.round is not None)
        return rounds.most_common(1)[0][0] if rounds else None


# -- reading the desk's arguments ---------------------------------------------------------

_DURATION = re.compile(r"^(?:(?P<m>\d+)m)?(?:(?P<s>\d+(?:\.\d+)?)s?)?$")


def parse_duration(text: str) -> float:
    """`60`, `60s`, `2m`, `1m30s` as seconds."""
    found = _DURATION.match(text.strip())
    if not text.strip() or found is None:
        raise ValueError(f"{text!r} is not a duration like 60s, 2m or 1m30s")
    return int(found["m"] or 0) * 60 + float(found["s"] or 0)


def start_instant(in_text: str | None, at_text: str | None, now: float) -> float:
    """The round's start as epoch seconds: `--in` from `now`, or `--at` local time today."""
    if in_text is not None:
        return now + parse_duration(in_text)
    if at_text is None:
        raise ValueError("give --in or --at")
    try:
        clock = dt.time.fromisoformat(at_text)
    except ValueError:
        raise ValueError(f"--at {at_text!r}: write HH:MM:SS or HH:MM") from None
    today = dt.datetime.fromtimestamp(now).date()
    at = dt.datetime.combine(today, clock).timestamp()
    if at <= now:
        raise ValueError(f"--at {at_text}: that time has passed today")
    return at


# -- showing the hall ---------------------------------------------------------------------

def clock_sync_text(clock: dict[str, Any], max_offset_ms: float) -> tuple[str, str | None]:
    """The clock-sync cell, and a warning if the table's clock cannot be trusted."""
    synced, offset = clock.get("synced"), clock.get("offset_ms")
    if synced is None:
        return "unknown", f"clock sync unknown ({clock.get('detail') or 'no chrony'})"
    if not synced:
        return "NOT SYNCED", "clock not synchronised"
    if offset is not None and abs(offset) > max_offset_ms:
        return f"OFF {offset:+.1f} ms", f"clock off by {offset:+.1f} ms"
    return f"ok {offset:+.1f} ms" if offset is not None else "ok", None


def shown_time(state: dict[str, Any], now: float) -> str:
    """The table's clock as it reads now, extrapolated from when the state was sent."""
    age = max(0.0, now - float(state.get("wall", now)))
    phase = state.get("phase")
    if phase in ("scheduled", "pre_signal") and state.get("start_in_s") is not None:
        return f"start in {max(0.0, state['start_in_s'] - age):.0f} s"
    face = state.get("clock_face")
    face = face if isinstance(face, dict) else {}
    kind, value = face.get("kind"), float(face.get("value_s", state.get("remaining_s", 0.0)))
    if kind == "shootout":
        return f"SO {face.get('text', '')}"
    runs = phase == "running" or kind == "break"  # a break's clock runs by itself
    if kind == "count_up":
        return "OT +" + elapsed_clock(value + (age if runs else 0.0))
    return shown_clock(value - (age if runs else 0.0))


def score_text(state: dict[str, Any]) -> str:
    score = state.get("score")
    if isinstance(score, dict):
        return ":".join(str(v) for v in score.values())
    return "" if score is None else str(score)


def render_status(hall: Hall, now: float, config: HallConfig) -> tuple[list[str], list[str]]:
    """The status table's lines and the warnings below it."""
    header = ("TABLE", "LINK", "PHASE", "CLOCK", "SCORE", "ROUND", "SEEN", "CLOCK SYNC")
    rows = [header]
    warnings = []
    for name in sorted(hall.tables):
        view = hall.tables[name]
        state = view.state or {}
        seen = ""
        if "wall" in state:
            age = now - float(state["wall"])
            seen = f"{age:.0f} s ago"
            if view.link == "online" and age > STALE_HEARTBEATS * config.heartbeat_s:
                warnings.append(f"{name}: not heard from for {age:.0f} s")
        sync, warning = clock_sync_text(view.clock, config.max_offset_ms)
        if warning and view.link == "online":
            warnings.append(f"{name}: {warning}")
        rows.append((name, view.link or "?", str(state.get("phase", "?")),
                     shown_time(state, now) if state else "", score_text(state),
                     view.round or "", seen, sync))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    return lines, warnings


# -- talking to the broker ----------------------------------------------------------------

class Desk:
    """One connection to the broker, subscribed to every table of the hall."""

    def __init__(self, config: HallConfig) -> None:
        self.config = config
        self.topics = Topics(config.hall, "+")
        self.hall = Hall(config.hall)
        self._client: aiomqtt.Client | None = None
        self._reader: asyncio.Task[None] | None = None
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> Desk:
        mqtt = import_aiomqtt()
        client = mqtt_client(mqtt, self.config, f"timerd-desk-{uuid.uuid4().hex[:8]}")
        self._client = await self._stack.enter_async_context(client)
        await client.subscribe(f"timerd/{self.config.hall}/tables/+/+", qos=1)
        self._reader = asyncio.create_task(self._read(client))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        await self._stack.aclose()

    async def _read(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            payload = message.payload
            self.hall.take(str(message.topic),
                           payload if isinstance(payload, bytes) else str(payload).encode())

    async def gather(self, max_s: float, until: Callable[[], bool] | None = None) -> bool:
        """Take messages until `until()` holds (True), or none came for QUIET_S when there
        is no `until`, or `max_s` passed (False)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max_s
        while True:
            if until is not None and until():
                return True
            left = deadline - loop.time()
            if left <= 0:
                return False
            self.hall.changed.clear()
            wait = left if until is not None else min(left, QUIET_S)
            try:
                await asyncio.wait_for(self.hall.changed.wait(), wait)
            except TimeoutError:
                if until is None:
                    return True
            if self._reader is not None and self._reader.done():
                self._reader.result()  # the broker went away: raise its error

    async def send(self, command: dict[str, Any], tables: list[str]) -> str:
        """Publish `command` to the hall (or to each of `tables`); returns its id."""
        assert self._client is not None
        command_id = uuid.uuid4().hex[:12]
        payload = json.dumps({**command, "hall": self.config.hall, "id": command_id})
        for topic in [Topics(self.config.hall, t).table_cmd for t in tables] or [
                Topics(self.config.hall, "").hall_cmd]:
            await self._client.publish(topic, payload, qos=1)
        return command_id


# -- the subcommands ----------------------------------------------------------------------

async def status(config: HallConfig, args: argparse.Namespace) -> int:
    async with Desk(config) as desk:
        await desk.gather(args.wait)
        while True:
            now = time.time()
            if args.json:
                print(json.dumps({n: v.__dict__ for n, v in sorted(desk.hall.tables.items())},
                                 indent=2, default=str))
                return 0
            lines, warnings = render_status(desk.hall, now, config)
            if not args.once:
                sys.stdout.write("\x1b[H\x1b[2J")  # redraw in place
            print(f"hall {config.hall!r} on {config.host}:{config.port}, "
                  f"{len(desk.hall.online())} of {len(desk.hall.tables)} tables online")
            print("\n".join(lines))
            for warning in warnings:
                print(f"warning: {warning}")
            if args.once:
                return 0
            sys.stdout.flush()
            await desk.gather(1.0, until=lambda: False)


async def command(config: HallConfig, args: argparse.Namespace,
                  make: Callable[[], dict[str, Any] | None]) -> int:
    """Send the command `make()` gives (after the tables are known) and print each table's
    answer; exit 1 unless every table took it."""
    async with Desk(config) as desk:
        await desk.gather(args.wait)
        targets = sorted(args.table or [v.name for v in desk.hall.online()])
        if not targets:
            print(f"timerd hall: no table of hall {config.hall} is online", file=sys.stderr)
            return EXIT_INCOMPLETE
        message = make()
        if message is None:
            return EXIT_USAGE
        for name in targets:
            view = desk.hall.tables.get(name)
            if view is None:
                print(f"warning: {name}: unknown table (never seen in hall {config.hall})")
                continue
            _, warning = clock_sync_text(view.clock, config.max_offset_ms)
            if warning and message["command"] == "start_round":
                print(f"warning: {name}: {warning}; its start may be off by as much")
        command_id = await desk.send(message, args.table)

        def answered() -> bool:
            return all(command_id in desk.hall.tables.get(n, TableView(n)).replies
                       for n in targets)

        await desk.gather(args.timeout, until=answered)
        complete = True
        for name in targets:
            reply = desk.hall.tables.get(name, TableView(name)).replies.get(command_id)
            if reply is None:
                complete = False
                print(f"{name:12} no reply")
            elif reply.get("ok"):
                print(f"{name:12} ok       {reply.get('detail', '')}")
            else:
                complete = False
                print(f"{name:12} REFUSED  {reply.get('error', '')}")
        return 0 if complete else EXIT_INCOMPLETE


def _round_start(args: argparse.Namespace, now: float) -> float | None:
    try:
        return start_instant(args.in_, args.at, now)
    except ValueError as exc:
        print(f"timerd hall start-round: {exc}", file=sys.stderr)
        return None


async def start_round(config: HallConfig, args: argparse.Namespace) -> int:
    if _round_start(args, time.time()) is None:
        return EXIT_USAGE  # before bothering the broker

    def make() -> dict[str, Any] | None:
        # Read the clock only now: `--in 60s` counts from when the command goes out.
        now = time.time()
        at = _round_start(args, now)
        if at is None:
            return None
        start = dt.datetime.fromtimestamp(at)
        round_id = args.round or start.strftime("%Y-%m-%d %H:%M:%S")
        print(f"round {round_id}: start signal at {start.strftime('%H:%M:%S.%f')[:-3]} "
              f"(in {at - now:.1f} s)")
        return {"command": "start_round", "at": at, "round": round_id}

    return await command(config, args, make)


async def results(config: HallConfig, args: argparse.Namespace) -> int:
    async with Desk(config) as desk:
        await desk.gather(args.wait)
        round_id = args.round or desk.hall.current_round()

        def of_round(view: TableView) -> dict[str, Any] | None:
            result = view.result
            return result if result is not None and result.get("round") == round_id else None

        await desk.gather(args.timeout, until=lambda: all(
            of_round(v) for v in desk.hall.tables.values()))
        got = {n: r for n, v in sorted(desk.hall.tables.items()) if (r := of_round(v))}
        missing = sorted(set(desk.hall.tables) - set(got))
        if args.json:
            print(json.dumps({"round": round_id, "results": got, "missing": missing}, indent=2))
        else:
            print(f"round {round_id}: {len(got)} of {len(desk.hall.tables)} results")
            for name, result in got.items():
                print(f"{name:12} {json.dumps(result.get('result'))}")
            if missing:
                print("missing: " + ", ".join(missing))
        return EXIT_INCOMPLETE if missing or not desk.hall.tables else 0


# -- the command line ---------------------------------------------------------------------

def add_parser(sub: Any, config_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """`timerd hall ...` under `timerd`'s subcommands."""
    hall = sub.add_parser("hall", help="the tournament desk for hall mode (docs/hall.md)")
    desk = hall.add_subparsers(dest="hall_command", required=True)

    def subcommand(name: str, help_text: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = desk.add_parser(name, help=help_text)
        config_args(parser)
        parser.add_argument("--wait", type=float, default=2.0, metavar="S",
                            help="longest wait for the tables' retained state (default 2)")
        return parser

    status_p = subcommand("status", "every table: state, clock, score, last seen, clock sync")
    status_p.add_argument("--once", action="store_true", help="print once and exit")
    status_p.add_argument("--json", action="store_true", help="print what is known as JSON")
    for name, help_text in (("start-round", "start a round on every table at one instant"),
                            ("pause", "pause every running table (ITHF 10.1)"),
                            ("resume", "resume every paused table")):
        parser = subcommand(name, help_text)
        parser.add_argument("--table", action="append", default=[], metavar="ID",
                            help="only this table (repeatable); default: every online table")
        parser.add_argument("--timeout", type=float, default=5.0, metavar="S",
                            help="how long to wait for the tables' answers (default 5)")
        if name == "start-round":
            when = parser.add_mutually_exclusive_group(required=True)
            when.add_argument("--in", dest="in_", metavar="DURATION",
                              help="start this long from now: 60s, 2m, 1m30s")
            when.add_argument("--at", metavar="HH:MM:SS", help="start at this local time today")
            parser.add_argument("--round", metavar="NAME",
                                help="the round's name (default: its start time)")
    results_p = subcommand("results", "collect the round's results; name the missing tables")
    results_p.add_argument("--round", metavar="NAME", help="default: the tables' current round")
    results_p.add_argument("--timeout", type=float, default=2.0, metavar="S",
                           help="how long to wait for missing results (default 2)")
    results_p.add_argument("--json", action="store_true", help="print as JSON")


def main(config: Config, args: argparse.Namespace) -> int:
    hall = config.hall
    try:
        mqtt = import_aiomqtt()
    except HallUnavailable as exc:
        print(f"timerd hall: {exc}", file=sys.stderr)
        return EXIT_USAGE
    run: dict[str, Callable[[], Any]] = {
        "status": lambda: status(hall, args),
        "start-round": lambda: start_round(hall, args),
        "pause": lambda: command(hall, args, lambda: {"command": "pause"}),
        "resume": lambda: command(hall, args, lambda: {"command": "resume"}),
        "results": lambda: results(hall, args),
    }
    try:
        code: int = asyncio.run(run[args.hall_command]())
    except KeyboardInterrupt:
        return 0
    except mqtt.MqttError as exc:
        print(f"timerd hall: broker {hall.host}:{hall.port}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return code
