"""The tournament desk: `timerd hall status | round load | start-round | pause | resume |
reset | results | board`.

The desk is a plain MQTT client of the hall's broker (same `[hall]` config section as the
tables: host, port, TLS, login, hall name). It learns which tables exist from their retained
`state`, `status` and `results` topics, so it needs no list of its own: a table that was ever
online in this hall is known until its retained topics are cleared.

- `status` shows every table: link, phase, clock, score, round, last seen, clock sync, and
  warns about tables whose clock is not synchronised (their start would be off by as much).
- `round load FILE` gives each table its sides' names and the round from the schedule (CSV).
- `start-round --in 60s | --at HH:MM:SS` sends one `start_round` with the start instant in
  epoch seconds to the whole hall (or `--table`s). Results the tables still hold are stored
  and acknowledged first, so a finished table resets itself (no walk across the hall).
- `pause` / `resume`: the hall-wide interruption (ITHF 10.1: the lights went out).
- `reset TABLE... | --all-finished`: a new match on tables start-round would not reset.
- `results` collects the round's results into the desk's store, acknowledges them, prints
  them as a table, exports them (`--csv`, `--json`) and names the tables still missing.
- `board` (timerd.tools.hall_board): the hall on a big screen.

Every command that asks the tables lists every known table with its outcome (`ok`, `REFUSED
why`, `OFFLINE`, `no answer`) and exits 1 when one did not take it: no table is skipped
silently. Each message from the broker is parsed within `MAX_PAYLOAD_BYTES` and `MAX_DEPTH`,
at most `MAX_TABLES` tables are followed and `MAX_REPLIES` replies kept per table, so a
foreign client cannot exhaust the desk; however fast messages come, the board sends at most
one document per `hall_board.COALESCE_S`.
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
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from timerd import i18n
from timerd.adapters.hall.protocol import (
    MAX_PAYLOAD_BYTES,
    HallUnavailable,
    Topics,
    broker_error,
    import_aiomqtt,
    mqtt_client,
    table_of,
)
from timerd.config import Config, HallConfig, state_dir
from timerd.config.schema import said as said_problem
from timerd.core.display import elapsed_clock, shown_clock
from timerd.limits import MAX_DEPTH, InputRefused, loads_bounded
from timerd.tools.hall_round import (
    ResultStore,
    ScheduleError,
    csv_text,
    export_document,
    few,
    mapping_of,
    match_row,
    read_schedule,
    revision_of,
    round_of,
    withdrawn,
)
from timerd.tools.hall_text import terminal
from timerd.tools.hall_text import text as said
from timerd.tools.hall_wire import REPLY, RESULT, STATE, clean, problem

if TYPE_CHECKING:
    import aiomqtt

EXIT_INCOMPLETE = 1  # a table refused, did not answer, or has no result
EXIT_USAGE = 2
#: Retained messages arrive in a burst right after subscribing; this long without one ends
#: it (live messages do not count: a hall of 100 tables is never quiet for 0.3 s).
QUIET_S = 0.3
#: A table not heard from for this many heartbeats is flagged as stale.
STALE_HEARTBEATS = 3
#: The most tables the desk follows; more ids are a foreign client, not a hall.
MAX_TABLES = 1000
#: Replies kept per table, newest last (a command waits for one; the board runs for days).
MAX_REPLIES = 32
#: The languages whose decimal separator is the comma: there a spreadsheet (Excel on
#: Windows, LibreOffice) separates CSV cells with ";" and reads "48,666" as a number, "48.666"
#: as 48666 (`hall results --excel`).
COMMA_LANGUAGES = ("sl", "sk")


#: A sentence of the catalogue (timerd/i18n, `hall.*`) and its values: the terminal says it
#: in its language (`say`, hall_text), the board in the page's language.
Note = dict[str, Any]


def note(key: str, **params: Any) -> Note:
    return {"key": key, "params": params}


def say(told: Note) -> str:
    """A note as the desk's terminal prints it, in its language (hall_text)."""
    return said(told["key"], **told["params"])


# -- what the desk knows about each table -------------------------------------------------

@dataclass
class TableView:
    name: str
    link: str | None = None  # "online" / "offline", from the retained status
    state: dict[str, Any] | None = None  # the latest state, every field checked (hall_wire)
    result: dict[str, Any] | None = None  # the latest result message, checked
    replies: dict[str, dict[str, Any]] = field(default_factory=dict)  # by command id
    #: Why the latest state could not be used ("wall: a finite number expected ..."), if so.
    unreadable: str | None = None

    @property
    def hall(self) -> dict[str, Any]:
        return (self.state or {}).get("hall") or {}

    @property
    def round(self) -> str | None:
        value: str | None = self.hall.get("round")
        return value

    @property
    def clock(self) -> dict[str, Any]:
        return dict(self.hall.get("clock") or {})

    @property
    def phase(self) -> str:
        return "unreadable" if self.unreadable else str((self.state or {}).get("phase", "?"))

    def held_result(self) -> dict[str, Any]:
        """What the table's status says of its latest result: {"id", "round", "acked"}."""
        held: dict[str, Any] = self.hall.get("result") or {}
        return held

    def unacknowledged(self) -> dict[str, Any] | None:
        """The result message this table holds for the desk: its status names it (the
        table's `hall.result`) and the broker has it (the retained `results`)."""
        held = self.held_result()
        if not held or held.get("acked") or self.result is None:
            return None
        return self.result if self.result.get("id") == held.get("id") else None


