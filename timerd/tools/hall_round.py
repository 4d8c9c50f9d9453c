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
import hashlib
import io
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from timerd.adapters.hall.protocol import MAX_REVISION, proof_follows, proof_position
from timerd.core.record import NAME_MAX
from timerd.disk import replace_file
from timerd.tools.hall_text import text as said
from timerd.tools.hall_wire import RESULT, clean, problem

#: A round's schedule for a hall of hundreds of tables is a few tens of KiB.
MAX_SCHEDULE_BYTES = 1 << 20
MAX_SCHEDULE_ROWS = 5000
SCHEDULE_COLUMNS = ("round", "table", "home", "away")
#: The export format (CSV columns, JSON document); bump it when a column changes meaning.
EXPORT_VERSION = 1
#: One row per match, in this order (docs/hall.md, "Results for the tournament software").
MATCH_COLUMNS = ("round", "table", "home", "away", "home_goals", "away_goals", "how",
                 "winner", "overtime_s", "played_s", "duration_s", "started", "finished",
                 "profile", "match_id", "result_id", "revision")
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
    """Round `round_id`'s assignments in `path` (the file's only round when None), separated
    by "," or (as a spreadsheet in sl/sk settings saves it) ";"."""
    rounds = _rounds(path, _schedule_text(path))
    if round_id is None:
        if len(rounds) != 1:
            raise ScheduleError(said("hall.schedule.rounds", path=path, n=len(rounds),
                                     rounds=few(rounds)))
        round_id = next(iter(rounds))
    if round_id not in rounds:
        raise ScheduleError(said("hall.schedule.no_round", path=path, round=repr(round_id),
                                 rounds=few(rounds)))
    return round_id, rounds[round_id]


def _schedule_text(path: Path) -> str:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_SCHEDULE_BYTES + 1)
    except OSError as exc:
        raise ScheduleError(f"{path}: {exc.strerror or exc}") from None
    if len(data) > MAX_SCHEDULE_BYTES:
        raise ScheduleError(said("hall.schedule.too_large", path=path,
                                 most=f"{MAX_SCHEDULE_BYTES:,}"))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScheduleError(said("hall.schedule.not_utf8", path=path, reason=exc.reason,
                                 at=exc.start)) from None
    return text


def _rounds(path: Path, text: str) -> dict[str, list[Assignment]]:
    """Every round of the schedule `text` (read from `path`), checked whole."""
    header = text.partition("\n")[0]
    # A spreadsheet in sl/sk (or de, fr...) settings saves "CSV" separated by ";".
    separator = ";" if header.count(";") > header.count(",") else ","
    rows = csv.DictReader(io.StringIO(text), delimiter=separator, strict=True)
    try:
        names = rows.fieldnames or []
    except csv.Error as exc:
        raise ScheduleError(said("hall.schedule.line", path=path, line=1,
                                 problem=_csv_problem(exc))) from None
    missing = [c for c in SCHEDULE_COLUMNS if c not in names]
    if missing:
        raise ScheduleError(said("hall.schedule.columns", path=path,
                                 columns=separator.join(SCHEDULE_COLUMNS),
                                 missing=", ".join(missing)))
    rounds: dict[str, list[Assignment]] = {}
    seen: dict[tuple[str, str], int] = {}
    number = rows.line_num + 1
    while True:
        try:
            row = next(rows, None)
        except csv.Error as exc:
            raise ScheduleError(said("hall.schedule.line", path=path, line=number,
                                     problem=_csv_problem(exc))) from None
        if row is None:
            break
        if len(seen) >= MAX_SCHEDULE_ROWS:
            raise ScheduleError(said("hall.schedule.rows", path=path, most=MAX_SCHEDULE_ROWS))
        cells = {c: (row.get(c) or "").strip() for c in SCHEDULE_COLUMNS}
        here, number = number, rows.line_num + 1
        if not any(cells.values()):
            continue  # a blank line
        for column, value in cells.items():
            if not value and column in ("round", "table"):
                raise ScheduleError(said("hall.schedule.line", path=path, line=here,
                                         problem=said("hall.schedule.empty_cell",
                                                      column=column)))
            if len(value) > NAME_MAX or not value.isprintable():
                raise ScheduleError(said("hall.schedule.line", path=path, line=here,
                                         problem=said("hall.schedule.long_cell",
                                                      column=column, most=NAME_MAX)))
        key = (cells["round"], cells["table"])
        if key in seen:
            raise ScheduleError(said("hall.schedule.line", path=path, line=here, problem=said(
                "hall.schedule.twice", table=key[1], round=key[0], line=seen[key])))
        seen[key] = here
        rounds.setdefault(cells["round"], []).append(
            Assignment(cells["table"], cells["home"], cells["away"]))
    return rounds


