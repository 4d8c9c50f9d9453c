"""The results file: one JSON line per finished match, for the tournament organiser.

Each line holds a match id, the profile, the wall-clock start, the final score, every goal
entry (side, match time, wall time, counted, reason, scorer and assists), every interruption
(period, start in match time, length), the overtime length, the number of replays and how the
match ended (`regular`, `overtime`, `forfeit`, `walkout`, `shootout`). Ball hockey adds the
periods as played, every penalty and timeout, and the shootout attempts. A line is written,
flushed and fsynced the moment the match finishes, so a power cut after the final signal does
not lose it; appending whole lines means a crash can at worst leave one torn last line, which
`recent_results` skips.

Wall time is only recorded, never used to measure: the core works in monotonic time and each
goal's wall time is taken when its entry reaches this adapter (ITHF matches are short, and a
Pi's clock may jump when NTP syncs, so stamping at the moment is the honest choice).

Other parts hook in without knowing the file: `listeners` get every result dict (hall mode
publishes it), and `recent_results(path, n)` reads the last ones (the web API, `timerd results`).
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from timerd.core.effects import Effect, Phase, PhaseChanged, Signal, SignalKind
from timerd.core.match import Status
from timerd.core.score import AWARDS, Goal

log = logging.getLogger("timerd.results")

ResultListener = Callable[[dict[str, Any]], object]  # what it returns is not used


def iso(wall: float) -> str:
    return datetime.fromtimestamp(wall, UTC).isoformat(timespec="milliseconds")


class ResultsFile:
    """An output that appends each finished match to `path` (None: keeps no file, still
    notifies `listeners`). `wall` reads the wall clock (a parameter so tests can fix it)."""

    def __init__(self, path: Path | None, wall: Callable[[], float] = time.time) -> None:
        self.path = path
        self.wall = wall
        self.listeners: list[ResultListener] = []
        self.match_id: str | None = None
        self._started_wall: float | None = None
        self._goal_walls: dict[tuple[str, float], float] = {}  # (side, match time) -> wall
        self._goals: list[dict[str, Any]] = []

    def notify(self, effect: Effect, status: Status) -> None:
        if isinstance(effect, PhaseChanged) and effect.phase is Phase.PRE_SIGNAL:
            self.match_id = self.match_id or _new_id(self.wall())
        elif isinstance(effect, Signal) and effect.kind is SignalKind.START:
            self._started_wall = self.wall()  # a replay (ITHF 4.5) restarts it
        elif isinstance(effect, Goal):
            self._goal_walls[_goal_key(effect.to_dict())] = self.wall()
        elif isinstance(effect, PhaseChanged) and effect.phase is Phase.FINISHED:
            self._finished(status)
        elif isinstance(effect, PhaseChanged) and effect.phase is Phase.IDLE \
                and effect.previous is not Phase.RUNNING:
            self._forget()  # a reset (a replay passes through idle from running or paused)
        self._goals = status.goals

    def resume(self, started_wall: float | None,
               goal_walls: Iterable[tuple[dict[str, Any], float]]) -> None:
        """A match restored after a restart (from the journal): its start and its goals keep
        the wall times they had, and it gets an id now (the one it had is not journalled)."""
        self._started_wall = started_wall
        self._goal_walls.update((_goal_key(entry), wall) for entry, wall in goal_walls)
        self.match_id = _new_id(self.wall() if started_wall is None else started_wall)

    def status_extra(self) -> dict[str, Any]:
        """For `Service.status_extras`: the match id and the goals with their wall times
        (the core knows no wall time). Goals change only with an effect, so the list seen
        with the last effect is current."""
        return {"match_id": self.match_id, "goals": self.with_wall_times(self._goals)}

    def with_wall_times(self, goals: list[dict[str, Any]],
                        awarded_at: float | None = None) -> list[dict[str, Any]]:
        """Copies of goal entries with `wall_time` (ISO 8601, UTC) filled in where known;
        entries a ruling awarded (ITHF 4.6, 4.7) get `awarded_at`."""
        out = []
        for entry in goals:
            wall = self._goal_walls.get(_goal_key(entry))
            if wall is None and entry["reason"] in AWARDS:
                wall = awarded_at
            out.append(entry | {"wall_time": None if wall is None else iso(wall)})
        return out

    def record(self, status: Status) -> dict[str, Any]:
        """The results line for a finished match's status."""
        result = status.result or {}
        finished = self.wall()
        return {
            "match_id": self.match_id or _new_id(finished),
            "profile": status.profile,
            "teams": result.get("teams", status.teams),  # "" for a side nobody named
            "round": result.get("round"),
            "started": None if self._started_wall is None else iso(self._started_wall),
            "finished": iso(finished),
            "score": status.score,
            "how": result.get("how"),
            "winner": result.get("winner"),
            "side": result.get("side"),
            "played_s": result.get("played_s"),
            "overtime_s": result.get("overtime_s"),
            "replays": result.get("replays", 0),
            "points": result.get("points"),  # ISBHF 413a, when the profile gives points
            "shootout": result.get("shootout"),  # ISBHF 414b: every attempt
            "periods": result.get("periods", []),  # with goals and an early intermission
            "penalties": result.get("penalties", []),
            "timeouts": result.get("timeouts", []),  # ISBHF 412
            "interruptions": result.get("interruptions", []),
            "goals": self.with_wall_times(status.goals, awarded_at=finished),
        }

    def _finished(self, status: Status) -> None:
        record = self.record(status)
        if self.path is not None:
            try:
                append_line(self.path, record)
            except OSError:
                log.exception("cannot write the result to %s; it is in the log instead: %s",
                              self.path, json.dumps(record))
        for listener in self.listeners:
            try:
                listener(record)
            except Exception:
                log.exception("results listener %r failed", listener)
        self._forget()

    def _forget(self) -> None:
        self.match_id = None
        self._started_wall = None
        self._goal_walls.clear()


def _goal_key(entry: dict[str, Any]) -> tuple[str, float]:
    """A goal entry's identity across status snapshots: side and match time (ms)."""
    return entry["side"], entry["match_time_s"]


def _new_id(wall: float) -> str:
    """Sortable and unique without coordination: start time and a random suffix."""
    stamp = datetime.fromtimestamp(wall, UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{uuid.uuid4().hex[:6]}"


def append_line(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line and make it durable (flush, then fsync) before returning."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(record, separators=(",", ":")) + "\n")
        out.flush()
        os.fsync(out.fileno())


def recent_results(path: Path, n: int = 20) -> list[dict[str, Any]]:
    """The last `n` results in `path`, oldest first; a torn or foreign line is skipped."""
    if n <= 0 or not path.is_file():
        return []
    out: deque[dict[str, Any]] = deque(maxlen=n)
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                log.warning("%s line %d is not a result (torn write?); skipped", path, number)
                continue
            if isinstance(record, dict):
                out.append(record)
    return list(out)
