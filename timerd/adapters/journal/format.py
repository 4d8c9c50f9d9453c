"""The match journal's format (docs/service.md), and what a journal means: its records
parsed and checked, the heartbeat read, and the match they restore (pure: records and times
in, a match out; no file is written).

A documented format: tools may import this module (`timerd doctor`, which says what the next
start would do with the journal), and only this one, of the journal; the daemon's journal
(`timerd.adapters.journal.writer`) writes what this reads. `match-journal.jsonl` in the state
directory holds one JSON record per line: a match header (`type` "match": the match's id,
the run, the whole profile), then `command`, `signal` (time marks), `recovered` and `stopped`
records, each with `t` (the writing run's loop time) and `wall`; a long match is compacted
into a `snapshot` of it (the match its commands made) and the records after it.
`heartbeat.json` in the runtime directory holds the run, the match id, `t` and `wall` of
the last sign of life.
"""

from __future__ import annotations

import base64
import binascii
import functools
import io
import json
import logging
import pickle
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from timerd import __version__
from timerd.config.schema import SchemaError, build
from timerd.core.commands import Command, Pause
from timerd.core.effects import Phase, Signal, SignalKind
from timerd.core.match import Match
from timerd.core.profile import Profile
from timerd.core.rebase import rebase
from timerd.core.refused import CommandRefused
from timerd.core.rules.corrections import Corrections
from timerd.core.score import Goal
from timerd.core.status import Status, check
from timerd.i18n import LOG_TEXT

log = logging.getLogger("timerd.journal")

JOURNAL_NAME = "match-journal.jsonl"
HEARTBEAT_NAME = "heartbeat.json"
#: Longest journal line read back: a match header with its profile is about 1 kB.
MAX_RECORD_BYTES = 64 * 1024
#: Longest snapshot line read back: a match is 10-20 kB of it, and each interruption the
#: match records (ITHF 10.1) about 40 bytes more.
MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024
#: Loop times (the monotonic clock: seconds since boot) and wall times beyond these are
#: corrupt: 300 years, and the year 2286.
MAX_LOOP_T = 1e10
MAX_WALL = 1e10
#: The longest a match can span in the journal (the first record to the last), pauses
#: included: a match interrupted over a night and resumed the next day still fits.
MAX_MATCH_SPAN_S = 7 * 24 * 3600.0
#: What each record type must carry, beside "type", "t" and "wall".
_FIELDS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "match": {"match": str, "run": str, "profile": dict},
    "command": {"command": str, "args": list},
    "signal": {"signal": str},
    "snapshot": {"timerd": str, "state": str, "shift": (int, float), "goal_walls": list},
    "recovered": {},
    "stopped": {},
}


# -- reading ---------------------------------------------------------------------------------