#: Messages set aside (a result on another table's topic, an unreadable one) kept for the
#: report, newest last.
MAX_ASIDE = 100


class Hall:
    """Every table's latest state, status, result and command replies, from the broker.

    Every message is checked on arrival (`hall_wire`): one that cannot be used never raises
    later. At most `MAX_TABLES` tables are followed besides the tables the desk knows (its
    schedule's and those it stored results of: `scheduled`), which are always followed and
    listed first. Among the others a table that sent a valid state keeps its place; an id that
    never did gives its place (the one heard from longest ago first) to a new one, so fake
    ids published before a real table cannot hide it even without a loaded schedule (issue 41
    item 5). The ids left out are counted (`ignored`) and announced (`notices`).
    """

    def __init__(self, hall: str, scheduled: Iterable[str] = ()) -> None:
        self.hall = hall
        self.scheduled = frozenset(scheduled)
        self.tables: dict[str, TableView] = {}
        self.ignored: set[str] = set()  # ids over the cap (at most MAX_TABLES kept)
        self._taken = 0  # messages taken; `_heard`: when each table was last heard from
        self._heard: dict[str, int] = {}
        self.aside: list[tuple[dict[str, Any], str]] = []  # (result message, why)
        self.changed = asyncio.Event()
        self.retained = asyncio.Event()  # a retained message came (the burst on subscribing)

    def _view(self, table: str) -> TableView | None:
        self._taken += 1
        view = self.tables.get(table)
        if view is None and not self._room_for(table):
            if len(self.ignored) < MAX_TABLES:
                self.ignored.add(table)
            return None
        if view is None:
            view = self.tables[table] = TableView(table)
        self._heard[table] = self._taken
        return view

    def _room_for(self, table: str) -> bool:
        """Whether `table`, new, is followed: a known one always; another while fewer than
        `MAX_TABLES` others are, or in the place of the id without a valid state heard
        from longest ago (which is then ignored)."""
        if table in self.scheduled:
            return True
        others = [v for v in self.tables.values() if v.name not in self.scheduled]
        if len(others) < MAX_TABLES:
            return True
        idle = [v for v in others if v.state is None]
        if not idle:
            return False
        gone = min(idle, key=lambda v: self._heard[v.name]).name
        del self.tables[gone], self._heard[gone]
        if len(self.ignored) < MAX_TABLES:
            self.ignored.add(gone)
        return True

    def take(self, topic: str, payload: bytes, retained: bool = False) -> None:
        table = table_of(topic)
        if table is None or not topic.startswith(f"timerd/{self.hall}/"):
            return
        view = self._view(table)
        if view is None:
            return
        kind = topic.rsplit("/", 1)[-1]
        if kind == "status":
            text = payload[:16].decode(errors="replace")
            view.link = text if text in ("online", "offline") else f"? {clean(text, 16)}"
        elif kind in ("state", "results", "events"):
            self._take_json(view, kind, payload)
        self.changed.set()
        if retained:
            self.retained.set()

    def _take_json(self, view: TableView, kind: str, payload: bytes) -> None:
        try:
            data = loads_bounded(payload, MAX_PAYLOAD_BYTES, MAX_DEPTH)
            why = None
        except InputRefused as exc:
            data, why = None, said(exc.key, **exc.params)
        shape = {"state": STATE, "results": RESULT, "events": REPLY}[kind]
        why = why or problem(data, shape)
        if kind == "state":
            view.state = None if why else data
            view.unreadable = why
        elif kind == "results":
            if why is None and data["table"] != view.name:
                why = said("hall.why.names_table", table=clean(data["table"], 24),
                           topic=view.name)
            if why is None and data.get("result") is None and not withdrawn(data):
                why = said("hall.wire.no_result")
            if why:
                self.set_aside(data if isinstance(data, dict) else {"table": view.name}, why)
            else:
                view.result = data
        elif why is None and data.get("type") == "reply" and isinstance(data.get("id"), str):
            view.replies[data["id"]] = data
            while len(view.replies) > MAX_REPLIES:
                del view.replies[next(iter(view.replies))]

    def set_aside(self, message: dict[str, Any], why: str) -> None:
        self.aside.append((message, why))
        del self.aside[:-MAX_ASIDE]

    def names(self) -> list[str]:
        """The tables in the order the desk lists them: the schedule's first, then the rest."""
        return sorted(self.tables, key=lambda t: (t not in self.scheduled, t))

    def notices(self) -> list[Note]:
        """What the desk must say about the hall as a whole: the cap, when reached."""
        if not self.ignored:
            return []
        more = "+" if len(self.ignored) >= MAX_TABLES else ""
        return [note("hall.cap", most=MAX_TABLES, ignored=f"{len(self.ignored)}{more}")]

    def online(self) -> list[TableView]:
        return [v for v in self.tables.values() if v.link == "online"]

    def current_round(self) -> str | None:
        """The round most tables are in (the last start_round or names they took)."""
        rounds = Counter(v.round for v in self.tables.values() if v.round is not None)
        return rounds.most_common(1)[0][0] if rounds else None

    def next_round(self) -> str | None:
        """The round most tables were given names for (`round load`) and have no result of
        yet: what a start-round without --round starts."""
        rounds = Counter(v.round for v in self.tables.values() if v.round is not None
                         and v.held_result().get("round") != v.round)
        return rounds.most_common(1)[0][0] if rounds else None


