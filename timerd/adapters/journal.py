"""Crash-safe match state: an append-only journal on disk, a heartbeat in RAM, and recovery.

A match is event-sourced. Every command the match accepted (the service dispatches it as an
`Applied` effect) is appended to `match-journal.jsonl` in the state directory as one JSON line,
flushed and fsynced, with the loop time it was applied at. The first line of a match names the
match, the run (this process) and the whole rule profile. Signals that sounded are appended too:
they are not replayed, they only prove that the match was alive at that instant (after a power
loss the last durable line is all there is) and keep the start signal's wall time. The journal
is compacted (emptied) when the match finishes or is reset, so a tournament day writes a few
dozen short lines per match and nothing per second: the SD card is spared. The command that
ends a match (a golden goal) is journalled before the compaction, so a crash in between finds
the match finished.

Twice a second the daemon writes a heartbeat (`heartbeat.json`: run, match, loop time, wall
time) into the runtime directory, which is RAM (systemd's `/run/timerd`), never the SD card.

Recovery, when the daemon starts and the journal holds an unfinished match: the crash instant
is the latest of the last heartbeat of the same run (a crash or SIGKILL: within half a second)
and the last durable journal line (a power loss, or a clean SIGTERM stop, which writes a
`stopped` line). A fresh `Match` for the journalled profile replays every command through
`Match.handle` at its time shifted so that the crash instant maps to the new `now`; the time
the daemon was down therefore never counts as match time. A match whose clock was running is
then paused at once, an interruption (ITHF 10.1, 10.2): it waits for RESUME, and every later
signal sounds on plan. The score, the goals (with their journalled wall times, for the
results), overtime, penalties and timeouts come back with the replay. A timed break (before
overtime, ITHF 4.8; an intermission, ISBHF 410) is not match time and is not paused: it runs on
with the time it had left, as do a running timeout and the stoppage countdowns. Nothing the
replay fires is sounded again; the `recovered` signal and a notice announce the restored
match, and `status["recovery"]` says what happened.

Never a refusal to start: a torn or corrupt line is skipped with a warning, a command the
replay refuses is skipped with a warning, an unreadable match is closed and reported, and a
state directory that cannot be written or that another daemon holds is logged and this daemon
runs without a journal. A
match last seen longer ago than `state.resume_within_s` (2 h) is closed as abandoned, not
resumed. A match interrupted during its pre-signal is restored to before its start: START
gives a new pre-signal (ITHF 4.4 asks for one 15 to 30 s before the start).

Disk writes happen on a writer thread. A command waits for its line to be on disk before it
is acknowledged (up to a second); a signal's time mark does not wait, so a slow fsync on an SD
card never delays a buzzer edge.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import queue
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from timerd.core.display import shown_clock
from timerd.core.effects import (
    Applied,
    CommandRefused,
    Effect,
    Notice,
    Phase,
    PhaseChanged,
    Signal,
    SignalKind,
)
from timerd.core.match import Match, Status
from timerd.core.profile import Profile
from timerd.core.score import Goal
from timerd.schema import SchemaError, build, to_plain

log = logging.getLogger("timerd.journal")

JOURNAL_NAME = "match-journal.jsonl"
HEARTBEAT_NAME = "heartbeat.json"
LOCK_NAME = "timerd.lock"
#: The heartbeat is written over itself, padded to this many bytes (its JSON is ~150).
HEARTBEAT_WIDTH = 512

#: Loop seconds between heartbeats: bounds the crash instant to within this.
HEARTBEAT_S = 0.5
#: Longest wait for a command's record to be on disk before the daemon goes on regardless.
SYNC_WAIT_S = 1.0

#: Signals that mark match time in the journal; acknowledgements and our own are not needed.
_UNMARKED = frozenset({SignalKind.PAUSE, SignalKind.RESUME, SignalKind.RECOVERED})

#: What each record type must carry, beside "type", "t" and "wall".
_FIELDS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "match": {"match": str, "run": str, "profile": dict},
    "command": {"command": str, "args": list},
    "signal": {"signal": str},
    "recovered": {},
    "stopped": {},
}


# -- reading ---------------------------------------------------------------------------------


def parse_journal(data: bytes) -> tuple[list[dict[str, Any]], list[str]]:
    """The valid records of the last match in `data`, and a warning for each line skipped.

    A last line without its newline was torn by a crash in mid-write; a line that is not a
    JSON object of a known type with its fields is corrupt. Both are skipped.
    """
    records: list[dict[str, Any]] = []
    warnings: list[str] = []
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        if number == len(lines):
            warnings.append(f"line {number}: torn last record ({len(raw)} bytes without "
                            "an end of line), skipped")
            continue
        record, why = _record(raw)
        if record is None:
            warnings.append(f"line {number}: {why}, skipped")
        elif record["type"] == "match":
            if records:
                warnings.append(f"line {number}: a new match begins; {len(records)} records "
                                "of an earlier unclosed match dropped")
            records = [record]
        elif not records:
            warnings.append(f"line {number}: a {record['type']} record before any match "
                            "header, skipped")
        else:
            records.append(record)
    return records, warnings


def _record(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    try:
        record = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None, "not a JSON record"
    if not isinstance(record, dict) or record.get("type") not in _FIELDS:
        return None, "not a journal record"
    wanted: dict[str, type | tuple[type, ...]] = {"t": (int, float), "wall": (int, float)}
    wanted.update(_FIELDS[record["type"]])
    for key, kind in wanted.items():
        if not isinstance(record.get(key), kind) or isinstance(record.get(key), bool):
            return None, f"{record['type']} record without a valid `{key}`"
    if record["type"] == "command" and not all(isinstance(a, str) for a in record["args"]):
        return None, "command record with arguments that are not strings"
    return record, ""


def read_heartbeat(path: Path) -> dict[str, Any] | None:
    """The last heartbeat, or None if there is none (a reboot cleared RAM) or it is unreadable."""
    try:
        beat = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("heartbeat %s unreadable (%s); using the journal alone", path, exc)
        return None
    ok = isinstance(beat, dict) and all(
        isinstance(beat.get(k), str) for k in ("run", "match")) and all(
        isinstance(beat.get(k), int | float) for k in ("t", "wall"))
    if not ok:
        log.warning("heartbeat %s malformed; using the journal alone", path)
        return None
    result: dict[str, Any] = beat
    return result


# -- recovery (pure: records and times in, a match out) ----------------------------------------


@dataclass
class Recovery:
    """What recovery found, and what to continue with.

    `match` is the restored match (None: begin with a fresh one); `records` the journal to
    continue with, rewritten in this run's time (empty: the journal is closed).
    """

    outcome: str  # "none" | "restored" | "abandoned" | "finished" | "unreadable"
    match: Match | None = None
    match_id: str | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    report: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    #: The wall time of the restored match's start signal, if its mark is in the journal.
    started_wall: float | None = None
    #: Each goal entry of the restored match (`Goal.to_dict`) with the wall time it was
    #: entered at, as journalled: the results keep them across the restart.
    goal_walls: list[tuple[dict[str, Any], float]] = field(default_factory=list)


def recover(records: list[dict[str, Any]], heartbeat: dict[str, Any] | None, *, now: float,
            wall_now: float, run: str, resume_within_s: float) -> Recovery:
    """Restore the journalled match at loop time `now` of run `run`.

    `records` are `parse_journal`'s: a match header, then commands and time marks, all in the
    loop time of the run that wrote them; `heartbeat` is that run's last sign of life, if any.
    """
    if not records:
        return Recovery("none")
    header = records[0]
    match_id = header["match"]
    try:
        profile = build(Profile, header["profile"])
    except SchemaError as exc:
        return Recovery("unreadable", match_id=match_id, report={
            "outcome": "unreadable", "match": match_id,
            "message": "a journalled match could not be restored: its profile is not valid "
                       "here (" + "; ".join(exc.problems) + "); it was closed"})

    crash_t, crash_wall, bound = records[-1]["t"], records[-1]["wall"], "journal"
    if heartbeat is not None and heartbeat["run"] == header["run"] \
            and heartbeat["match"] == match_id and heartbeat["t"] > crash_t:
        crash_t, crash_wall, bound = heartbeat["t"], heartbeat["wall"], "heartbeat"
    shift = now - crash_t
    replayed = _replay(profile, [r for r in records if r["type"] == "command"], shift, now)
    warnings = replayed.warnings
    was = replayed.match.phase
    if was is Phase.PRE_SIGNAL:
        # The match had not begun: go back to before the command that sounded the pre-signal.
        applied = replayed.applied
        replayed = _replay(profile, applied[:_entered_pre_signal(profile, applied)], shift,
                           now)
    match = replayed.match
    down_s = wall_now - crash_wall
    if down_s < 0:
        warnings.append(f"the wall clock went back {-down_s:.0f} s since the match was last "
                        "seen (no battery clock, NTP not synced yet?); resuming it anyway")
    report: dict[str, Any] = {
        "match": match_id, "was": was.value, "bound": bound, "down_s": round(down_s, 3),
        "last_seen_wall": crash_wall, "status": match.status(now).to_dict(),
    }
    if was is Phase.FINISHED or is_fresh(match.status(now), profile, now):
        outcome = {Phase.FINISHED: "finished", Phase.PRE_SIGNAL: "not_started"}.get(was)
        if outcome is None:
            return Recovery("none", match_id=match_id, warnings=warnings)
        report.update(outcome=outcome, message=(
            "the last match had finished; a new one can begin" if outcome == "finished" else
            "timerd restarted during the pre-signal, before the match began: press START "
            "for a new pre-signal (ITHF 4.4)"))
        return Recovery(outcome, match_id=match_id, report=report, warnings=warnings)
    if down_s > resume_within_s:
        report.update(outcome="abandoned", message=(
            f"a match last seen {_duration(down_s)} ago ({_where(match.status(now))}) was "
            f"closed as abandoned: older than {_duration(resume_within_s)}"))
        return Recovery("abandoned", match_id=match_id, report=report, warnings=warnings)

    paused = []
    if match.status(now).clock_running:
        try:
            match.handle("pause", now)  # ITHF 10.1: an interruption; 10.2: the time is kept
            paused.append({"type": "command", "command": "pause", "args": [], "t": now,
                           "wall": wall_now})
        except CommandRefused as exc:
            warnings.append(f"could not pause the restored match: {exc}")
    status = match.status(now)
    report.update(outcome="restored", status=status.to_dict(), message=(
        f"timerd restarted: match restored, {_where(status)}; it was {was.value}, down "
        f"{_duration(down_s)}"
        + ("; press START/PAUSE to resume" if status.phase is Phase.PAUSED else "")))
    # The journal goes on in this run's time. Commands the replay refused (or undid, for a
    # pre-signal) are dropped; time marks are kept, they hold the start signal's wall time.
    accepted = {id(r) for r in replayed.applied}
    out = [{**header, "run": run, "t": now, "wall": wall_now}]
    out += [{**r, "t": r["t"] + shift} for r in records[1:]
            if r["type"] != "command" or id(r) in accepted]
    out += paused
    out.append({"type": "recovered", "t": now, "wall": wall_now, "was": was.value,
                "down_s": round(down_s, 3), "bound": bound})
    starts = [r["wall"] for r in records if r.get("signal") == SignalKind.START.value]
    return Recovery("restored", match, match_id, out, report, warnings,
                    starts[-1] if starts else None, replayed.goal_walls)


@dataclass
class _Replayed:
    match: Match
    applied: list[dict[str, Any]]  # the command records the match accepted, in order
    warnings: list[str]
    goal_walls: list[tuple[dict[str, Any], float]]  # each goal entered, with its record's wall


def _replay(profile: Profile, commands: Iterable[dict[str, Any]], shift: float,
            now: float) -> _Replayed:
    out = _Replayed(Match(profile), [], [], [])
    for record in commands:
        try:
            effects = out.match.handle(record["command"], record["t"] + shift, *record["args"])
        except CommandRefused as exc:
            words = " ".join([record["command"], *record["args"]])
            out.warnings.append(f"command `{words}` refused in the replay ({exc}), skipped")
            continue
        out.applied.append(record)
        out.goal_walls += [(e.to_dict(), record["wall"]) for e in effects if isinstance(e, Goal)]
    out.match.poll(now)
    return out


def _entered_pre_signal(profile: Profile, applied: list[dict[str, Any]]) -> int:
    """The index of the last command that took a match from idle into the pre-signal."""
    probe = Match(profile)
    entered = 0
    for i, record in enumerate(applied):
        before = probe.phase
        probe.handle(record["command"], record["t"], *record["args"])
        if before is Phase.IDLE and probe.phase is Phase.PRE_SIGNAL:
            entered = i
    return entered


def is_fresh(status: Status, profile: Profile, at: float) -> bool:
    """True when a match reads exactly as a new one for `profile`: nothing to keep."""
    return status == Match(profile).status(at)


def _where(status: Status) -> str:
    """Where a match stands, as its clock reads: the operator checks this against the table."""
    if status.phase is Phase.BREAK and status.start_in_s is not None:
        what = "the break before overtime" if status.break_kind == "overtime" \
            or status.overtime else "the intermission"
        return f"in {what}, {shown_clock(status.start_in_s)} left"
    if status.count_up and status.overtime_s is not None:  # ITHF 4.8: the clock counts up
        return f"{status.phase.value} in overtime at +{shown_clock(status.overtime_s)}"
    period = "in overtime" if status.overtime else \
        f"period {status.period}/{status.periods}" if status.periods > 1 else ""
    return f"{status.phase.value} at {shown_clock(status.remaining_s)}" + (
        f", {period}" if period else "")


def _duration(seconds: float) -> str:
    seconds = abs(seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# -- writing ---------------------------------------------------------------------------------


class _Trouble:
    """A write that keeps failing is logged once, and once more when it works again."""

    def __init__(self, what: str, consequence: str) -> None:
        self.what = what
        self.consequence = consequence
        self.failing = False

    def failed(self, exc: OSError) -> None:
        if not self.failing:
            log.error("%s: cannot write (%s); %s", self.what, exc, self.consequence)
        self.failing = True

    def cleared(self) -> None:
        if self.failing:
            log.warning("%s: writing again", self.what)
        self.failing = False


@dataclass
class _Job:
    op: str  # "append" | "rewrite"
    lines: list[str]
    done: threading.Event = field(default_factory=threading.Event)



class _Writer(threading.Thread):
    """Writes the journal, each change flushed and fsynced, in order, on its own thread.

    A time mark (a signal that sounded) is only queued: an fsync on an SD card can take tens
    of milliseconds, and on the loop it would delay the next buzzer edge. A command, and the
    compaction that ends a match, are waited for (up to `SYNC_WAIT_S`): once a command is
    acknowledged it must survive a crash. A failed write is logged and the match goes on
    (without crash safety until the disk works again).
    """

    def __init__(self, path: Path) -> None:
        super().__init__(name="journal-writer", daemon=True)
        self.path = path
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._file: Any = None
        self._trouble = _Trouble(f"journal {path}", "the match goes on, but a crash now "
                                                   "would lose it")

    def append(self, line: str, wait: bool) -> None:
        self._submit(_Job("append", [line]), wait)

    def rewrite(self, lines: list[str], wait: bool) -> None:
        """Replace the whole journal atomically (compaction, or the rewritten recovered one)."""
        self._submit(_Job("rewrite", lines), wait)

    def _submit(self, job: _Job, wait: bool) -> None:
        self._queue.put(job)
        if wait and not job.done.wait(SYNC_WAIT_S):
            log.warning("journal %s: a write took longer than %g s; going on without waiting",
                        self.path, SYNC_WAIT_S)

    def stop(self) -> None:
        """Write what is queued, then end."""
        self._queue.put(None)
        self.join()

    def run(self) -> None:
        while (job := self._queue.get()) is not None:
            try:
                if job.op == "append":
                    self._append(job.lines[0])
                else:
                    self._rewrite(job.lines)
            except OSError as exc:
                self._trouble.failed(exc)
            else:
                self._trouble.cleared()
            job.done.set()
        if self._file is not None:
            self._file.close()

    def _append(self, line: str) -> None:
        if self._file is None:
            self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (kept open)
        self._file.write(line + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def _rewrite(self, lines: list[str]) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as out:
            out.writelines(line + "\n" for line in lines)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.path)
        directory = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)  # the rename itself must survive a power loss
        finally:
            os.close(directory)


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"))


def on_ram(path: Path) -> bool | None:
    """Whether `path` lies on a RAM file system (tmpfs), from /proc/mounts; None if unknown."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return None
    target = os.path.realpath(path)
    best, fstype = "", ""
    for line in mounts:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, fstype = point, fields[2]
    return fstype in ("tmpfs", "ramfs") if best else None