def _csv_problem(exc: csv.Error) -> str:
    """A CSV reader's error as an organiser can act on it."""
    text = str(exc)
    if "field larger than field limit" in text:
        return said("hall.csv.too_long", most=f"{csv.field_size_limit():,}",
                    name_max=NAME_MAX)
    if "unexpected end of data" in text or "newline inside string" in text:
        return said("hall.csv.quote")
    return said("hall.csv.not_csv", error=text)


#: An error names at most this many rounds (a file may hold hundreds).
FEW = 5


def few(names: Iterable[str], most: int = FEW) -> str:
    """`names` for an error message: the first `most`, and how many more."""
    listed = list(names)
    if not listed:
        return said("hall.few.none")
    shown = ", ".join(repr(n) if not n.isprintable() or "," in n else n
                      for n in listed[:most])
    return said("hall.few.more", names=shown, n=len(listed) - most) \
        if len(listed) > most else shown


# -- results at the desk ------------------------------------------------------------------

#: The desk's loaded schedule in its store (not a result id: `_RESULT_ID` never matches it).
SCHEDULE_FILE = "_schedule.json"
#: Results the desk received but did not take as a round's, kept for a person to look at.
ASIDE_DIRECTORY = "aside"


def revision_of(message: Mapping[str, Any]) -> int:
    """The match's revision of a result (`revision`, in the message or its results line;
    absent: 0, the first). A correction of a finished match raises it (issue 28); one past
    MAX_REVISION is never taken (`hall_wire`), and reads as 0 here."""
    value = message.get("revision", mapping_of(message.get("result")).get("revision", 0))
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not 0 <= value <= MAX_REVISION:
        return 0
    return int(value)


def withdrawn(message: Mapping[str, Any]) -> bool:
    """A withdrawal: the table took its result back, its match reopened (issue 41 item 2)."""
    return message.get("withdrawn") is not None


def position_of(message: Mapping[str, Any]) -> int:
    """The message's place on its match's proof chain (`protocol.proof_position`)."""
    return proof_position(revision_of(message), withdrawn(message))