# -- reading the desk's arguments ---------------------------------------------------------

_DURATION = re.compile(r"^(?:(?P<m>\d+)m)?(?:(?P<s>\d+(?:\.\d+)?)s?)?$")


def parse_duration(text: str) -> float:
    """`60`, `60s`, `2m`, `1m30s` as seconds."""
    found = _DURATION.match(text.strip())
    if not text.strip() or found is None:
        raise ValueError(said("hall.term.not_duration", text=repr(text)))
    return int(found["m"] or 0) * 60 + float(found["s"] or 0)


def start_instant(in_text: str | None, at_text: str | None, now: float) -> float:
    """The round's start as epoch seconds: `--in` from `now`, or `--at` local time today."""
    if in_text is not None:
        return now + parse_duration(in_text)
    if at_text is None:
        raise ValueError(said("hall.term.in_or_at"))
    try:
        clock = dt.time.fromisoformat(at_text)
    except ValueError:
        raise ValueError(said("hall.term.at_format", text=repr(at_text))) from None
    today = dt.datetime.fromtimestamp(now).date()
    at = dt.datetime.combine(today, clock).timestamp()
    if at <= now:
        raise ValueError(said("hall.term.at_passed", text=at_text))
    return at


# -- showing the hall ---------------------------------------------------------------------

def clock_sync_text(clock: dict[str, Any], max_offset_ms: float) -> tuple[str, Note | None]:
    """The clock-sync cell, and a warning if the table's clock cannot be trusted."""
    synced, offset = clock.get("synced"), clock.get("offset_ms")
    if synced is None:
        return said("hall.sync.unknown"), note(
            "hall.warn.sync_unknown",
            detail=clean(clock.get("detail") or said("hall.sync.no_chrony")))
    if not synced:
        return said("hall.sync.not_synced"), note("hall.warn.not_synced")
    if offset is not None and abs(offset) > max_offset_ms:
        return said("hall.sync.off", offset=f"{offset:+.1f}"), note(
            "hall.warn.offset", offset=f"{offset:+.1f}")
    return said("hall.sync.ok_by", offset=f"{offset:+.1f}") if offset is not None \
        else said("hall.sync.ok"), None


def shown_time(state: dict[str, Any], now: float) -> str:
    """The table's clock face as it reads now, extrapolated from when the state was sent;
    a sudden-death overtime's (ITHF 4.8) and a shootout's marked in the terminal's language."""
    age = max(0.0, now - float(state.get("wall", now)))
    phase = state.get("phase")
    if counts_to_start(state):
        return shown_clock(state["start_in_s"] - age)  # m:ss, as the table's clock shows it
    face = state.get("clock_face") or {}
    kind, value = face.get("kind"), float(face.get("value_s", state.get("remaining_s", 0.0)))
    if kind == "shootout":  # the catalogue's abbreviations: "SO", sl "KS", sk "SN"
        return said("clock.shootout", shots=face.get("text", ""))
    runs = phase == "running" or kind == "break"  # a break's clock runs by itself
    if kind == "count_up":
        return said("clock.overtime", time=elapsed_clock(value + (age if runs else 0.0)))
    return shown_clock(value - (age if runs else 0.0))


def counts_to_start(state: dict[str, Any]) -> bool:
    """The table counts down to its start signal (scheduled, or in its pre-signal)."""
    return state.get("phase") in ("scheduled", "pre_signal") and \
        state.get("start_in_s") is not None


def score_text(state: dict[str, Any]) -> str:
    score = state.get("score") or {}
    return ":".join(f"{v:g}" for v in score.values())


def goals_of(state: dict[str, Any]) -> dict[str, int]:
    """Each side's goals as numbers (the board's overlay shows them apart); a side whose
    count from the wire is not a whole number is left out."""
    score = state.get("score")
    if not isinstance(score, dict):
        return {}
    return {side: int(n) for side in ("home", "away")
            if isinstance(n := score.get(side), int | float) and not isinstance(n, bool)
            and float(n).is_integer() and 0 <= n < 10_000}