class Journal:
    """The match journal and heartbeat: an output (`notify`) and an async context manager.

    `recover()` first (before the service exists: it gives the match to run), then enter it.
    """

    def __init__(self, state_dir: Path, runtime_dir: Path,
                 loop: asyncio.AbstractEventLoop, resume_within_s: float) -> None:
        self.path = state_dir / JOURNAL_NAME
        self.heartbeat_path = runtime_dir / HEARTBEAT_NAME
        self.loop = loop
        self.resume_within_s = resume_within_s
        self.run = uuid.uuid4().hex
        self.match_id: str | None = None
        self.recovery = Recovery("none")
        self._profile: Profile | None = None
        self._lock_fd: int | None = None
        self._writer = _Writer(self.path)
        self._beat: asyncio.TimerHandle | None = None
        self._beat_fd: int | None = None
        self._beat_trouble = _Trouble(f"heartbeat {self.heartbeat_path}", "a crash would "
                                      "restore the match at its last journalled event")
        self._found = False
        #: False when the state directory cannot be used or another daemon holds it: then
        #: this daemon runs without journal and heartbeat, and says so in the log.
        self.enabled = False

    # -- start: lock, read, recover ------------------------------------------------------------

    def recover(self, profile: Profile) -> Match:
        """The match to run: the journalled one, restored, or a fresh one for `profile`.

        A state directory that cannot be used, or that another daemon holds (two daemons must
        never share a journal), is logged, and this daemon runs without crash safety: it
        never refuses to start over its journal.
        """
        self._profile = profile
        log.info("match journal %s, heartbeat %s", self.path, self.heartbeat_path)
        with contextlib.suppress(OSError):  # if it fails, the first heartbeat says so
            self.heartbeat_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self._lock(self.path.parent / LOCK_NAME):
                log.error("another timerd is running with the state directory %s: this one "
                          "keeps no journal, its matches will not survive a crash",
                          self.path.parent)
                return Match(profile)
            data = self.path.read_bytes() if self.path.exists() else b""
        except OSError as exc:
            log.error("cannot use %s (%s): matches will not survive a crash; check "
                      "state.directory and state.runtime_directory (`timerd doctor`)",
                      exc.filename, exc.strerror)
            return Match(profile)
        self.enabled = True
        if on_ram(self.heartbeat_path.parent) is False:
            log.warning("the heartbeat directory %s is not in RAM: its writes twice a second "
                        "wear an SD card; set state.runtime_directory to a tmpfs such as /run",
                        self.heartbeat_path.parent)
        self._found = bool(data)
        records, warnings = parse_journal(data)
        self.recovery = recover(
            records, read_heartbeat(self.heartbeat_path), now=self.loop.time(),
            wall_now=time.time(), run=self.run, resume_within_s=self.resume_within_s)
        for warning in warnings + self.recovery.warnings:
            log.warning("journal %s: %s", self.path, warning)
        report = self.recovery.report
        if report is not None:
            report["skipped"] = len(warnings) + len(self.recovery.warnings)
            level = logging.WARNING if self.recovery.outcome != "restored" else logging.INFO
            log.log(level, "recovery: %s", report["message"])
        if self.recovery.match is not None:
            self.match_id = self.recovery.match_id
            self._profile = self.recovery.match.profile
            return self.recovery.match
        return Match(profile)

    def use_profile(self, profile: Profile) -> None:
        """The next match is played under `profile` (a restored match under another was reset)."""
        self._profile = profile

    def _lock(self, path: Path) -> bool:
        """Hold `path` locked while this daemon runs; False if another process holds it."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._lock_fd = fd
        return True

    async def __aenter__(self) -> Journal:
        if not self.enabled:
            return self
        self._writer.start()
        if self.recovery.records:
            self._writer.rewrite([_line(r) for r in self.recovery.records], wait=True)
        elif self._found:  # close what was found: abandoned, finished, unreadable, garbage
            self._writer.rewrite([], wait=True)
        self._heartbeat()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        """A clean stop: the exact instant goes to the journal; the heartbeat is removed."""
        if not self.enabled:
            return
        if self._beat is not None:
            self._beat.cancel()
        if self.match_id is not None:
            self._append({"type": "stopped"})
        self.match_id = None  # closed: a compaction still due must not wait on the writer
        self._writer.stop()
        if self._beat_fd is not None:
            os.close(self._beat_fd)
        with contextlib.suppress(FileNotFoundError):
            self.heartbeat_path.unlink()
        if self._lock_fd is not None:
            os.close(self._lock_fd)

    # -- while running ---------------------------------------------------------------------------

    def notify(self, effect: Effect, status: Status) -> None:
        if not self.enabled:
            return
        if isinstance(effect, Applied):
            self._applied(effect, status)
        elif isinstance(effect, Signal) and effect.kind not in _UNMARKED \
                and self.match_id is not None:
            self._append({"type": "signal", "signal": effect.kind.value,
                          "remaining_s": round(effect.remaining_s, 3), "period": effect.period},
                         wait=False)
        elif isinstance(effect, PhaseChanged) and effect.phase is Phase.FINISHED \
                and self.match_id is not None:
            # A command that ends the match (a golden goal, a walk-out) is dispatched after
            # this phase change: it closes the match itself, once it is on disk. If no
            # command follows (the final signal at 0:00), close when this dispatch is over.
            self.loop.call_soon(self._close_finished, self.match_id, status)

    def _applied(self, effect: Applied, status: Status) -> None:
        """Journal a command; open a match at its first one, close it when it is over.

        The command that ends a match is journalled before the journal is compacted: a crash
        in between restores a finished match (reported, not resumed), never the match as it
        was before that command (a golden goal lost, overtime resumed).
        """
        profile = self._profile
        if profile is None:
            raise RuntimeError("Journal.recover() must run before the journal is used")
        if is_fresh(status, profile, effect.at):
            if self.match_id is not None:
                self._close("reset", status)
            return
        if status.phase is Phase.FINISHED and self.match_id is None:
            return  # after the end, e.g. a goal after the final signal: no match to restore
        if self.match_id is None:
            self.match_id = uuid.uuid4().hex
            self.recovery.report = None  # a new match: the last recovery is history
            self._append({"type": "match", "match": self.match_id, "run": self.run,
                          "profile": to_plain(profile)}, effect.at)
            log.info("match %s begins: journalled to %s", self.match_id, self.path)
        self._append({"type": "command", "command": effect.command, "args": list(effect.args)},
                     effect.at)
        if status.phase is Phase.FINISHED:
            self._close("finished", status)

    def _close_finished(self, match_id: str, status: Status) -> None:
        if self.match_id == match_id:  # not closed by the command that finished it
            self._close("finished", status)

    def _close(self, why: str, status: Status) -> None:
        log.info("match %s %s at %s: journal compacted", self.match_id, why,
                 shown_clock(status.remaining_s))
        self.match_id = None
        self._writer.rewrite([], wait=True)

    def _append(self, record: dict[str, Any], at: float | None = None,
                wait: bool = True) -> None:
        t = self.loop.time() if at is None else at
        self._writer.append(_line({**record, "t": t, "wall": time.time()}), wait)

    def _heartbeat(self) -> None:
        """Write the heartbeat (RAM), then again in HEARTBEAT_S: a stalled loop stops it too.

        One `pwrite` over the start of a file kept open, padded to a fixed width (JSON ignores
        the trailing spaces): a write call is whole or not at all when the process is killed,
        and it costs a fraction of a new file and a rename twice a second (bench/run: the
        rename was half of the daemon's CPU in a match).
        """
        beat = json.dumps({"run": self.run, "match": self.match_id or "",
                           "t": self.loop.time(), "wall": time.time(), "pid": os.getpid()})
        try:
            if self._beat_fd is None:
                self._beat_fd = os.open(self.heartbeat_path, os.O_WRONLY | os.O_CREAT, 0o644)
            os.pwrite(self._beat_fd, beat.ljust(HEARTBEAT_WIDTH).encode(), 0)
        except OSError as exc:
            self._beat_trouble.failed(exc)
        else:
            self._beat_trouble.cleared()
        self._beat = self.loop.call_later(HEARTBEAT_S, self._heartbeat)

    # -- what the operator sees ------------------------------------------------------------------

    def status_extra(self) -> dict[str, Any]:
        """`status["recovery"]`: what the last start recovered, until a new match begins."""
        return {"recovery": self.recovery.report}

    def announcement(self, status: Status) -> list[Effect]:
        """The `recovered` signal and a notice, when this start found a match to report."""
        report = self.recovery.report
        if report is None:
            return []
        effects: list[Effect] = [Notice(report["message"])]
        if self.recovery.outcome == "restored":
            effects.insert(0, Signal(SignalKind.RECOVERED, self.loop.time(), 1,
                                     status.remaining_s, status.period))
        return effects