def chain_problem(kept: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """Why `new` is not a revision of the match whose revision `kept` the desk holds
    (None: it is, before or after it); the two are at other positions of the chain.

    With proofs (`protocol.proof_follows`): the later one's must hash to the earlier one's,
    so only the table that made `kept` can follow it, however many revisions the desk
    missed in between. An older table sends none: its next revision is taken, a jump past
    it is not (issue 41 item 3)."""
    a, b = position_of(kept), position_of(new)
    revision, had = revision_of(new), revision_of(kept)
    if kept.get("proof") is None:
        if b <= a + 2:
            return None
        return said("hall.why.skips", revision=revision, had=had)
    if new.get("proof") is None:
        return said("hall.why.no_proof", had=had)
    later, earlier = (new, kept) if b > a else (kept, new)
    if proof_follows(later["proof"], abs(b - a), earlier["proof"]):
        return None
    return said("hall.why.proof_follows" if b > a else "hall.why.proof_leads", had=had)


def round_of(message: Mapping[str, Any]) -> Any:
    """A result message's round: its envelope's, else its results line's (issue 30)."""
    return message.get("round") or mapping_of(message.get("result")).get("round")


@dataclass(frozen=True)
class Stored:
    """A result as the desk keeps it: the table's message, and when the desk received it
    (the desk's own clock and order: never the sender's)."""

    message: dict[str, Any]
    received: float

    @property
    def table(self) -> str:
        return str(self.message.get("table"))

    @property
    def match_id(self) -> str:
        return str(mapping_of(self.message.get("result")).get("match_id") or self.message["id"])

    @property
    def round(self) -> Any:
        """The result's round: the envelope's, else the one inside the results line (a table
        before issue 30 sent `round: null` after a restart mid-round)."""
        return round_of(self.message)

    @property
    def order(self) -> tuple[int, float]:
        return position_of(self.message), self.received


@dataclass
class RoundResults:
    """A round's results at the desk: one per table (the latest revision of the first match
    the table reported), and the conflicts left out of it, each as a sentence. A table whose
    latest is a withdrawal (its match reopened, in play) is in `withdrawn`, not `results`."""

    results: dict[str, dict[str, Any]]
    conflicts: list[str]
    withdrawn: dict[str, dict[str, Any]] = field(default_factory=dict)


class ResultStore:
    """The desk's store under `directory`: every result it received, one JSON file per
    result and revision (`{"received", "message"}`), the results it set aside (`aside/`), and
    the schedule loaded last (`_schedule.json`)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def save(self, message: Mapping[str, Any], received: float) -> bool:
        """Keep a table's result message (fsynced); False when it has no usable id. The same
        result and revision again is not written again; one whose content differs from what
        is kept under its id and revision is a conflict, written to `aside/` (`conflict`
        says so)."""
        path = self._path(message)
        if path is None:
            return False
        if self._read(path) is None:
            replace_file(path, _stored_bytes(message, received))
        return True

    def _path(self, message: Mapping[str, Any]) -> Path | None:
        """Where `message` is kept: `<id>.json` (revision 0), `<id>.r<n>.json`, a withdrawal
        `<id>.r<n>.withdrawn.json`; None for an id that is not a result id."""
        result_id = message.get("id")
        if not isinstance(result_id, str) or not _RESULT_ID.match(result_id):
            return None
        revision = revision_of(message)
        name = result_id if revision == 0 else f"{result_id}.r{revision}"
        return self.directory / (f"{name}.withdrawn.json" if withdrawn(message)
                                 else f"{name}.json")

    def conflict(self, message: Mapping[str, Any]) -> str | None:
        """Why `message` may not join what the store keeps of its match (None: it may): it
        differs from what is kept at its revision (another result claims to be the same
        match, a replay with other content), or it is no revision of the kept chain
        (`chain_problem`: a jump, a forgery)."""
        path = self._path(message)
        if path is None:
            return None
        same = self._read(path)
        if same is not None:
            if same.message.get("result") == message.get("result"):
                return None
            return said("hall.why.differs", id=clean(message["id"]),
                        revision=revision_of(message))
        # The id is a safe file name (`_RESULT_ID`): no glob pattern in it.
        kept = [s for p in self.directory.glob(f"{message['id']}*.json")
                if (s := self._read(p)) is not None and s.message.get("id") == message["id"]]
        if not kept:
            return None
        return chain_problem(max(kept, key=lambda s: s.order).message, message)

    def set_aside(self, message: Mapping[str, Any], received: float, why: str) -> None:
        """Keep a result the desk did not take (fsynced), with why, under `aside/`: once
        (the broker delivers a retained one to every run of the desk)."""
        # ASCII escapes: a message set aside may hold text no UTF-8 can carry (a lone
        # surrogate), and it is kept as it came.
        text = json.dumps(dict(message), sort_keys=True)
        path = self.directory / ASIDE_DIRECTORY / (
            hashlib.sha256(text.encode()).hexdigest()[:24] + ".json")
        if not path.exists():
            replace_file(path, json.dumps({"received": received, "why": why,
                                           "message": dict(message)}).encode())

    def _read(self, path: Path) -> Stored | None:
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return None  # not one of ours; the file stays for a person to look at
        if not isinstance(data, dict):
            return None
        if isinstance(data.get("message"), dict) and isinstance(data.get("received"), float):
            stored = Stored(data["message"], data["received"])
        elif "id" in data:  # a file of the desk before its store kept the arrival: its time
            stored = Stored(data, path.stat().st_mtime)
        else:
            return None
        # An older desk took any revision (1e308): such a file is not a result now either.
        return None if problem(stored.message, RESULT) else stored

    def stored(self) -> list[Stored]:
        """Every result in the store, in the order the desk received them."""
        if not self.directory.is_dir():
            return []
        found = [self._read(p) for p in self.directory.glob("*.json")
                 if not p.name.startswith("_")]
        return sorted((s for s in found if s is not None), key=lambda s: s.received)

    def of_round(self, round_id: str) -> RoundResults:
        """The stored results of `round_id` by table: per table, the first match it reported
        for the round, at its latest revision (then the latest received). Another match of
        the same table in the round is a conflict: reported, never silently taken."""
        matches: dict[str, dict[str, Stored]] = {}  # table: match id: the latest kept
        conflicts = []
        for stored in self.stored():
            if stored.round != round_id:
                continue
            mine = matches.setdefault(stored.table, {})
            if mine and stored.match_id not in mine:
                first = next(iter(mine))
                conflicts.append(said("hall.why.second_match", table=stored.table,
                                      round=round_id, id=stored.message.get("id"),
                                      first=first))
                continue
            kept = mine.get(stored.match_id)
            if kept is None or stored.order >= kept.order:
                mine[stored.match_id] = stored
        latest = {table: next(iter(mine.values())).message for table, mine in matches.items()}
        return RoundResults({t: m for t, m in latest.items() if not withdrawn(m)}, conflicts,
                            {t: m for t, m in latest.items() if withdrawn(m)})

    # -- the schedule -------------------------------------------------------------------

    def save_schedule(self, round_id: str, assignments: Iterable[Assignment]) -> None:
        """Keep the round just loaded (with the rounds loaded before): the desk then takes a
        result only from a table and round of the schedule, and always follows its tables."""
        rounds = self.schedule()
        rounds[round_id] = {a.table: {"home": a.home, "away": a.away} for a in assignments}
        replace_file(self.directory / SCHEDULE_FILE, json.dumps(
            {"version": 1, "loaded": round_id, "rounds": rounds}, ensure_ascii=False).encode())

    def schedule(self) -> dict[str, dict[str, dict[str, str]]]:
        """Every round loaded into this store: round: table: {"home", "away"}."""
        try:
            data = json.loads((self.directory / SCHEDULE_FILE).read_bytes())
        except (OSError, ValueError):
            return {}
        rounds = mapping_of(mapping_of(data).get("rounds"))
        return {str(r): {str(t): dict(mapping_of(a)) for t, a in mapping_of(tables).items()}
                for r, tables in rounds.items()}


def _stored_bytes(message: Mapping[str, Any], received: float) -> bytes:
    return json.dumps({"received": received, "message": dict(message)},
                      ensure_ascii=False).encode()


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
        "round": round_of(message),
        "table": message.get("table"),
        "home": teams.get("home", ""),
        "away": teams.get("away", ""),
        "home_goals": score.get("home"),
        "away_goals": score.get("away"),
        # A match reset while reopened has no winner and says so (issue 42: `state`
        # "abandoned", docs/scoring.md).
        "how": result.get("how") or result.get("state"),
        "winner": result.get("winner"),
        "overtime_s": result.get("overtime_s"),
        "played_s": result.get("played_s"),
        "duration_s": _seconds_between(result.get("started"), result.get("finished")),
        "started": result.get("started"),
        "finished": result.get("finished"),
        "profile": result.get("profile"),
        "match_id": result.get("match_id"),
        "result_id": message.get("id"),
        # Issue 28: the result's revision (0; 1, 2... a result corrected after the end).
        "revision": revision_of(message),
    }
    assert tuple(row) == MATCH_COLUMNS
    return row


def export_document(hall: str, round_id: str | None, rows: Iterable[Mapping[str, Any]],
                    missing: Iterable[str], taken_back: Iterable[str] = ()) -> dict[str, Any]:
    """The JSON export: the rows with the format's version, the tables still missing (no
    final result), and those of them whose result was withdrawn (a reopened match)."""
    return {"version": EXPORT_VERSION, "hall": hall, "round": round_id,
            "columns": list(MATCH_COLUMNS), "matches": [dict(r) for r in rows],
            "missing": list(missing), "withdrawn": list(taken_back)}


#: A cell a spreadsheet would run as a formula begins with one of these (OWASP, "CSV
#: Injection"): such a cell from the wire is written with a leading "'" (shown as text).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any, decimal: str) -> Any:
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    if isinstance(value, float):  # its shortest exact digits, with the locale's separator
        return repr(value).replace(".", decimal)
    return value


def csv_text(rows: Iterable[Mapping[str, Any]], separator: str = ",",
             decimal: str = ".") -> str:
    """The CSV export: a header of `MATCH_COLUMNS`, one line per match; empty for null;
    every text cell neutralised as `FORMULA_STARTS` says; numbers written as numbers, a
    fraction with `decimal` as its separator (a comma for a spreadsheet in a locale that
    reads "48.666" as 48666 and "300.0" as text: Slovenian, Slovak; issue 41 item 6)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, MATCH_COLUMNS, delimiter=separator, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: _cell(v, decimal) for k, v in row.items()} for row in rows)
    return out.getvalue()