def table_row(view: TableView, now: float, config: HallConfig) -> dict[str, Any]:
    """What the desk shows of one table, in `timerd hall status` and on the board alike:
    every text from the wire `clean`ed (no control or bidi characters, bounded)."""
    state = view.state or {}
    teams = state.get("teams") or {}
    seen_s = None if "wall" not in state else max(0.0, now - state["wall"])
    online = view.link == "online"
    warnings = [note("hall.warn.unreadable", why=clean(view.unreadable, 160))] \
        if view.unreadable else []
    if online and seen_s is not None and seen_s > STALE_HEARTBEATS * config.heartbeat_s:
        warnings.append(note("hall.warn.stale", s=f"{seen_s:.0f}"))
    sync, sync_warning = clock_sync_text(view.clock, config.max_offset_ms)
    if sync_warning and online:
        warnings.append(sync_warning)
    face = state.get("clock_face") or {}
    return {"table": clean(view.name), "link": clean(view.link or "?"),
            "phase": clean(view.phase),
            "clock": clean(shown_time(state, now)) if state else "",
            "clock_kind": "start" if counts_to_start(state) else face.get("kind"),
            "score": score_text(state), "goals": goals_of(state),
            "home": clean(teams.get("home") or ""), "away": clean(teams.get("away") or ""),
            "round": clean(view.round or ""),
            "seen": "" if seen_s is None else f"{seen_s:.0f} s ago", "seen_s": seen_s,
            "sync": clean(sync), "version": clean(state.get("version") or ""),
            "warnings": warnings}


def format_table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows of cells as aligned text lines (the first row is the header)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows]


def render_status(hall: Hall, now: float, config: HallConfig) -> tuple[list[str], list[str]]:
    """The status table's lines and the warnings below it."""
    rows: list[tuple[str, ...]] = [tuple(said(f"hall.col.{k}") for k in (
        "table", "link", "phase", "clock", "score", "round", "seen", "sync", "version"))]
    warnings: list[str] = []
    for name in hall.names():
        row = table_row(hall.tables[name], now, config)
        warnings.extend(f"{row['table']}: {say(w)}" for w in row["warnings"])
        if row["clock_kind"] == "start":
            row["clock"] = said("hall.term.start_in", clock=row["clock"])
        row["link"] = terminal().get(f"hall.link.{row['link']}", row["link"])
        row["phase"] = terminal().get(f"term.phase.{row['phase']}", row["phase"]) \
            if row["phase"] != "unreadable" else said("hall.unreadable")
        row["seen"] = "" if row["seen_s"] is None else said("hall.term.ago",
                                                              s=f"{row['seen_s']:.0f}")
        rows.append(tuple(str(row[k] or "-" if k == "version" else row[k]) for k in (
            "table", "link", "phase", "clock", "score", "round", "seen", "sync", "version")))
    return format_table(rows), [*map(say, hall.notices()), *warnings]


def _mmss(seconds: Any) -> str:
    return "-" if not isinstance(seconds, int | float) else elapsed_clock(float(seconds))


def render_results(rows: list[dict[str, Any]]) -> list[str]:
    """The results table: one line per match (`match_row`s), wire text `clean`ed."""
    lines = [tuple(said(f"hall.col.{k}") for k in (
        "table", "home", "away", "score", "ended", "overtime", "duration"))]
    lines += [(clean(r["table"]), clean(r["home"] or "-"), clean(r["away"] or "-"),
               f"{r['home_goals']}:{r['away_goals']}",
               terminal().get(f"how.{r['how']}", clean(r["how"] or "?"))
               + (", " + said("reply.corrected", revision=r["revision"])
                  if r["revision"] else ""),
               _mmss(r["overtime_s"]), _mmss(r["duration_s"] or r["played_s"]))
              for r in rows]
    return format_table(lines)


# -- the tables' answers ------------------------------------------------------------------

#: The outcome words (`hall.outcome.*`) whose column the outcome lines share.
COLUMN_WORDS = ("ok", "REFUSED", "OFFLINE", "UNKNOWN")


@dataclass(frozen=True)
class Outcome:
    """How one table took a desk command: `ok`, `REFUSED`, `OFFLINE`, `no answer`,
    `UNKNOWN` (never seen), or `-` (not asked: not one of the command's tables)."""

    table: str
    word: str
    detail: str = ""
    code: str = ""  # a refusal's catalogue key (`refused.teams_in_play`)

    @property
    def failed(self) -> bool:
        return self.word not in ("ok", "-")

    def said(self) -> str:
        """The word in the terminal's language ("-": not asked)."""
        return terminal().get(f"hall.outcome.{self.word}", self.word)

    def line(self) -> str:
        """The table, the word in a column as wide as the language's longest of the words
        that name a state (ok, REFUSED, OFFLINE, UNKNOWN: 8 in English; "no answer" pushes
        its detail on), then the detail."""
        width = max(8, *(len(terminal()(f"hall.outcome.{w}")) for w in COLUMN_WORDS))
        return f"{self.table:12} {self.said():{width}} {self.detail}".rstrip()


def report(outcomes: list[Outcome]) -> int:
    """Print every outcome; EXIT_INCOMPLETE when a table asked did not take the command."""
    for outcome in sorted(outcomes, key=lambda o: o.table):
        print(outcome.line())
    return EXIT_INCOMPLETE if any(o.failed for o in outcomes) else 0


# -- talking to the broker ----------------------------------------------------------------

