"""Crash-safe match state: an append-only journal on disk, a heartbeat in RAM, and recovery.

A match is event-sourced. Every command the match accepted (the service dispatches it as an
`Applied` effect) is appended to `match-journal.jsonl` in the state directory as one JSON line,
flushed and fsynced, with the loop time it was applied at. The first line of a match names the
match (its id, the service's: the results and hall mode carry the same one; empty while the
journalled match is not set up yet, e.g. only named, and filled in by rewriting the journal
when it is), the run (this process) and the whole rule profile. Signals that sounded are
appended too: they are not replayed, they only prove that the match was alive at that instant
(after a power loss the last durable line is all there is) and keep the start signal's wall
time. The journal is compacted (emptied) when a match is reset, when the next one begins and
when a finished match can no longer be corrected, so a tournament day writes a few dozen short
lines per match and nothing per second: the SD card is spared. A finished match stays while
`undo` may reopen it (`reopen_within_s` after its end, ITHF 6.1, ISBHF 420 !1; issue 42): a
restart in that window restores it finished and correctable, and a correction after the end
is journalled with it. A match that piles up commands (a control client pausing and resuming
in a loop) is compacted as it goes: once COMPACT_LINES lines follow its header (or its last
snapshot), and they outweigh that snapshot, the journal is rewritten as the header, a
`snapshot` of the match (the live match pickled on the loop, `format.snapshot_record`; its
write, as every other, on the disk writer's thread) and nothing after it. The pickling stalls
the loop in proportion to the match (24 ms with 10,000 interruptions), so it waits for a
stopped clock, where no signal is due within it; while the clock runs, only past
RUNNING_COMPACT_LINES lines or RUNNING_COMPACT_BYTES of them (a start's read stays bounded).
A start then reads one snapshot and at most a few thousand lines, however many commands the
match took (bench/journal_recovery.py). A finished match is compacted only once its results
line (or its pending copy) is fsynced (`result_on_disk`) in any case: until then the journal
keeps it, and a start that finds it gives its result to the results file (issue 36: nothing
acknowledged is only in RAM).

Once a second the daemon writes a heartbeat (`heartbeat.json`: run, match, loop time, wall
time) into the runtime directory, which is RAM (systemd's `/run/timerd`), never the SD card.
It is written at the shown clock's tick, when the loop is awake anyway, and by a timer of its
own only where recovery uses the crash instant and no tick came (not `_TIMELESS`): with no
match, in the pre-signal and after the end, on the ticks and phase changes only.

Recovery, when the daemon starts and the journal holds an unfinished match: the crash instant
is the latest of the last heartbeat of the same run (a crash or SIGKILL: within a second)
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

Disk writes happen on the disk writer's thread (`timerd.disk`), never on the loop:
a slow fsync on an SD card never delays a buzzer edge. A tool's reply to a command waits for
the command's line to be on disk (`synced`, at most the writer's `SLOW_S`) and says so when it
is not (`durable: false`); a signal's time mark is not waited for. Jobs run in the order they
were given, so a command's line is on disk before anything it caused: the results line of the
match it ended, then the compaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from timerd.adapters.journal.format import (
    HEARTBEAT_NAME,
    JOURNAL_NAME,
    MAX_SNAPSHOT_BYTES,
    Recovery,
    is_fresh,
    parse_journal,
    read_heartbeat,
    recover,
    signal_record,
    snapshot_record,
    told,
)
from timerd.config import INSTANCE_HINT, InUse
from timerd.config.schema import to_plain
from timerd.core.display import shown_clock
from timerd.core.effects import (
    Applied,
    Effect,
    Phase,
    PhaseChanged,
    Signal,
    SignalKind,
    Tick,
    Told,
)
from timerd.core.match import Match
from timerd.core.profile import Profile
from timerd.core.rules.corrections import CorrectionSettings
from timerd.core.rules.scoring import Teams
from timerd.core.score import Goal, Side
from timerd.core.status import Status
from timerd.disk import DiskWriter, LineFile, Write, describe, hold_lock, on_ram
from timerd.ports import Dispatch

log = logging.getLogger("timerd.journal")

#: Never through a symbolic link planted in the runtime directory (it would overwrite the
#: link's target with the heartbeat).
HEARTBEAT_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW
LOCK_NAME = "timerd.lock"
#: The heartbeat is written over itself, padded to this many bytes (its JSON is ~150).
HEARTBEAT_WIDTH = 512

#: Loop seconds between heartbeats: bounds the crash instant to within this (issue 9: within
#: a second). One a second rides the shown clock's ticks, so a running match wakes the loop
#: once a second, not twice (issue 16: CPU per match minute).
HEARTBEAT_S = 1.0
#: A tick writes the heartbeat when the last one is at least this old: every tick of a clock
#: that ticks each second, every eighth of one that shows tenths (the last 10 s).
BEAT_ON_TICK_S = 0.75 * HEARTBEAT_S
#: Lines after a match's header (or its last snapshot) that make the journal compact it into
#: a snapshot, once they also outweigh the snapshot before: a snapshot costs the loop in
#: proportion to the match (5 ms with 1,000 interruptions, 24 ms with 10,000 on a busy VM,
#: bench/journal_recovery.py), paid at most once per COMPACT_LINES commands.
COMPACT_LINES = 1000
#: Lines, or bytes of them, after which a match is compacted while its clock runs too: a flood
#: of commands in play (names, goals) that never stops the clock. A compaction otherwise waits
#: for the next stoppage, so that its snapshot's stall never holds up a signal of a running
#: clock; these keep what a start reads and replays within a few times a stopped match's.
RUNNING_COMPACT_LINES = 4 * COMPACT_LINES
RUNNING_COMPACT_BYTES = 1024 * 1024
#: Longest journal read at a start: a match writes a few dozen lines, a long one a snapshot
#: and at most about RUNNING_COMPACT_BYTES of lines (or as many as the snapshot's bytes); a
#: longer file is not a journal timerd wrote, and is set aside.
MAX_JOURNAL_BYTES = 4 * 1024 * 1024 + MAX_SNAPSHOT_BYTES

#: Signals that mark match time in the journal; acknowledgements and our own are not needed.
_UNMARKED = frozenset({SignalKind.PAUSE, SignalKind.RESUME, SignalKind.RECOVERED})
#: Phases whose crash instant recovery never uses: nothing to restore (idle, finished), or a
#: match restored to before its start (the pre-signal: START gives a new one, ITHF 4.4). In
#: them the heartbeat has no timer of its own and rides the dispatches (`_beat_on_tick`): an
#: idle daemon is not woken for it (issue 16: CPU per wake-up).
_TIMELESS = frozenset({Phase.IDLE, Phase.PRE_SIGNAL, Phase.FINISHED})



# -- writing ---------------------------------------------------------------------------------


def _line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":"), allow_nan=False).encode() + b"\n"


class Journal:
    """The match journal and heartbeat: an output (`notify`) and an async context manager.

    `recover()` first (before the service exists: it gives the match to run), then enter it.
    """

    def __init__(self, state_dir: Path, runtime_dir: Path,
                 loop: asyncio.AbstractEventLoop, resume_within_s: float,
                 writer: DiskWriter | None = None) -> None:
        self.path = state_dir / JOURNAL_NAME
        self.heartbeat_path = runtime_dir / HEARTBEAT_NAME
        self.loop = loop
        self.resume_within_s = resume_within_s
        self.run = uuid.uuid4().hex
        self.match_id: str | None = None
        self.recovery = Recovery("none")
        self._profile: Profile | None = None
        self._lock_fd: int | None = None
        #: The daemon's disk writer (shared with the results and the outbox, so that their
        #: writes keep the order they were made in); without one, the journal's own.
        self.writer = writer or DiskWriter(loop)
        self._own_writer = writer is None
        self._file = LineFile(self.path, keep_open=True)
        self._last: Write | None = None  # the last write a command's reply waits for
        #: Every line of the open match: after a failed write (a full card) the next one
        #: writes them all, so the journal never goes on with a line missing.
        self._lines: list[bytes] = []
        #: Finished matches kept, by id, until their result is on disk: their lines stay at the
        #: journal's head (every rewrite writes them first).
        self._held: dict[str, list[bytes]] = {}
        #: The match that finished last and its lines, until a reset, the next match or the
        #: end of its window for corrections: an `undo` of the entry that ended it reopens it
        #: (issue 28), and the journal takes it up again from those lines, so the reopen is as
        #: crash-safe as any command. The lines stay on disk (`_whole`) for as long: a restart
        #: restores the match finished and still correctable (issue 42 item 1).
        self._finished: tuple[str, list[bytes]] | None = None
        #: The end of the finished match's window (`reopen_within_s` after its end).
        self._window: asyncio.TimerHandle | None = None
        self._finished_on_disk = False
        #: The open match's goal entries with the wall time of their command, and the wall time
        #: of its start signal: what a snapshot keeps of the lines it replaces.
        self._walls: list[tuple[dict[str, Any], float]] = []
        self._started_wall: float | None = None
        self._snapshot_bytes = 0  # the open match's last snapshot line (0: none)
        #: The live match, for a snapshot (app.py wires the service's); None: no compaction.
        self.match_of: Callable[[], Match | None] = lambda: None
        #: Whether the result of a match is not on disk yet (app.py wires the results file's).
        self.result_off_disk: Callable[[str], bool] = lambda match_id: False
        #: Whether the journal closes a finished match itself, at the end of the dispatch
        #: that finished it; False where the results file closes it behind its line
        #: (`close_finished`, app.keep_results).
        self.closes_itself = True
        self._beat: asyncio.TimerHandle | None = None
        self._beating = False  # entered: the heartbeat is written
        #: The phase needs the heartbeat's own timer (not `_TIMELESS`); until the
        #: service's first dispatch says, a restored match may be running.
        self._timed = True
        self._beat_fd: int | None = None
        #: The heartbeat's keys that change only with the match (`_heartbeat`), by match.
        self._beat_head: tuple[str | None, str] = (None, "")
        self._beat_at: float | None = None  # loop time of the last heartbeat written
        self._found = b""
        self._records: list[dict[str, Any]] = []  # the last match's, as found
        #: Finished matches found before the last one (`parse_journal`'s `earlier`).
        self.finished_earlier: list[Recovery] = []
        #: False when the state directory cannot be used: then this daemon runs without
        #: journal and heartbeat, and says so in the log.
        self.enabled = False

    # -- start: lock, read, recover ------------------------------------------------------------

    def recover(self, profile: Profile) -> Match:
        """The match to run: the journalled one, restored, or a fresh one for `profile`.

        A state directory that cannot be used is logged, and this daemon runs without crash
        safety. One that another daemon holds (its lock file, held for that daemon's life)
        raises InUse: two daemons never share a journal, and a second one refuses to start
        rather than run without one (issue 30 item 3).
        """
        self._profile = profile
        log.info("match journal %s, heartbeat %s", self.path, self.heartbeat_path)
        with contextlib.suppress(OSError):  # if it fails, the first heartbeat says so
            self.heartbeat_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._lock_fd = hold_lock(self.path.parent / LOCK_NAME)
            if self._lock_fd is None:
                raise InUse(f"another timerd runs with the state directory "
                            f"{self.path.parent}: {INSTANCE_HINT}, each with its own "
                            "state.directory (two daemons never share a journal)")
            data = self._read()
        except OSError as exc:
            log.error("cannot use %s (%s): matches will not survive a crash; check "
                      "state.directory and state.runtime_directory (`timerd doctor`)",
                      exc.filename, exc.strerror)
            self.writer.fault("journal", f"no journal: {describe(exc)}")
            return Match(profile)
        self.enabled = True
        if on_ram(self.heartbeat_path.parent) is False:
            log.warning("the heartbeat directory %s is not in RAM: its writes once a second "
                        "wear an SD card; set state.runtime_directory to a tmpfs such as /run",
                        self.heartbeat_path.parent)
        self._found = data
        earlier: list[list[dict[str, Any]]] = []
        records, warnings = parse_journal(data, earlier)
        self._records = records
        self.finished_earlier = [found for found in map(self._finished_earlier, earlier)
                                 if found is not None]
        try:
            self.recovery = recover(
                records, read_heartbeat(self.heartbeat_path), now=self.loop.time(),
                wall_now=time.time(), run=self.run, resume_within_s=self.resume_within_s)
        except Exception as exc:  # a defect: the journal is set aside, never a start refused
            aside = self.path.with_name(self.path.name + ".bad")
            log.exception("recovery failed; journal set aside as %s, not restored", aside.name)
            os.replace(self.path, aside)
            self._found = b""
            self.recovery = Recovery("none", warnings=[f"recovery failed ({exc!r:.200}); the "
                                                       f"journal was set aside as {aside.name}"])
        for warning in warnings + self.recovery.warnings:
            log.warning("journal %s: %s", self.path, warning)
        skipped = len(warnings) + len(self.recovery.warnings)
        if self.recovery.report is None and skipped:  # nothing to restore, but say what went
            self.recovery.report = {"outcome": "none", "match": self.recovery.match_id,
                                    **told("skipped", skipped=skipped)}
        report = self.recovery.report
        if report is not None:
            report["skipped"] = skipped
            level = logging.WARNING if self.recovery.outcome != "restored" else logging.INFO
            log.log(level, "recovery: %s", report["message"])
        if self.recovery.match is not None:
            if self.recovery.correctable_until is None:  # else finished: kept, not open
                self.match_id = self.recovery.match_id
            self._profile = self.recovery.match.profile
            return self.recovery.match
        return Match(profile)

    def _finished_earlier(self, records: list[dict[str, Any]]) -> Recovery | None:
        """A match before the journal's last one: finished (kept for its result, which a
        crash left unwritten), or else dropped with a warning, as always."""
        try:
            found = recover(records, None, now=self.loop.time(), wall_now=time.time(),
                            run=self.run, resume_within_s=float("inf"))
        except Exception:  # a defect: that match is dropped, never a start refused
            log.exception("journal %s: an earlier match could not be read; dropped", self.path)
            return None
        if found.final is None:
            log.warning("journal %s: %d records of an earlier unclosed match dropped",
                        self.path, len(records))
            return None
        found.records = records
        return found

    def _read(self) -> bytes:
        """The journal's bytes; one over MAX_JOURNAL_BYTES is set aside (`.big`), not read."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return b""
        if size > MAX_JOURNAL_BYTES:
            aside = self.path.with_name(self.path.name + ".big")
            log.error("journal %s is %d bytes, over the %d a match can write: set aside as "
                      "%s, not restored", self.path, size, MAX_JOURNAL_BYTES, aside.name)
            os.replace(self.path, aside)
            return b""
        return self.path.read_bytes()

    def use_profile(self, profile: Profile) -> None:
        """The next match is played under `profile` (a restored match under another was reset)."""
        self._profile = profile

    async def __aenter__(self) -> Journal:
        if not self.enabled:
            return self
        # Finished matches whose result is being written (app.py gave them to the results
        # file) are kept until it is on disk; the rest of what was found (abandoned,
        # finished and written, unreadable, garbage) is closed; a restored match goes on.
        for done in [*self.finished_earlier, self.recovery]:
            if done.final is not None and self.result_off_disk(done.match_id or ""):
                records = self._records if done is self.recovery else done.records
                self._held[done.match_id or ""] = [_line(r) for r in records]
        lines = [_line(r) for r in self.recovery.records]
        self._walls = list(self.recovery.goal_walls)
        self._started_wall = self.recovery.started_wall
        if self.recovery.correctable_until is not None:  # a finished match, still correctable
            self._keep_finished(self.recovery.match_id or "", lines,
                                self.recovery.correctable_until - self.loop.time())
            if self.recovery.match_id in self._held:  # one list: a correction goes to both
                self._held[self.recovery.match_id or ""] = lines
        else:
            self._lines = lines
            self._snapshot_bytes = next((len(line) for line in self._lines[1:2]
                                         if line.startswith(b'{"type":"snapshot"')), 0)
        if self._found:
            await self._rewrite(self._whole()).reply
        self._beating = True
        self._heartbeat()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        """A clean stop: the exact instant goes to the journal; the heartbeat is removed."""
        if not self.enabled:
            return
        self._beating = False
        if self._beat is not None:
            self._beat.cancel()
        self._cancel_window()  # a finished match kept stays in the journal for the next start
        if self.match_id is not None:
            self._append({"type": "stopped"})
        self.match_id = None  # closed: a compaction still due must not follow the stop
        last = self.writer.submit("journal", self._file.close)
        if self._own_writer:
            await asyncio.to_thread(self.writer.stop)
        else:  # the lock is held until the last line is out (or the device is hopeless)
            await last.reply
        if self._beat_fd is not None:
            os.close(self._beat_fd)
        with contextlib.suppress(FileNotFoundError):
            self.heartbeat_path.unlink()
        if self._lock_fd is not None:
            os.close(self._lock_fd)

    # -- while running ---------------------------------------------------------------------------

    def notify(self, dispatch: Dispatch) -> None:
        """Journal the dispatch's commands and marks; a journal that closes a finished match
        itself (`closes_itself`) does so once the whole dispatch is journalled, the command
        that ended it included."""
        if not self.enabled:
            return
        goals: list[Goal] = []
        for effect in dispatch.effects:
            self._effect(effect, dispatch.status, goals)
        ending = self.match_id
        if self.closes_itself and ending is not None and dispatch.status.phase is Phase.FINISHED \
                and any(isinstance(e, PhaseChanged) and e.phase is Phase.FINISHED
                        for e in dispatch.effects):
            self.close_finished(ending, dispatch.status)

    def _effect(self, effect: Effect, status: Status, goals: list[Goal]) -> None:
        if isinstance(effect, Goal):
            goals.append(effect)  # entered by the command the dispatch ends with (`Applied`)
        elif isinstance(effect, Applied):
            self._applied(effect, status, goals)
        elif isinstance(effect, Signal) and effect.kind not in _UNMARKED \
                and self.match_id is not None:
            self._append(signal_record(effect), wait=False)
            if effect.kind is SignalKind.START:
                self._started_wall = time.time()
        elif isinstance(effect, Tick | PhaseChanged):
            self._beat_on_tick(status.phase, tick=isinstance(effect, Tick))

    def _applied(self, effect: Applied, status: Status, goals: list[Goal]) -> None:
        """Journal a command; open a match at its first one, close it when it is over.

        The command that ends a match is journalled before its result is written and the
        journal compacted (`notify`): a crash in between restores a finished match (reported,
        not resumed), never the match as it was before that command (a golden goal lost,
        overtime resumed, and a second result for the same match).
        """
        profile = self._profile
        if profile is None:
            raise RuntimeError("Journal.recover() must run before the journal is used")
        match_id = status.match_id or ""  # "": named, not set up yet
        kept = self._finished is not None and self._finished[0] == match_id \
            and self.match_id is None
        if is_fresh(status, profile, effect.at):
            self._drop_finished("reset")
            if self.match_id is not None:
                self._close("reset", status)
            return
        if status.phase is Phase.FINISHED and self.match_id is None:
            if kept:  # a correction after the end (names, an entry after it): kept with it
                self._append_finished(effect)
            return  # else after the end of a match not kept: nothing to restore
        if kept:
            self._reopen()
        elif self.match_id is None:
            self._drop_finished("the next match")
            self.match_id = match_id
            self.recovery.report = None  # a new match: the last recovery is history
            self._walls, self._started_wall, self._snapshot_bytes = [], None, 0
            self._append({"type": "match", "match": self.match_id, "run": self.run,
                          "profile": to_plain(profile)}, effect.at)
            self._carried_names(effect, status)
            log.info("match %s begins: journalled to %s", self.match_id or "(not set up)",
                     self.path)
        elif match_id != self.match_id:
            self._relabel(match_id)
        wall = self._append({"type": "command", "command": effect.command.name,
                             "args": list(effect.command.words())},
                            effect.at)
        self._walls += [(goal.to_dict(), wall) for goal in goals]
        self._compact(effect.at, running=status.clock_running)

    def _compact(self, at: float, running: bool) -> None:
        """A match long in lines becomes its header and a snapshot (the module's docstring):
        recovery reads the snapshot and replays only what follows it. While the clock runs
        (`running`), only past RUNNING_COMPACT_LINES or _BYTES: the snapshot stalls the loop."""
        tail = self._lines[2 if self._snapshot_bytes else 1:]
        if len(tail) < COMPACT_LINES:
            return
        size = sum(map(len, tail))
        waits = running and len(tail) < RUNNING_COMPACT_LINES and size < RUNNING_COMPACT_BYTES
        if size < self._snapshot_bytes or waits:
            return
        match = self.match_of()
        if match is None or (match.match_id or "") != self.match_id:
            return
        record = snapshot_record(match, self._walls, self._started_wall)
        if record is None:
            return  # a step due at once: the next command tries again
        line = _line({**record, "t": at, "wall": time.time()})
        self._lines = [self._lines[0], line]
        self._snapshot_bytes = len(line)
        self._last = self._rewrite(self._whole())
        log.info("match %s: %d journal lines compacted into a snapshot of %d bytes",
                 self.match_id, len(tail), len(line))

    def _carried_names(self, effect: Applied, status: Status) -> None:
        """The names and round a new match took over from the one before (`teams` given
        to a finished match, then a reset: the desk's next round loaded onto a finished
        table, then `start_round`) are its first command: a restart restores them with it
        (issue 41 item 1). The opening command's own names need no line of their own."""
        if isinstance(effect.command, Teams) or not (any(status.teams.values())
                                                     or status.round):
            return
        names = Teams(status.teams.get(Side.HOME.value, ""),
                      status.teams.get(Side.AWAY.value, ""), status.round or "")
        self._append({"type": "command", "command": names.name, "args": list(names.words())},
                     effect.at)

    def _reopen(self) -> None:
        """ISBHF 420 !1, ITHF 6.1: the finished match was reopened (`undo` of the entry that
        ended it): its lines are the journal's open match again (no longer kept apart for
        its result), and the command that reopened it follows them."""
        assert self._finished is not None
        self.match_id, lines = self._finished
        self._finished = None
        self._finished_on_disk = False
        self._cancel_window()
        self._held.pop(self.match_id, None)
        self._lines = list(lines)
        self._last = self._rewrite(self._whole())
        log.info("match %s reopened: journalled again", self.match_id)

    def _relabel(self, match_id: str) -> None:
        """The journalled match was set up (or reset) after its header was written: the
        header takes its id now (the journal is rewritten, a few lines), so a restart
        restores it under the id its results will carry."""
        header = json.loads(self._lines[0])
        self._lines[0] = _line({**header, "match": match_id})
        self.match_id = match_id
        self._last = self._rewrite(self._whole())

    def close_finished(self, match_id: str, status: Status) -> None:
        """The end of match `match_id`, once its ending command is journalled (this
        dispatch's) and its results line submitted (the results file's `ended`, app.py): the
        journal keeps the match until that line is on disk (`result_on_disk`), then
        compacts; so the disk sees the command, the result, the compaction
        (docs/service.md)."""
        if self.match_id != match_id:  # closed already (a revision after the end)
            return
        lines = self._lines
        # Kept on disk only by a journal that has every line of it (a full card lost some:
        # then the copy in RAM is all there is); a match with no id has no results to correct.
        on_disk = bool(match_id) and "journal" not in self.writer.faults
        window_s = CorrectionSettings.of(self._profile).reopen_within_s \
            if self._profile is not None else 0.0
        self._keep_finished(match_id, lines, window_s if on_disk else None)
        held = on_disk and self.result_off_disk(match_id)
        if held:  # issue 36: until its result is on disk, whatever the window
            self._held[match_id] = lines  # the same list: a correction goes to both
        if not (held or self._finished_on_disk):
            self._close("finished", status)
            return
        log.info("match %s finished at %s: the journal keeps it (on disk already) until its "
                 "result is on disk and for %g s after its end, for corrections", match_id,
                 shown_clock(status.remaining_s), window_s)
        self.match_id = None
        self._lines = []

    def _keep_finished(self, match_id: str, lines: list[bytes],
                       window_s: float | None) -> None:
        """Keep the finished match `match_id` (its `lines`) for an `undo` that reopens it:
        on disk for `window_s` (its window for corrections, ITHF 6.1, ISBHF 420 !1; None: in
        RAM only), and until a reset or the next match in any case."""
        self._cancel_window()
        self._finished = (match_id, lines)
        self._finished_on_disk = window_s is not None and window_s > 0
        if self._finished_on_disk and window_s is not None:
            self._window = self.loop.call_later(window_s, self._drop_finished, "window")

    def _drop_finished(self, why: str) -> None:
        """The finished match can no longer be reopened (`why`: a reset, the next match, the
        end of its window): the journal lets go of it."""
        self._cancel_window()
        kept, self._finished = self._finished, None
        if kept is not None and self._finished_on_disk:
            self._finished_on_disk = False
            log.info("match %s: no longer correctable (%s); journal compacted", kept[0], why)
            self._last = self._rewrite(self._whole())

    def _cancel_window(self) -> None:
        if self._window is not None:
            self._window.cancel()
            self._window = None

    def _append_finished(self, effect: Applied) -> None:
        """A command after the end of the kept finished match (`correct`, an entry after the
        final signal): journalled with it, so a restart restores the correction too."""
        assert self._finished is not None
        line = self._stamp({"type": "command", "command": effect.command.name,
                            "args": list(effect.command.words())}, effect.at)
        self._finished[1].append(line)
        if self._finished_on_disk or self._finished[0] in self._held:
            self._write_line(line)

    def result_on_disk(self, match_id: str) -> None:
        """The result of `match_id` is on disk: a finished match kept for it is compacted."""
        if self._held.pop(match_id, None) is not None:
            log.info("match %s: its result is on disk; journal compacted", match_id)
            self._rewrite(self._whole())

    def _close(self, why: str, status: Status) -> None:
        log.info("match %s %s at %s: journal compacted", self.match_id, why,
                 shown_clock(status.remaining_s))
        self.match_id = None
        self._lines = []
        self._last = self._rewrite(self._whole())

    def _whole(self) -> bytes:
        """All the journal should hold: the finished matches kept for their results, the
        one kept for corrections, then the open one."""
        return b"".join(self._parts())

    def _parts(self) -> list[bytes]:
        """The lines of `_whole`, as a list of its own (the lines are not copied)."""
        kept = self._finished if self._finished_on_disk else None
        return [line for lines in self._held.values() for line in lines] \
            + (list(kept[1]) if kept is not None and kept[0] not in self._held else []) \
            + self._lines

    def _stamp(self, record: dict[str, Any], at: float | None,
               wall: float | None = None) -> bytes:
        t = self.loop.time() if at is None else at
        return _line({**record, "t": t, "wall": time.time() if wall is None else wall})

    def _append(self, record: dict[str, Any], at: float | None = None,
                wait: bool = True) -> float:
        """Queue one line; `wait`: a command's reply waits for it (`synced`). Returns its
        wall time."""
        wall = time.time()
        line = self._stamp(record, at, wall)
        self._lines.append(line)
        self._write_line(line, wait)
        return wall

    def _write_line(self, line: bytes, wait: bool = True) -> None:
        """Queue `line`, the journal's last, to the end of the file. All the journal should
        hold is joined on the writer thread and only after a failed write: a compacted match's
        snapshot is not copied for every line (`_parts`)."""
        parts = self._parts()
        write = self.writer.submit("journal",
                                   lambda: self._file.append(line, lambda: b"".join(parts)))
        if wait:
            self._last = write

    def _rewrite(self, data: bytes) -> Write:
        """Queue the journal's replacement by `data` (compaction, or the recovered match)."""
        return self.writer.submit("journal", lambda: self._file.replace(data))

    async def synced(self) -> str | None:
        """Wait for the last command's journal line: None once it is on disk, else why not
        (a storage fault, a slow device, no journal). For a tool's reply, never a buzzer."""
        if not self.enabled:
            return self.writer.faults.get("journal", "no journal")
        if self._last is None:
            return None
        return await asyncio.shield(self._last.reply)

    def _beat_on_tick(self, phase: Phase, *, tick: bool) -> None:
        """Write the heartbeat on the shown clock's tick (one at least BEAT_ON_TICK_S after
        the last) or a phase change, and start its interval over: the loop is awake for the
        tick anyway, so a running match wakes it once a second for both, not twice (bench/run:
        CPU per match minute). A tick is due before the beat's own timer, which fires only
        where no tick came in time: the crash instant stays within HEARTBEAT_S where recovery
        uses it; in a `_TIMELESS` phase no timer is kept."""
        if not self._beating:
            return
        timed = phase not in _TIMELESS
        if tick and timed == self._timed and self._beat_at is not None \
                and self.loop.time() - self._beat_at < BEAT_ON_TICK_S:
            return
        self._timed = timed
        if self._beat is not None:
            self._beat.cancel()
        self._heartbeat()

    def _heartbeat(self) -> None:
        """Write the heartbeat (RAM), then again in HEARTBEAT_S where the phase needs it (not
        `_TIMELESS`): a stalled loop stops it too.

        One `pwrite` over the start of a file kept open, padded to a fixed width (JSON ignores
        the trailing spaces): a write call is whole or not at all when the process is killed,
        and it costs a fraction of a new file and a rename once a second (bench/run: the
        rename was half of the daemon's CPU in a match). It stays on the loop: the runtime
        directory is RAM (tmpfs; a start warns when it is not), where a write is a copy into
        the page cache that never waits for a device, and without an fsync nothing else does.
        """
        self._beat_at = self.loop.time()
        match = self.match_id or ""
        if self._beat_head[0] != match:
            self._beat_head = (match, json.dumps({"run": self.run, "match": match,
                                                  "pid": os.getpid()})[:-1])
        # The instants after the keys that change only with the match (issue 44 item 8: its
        # encoding through `json.dumps` once a second was 4 % of a dispatch's Python under
        # cProfile): a finite float's repr is JSON's number.
        beat = f'{self._beat_head[1]}, "t": {self._beat_at!r}, "wall": {time.time()!r}}}'
        try:
            if self._beat_fd is None:
                self._beat_fd = os.open(self.heartbeat_path, HEARTBEAT_FLAGS, 0o640)
            os.pwrite(self._beat_fd, beat.ljust(HEARTBEAT_WIDTH).encode(), 0)
        except OSError as exc:
            self.writer.fault("heartbeat", describe(exc))
        else:
            self.writer.fault("heartbeat", None)
        self._beat = self.loop.call_later(HEARTBEAT_S, self._heartbeat) if self._timed else None

    # -- what the operator sees ------------------------------------------------------------------

    def status_extra(self) -> dict[str, Any]:
        """`status["recovery"]`: what the last start recovered, until a new match begins."""
        return {"recovery": self.recovery.report}

    def announcement(self, status: Status) -> list[Effect]:
        """The `recovered` signal and a notice, when this start found a match to report."""
        report = self.recovery.report
        if report is None:
            return []
        effects: list[Effect] = [Told(report["code"], report["params"])]
        if self.recovery.outcome == "restored":
            effects.insert(0, Signal(SignalKind.RECOVERED, self.loop.time(), 1,
                                     status.remaining_s, status.period))
        return effects