def parse_journal(data: bytes, earlier: list[list[dict[str, Any]]] | None = None
                  ) -> tuple[list[dict[str, Any]], list[str]]:
    """The valid records of the last match in `data`, and a warning for each line skipped;
    `earlier` gets those of each match before it (a finished one the journal kept for its
    result, which a later match followed).

    A last line without its newline was torn by a crash in mid-write; a line that is not a
    JSON object of a known type with its fields, holds a value JSON has no number for (NaN,
    Infinity), a time outside what a match can span, or is longer than MAX_RECORD_BYTES, is
    corrupt. Both are skipped, and the match is restored from the rest.
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
        record, why = _record(raw, records[0]["t"] if records else None)
        if record is None:
            warnings.append(f"line {number}: {why}, skipped")
        elif record["type"] == "match":
            if records and earlier is not None:
                earlier.append(records)
            elif records:
                warnings.append(f"line {number}: a new match begins; {len(records)} records "
                                "of an earlier unclosed match dropped")
            records = [record]
        elif not records:
            warnings.append(f"line {number}: a {record['type']} record before any match "
                            "header, skipped")
        else:
            records.append(record)
    return records, warnings


def _not_a_number(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _record(raw: bytes, match_t: float | None) -> tuple[dict[str, Any] | None, str]:
    """One line as a record, or None and why not. `match_t`: the match header's time."""
    most = MAX_SNAPSHOT_BYTES if raw.startswith(b'{"type":"snapshot"') else MAX_RECORD_BYTES
    if len(raw) > most:
        return None, f"a record of {len(raw)} bytes, over the {most} limit"
    try:
        record = json.loads(raw, parse_constant=_not_a_number)
    except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: "[[[[..." deep
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
    # A finite float can still be absurd (1e300): it would move the crash instant (and every
    # replayed time) past any match, or overflow the results' wall-clock dates.
    if not 0 <= record["wall"] <= MAX_WALL:
        return None, f"{record['type']} record with an impossible wall time {record['wall']!r}"
    reference = record["t"] if match_t is None or record["type"] == "match" else match_t
    if abs(record["t"]) > MAX_LOOP_T or abs(record["t"] - reference) > MAX_MATCH_SPAN_S:
        return None, f"{record['type']} record with an impossible time {record['t']!r}"
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
    #: A finished match (outcome "finished"): its final status and the wall time of its last
    #: journal line, for its results line if the results file does not hold it yet (a crash
    #: between the command that ended it and that line, docs/service.md).
    final: Status | None = None
    final_wall: float | None = None
    #: A finished match restored (`match` set): the loop time until which it may still be
    #: corrected (`undo` reopens it, ITHF 6.1, ISBHF 420 !1); the journal keeps it until then.
    correctable_until: float | None = None


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
            **told("unreadable", problems="; ".join(exc.problems))})

    crash_t, crash_wall, bound = records[-1]["t"], records[-1]["wall"], "journal"
    if heartbeat is not None and heartbeat["run"] == header["run"] \
            and heartbeat["match"] == match_id and heartbeat["t"] > crash_t:
        crash_t, crash_wall, bound = heartbeat["t"], heartbeat["wall"], "heartbeat"
    shift = now - crash_t
    down_s = wall_now - crash_wall
    try:
        base, replayed, shift = _replay_journal(records, profile, shift, now, down_s)
    except SnapshotUnreadable as exc:
        return Recovery("unreadable", match_id=match_id, report={
            "outcome": "unreadable", "match": match_id, **told("unreadable", problems=str(exc))})
    warnings = replayed.warnings
    was = replayed.match.phase
    if was is Phase.PRE_SIGNAL:
        # The match had not begun: go back to before the command that sounded the pre-signal.
        applied = replayed.applied
        replayed = _replay(base, applied[:_entered_pre_signal(base, applied, shift)], shift,
                           now)
    match = replayed.match
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
        report.update(outcome=outcome, **told(outcome))
        if was is not Phase.FINISHED:
            return Recovery(outcome, match_id=match_id, report=report, warnings=warnings)
        return _finished(records, replayed, shift, base, now=now, run=run, report=report,
                         warnings=warnings)
    if down_s > resume_within_s:
        report.update(outcome="abandoned", **told(
            "abandoned", down=_duration(down_s), limit=_duration(resume_within_s),
            **_where(match.status(now))))
        return Recovery("abandoned", match_id=match_id, report=report, warnings=warnings)

    match.match_id = match_id or None  # the same match: its results carry the same id
    paused = []
    if match.status(now).clock_running:
        try:
            match.handle(Pause(), now)  # ITHF 10.1: an interruption; 10.2: the time is kept
            paused.append({"type": "command", "command": "pause", "args": [], "t": now,
                           "wall": wall_now})
        except CommandRefused as exc:
            warnings.append(f"could not pause the restored match: {LOG_TEXT.refusal(exc)}")
    status = match.status(now)
    report.update(outcome="restored", status=status.to_dict(), **told(
        "restored_paused" if status.phase is Phase.PAUSED else "restored",
        was=was.value, down=_duration(down_s), **_where(status)))
    # The journal goes on in this run's time (a snapshot's state read `shift` later). Commands
    # the replay refused (or undid, for a pre-signal) are dropped; time marks are kept, they
    # hold the start signal's wall time.
    accepted = {id(r) for r in replayed.applied}
    out = [{**header, "run": run, "t": now, "wall": wall_now}]
    out += [{**r, "t": r["t"] + shift, **({"shift": r["shift"] + shift} if "shift" in r else {})}
            for r in records[max(1, base.after - 1):]
            if r["type"] != "command" or id(r) in accepted]
    out += paused
    out.append({"type": "recovered", "t": now, "wall": wall_now, "was": was.value,
                "down_s": round(down_s, 3), "bound": bound})
    return Recovery("restored", match, match_id, out, report, warnings,
                    _started_wall(records, base), replayed.goal_walls)


