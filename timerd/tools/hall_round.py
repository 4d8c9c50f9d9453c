"""The desk's files: a round's schedule in, its results stored and exported (docs/hall.md).

- `read_schedule`: the round's assignments from CSV (`round,table,home,away`, UTF-8, a BOM
  from a spreadsheet allowed), checked whole before anything is sent: at most
  `MAX_SCHEDULE_BYTES` and `MAX_SCHEDULE_ROWS`, names within the match's `NAME_MAX`.
- `ResultStore`: every result the desk has received, one file per result id, written and
  fsynced before the desk acknowledges it to its table (the table keeps it until then), so a
  result is never only on the broker or in a log.
- `match_row` / `MATCH_COLUMNS`: the one shape of an exported match (CSV and JSON), built here
  and nowhere else; `export_document` wraps the rows with the format's `version`.

Plain files and no asyncio: the desk runs the writes in a worker thread.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from timerd.core.record import NAME_MAX
from timerd.disk import replace_file

#: A round's schedule for a hall of hundreds of tables is a few tens of KiB.
MAX_SCHEDULE_BYTES = 1 << 20
MAX_SCHEDULE_ROWS = 5000
SCHEDULE_COLUMNS = ("round", "table", "home", "away")
#: The export format (CSV columns, JSON document); bump it when a column changes meaning.
EXPORT_VERSION = 1
#: One row per match, in this order (docs/hall.md, "Results for the tournament software").
MATCH_COLUMNS = ("round", "table", "home", "away", "home_goals", "away_goals", "how",
                 "winner", "overtime_s", "played_s", "duration_s", "started", "finished",
                 "profile", "match_id", "result_id")
#: A result id as tables make them: the match id (`20261203T222915Z-ab12cd`; a uuid4 hex
#: before issue 14), a safe file name; anything else is not stored under its id.
_RESULT_ID = re.compile(r"^[0-9A-Za-z][0-9A-Za-z_-]{7,63}$")


class ScheduleError(ValueError):
    """The schedule cannot be used; the message names the line."""


@dataclass(frozen=True)
class Assignment:
    table: str
    home: str
    away: str


def read_schedule(path: Path, round_id: str | None) -> tuple[str, list[Assignment]]:
    """Round `round_id`'s assignments in `path` (the file's only round when None)."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_SCHEDULE_BYTES + 1)
    except OSError as exc:
        raise ScheduleError(f"{path}: {exc.strerror or exc}") from None
    if len(data) > MAX_SCHEDULE_BYTES:
        raise ScheduleError(f"{path}: larger than {MAX_SCHEDULE_BYTES:,} bytes; one hall's "
                            "rounds are far less")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScheduleError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start}); save "
                            "it as CSV UTF-8") from None
    rows = csv.DictReader(io.StringIO(text))
    missing = [c for c in SCHEDULE_COLUMNS if c not in (rows.fieldnames or [])]
    if missing:
        raise ScheduleError(f"{path}: the first line must name the columns "
                            f"{','.join(SCHEDULE_COLUMNS)}; missing {', '.join(missing)}")
    rounds: dict[str, list[Assignment]] = {}
    seen: dict[tuple[str, str], int] = {}
    for number, row in enumerate(rows, start=2):
        if number - 1 > MAX_SCHEDULE_ROWS:
            raise ScheduleError(f"{path}: more than {MAX_SCHEDULE_ROWS} rows")
        cells = {c: (row.get(c) or "").strip() for c in SCHEDULE_COLUMNS}
        if not any(cells.values()):
            continue  # a blank line
        for column, value in cells.items():
            if not value and column in ("round", "table"):
                raise ScheduleError(f"{path} line {number}: no {column}")
            if len(value) > NAME_MAX or not value.isprintable():
                raise ScheduleError(f"{path} line {number}: {column} must be at most "
                                    f"{NAME_MAX} printable characters")
        key = (cells["round"], cells["table"])
        if key in seen:
            raise ScheduleError(f"{path} line {number}: table {key[1]} has a match in round "
                                f"{key[0]} already (line {seen[key]})")
        seen[key] = number
        rounds.setdefault(cells["round"], []).append(
            Assignment(cells["table"], cells["home"], cells["away"]))
    if round_id is None:
        if len(rounds) != 1:
            raise ScheduleError(f"{path} holds {len(rounds)} rounds "
                                f"({', '.join(rounds) or 'none'}); say which with --round")
        round_id = next(iter(rounds))
    if round_id not in rounds:
        raise ScheduleError(f"{path} has no round {round_id!r} (it has "
                            f"{', '.join(rounds) or 'none'})")
    return round_id, rounds[round_id]