class Desk:
    """One connection to the broker, subscribed to every table of the hall."""

    def __init__(self, config: HallConfig, store: Path | None = None) -> None:
        self.config = config
        self.topics = Topics(config.hall, "+")
        self.hall = Hall(config.hall)
        self.store = ResultStore(store or default_store(config))
        #: The rounds loaded into the desk's store (`round load`): round: table: names.
        self.schedule: dict[str, dict[str, dict[str, str]]] = {}
        self._client: aiomqtt.Client | None = None
        self._reader: asyncio.Task[None] | None = None
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> Desk:
        self.schedule = await asyncio.to_thread(self.store.schedule)
        stored = await asyncio.to_thread(self.store.stored)
        self.hall.scheduled = frozenset(t for r in self.schedule.values() for t in r) | {
            s.table for s in stored}
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
                           payload if isinstance(payload, bytes) else str(payload).encode(),
                           retained=bool(message.retain))

    async def lost(self) -> None:
        """Wait until the connection to the broker ends; raise its error."""
        assert self._reader is not None
        await asyncio.shield(self._reader)

    async def gather(self, max_s: float, until: Callable[[], bool] | None = None) -> bool:
        """Take messages until `until()` holds (True), or no retained one came for QUIET_S
        after the first when there is no `until` (the tables' retained topics are in), or
        `max_s` passed (False)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max_s
        while True:
            if until is not None and until():
                return True
            left = deadline - loop.time()
            if left <= 0:
                return False
            event = self.hall.changed if until is not None else self.hall.retained
            event.clear()
            # The quiet spell counts from the first retained message: a loaded desk may take
            # longer than QUIET_S to get the burst going, and must not miss the whole hall.
            first = until is None and not self.hall.tables
            wait = left if until is not None or first else min(left, QUIET_S)
            try:
                await asyncio.wait_for(event.wait(), wait)
            except TimeoutError:
                if until is None:
                    return True
            if self._reader is not None and self._reader.done():
                self._reader.result()  # the broker went away: raise its error

    async def ask(self, orders: dict[str, dict[str, Any]], timeout_s: float, *,
                  hall_wide: bool = False) -> list[Outcome]:
        """Send each online table of `orders` its command (one id for all; `hall_wide`: the
        one command once, on the hall's topic, so every table gets it at the same moment)
        and wait for the answers; an outcome for every table of `orders`."""
        assert self._client is not None
        tables = self.hall.tables
        online = [t for t in orders if t in tables and tables[t].link == "online"]
        command_id = uuid.uuid4().hex[:12]
        if online:
            envelope = {"hall": self.config.hall, "id": command_id}
            if hall_wide:
                await self._client.publish(Topics(self.config.hall, "").hall_cmd, json.dumps(
                    {**orders[online[0]], **envelope}), qos=1)
            for name in [] if hall_wide else online:
                await self._client.publish(Topics(self.config.hall, name).table_cmd,
                                           json.dumps({**orders[name], **envelope}), qos=1)
            await self.gather(timeout_s, until=lambda: all(
                command_id in tables[t].replies for t in online))
        out = []
        for name in orders:
            view = tables.get(name)
            reply = None if view is None else view.replies.get(command_id)
            if view is None:
                out.append(Outcome(name, "UNKNOWN", said("hall.term.never_seen",
                                                         hall=self.config.hall)))
            elif name not in online:
                out.append(Outcome(name, "OFFLINE", said(
                    "hall.term.last_state",
                    phase=terminal().get(f"term.phase.{view.phase}", view.phase))))
            elif reply is None:
                out.append(Outcome(name, "no answer", said("hall.term.within",
                                                           s=f"{timeout_s:g}")))
            elif reply.get("ok"):
                detail = clean(reply.get("detail") or "", 160)  # a table before issue 46:
                out.append(Outcome(name, "ok", _said(reply, terminal().get(  # its phase
                    f"term.phase.{detail}", detail))))
            else:
                out.append(Outcome(name, "REFUSED", _said(reply, reply.get("error") or ""),
                                   clean(reply.get("code") or "")))
        return out

    def targets(self, asked: list[str]) -> tuple[list[str], list[Outcome]]:
        """The tables a command is for (`asked`, or every known one), and the known tables
        left out (listed as not asked, so no table is skipped silently)."""
        known = sorted(self.hall.tables)
        if not asked:
            return known, []
        return sorted(set(asked)), [Outcome(t, "-", said("hall.term.not_asked")) for t in known
                                    if t not in asked]


def _said(reply: dict[str, Any], fallback: str) -> str:
    """What a table's reply says (what it did, or why it refused), in the terminal's language
    when it gives a catalogue key and values (`code`, `params`: docs/hall.md) the desk knows,
    else `fallback`, the table's own text (a table of another version)."""
    code, params = reply.get("code"), reply.get("params")
    if isinstance(code, str) and isinstance(params, dict) and code in i18n.catalogue("en"):
        with contextlib.suppress(KeyError, ValueError, IndexError):  # values it lacks
            return clean(terminal().notice(code, params), 160)
    return clean(fallback, 160)


def default_store(config: HallConfig) -> Path:
    """Where the desk keeps the results it received (and acknowledged)."""
    return state_dir() / "hall-desk" / config.hall


def not_scheduled(schedule: dict[str, dict[str, dict[str, str]]],
                  message: dict[str, Any]) -> str | None:
    """Why a result is not the round's by the desk's schedule (None: it is, or no schedule
    was loaded): its round is not in it, or its table has no match in that round."""
    if not schedule:
        return None
    round_id, table = round_of(message), message["table"]
    if round_id not in schedule:
        return said("hall.why.round_unknown", round=clean(round_id, 40))
    if table not in schedule[round_id]:
        return said("hall.why.table_unscheduled", table=clean(table, 24),
                    round=clean(round_id, 40))
    return None


async def store_and_acknowledge(desk: Desk, messages: list[dict[str, Any]], timeout_s: float,
                                ) -> tuple[list[Outcome], list[tuple[dict[str, Any], str]]]:
    """Write each result message to the store (fsynced, in a worker thread), then tell its
    table the desk has it: only then may the table reset for a new round.

    A result is taken only from the table its topic names (`Hall.take`), for a table and
    round of the loaded schedule, and when it does not contradict what the store keeps under
    its id and revision; any other (and every message `Hall.take` set aside) is kept in the
    store's `aside/`, not acknowledged, and reported (`aside_line`): the second value.
    """
    store, now = desk.store, time.time()
    aside = list(desk.hall.aside)
    desk.hall.aside.clear()

    def save() -> list[dict[str, Any]]:
        taken = []
        for message in messages:
            why = not_scheduled(desk.schedule, message) or store.conflict(message)
            if why is None and not store.save(message, now):
                why = said("hall.why.bad_id", id=clean(message["id"], 24))
            if why:
                aside.append((message, why))
            else:
                taken.append(message)
        for message, why in aside:
            store.set_aside(message, now, why)
        return taken

    stored = await asyncio.to_thread(save)
    orders = {}
    for message in stored:
        view = desk.hall.tables.get(message["table"])
        # A withdrawal is not acknowledged: the table waits for its match's next end.
        if view is not None and view.unacknowledged() is message and not withdrawn(message):
            orders[view.name] = {"command": "ack", "result": message["id"],
                                 "revision": revision_of(message)}
    outcomes = await desk.ask(orders, timeout_s) if orders else []
    return outcomes, aside


def aside_line(message: dict[str, Any], why: str) -> str:
    """A result set aside, as the desk reports it, in the terminal's language."""
    return said("hall.term.set_aside", table=clean(mapping_of(message).get("table"), 24),
                id=clean(mapping_of(message).get("id"), 40), why=why)


# -- the subcommands ----------------------------------------------------------------------

async def status(config: HallConfig, args: argparse.Namespace) -> int:
    async with Desk(config, args.store) as desk:
        await desk.gather(args.wait)
        while True:
            now = time.time()
            if args.json:
                print(json.dumps({n: desk.hall.tables[n].__dict__ for n in desk.hall.names()},
                                 indent=2, default=str))  # \u escapes: no bidi raw
                return 0
            lines, warnings = render_status(desk.hall, now, config)
            if not args.once:
                sys.stdout.write("\x1b[H\x1b[2J")  # redraw in place
            print(said("hall.term.header", hall=repr(config.hall), host=config.host,
                       port=config.port, online=len(desk.hall.online()),
                       total=len(desk.hall.tables)))
            print("\n".join(lines))
            for warning in warnings:
                print(said("cli.warning", warning=warning))
            if args.once:
                return 0
            sys.stdout.flush()
            await desk.gather(1.0, until=lambda: False)


async def command(config: HallConfig, args: argparse.Namespace,
                  make: Callable[[Desk], dict[str, Any] | None]) -> int:
    """Send the command `make(desk)` gives (once the tables are known) to every known table
    (or the `--table`s) and print every table's outcome; exit 1 unless each one took it."""
    async with Desk(config, args.store) as desk:
        await desk.gather(args.wait)
        for notice in desk.hall.notices():
            print(said("cli.warning", warning=say(notice)))
        targets, left_out = desk.targets(args.table)
        if not targets:
            print(f"timerd hall: {said('hall.term.no_table', hall=config.hall)}",
                  file=sys.stderr)
            return EXIT_INCOMPLETE
        if args.hall_command == "start-round":  # before the instant is fixed: acks take time
            await _collect_before_start(desk, args, targets)
        message = make(desk)
        if message is None:
            return EXIT_USAGE
        outcomes = await desk.ask(dict.fromkeys(targets, message), args.timeout,
                                  hall_wide=not args.table)
        return report(outcomes + left_out)


async def _collect_before_start(desk: Desk, args: argparse.Namespace,
                                targets: list[str]) -> None:
    """Store and acknowledge the results the finished tables still hold, so start_round
    resets them; warn about clocks that would start the round off."""
    for name in targets:
        view = desk.hall.tables.get(name)
        _, warning = clock_sync_text({} if view is None else view.clock,
                                     desk.config.max_offset_ms)
        if view is not None and warning and view.link == "online":
            print(said("cli.warning", warning=said("hall.term.start_off", table=name,
                                                   warning=say(warning))))
    held = [m for t in targets if (v := desk.hall.tables.get(t)) and (m := v.unacknowledged())]
    acks, aside = await store_and_acknowledge(desk, held, args.timeout)
    for message, why in aside:
        print(said("cli.warning", warning=aside_line(message, why)))
    for outcome in acks:
        if outcome.word == "ok":
            print(said("hall.term.stored_acked", table=outcome.table))
        else:
            print(said("cli.warning", warning=said(
                "hall.term.stored_not_acked", table=outcome.table, word=outcome.said(),
                detail=outcome.detail).rstrip()))


def _round_start(args: argparse.Namespace, now: float) -> float | None:
    try:
        return start_instant(args.in_, args.at, now)
    except ValueError as exc:
        print(f"timerd hall start-round: {exc}", file=sys.stderr)
        return None


async def start_round(config: HallConfig, args: argparse.Namespace) -> int:
    if _round_start(args, time.time()) is None:
        return EXIT_USAGE  # before bothering the broker

    def make(desk: Desk) -> dict[str, Any] | None:
        # Read the clock only now: `--in 60s` counts from when the command goes out.
        now = time.time()
        at = _round_start(args, now)
        if at is None:
            return None
        start = dt.datetime.fromtimestamp(at)
        round_id = args.round or desk.hall.next_round() or start.strftime("%Y-%m-%d %H:%M:%S")
        print(said("hall.term.start_signal", round=round_id,
                   time=start.strftime("%H:%M:%S.%f")[:-3], s=f"{at - now:.1f}"))
        return {"command": "start_round", "at": at, "round": round_id}

    return await command(config, args, make)


async def reset(config: HallConfig, args: argparse.Namespace) -> int:
    if bool(args.table) == args.all_finished:
        print(f"timerd hall reset: {said('hall.term.reset_whom')}", file=sys.stderr)
        return EXIT_USAGE
    message = {"command": "reset", "finished_only": args.all_finished}
    return await command(config, args, lambda _: message)


async def load_round(config: HallConfig, args: argparse.Namespace) -> int:
    """`round load FILE`: each table of the round gets its names and the round (`teams`);
    the round is kept in the desk's store (its tables always followed, its results checked
    against it)."""
    try:
        round_id, assignments = await asyncio.to_thread(read_schedule, Path(args.file),
                                                        args.round)
    except ScheduleError as exc:
        print(f"timerd hall round load: {exc}", file=sys.stderr)
        return EXIT_USAGE
    # Kept before the desk subscribes: its tables are followed from the first message on.
    await asyncio.to_thread(ResultStore(args.store or default_store(config)).save_schedule,
                            round_id, assignments)
    async with Desk(config, args.store) as desk:
        await desk.gather(args.wait)
        print(said("hall.term.loaded", round=round_id, n=len(assignments), file=args.file))
        orders = {a.table: {"command": "teams", "home": a.home, "away": a.away,
                            "round": round_id} for a in assignments}
        outcomes = await desk.ask(orders, args.timeout)
        idle = [Outcome(t, "-", said("hall.term.no_match", round=round_id))
                for t in desk.hall.tables
                if t not in orders]
        code = report(outcomes + idle)
        busy = sorted(o.table for o in outcomes if o.code == "refused.teams_in_play")
        if busy:  # issue 30 item 2: the table refuses; the round it plays keeps its names
            print(said("hall.term.busy", round=round_id, tables=few(busy, 10)))
        return code


async def results(config: Config, args: argparse.Namespace) -> int:
    """`results`: the round's results from the store and the tables, stored and acknowledged,
    as a table (on standard error when an export goes to standard output) and exported."""
    human = sys.stderr if "-" in (args.csv, args.json) else sys.stdout
    async with Desk(config.hall, args.store) as desk:
        await desk.gather(args.wait)
        round_id = args.round or desk.hall.current_round()
        if round_id is None:
            print(f"timerd hall results: {said('hall.term.no_round')}", file=sys.stderr)
            return EXIT_INCOMPLETE
        before = await asyncio.to_thread(desk.store.of_round, round_id)

        def live() -> dict[str, dict[str, Any]]:
            return {n: v.result for n, v in desk.hall.tables.items()
                    if v.result is not None and v.result.get("round") == round_id}

        expected = set(desk.schedule.get(round_id) or desk.hall.tables)
        await desk.gather(args.timeout, until=lambda: expected <= {*before.results, *live()})
        acks, aside = await store_and_acknowledge(desk, list(live().values()), args.timeout)
        found = await asyncio.to_thread(desk.store.of_round, round_id)
        got = found.results
        if not got and not found.withdrawn and not _round_known(desk, round_id):
            for message, why in aside:
                print(said("cli.warning", warning=clean(aside_line(message, why), 400)),
                      file=sys.stderr)
            rounds = await asyncio.to_thread(_rounds_known, desk)
            print("timerd hall results: " + said("hall.term.round_unknown",
                                                 round=clean(round_id), rounds=few(rounds)),
                  file=sys.stderr)
            return EXIT_INCOMPLETE
        rows = [match_row(got[name]) for name in sorted(got)]
        named = _names_from_schedule(rows, desk.schedule.get(round_id) or {})
        missing = sorted(expected - set(got))
        print(said("hall.term.round_results", round=clean(round_id), n=len(got),
                   total=len(expected | set(got))), file=human)
        if rows:
            print("\n".join(render_results(rows)), file=human)
        for table in sorted(found.withdrawn):  # issue 41 item 2: taken back, not final
            reason = clean(found.withdrawn[table].get("withdrawn"), 24)
            print(said("hall.term.withdrawn", table=clean(table), reason=reason), file=human)
        left = [m for m in missing if m not in found.withdrawn]
        if left:
            print(said("hall.term.missing", tables=", ".join(clean(m) for m in left)),
                  file=human)
        # Held for this round (a conflict, a jump, a forgery): the round is not done.
        held = [m for m, _ in aside if round_of(mapping_of(m)) == round_id]
        for line in found.conflicts + [aside_line(*a) for a in aside] + named:
            print(said("cli.warning", warning=clean(line, 400)), file=human)
        for outcome in acks:
            if outcome.failed:
                print(said("cli.warning", warning=said(
                    "hall.term.ack_failed", table=outcome.table, word=outcome.said(),
                    detail=outcome.detail).rstrip()), file=human)
        await asyncio.to_thread(lambda: _export(args, config, round_id, rows, missing,
                                                taken_back=sorted(found.withdrawn)))
        return EXIT_INCOMPLETE if missing or not got or found.conflicts or held else 0


def _names_from_schedule(rows: list[dict[str, Any]],
                         scheduled: dict[str, dict[str, str]]) -> list[str]:
    """Fill in the names of a result its table sent without them from the desk's schedule
    (issue 41 item 1: a table that lost them), and say so, a sentence per table."""
    lines = []
    for row in rows:
        names = scheduled.get(row["table"]) or {}
        if row["home"] or row["away"] or not any(names.values()):
            continue
        row["home"], row["away"] = names.get("home", ""), names.get("away", "")
        lines.append(said("hall.term.names_from_schedule", table=row["table"],
                          home=row["home"], away=row["away"]))
    return lines


def _round_known(desk: Desk, round_id: str) -> bool:
    """A round the desk's schedule has or a table is in (a typo is neither)."""
    return round_id in desk.schedule or any(v.round == round_id
                                            for v in desk.hall.tables.values())


def _rounds_known(desk: Desk) -> list[str]:
    """Every round the desk knows of: the schedule's, the tables', the stored results'."""
    rounds = {*desk.schedule, *(v.round for v in desk.hall.tables.values() if v.round)}
    rounds.update(str(s.round) for s in desk.store.stored() if s.round is not None)
    return sorted(rounds)


def _export(args: argparse.Namespace, config: Config, round_id: str,
            rows: list[dict[str, Any]], missing: list[str], *, taken_back: list[str]) -> None:
    """`--csv FILE`, `--json FILE` (`-`: standard output), in a worker thread."""
    if args.csv:
        comma = args.excel and i18n.resolve(config.ui.language) in COMMA_LANGUAGES
        text = csv_text(rows, args.separator or (";" if comma else ","),
                        "," if comma else ".")
        _write_out(args.csv, "\ufeff" + text if args.excel else text)
    if args.json:
        document = export_document(config.hall.hall, round_id, rows, missing, taken_back)
        _write_out(args.json, json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def _write_out(target: str, text: str) -> None:
    if target == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        Path(target).write_text(text, encoding="utf-8")


def main(config: Config, args: argparse.Namespace) -> int:
    """`timerd hall status | round load | start-round | pause | resume | reset | results`
    (`timerd hall board` is `hall_board.main`)."""
    hall = config.hall
    run: dict[str, Callable[[], Coroutine[Any, Any, int]]] = {
        "status": lambda: status(hall, args),
        "round": lambda: load_round(hall, args),
        "start-round": lambda: start_round(hall, args),
        "pause": lambda: command(hall, args, lambda _: {"command": "pause"}),
        "resume": lambda: command(hall, args, lambda _: {"command": "resume"}),
        "reset": lambda: reset(hall, args),
        "results": lambda: results(config, args),
    }
    return run_command(hall, run[args.hall_command])


def run_command(hall: HallConfig, job: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Run one desk command to its end, its exit code; without the MQTT client, or when the
    broker fails, one line saying so (EXIT_USAGE); Ctrl-C ends it quietly. A desk without a
    login is refused unless `hall.allow_anonymous` says so (issue 41 item 5)."""
    if (why := hall.anonymous()) is not None:
        print(f"timerd hall: {said_problem(why.under('hall'), terminal())}", file=sys.stderr)
        return EXIT_USAGE
    try:
        mqtt = import_aiomqtt()
    except HallUnavailable as exc:
        print(f"timerd hall: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return asyncio.run(job())
    except KeyboardInterrupt:
        return 0
    except mqtt.MqttError as exc:
        print("timerd hall: " + said("hall.term.broker", host=hall.host, port=hall.port,
                                     error=broker_error(exc)), file=sys.stderr)
        return EXIT_USAGE