def _replay_journal(records: list[dict[str, Any]], profile: Profile, shift: float, now: float,
                    down_s: float) -> tuple[_Base, _Replayed, float]:
    """The journal's match replayed from its last snapshot (or its start) `shift` seconds on;
    a finished one `down_s` less, since its window for corrections (ITHF 6.1, ISBHF 420 !1)
    runs on the wall clock: the time timerd was down counts, as it does not for match time.
    SnapshotUnreadable: a snapshot this timerd cannot read."""
    base = _base(records, profile, shift)
    commands = [r for r in records[base.after:] if r["type"] == "command"]
    replayed = _replay(base, commands, shift, now)
    if replayed.match.phase is Phase.FINISHED and down_s > 0:
        shift -= down_s
        base = _base(records, profile, shift)
        replayed = _replay(base, commands, shift, now)
    return base, replayed, shift


def _finished(records: list[dict[str, Any]], replayed: _Replayed, shift: float, base: _Base,
              *, now: float, run: str, report: dict[str, Any], warnings: list[str]) -> Recovery:
    """A finished match found: its result (for the results file, which may lack it) and,
    while it may still be reopened (issue 42 item 1), the match itself, finished, to go on
    with its journal in this run's time until RESET, the next match or `correctable_until`."""
    header, match = records[0], replayed.match
    match.match_id = header["match"] or None  # its result carries the match's id
    found = Recovery("finished", match_id=header["match"], report=report, warnings=warnings,
                     started_wall=_started_wall(records, base), goal_walls=replayed.goal_walls,
                     final=match.status(now), final_wall=records[-1]["wall"])
    until = correctable_until(match)
    if header["match"] and until is not None and until >= now:
        accepted = {id(r) for r in replayed.applied}
        found.match, found.correctable_until = match, until
        report.update(told("finished_correctable", left=_duration(until - now)))
        found.records = [{**header, "run": run, "t": header["t"] + shift}] + [
            _moved(r, shift) for r in records[1:]
            if r["type"] != "command" or id(r) in accepted]
    return found


def _moved(record: dict[str, Any], shift: float) -> dict[str, Any]:
    """A record of a finished match kept into this run's time: its instant `shift` seconds on,
    and a snapshot's own move with it (it is thawed that much further on)."""
    moved = {**record, "t": record["t"] + shift}
    if record["type"] == "snapshot":
        moved["shift"] = record["shift"] + shift
    return moved


def correctable_until(match: Match) -> float | None:
    """The loop time until which `match`, finished, may be corrected (None: not finished)."""
    for rule in match.rules:
        if isinstance(rule, Corrections):
            return rule.correctable_until()
    return None


def _started_wall(records: list[dict[str, Any]], base: _Base) -> float | None:
    """The wall time of the match's (last) start signal, from its time mark (or as the
    snapshot kept it, when the mark went with the records before it)."""
    starts = [r["wall"] for r in records if r.get("signal") == SignalKind.START.value]
    return starts[-1] if starts else base.started_wall


# -- snapshots -----------------------------------------------------------------------------------


class SnapshotUnreadable(ValueError):
    """A snapshot this timerd cannot read back (another version's, damaged): the match is
    closed as unreadable, never a start refused."""


@dataclass
class _Base:
    """Where a replay begins: a new match, or the journal's last snapshot of it."""

    make: Callable[[], Match]
    after: int = 1  # the index of the first record the replay reads
    goal_walls: list[tuple[dict[str, Any], float]] = field(default_factory=list)
    started_wall: float | None = None