# -- results at the desk ------------------------------------------------------------------

class ResultStore:
    """The results the desk has, one JSON file per result id under `directory`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def save(self, message: Mapping[str, Any]) -> bool:
        """Keep a table's result message (fsynced); False when it has no usable id."""
        result_id = message.get("id")
        if not isinstance(result_id, str) or not _RESULT_ID.match(result_id):
            return False
        path = self.directory / f"{result_id}.json"
        if not path.exists():
            replace_file(path, json.dumps(message, ensure_ascii=False).encode())
        return True

    def of_round(self, round_id: str) -> dict[str, dict[str, Any]]:
        """The stored results of `round_id` by table, the latest per table."""
        out: dict[str, dict[str, Any]] = {}
        if not self.directory.is_dir():
            return out
        for path in self.directory.glob("*.json"):
            try:
                message = json.loads(path.read_bytes())
            except (OSError, ValueError):
                continue  # not one of ours; the file stays for a person to look at
            if isinstance(message, dict) and message.get("round") == round_id:
                table = str(message.get("table"))
                if table not in out or message.get("wall", 0) > out[table].get("wall", 0):
                    out[table] = message
        return out


# -- export -------------------------------------------------------------------------------

def _seconds_between(started: Any, finished: Any) -> float | None:
    try:
        return round((datetime.fromisoformat(finished)
                      - datetime.fromisoformat(started)).total_seconds(), 3)
    except (TypeError, ValueError):
        return None


def mapping_of(value: Any) -> Mapping[str, Any]:
    """`value` when it is a JSON object, else an empty one (a payload from a foreign client)."""
    return value if isinstance(value, Mapping) else {}


def match_row(message: Mapping[str, Any]) -> dict[str, Any]:
    """One exported match from a table's result message (`MATCH_COLUMNS`, in order).

    `played_s` is match time (ITHF 4.2: the clock, overtime included); `duration_s` the wall
    time from the start signal to the end, interruptions included (ITHF 10.2).
    """
    result = mapping_of(message.get("result"))
    teams, score = mapping_of(result.get("teams")), mapping_of(result.get("score"))
    row = {
        "round": message.get("round") or result.get("round"),
        "table": message.get("table"),
        "home": teams.get("home", ""),
        "away": teams.get("away", ""),
        "home_goals": score.get("home"),
        "away_goals": score.get("away"),
        "how": result.get("how"),
        "winner": result.get("winner"),
        "overtime_s": result.get("overtime_s"),
        "played_s": result.get("played_s"),
        "duration_s": _seconds_between(result.get("started"), result.get("finished")),
        "started": result.get("started"),
        "finished": result.get("finished"),
        "profile": result.get("profile"),
        "match_id": result.get("match_id"),
        "result_id": message.get("id"),
    }
    assert tuple(row) == MATCH_COLUMNS
    return row


def export_document(hall: str, round_id: str | None, rows: Iterable[Mapping[str, Any]],
                    missing: Iterable[str]) -> dict[str, Any]:
    """The JSON export: the rows with the format's version, and the tables still missing."""
    return {"version": EXPORT_VERSION, "hall": hall, "round": round_id,
            "columns": list(MATCH_COLUMNS), "matches": [dict(r) for r in rows],
            "missing": list(missing)}


def csv_text(rows: Iterable[Mapping[str, Any]]) -> str:
    """The CSV export: a header of `MATCH_COLUMNS`, one line per match; empty for null."""
    out = io.StringIO()
    writer = csv.DictWriter(out, MATCH_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()
