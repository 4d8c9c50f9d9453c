"""The results file: one JSON line per finished match, for the tournament organiser.

Each line holds the match's id (the one the service gave it when it was set up, which the
journal and hall mode carry too, so a match restored after a restart keeps it), the profile,
the wall-clock start, the final score, every goal entry (side, match time, wall time, counted,
reason, scorer and assists), every interruption (period, start in match time, length), the
overtime length, the number of replays and how the match ended (`regular`, `overtime`,
`forfeit`, `walkout`, `shootout`). Ball hockey adds the periods as played, every penalty and
timeout, and the shootout attempts.

The line is submitted to the disk writer (`timerd.disk`, one thread, jobs in the order given)
in the dispatch that finished the match, from this output, which the daemon hands each
dispatch after the journal (app.py): so behind the journal line of the command that ended it.
Then `ended` is told (the journal: it closes the match behind the line, and compacts once the
line is on disk), so the disk sees one sequence (docs/service.md): the command, the result,
the compaction. A crash in between finds a finished match, never a running one that would
give a second, contradicting result.
Listeners (the hall desk) hear of the result once that line is on disk or has failed. A torn
last line (a crash mid-write, an edit by hand) is skipped by `recent_results`, and the next
line starts on a fresh line rather than being glued onto it.

A result is never only in RAM once its match's end was acknowledged (issue 36). Until its
line is fsynced the match journal keeps the finished match (the journal is compacted when
`on_disk` says so), and a start that finds a finished match in the journal writes its
result (`write_recovered`) unless the file holds it. A result whose line cannot be written (a
full, read-only or failing card) is kept in memory and as a copy in the state directory
(`results-pending/`, next to the journal: it survives a power cut), retried every RETRY_S and
at the next start, and counted in `status["storage"]["pending_results"]`. Every write skips a
result whose match id the file already holds, so a crash between the line and the end of its
job (the journal's compaction, the removal of the copy) writes it once.

Wall time is only recorded, never used to measure: the core works in monotonic time and each
goal's wall time is taken when its entry reaches this adapter (ITHF matches are short, and a
Pi's clock may jump when NTP syncs, so stamping at the moment is the honest choice).

Other parts hook in without knowing the file: `listeners` get every result dict (hall mode
publishes it), and `timerd.adapters.results.format.recent_results(path, n)` reads the last ones
(`timerd results`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from timerd.adapters.results.format import ABANDONED, REOPENED, results_line
from timerd.core.effects import (
    Phase,
    PhaseChanged,
    Reopened,
    ResultAbandoned,
    ResultCorrected,
    Signal,
    SignalKind,
)
from timerd.core.frozen import ReadOnlyList
from timerd.core.score import AWARDS, Goal
from timerd.core.status import Status
from timerd.disk import DiskWriter, LineFile, replace_file
from timerd.ports import Dispatch

log = logging.getLogger("timerd.results")

ResultListener = Callable[[dict[str, Any]], object]  # what it returns is not used

#: Loop seconds between attempts to write the results that could not be written.
RETRY_S = 30.0
#: The runtime directory's folder for results not yet in the results file.
PENDING_DIR = "results-pending"
#: How much of the results file's end a retry reads for a match id it may already hold.
TAIL_BYTES = 1 << 20


def iso(wall: float) -> str:
    return datetime.fromtimestamp(wall, UTC).isoformat(timespec="milliseconds")


class ResultsFile:
    """An output that appends each finished match to `path` (None: keeps no file, still
    notifies `listeners`). `wall` reads the wall clock (a parameter so tests can fix it);
    `writer` is the daemon's disk writer (without one, writes run in the caller); `pending`
    the state directory's folder for copies of results not yet in the file (None: none);
    `spare` the runtime directory's, for when the state directory takes no copy either (a
    full card: RAM survives a restart of timerd, not a power cut)."""

    def __init__(self, path: Path | None, wall: Callable[[], float] = time.time,
                 writer: DiskWriter | None = None, pending: Path | None = None,
                 spare: Path | None = None) -> None:
        self.path = path
        self.wall = wall
        #: The daemon's disk writer thread; without one (tests, a tool) the file is written
        #: in place, on the calling thread.
        self.writer = writer or DiskWriter(inline=True)
        self.pending_dirs = [d for d in (pending, spare) if d is not None]
        self._on_disk_dir = pending
        self.listeners: list[ResultListener] = []
        #: Results not yet in the file, by result key (`result_key`), oldest first.
        self.unwritten: dict[str, dict[str, Any]] = {}
        #: Called on the loop with a match id once its result is on disk (its line, or its
        #: pending copy): the journal may let go of the finished match (app.py wires it).
        self.on_disk: list[Callable[[str], object]] = []
        #: Called on the loop with the match id and status once a finished match's results
        #: line is submitted: the next step of the end (the journal's `close_finished`).
        self.ended: list[Callable[[str, Status], object]] = []
        #: Results (`result_key`) neither in the file nor copied to `pending`: added on the
        #: loop, removed on the writer thread once one of the two is fsynced.
        self._off_disk: set[str] = set()
        self._retry: asyncio.TimerHandle | None = None
        self._started_wall: float | None = None
        self._goal_walls: dict[int, float] = {}  # a goal entry's number -> its wall time
        self._goals: list[dict[str, Any]] = []
        self._recorded: str | None = None  # the result (`result_key`) recorded last
        #: The wall time of the match's end (its last): a correction keeps it (issue 42).
        self._end_wall: float | None = None
        #: The status of the last dispatch: the match as it stood before a RESET.
        self._before: Status | None = None

    def notify(self, dispatch: Dispatch) -> None:
        status = dispatch.status
        for effect in dispatch.effects:
            if isinstance(effect, Signal) and effect.kind is SignalKind.START:
                self._started_wall = self.wall()  # a replay (ITHF 4.5) restarts it
            elif isinstance(effect, Goal):
                self._goal_walls[effect.number] = self.wall()
            elif isinstance(effect, PhaseChanged) and effect.phase is Phase.FINISHED:
                self._end_wall = self.wall()
                self._finished(status)  # the end (again, after a reopen: a revision)
            elif isinstance(effect, ResultCorrected) and status.phase is Phase.FINISHED:
                self._finished(status)  # a corrected result after the end (a revision)
            elif isinstance(effect, Reopened) and effect.in_play:
                self._unfinished(status, effect.revision, REOPENED)
            elif isinstance(effect, ResultAbandoned):  # the match as it stood before RESET
                before = self._before
                if before is None or before.match_id != effect.match_id:
                    before = dataclasses.replace(status, match_id=effect.match_id,
                                                 score=dict(effect.score))
                self._unfinished(before, effect.revision, ABANDONED)
            elif isinstance(effect, PhaseChanged) and effect.phase is Phase.IDLE \
                    and effect.previous is not Phase.RUNNING:
                self._forget()  # a reset (a replay passes through idle from running or paused)
        self._goals = status.goals
        self._before = status

    def resume(self, started_wall: float | None,
               goal_walls: Iterable[tuple[dict[str, Any], float]],
               finished: Status | None = None, finished_wall: float | None = None) -> None:
        """A match restored after a restart (from the journal): its start and its goals keep
        the wall times they had (its id comes back with the match itself); one `finished`
        keeps its end's (a correction keeps it, issue 42), as its results line has it, else
        `finished_wall` (the journal's)."""
        self._started_wall = started_wall
        self._goal_walls.update((_goal_key(entry), wall) for entry, wall in goal_walls)
        if finished is None:
            return
        self._end_wall = finished_wall
        line = None if self.path is None else latest_line(self.path, finished.match_id or "")
        with contextlib.suppress(AttributeError, TypeError, ValueError):
            self._end_wall = datetime.fromisoformat(line["finished"]).timestamp()  # type: ignore[index]

    def status_extra(self) -> dict[str, Any]:
        """For `Service.status_extras`: `goal_wall_times`, one entry per goal of the status's
        `goals` and in its order, the wall time it was entered (ISO 8601, UTC) or None. A key
        of its own: the core's `goals` are the core's (issue 32). Goals change only with a
        dispatch, and this output is handed each before any output that shows the status
        (app.py), so the list seen last is the dispatch's."""
        return {"goal_wall_times": ReadOnlyList([  # kept as it is by the document (issue 44)
            entry["wall_time"] for entry in self.with_wall_times(self._goals)])}

    def with_wall_times(self, goals: list[dict[str, Any]],
                        awarded_at: float | None = None) -> list[dict[str, Any]]:
        """Copies of goal entries with `wall_time` (ISO 8601, UTC) filled in where known;
        entries a ruling awarded (ITHF 4.6, 4.7) get `awarded_at`."""
        out = []
        for entry in goals:
            wall = self._goal_walls.get(_goal_key(entry))
            if wall is None and entry["reason"] in AWARDS:
                wall = awarded_at
            out.append(_with_wall_time(entry, None if wall is None else iso(wall)))
        return out

    def record(self, status: Status, finished: float | None = None,
               state: dict[str, Any] | None = None) -> dict[str, Any]:
        """The results line for a finished match's status; `finished`: its end's wall time
        (None: the end seen last, or now); `state`: a line that is no result (`_unfinished`).
        A revision is stamped with the instant it is made (`corrected_at`)."""
        now = self.wall()
        finished = finished or self._end_wall or now
        return results_line(
            match_id=status.match_id, profile=status.profile, teams=status.teams,
            score=status.score, result=state or status.result or {},
            started=None if self._started_wall is None else iso(self._started_wall),
            finished=iso(finished), corrected_at=iso(now),
            goals=self.with_wall_times(status.goals, awarded_at=finished),
            state=(state or {}).get("state", "final"))

    def _finished(self, status: Status) -> None:
        """Record the result once per revision; the start and goal wall times are kept
        until a reset, for a result corrected after a reopen (`rules.corrections`)."""
        record = self.record(status)
        if result_key(record) == self._recorded:
            return
        self._recorded = result_key(record)
        self._save(record, True)
        for step in self.ended:
            step(status.match_id or "", status)

    def _unfinished(self, status: Status, revision: int, state: str) -> None:
        """Issue 42 item 2: revision `revision` of the result of `status`'s match says it
        is no result (`state`: REOPENED, in play again; ABANDONED, reset while reopened): no
        winner, the score as it stands. Written, and told, as a result is."""
        self._save(self.record(status, state={"revision": revision, "state": state,
                                              "teams": status.teams, "round": status.round}),
                   True)

    def write_recovered(self, final: Status, started_wall: float | None,
                        goal_walls: Iterable[tuple[dict[str, Any], float]],
                        finished_wall: float | None) -> None:
        """At a start that found a finished match in the journal: write its result, unless
        the file holds it (a crash came after its line, before the journal's compaction)."""
        self.resume(started_wall, goal_walls)
        record = self.record(final, finished_wall)
        self._forget()
        self._save(record, False)

    def off_disk(self, match_id: str) -> bool:
        """Whether a result of `match_id` is still only in memory (the journal keeps the
        match until it is not)."""
        return any(key.split(".r")[0] == match_id for key in self._off_disk)

    def _save(self, record: dict[str, Any], tell: bool) -> None:
        """Write `record` (and tell the listeners, once it is on disk or has failed)."""
        if self.path is None:
            self._tell(record)
            return
        key = result_key(record)
        if key not in self.unwritten:  # not a retry: not on disk yet
            self._off_disk.add(key)
        self.unwritten[key] = record
        self.writer.pending_results = len(self.unwritten)
        write = self.writer.submit("results", lambda: self._write(record))
        write.done.add_done_callback(lambda done: self._saved(record, done.result(), tell))

    def _write(self, record: dict[str, Any]) -> None:
        """On the writer thread: the line (unless the file holds it), then drop a pending
        copy. A line that fails leaves a copy in `pending` (fsynced, on the state
        directory), and the job fails: the result is retried."""
        assert self.path is not None
        key = result_key(record)
        data = (json.dumps(record, separators=(",", ":")) + "\n").encode()
        copies = [d / f"{key}.json" for d in self.pending_dirs]
        try:
            if not _holds(self.path, record["match_id"], record.get("revision") or 0):
                LineFile(self.path).append(data)
        except OSError:
            if not any(copy.exists() for copy in copies):
                self._keep_copy(key, data, copies)
            raise
        self._off_disk.discard(key)
        for copy in copies:
            copy.unlink(missing_ok=True)

    def _keep_copy(self, key: str, data: bytes, copies: list[Path]) -> None:
        """On the writer thread: a copy of a result whose line failed, in the first pending
        folder that takes it (the state directory's: then it is on disk)."""
        for copy in copies:
            try:
                replace_file(copy, data)
            except OSError as exc:
                log.warning("cannot keep a copy of the result in %s (%s)", copy, exc)
                continue
            if copy.parent == self._on_disk_dir:
                self._off_disk.discard(key)
            return

    def _saved(self, record: dict[str, Any], error: str | None, tell: bool) -> None:
        key = result_key(record)
        if key not in self._off_disk:
            for listener in self.on_disk:
                listener(record["match_id"])
        if error is None:
            self.unwritten.pop(key, None)
        else:
            log.error("result of match %s not written to %s (%s): kept, retried every %g s; "
                      "the result: %s", record["match_id"], self.path, error, RETRY_S,
                      json.dumps(record))
            if self._retry is None:
                self._retry = asyncio.get_running_loop().call_later(RETRY_S, self.retry)
        self.writer.pending_results = len(self.unwritten)
        if tell:
            self._tell(record)

    def retry(self) -> None:
        """Write again every result not yet written (from a fault, or an earlier run)."""
        self._retry = None
        for record in list(self.unwritten.values()):
            self._save(record, False)

    def load_pending(self) -> int:
        """At a start: take up the results an earlier run could not write; how many. Read
        from the pending folders before the match loop runs (a few small files); the ids
        begin with the start time, so they are taken oldest first."""
        found = sorted((path for d in self.pending_dirs if d.is_dir()
                        for path in d.glob("*.json")), key=lambda path: path.name)
        for path in found:
            try:
                record = json.loads(path.read_bytes())
                self.unwritten[result_key(record)] = record
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.error("pending result %s unreadable (%s); set aside as .bad", path, exc)
                with contextlib.suppress(OSError):
                    path.rename(path.with_suffix(".bad"))
        if self.unwritten:
            log.warning("%d result(s) an earlier run could not write: writing them now",
                        len(self.unwritten))
            self.retry()
        return len(self.unwritten)

    def _tell(self, record: dict[str, Any]) -> None:
        for listener in self.listeners:
            try:
                listener(record)
            except Exception:
                log.exception("results listener %r failed", listener)

    def _forget(self) -> None:
        self._started_wall = self._end_wall = None
        self._goal_walls.clear()
        self._recorded = None


def _with_wall_time(entry: dict[str, Any], wall_time: str | None) -> dict[str, Any]:
    """A copy of a goal entry with `wall_time` after `match_time_s`, where the results line
    has always had it."""
    out: dict[str, Any] = {}
    for key, value in entry.items():
        out[key] = value
        if key == "match_time_s":
            out["wall_time"] = wall_time
    return out


def _goal_key(entry: dict[str, Any]) -> int:
    """A goal entry's identity across status snapshots: its number, given by the core."""
    return int(entry["number"])


def latest_line(path: Path, match_id: str) -> dict[str, Any] | None:
    """The last line of match `match_id` in the end of the results file (TAIL_BYTES), if any:
    a match restored after a restart, which the file holds already."""
    mark = f'"match_id":{json.dumps(match_id)},'.encode()
    for raw in reversed(_tail(path).splitlines()):
        if mark in raw:
            with contextlib.suppress(ValueError):
                found = json.loads(raw)
                if isinstance(found, dict):
                    return found
    return None


def result_key(record: dict[str, Any]) -> str:
    """A result's identity in the file: its match id, and `.rN` for a correction (revision
    N, issue 28); also the name of its pending copy."""
    revision = record.get("revision") or 0
    return str(record["match_id"]) + (f".r{revision}" if revision else "")


def _holds(path: Path, match_id: str, revision: int) -> bool:
    """Whether the end of the results file already holds revision `revision` of the result
    of `match_id` (a line of format 1, before revisions, is revision 0)."""
    tail = _tail(path)
    mark = f'"match_id":{json.dumps(match_id)},'
    return f'{mark}"revision":{revision},'.encode() in tail or (
        revision == 0 and f'{mark}"profile"'.encode() in tail)


def _tail(path: Path) -> bytes:
    """The last TAIL_BYTES of the results file (none: empty)."""
    try:
        with path.open("rb") as results:
            results.seek(max(0, results.seek(0, os.SEEK_END) - TAIL_BYTES))
            return results.read()
    except FileNotFoundError:
        return b""