def _base(records: list[dict[str, Any]], profile: Profile, shift: float) -> _Base:
    """The last snapshot in `records`, moved `shift` seconds on (`core.rebase`), with what it
    kept of the records it replaced; else a new match for `profile`."""
    last = max((i for i, r in enumerate(records) if r["type"] == "snapshot"), default=None)
    if last is None:
        return _Base(lambda: Match(profile))
    record = records[last]
    if record["timerd"] != __version__:
        raise SnapshotUnreadable(f"a snapshot written by timerd {record['timerd']}, not "
                                 f"{__version__}")
    make = functools.partial(_thaw, record, profile, record["shift"] + shift)
    make()  # read once here: an unreadable one is reported, not found in mid-replay
    walls = [(goal, wall) for goal, wall in record["goal_walls"]]
    started = record.get("started_wall")
    return _Base(make, last + 1, walls, started if isinstance(started, int | float) else None)


def snapshot_record(match: Match, goal_walls: list[tuple[dict[str, Any], float]],
                    started_wall: float | None) -> dict[str, Any] | None:
    """A snapshot of `match` for the journal (its `t` and `wall` added where it is written):
    the match pickled, with the goals' entry times and the start signal's wall time of the
    records it replaces. None when the match holds a step due at once (a callable, between
    a final and its end): the next command tries again.

    Pickle, the standard library's serializer of an object graph: a match is one, with cycles
    (each rule module sees the match; the state kept for a reopen shares them). The profile is
    the header's, not repeated. It is read back by this version of timerd only, into classes
    of `timerd.core` only (`_Thaw`), which does no I/O.
    """
    out = io.BytesIO()
    try:
        _Freeze(out).dump(match)
    except pickle.PicklingError:
        return None
    return {"type": "snapshot", "timerd": __version__,
            "state": base64.b64encode(out.getvalue()).decode("ascii"), "shift": 0.0,
            "goal_walls": [list(pair) for pair in goal_walls], "started_wall": started_wall}


class _Freeze(pickle.Pickler):
    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=5)

    def persistent_id(self, obj: Any) -> str | None:
        return "profile" if isinstance(obj, Profile) else None

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, types.MappingProxyType):  # no name pickle can find: as a call
            return dict, (dict(obj),)  # of `dict`, which `_Thaw` reads back as a proxy
        if callable(obj) and not isinstance(obj, type):
            raise pickle.PicklingError(f"a callable in the match: {obj!r:.80}")
        return NotImplemented


class _Thaw(pickle.Unpickler):
    """Reads a snapshot: only classes of `timerd.core` (which does no I/O, by its wall) and
    `dict` (a mapping proxy, `_Freeze`) are looked up; anything else is refused."""

    def __init__(self, file: io.BytesIO, profile: Profile) -> None:
        super().__init__(file)
        self.profile = profile

    def persistent_load(self, pid: Any) -> Any:
        if pid != "profile":
            raise pickle.UnpicklingError(f"unknown reference {pid!r:.40}")
        return self.profile

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("builtins", "dict"):
            return types.MappingProxyType
        found = super().find_class(module, name) if module.startswith("timerd.core.") \
            and name.isidentifier() else None
        if not isinstance(found, type) or found.__module__ != module:
            raise pickle.UnpicklingError(f"{module}.{name} is not a class of timerd.core")
        return found


def _thaw(record: dict[str, Any], profile: Profile, shift: float) -> Match:
    """The snapshot's match, its instants `shift` seconds on."""
    try:
        data = base64.b64decode(record["state"], validate=True)
        match = _Thaw(io.BytesIO(data), profile).load()
    except (binascii.Error, pickle.UnpicklingError, EOFError, AttributeError, TypeError,
            ValueError, IndexError, KeyError) as exc:
        raise SnapshotUnreadable(f"a damaged snapshot ({exc!r:.120})") from None
    if not isinstance(match, Match):
        raise SnapshotUnreadable("a snapshot that holds no match")
    rebase(vars(match), shift)
    return match


@dataclass
class _Replayed:
    match: Match
    applied: list[dict[str, Any]]  # the command records the match accepted, in order
    warnings: list[str]
    goal_walls: list[tuple[dict[str, Any], float]]  # each goal entered, with its record's wall


def _replay(base: _Base, commands: Iterable[dict[str, Any]], shift: float,
            now: float) -> _Replayed:
    """Replay `commands` into a new match (or the snapshot's). A record the match refuses is
    skipped; so is one
    it raises on or cannot live with (`core.status.check`: a journal written by an older timerd,
    which took `start_in 1e308`, issue 34), and the match is made again from the records
    before it: recovery never dies on a record, it restores the rest."""
    out = _Replayed(base.make(), [], [], list(base.goal_walls))
    for record in commands:
        at = record["t"] + shift
        words = " ".join([record["command"], *record["args"]])[:120]
        try:
            effects = out.match.handle(_command(out.match, record), at)
            check(out.match, at)
        except CommandRefused as exc:
            out.warnings.append(f"command `{words}` refused in the replay "
                                f"({LOG_TEXT.refusal(exc)}), skipped")
            continue
        except Exception as exc:  # noqa: BLE001 (a defect: said in the recovery report)
            out.warnings.append(f"command `{words}` failed in the replay ({exc!r:.200}), "
                                "skipped")
            again = _replay(base, out.applied, shift, at)
            out.match, out.goal_walls = again.match, again.goal_walls
            continue
        out.applied.append(record)
        out.goal_walls += [(e.to_dict(), record["wall"]) for e in effects if isinstance(e, Goal)]
    out.match.poll(now)
    return out


def _command(match: Match, record: dict[str, Any]) -> Command:
    """A journalled command record read back as the match declares it (`Match.parse`)."""
    return match.parse(record["command"], *record["args"])


def _entered_pre_signal(base: _Base, applied: list[dict[str, Any]], shift: float) -> int:
    """The index of the last command that took a match from idle towards its start: into
    the pre-signal (START), or into a scheduled start whose pre-signal came by the clock
    (`start-in`, hall mode's `start_round`). What came before it (the names and the round
    the desk loaded) is kept (issue 41: a table killed in such a pre-signal came back
    without them)."""
    probe = base.make()
    entered = 0
    for i, record in enumerate(applied):
        before = probe.phase
        probe.handle(_command(probe, record), record["t"] + shift)
        if before is Phase.IDLE and probe.phase in (Phase.PRE_SIGNAL, Phase.SCHEDULED):
            entered = i
    return entered


def is_fresh(status: Status, profile: Profile, at: float) -> bool:
    """True when a match reads exactly as a new one for `profile`: nothing to keep."""
    return status == Match(profile).status(at)


def _where(status: Status) -> dict[str, Any]:
    """Where a match stands, as its clock reads (the operator checks this against the table):
    the phase, the big clock's text (a break's countdown, the time played in a sudden-death
    overtime) and the period ("2/3") or "overtime"."""
    return {"phase": status.phase.value, "clock": status.clock_face.text,
            "period": "overtime" if status.overtime else f"{status.period}/{status.periods}"}


def signal_record(signal: Signal) -> dict[str, Any]:
    """A time mark as the journal keeps it (read back by `_started_wall`): built here, beside
    what reads it, not where it is written, so that it is not taken for the event stream's
    record of the same signal (`wire.event_record`), which has a shape of its own."""
    return {"type": "signal", "signal": signal.kind.value,
            "remaining_s": round(signal.remaining_s, 3), "period": signal.period}


def told(outcome: str, **params: Any) -> dict[str, Any]:
    """A recovery report's words: its notice (`notice.recovery_<outcome>` and its values, for
    every surface in its language) and the English message the log and the status keep."""
    code = f"notice.recovery_{outcome}"
    return {"code": code, "params": params, "message": LOG_TEXT.notice(code, params)}


def _duration(seconds: float) -> str:
    seconds = abs(seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
