"""Hall mode, the table's side: this daemon on the tournament's MQTT broker (docs/hall.md).

Every table of a hall publishes under `timerd/<hall>/tables/<table>/`:

- `state`: the retained status document (a dispatch's own, or the status when sent) plus
  `wall` (epoch seconds of that status), on every change and at least every `heartbeat_s`
  (the desk's "last seen");
- `events`: one JSON record per state change, signal and notice (`event_record`), with the
  wall time it happened, and a `reply` record for every hall command;
- `results`: each match result, QoS 1 and retained, kept in an outbox on disk and sent again
  until the broker acknowledges it;
- `status`: retained `online`, and `offline` as the last will (or on a clean stop).

It takes commands on `timerd/<hall>/cmd` (the whole hall) and `.../tables/<table>/cmd`:
`start_round` (a start instant as epoch seconds, ITHF 4.4 pre-signal before it), `pause` and
`resume` (the lights went out, ITHF 10.1), `teams` (the names and the round from the desk's
schedule), `ack` (the desk has stored a result) and `reset`. Anything else, malformed JSON, or
a command for another hall is ignored with a log line: nothing from the broker can stop a match.

A finished match's result stays on the table (its status shows it, `hall.result`) until the
desk acknowledges it: only then does a `start_round` reset the table by itself, so no result is
lost to a new round (issue 19). The desk's `reset` resets a finished table whose result is not
acknowledged (the result stays in the outbox and the results file), never a match in play.

A command payload is at most `MAX_COMMAND_BYTES` bytes and `MAX_DEPTH` levels deep, checked
before it is parsed (`untrusted.loads_bounded`): a 40 MiB message is not parsed at all, and
`[` x 100,000 is an error, never a RecursionError that would drop the link. A command the
broker kept (retained) is stale and ignored: the desk never retains one, and a retained one
would be run again on every reconnect. Log lines about what came from the broker are
rate-limited (one per kind per 30 s, with a count), so a poison message does not flood the log.

The link runs in its own task. A broker that is down or goes away is retried with a doubling
backoff; the match never waits for it. On every (re)connect the table resends `online`, its
state and the events it kept while away, and every result the broker has not yet acknowledged.

The topics, the result message's version and the broker client are hall mode's documented
protocol (`timerd.adapters.hall.protocol`), which the desk shares. aiomqtt (the extra
`timerd[hall]`) is imported only when hall mode starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import re
import secrets
import shutil
import time
from collections import deque
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any

from timerd.adapters.hall.protocol import (
    CHAIN_LENGTH,
    REOPENED,
    RESULT_VERSION,
    Topics,
    broker_error,
    chain_proof,
    import_aiomqtt,
    internal_error,
    match_seed,
    mqtt_client,
    proof_position,
    reply_record,
)
from timerd.config import INSTANCE_HINT, HallConfig, InUse
from timerd.core.commands import Command, Pause, Reset, Resume
from timerd.core.effects import Phase, Reopened, Signal, Tick, refusal
from timerd.core.refused import CommandRefused
from timerd.core.rules.scheduled import StartIn
from timerd.core.rules.scoring import Teams
from timerd.disk import DiskWriter, hold_lock, replace_file
from timerd.limits import MAX_DEPTH, InputRefused, RateLimitedLog, loads_bounded
from timerd.ports import Control, Dispatch, Spawned
from timerd.wire import done_reply, event_record, refused_reply

if TYPE_CHECKING:
    import aiomqtt

log = logging.getLogger("timerd.hall")

#: What a command did, for its reply (`wire.done_reply`): a catalogue key (`hall.done.*`)
#: and its values, so the desk says it in its language (issue 46 item 1).
Done = tuple[str, dict[str, Any]]

#: Events kept while the broker is away (a whole match has a few dozen); older ones are dropped.
EVENT_BACKLOG = 1000
#: Longest command payload parsed; a start_round is about 100 bytes.
MAX_COMMAND_BYTES = 4096
#: How long a stop waits for the link to say "offline" and disconnect (real seconds).
STOP_S = 5.0
#: Ids of this run's earlier results an `ack` may still name (a desk that was behind).
RESULT_IDS = 100
#: In the outbox's directory: the latest result's state (`Outbox.keep_latest`), JSON; not a
#: result to send (those are the `*.json` files).
LATEST_NAME = "latest-result"
#: In the outbox's directory: held locked by the daemon that uses the outbox.
OUTBOX_LOCK = "outbox.lock"
#: In the outbox's directory: this table's secret, where every match's proof chain starts
#: (`protocol.match_seed`), 32 random bytes readable by the daemon's user only.
SECRET_NAME = "hall-secret"
#: A match is in play here: the desk may neither reset it nor give it another round's names
#: (at the table, a long press of RESET still can, ITHF 4.5 replays aside).
IN_PLAY = frozenset({Phase.RUNNING, Phase.PAUSED, Phase.BREAK, Phase.SHOOTOUT})
#: The match's round is fixed: in play, and from the moment its start is set (scheduled, or
#: in its pre-signal, ITHF 4.4). Names for another round are refused until the match is over,
#: so the next round loaded early never relabels the one about to start (issue 30 item 2).
ROUND_FIXED = IN_PLAY | {Phase.SCHEDULED, Phase.PRE_SIGNAL}


# -- the clock offset (chrony) ------------------------------------------------------------

@dataclass(frozen=True)
class ClockSync:
    """How far this table's wall clock is from true time, as far as it can tell.

    `synced` is None when nothing could be read (no chrony); the desk warns then too, since a
    table whose clock is off starts its round off by as much.
    """

    source: str  # "chrony", "timesyncd", or "none"
    synced: bool | None = None
    offset_ms: float | None = None  # positive: this clock is ahead
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "synced": self.synced, "offset_ms": self.offset_ms,
                "detail": self.detail}


_SYSTEM_TIME = re.compile(r"([0-9.]+) seconds (fast|slow)")


def parse_chrony_tracking(text: str) -> ClockSync:
    """`chronyc tracking` output as a ClockSync.

    "System time : 0.000123 seconds fast of NTP time" is the offset (fast: ahead);
    "Leap status : Not synchronised" means chrony has no usable source.
    """
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    leap = fields.get("Leap status")
    found = _SYSTEM_TIME.search(fields.get("System time", ""))
    if leap is None or found is None:
        return ClockSync("chrony", detail="unreadable chronyc output")
    offset_ms = float(found.group(1)) * 1000 * (1 if found.group(2) == "fast" else -1)
    return ClockSync("chrony", synced=leap != "Not synchronised",
                     offset_ms=round(offset_ms, 3), detail=f"leap status {leap}")


_TIMESPAN_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(min|ms|us|µs|μs|ns|s|h|d)\b")
_TIMESPAN_S = {"d": 86400.0, "h": 3600.0, "min": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6,
               "µs": 1e-6, "μs": 1e-6, "ns": 1e-9}


def parse_timesync_status(text: str) -> ClockSync:
    """`timedatectl timesync-status` (systemd-timesyncd, Raspberry Pi OS's default) as a
    ClockSync.

    "Offset: -1.017ms" is how far the server's time was from this clock at the last exchange
    (systemd's time span: `+1min 2.5s`, `-870us`, `μs` in a UTF-8 locale); timesyncd
    corrects by as much, so it is this clock's error with the sign turned (negative offset:
    this clock is ahead). "Leap: not synchronized", or no Offset line (no server answered
    yet), means it is not synchronised.
    """
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    if "Server" not in fields and "Poll interval" not in fields:
        return ClockSync("timesyncd", detail="unreadable timedatectl output")
    offset = fields.get("Offset")
    parts = _TIMESPAN_PART.findall(offset or "")
    if not parts:
        return ClockSync("timesyncd", synced=False,
                         detail=f"no NTP answer yet (server {fields.get('Server', '?')})")
    sign = -1.0 if offset and offset.startswith("-") else 1.0
    ahead_ms = round(-sign * sum(float(n) * _TIMESPAN_S[unit] for n, unit in parts) * 1000, 3)
    leap = fields.get("Leap", "")
    return ClockSync("timesyncd", synced=leap != "not synchronized", offset_ms=ahead_ms,
                     detail=f"leap {leap or '?'}, server {fields.get('Server', '?')}")


async def _ask(*argv: str, timeout_s: float) -> tuple[str | None, str]:
    """Run `argv`: (its output, "") when it succeeded, else (None, why not)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    except OSError as exc:
        return None, f"{argv[0]}: {exc.strerror or exc}"
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout_s)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return None, f"{' '.join(argv)} did not answer"
    if proc.returncode != 0:
        why = err.decode(errors="replace").strip() or f"exit status {proc.returncode}"
        return None, why.splitlines()[0]
    return out.decode(errors="replace"), ""


async def read_clock_sync(chronyc: str, timeout_s: float,
                          timedatectl: str = "none") -> ClockSync:
    """Ask chrony (`<chronyc> tracking`); where chrony is not installed, systemd-timesyncd
    (`<timedatectl> timesync-status`); ClockSync("none") when neither can be asked.

    ("none" for either: do not ask it.)
    """
    tried = []
    if chronyc.lower() not in ("", "none"):
        out, why = await _ask(chronyc, "tracking", timeout_s=timeout_s)
        if out is not None:
            return parse_chrony_tracking(out)
        if shutil.which(chronyc) is not None:  # installed, but it failed: that is the answer
            return ClockSync("chrony", detail=why)
        tried.append(why)
    if timedatectl.lower() not in ("", "none"):
        out, why = await _ask(timedatectl, "timesync-status", timeout_s=timeout_s)
        if out is not None:
            return parse_timesync_status(out)
        if shutil.which(timedatectl) is not None:
            return ClockSync("timesyncd", detail=why)
        tried.append(why)
    return ClockSync("none", detail="; ".join(tried) or
                     "not asked (hall.chronyc and hall.timedatectl = none)")


# -- results waiting for the broker -------------------------------------------------------

@dataclass
class OutboxEntry:
    id: str
    payload: bytes
    path: Path
    #: The disk write, on the disk writer's thread: None once on disk, else why not.
    saved: asyncio.Future[str | None] | None = None


class Outbox:
    """Results not yet acknowledged by the broker: in memory, and one JSON file each on disk.

    A result is sent from memory; the file only matters when the daemon stops before the
    broker acknowledged it, and the next start sends it then. Files are written and removed
    on the disk writer's thread (`writer`, the daemon's; without one, the outbox's own), so a
    slow SD card never holds up the match loop. A disk that fails is a storage fault (status,
    LEDs) and the result is still sent from memory.
    """

    def __init__(self, directory: Path, writer: DiskWriter | None = None) -> None:
        self.directory = directory
        self.writer = writer or DiskWriter()
        self._own_writer = writer is None
        self._entries: list[OutboxEntry] = []
        self._lock_fd: int | None = None

    async def close(self) -> None:
        """Let the outbox's own writer finish (the daemon's shared one stops with the daemon),
        then let the outbox go."""
        if self._own_writer:
            await asyncio.to_thread(self.writer.stop)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def load(self) -> int:
        """Hold the outbox and take up the results a previous run left; returns how many.

        Raises InUse when another daemon holds it: two tables sharing one outbox would
        send each other's results and read each other's acknowledgements (issue 41 item 4).
        """
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._lock_fd = hold_lock(self.directory / OUTBOX_LOCK)
            if self._lock_fd is None:
                raise InUse(f"another timerd uses the hall outbox {self.directory}: "
                            f"{INSTANCE_HINT}, each with its own state.directory (or "
                            "hall.outbox)")
            files = sorted(self.directory.glob("*.json"))
        except OSError as exc:
            log.error("outbox %s unusable (%s); results are kept in memory only",
                      self.directory, exc)
            return 0
        for path in files:
            try:
                payload = path.read_bytes()
                message = json.loads(payload)
                self._entries.append(OutboxEntry(str(message["id"]), payload, path))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.error("outbox file %s unreadable (%s); set aside as .bad", path, exc)
                with contextlib.suppress(OSError):
                    path.rename(path.with_suffix(".bad"))
        return len(self._entries)

    def add(self, message: Mapping[str, Any]) -> OutboxEntry:
        payload = json.dumps(message).encode()
        path = self.directory / f"{time.time_ns()}-{message['id']}.json"
        entry = OutboxEntry(str(message["id"]), payload, path)
        entry.saved = self.writer.submit("outbox", lambda: replace_file(path, payload)).done
        self._entries.append(entry)
        return entry

    def pending(self) -> list[OutboxEntry]:
        return list(self._entries)

    def keep_latest(self, latest: Mapping[str, Any]) -> None:
        """Keep the latest result's id, round, revision and whether the desk acknowledged
        it (`LATEST_NAME`), on the disk writer's thread: a table restarted after the desk
        stored its result still knows, and resets itself for the next round (issue 30)."""
        path, payload = self.directory / LATEST_NAME, json.dumps(dict(latest)).encode()
        self.writer.submit("outbox", lambda: replace_file(path, payload))

    def latest(self) -> dict[str, Any] | None:
        """What `keep_latest` kept last (None: nothing, or not readable: logged)."""
        try:
            kept = json.loads((self.directory / LATEST_NAME).read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.error("%s unreadable (%s); the latest result is not known", LATEST_NAME, exc)
            return None
        if not (isinstance(kept, dict) and isinstance(kept.get("id"), str)
                and isinstance(kept.get("acked"), bool)
                and isinstance(kept.get("revision", 0), int)
                and isinstance(kept.get("round"), str | None)):
            log.error("%s is not a result's state; the latest result is not known",
                      LATEST_NAME)
            return None
        return kept

    async def done(self, entry: OutboxEntry) -> None:
        """The broker acknowledged `entry`: forget it, on disk too."""
        if entry.saved is not None:
            await entry.saved
        await self.writer.submit("outbox", lambda: entry.path.unlink(missing_ok=True)).done
        self._entries.remove(entry)


def table_secret(directory: Path) -> bytes:
    """This table's secret in `directory` (`SECRET_NAME`), made on first use; never through
    a link planted there. One that cannot be kept is logged and lives for this run only: a
    correction after a restart then does not follow the proofs sent before it, and the desk
    holds it as a conflict instead of taking it."""
    path = directory / SECRET_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        secret = secrets.token_bytes(32)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as file:
                file.write(secret)
                file.flush()
                os.fsync(file.fileno())
        except OSError as exc:
            log.error("cannot keep the table's secret in %s (%s): corrections after a "
                      "restart will be held by the desk", path, exc)
        return secret
    except OSError as exc:
        log.error("cannot read the table's secret %s (%s): corrections after a restart will "
                  "be held by the desk", path, exc)
        return secrets.token_bytes(32)
    with os.fdopen(fd, "rb") as file:
        secret = file.read(64)
    if len(secret) < 32:
        log.error("the table's secret %s is too short; a fresh one for this run", path)
        return secrets.token_bytes(32)
    return secret


# -- the link -------------------------------------------------------------------------------

class HallLink:
    """This table on the hall's broker: publishes its state, events and results; takes the
    desk's commands. An output of the service (`notify`) and an async context manager."""

    def __init__(self, config: HallConfig, service: Control, outbox: Outbox, *,
                 wall: Callable[[], float] = time.time, rate: float = 1.0) -> None:
        self.config = config
        self.service = service
        self.table = config.table_id()
        self.topics = Topics(config.hall, self.table)
        self.outbox = outbox
        self.wall = wall
        self.rate = rate  # loop seconds per real second (`--speed`)
        self.connected = False
        self.clock_sync = ClockSync("none", detail="not read yet")
        #: The latest result this run sent: {"id", "round", "acked"} (shown in the status).
        self.result: dict[str, Any] | None = None
        self.result_revision = 0  # its revision (issue 28: a result corrected after the end)
        #: That result's message, sent again on every connection until the desk has it.
        self._message: dict[str, Any] | None = None
        self.result_withdrawn = False  # it is a withdrawal: its match reopened (issue 41)
        self._result_ids: deque[str] = deque(maxlen=RESULT_IDS)
        #: Where the proofs of this table's results start (`table_secret`, read on entry).
        self._secret = secrets.token_bytes(32)
        self._events: deque[dict[str, Any]] = deque()
        self._dropped = 0
        self._state_due = True
        #: The state of the last dispatch, stamped with its `wall`, until it is sent.
        self._state: dict[str, Any] | None = None
        self._kick = asyncio.Event()
        self._tasks: list[Spawned] = []
        self._log = RateLimitedLog(log)  # lines about the broker's messages and comings
        self._commands: dict[str, Callable[[Mapping[str, Any]], Done]] = {
            "start_round": self._start_round,
            "pause": lambda _: ("hall.done.phase", {"phase": self._execute(Pause())}),
            "resume": lambda _: ("hall.done.phase", {"phase": self._execute(Resume())}),
            "teams": self._teams,
            "ack": self._ack,
            "reset": self._reset,
        }

    async def __aenter__(self) -> HallLink:
        mqtt = import_aiomqtt()
        left = self.outbox.load()
        self._secret = table_secret(self.outbox.directory)
        latest = self.outbox.latest()
        if latest is not None:  # acknowledged or not, as the last run left it
            self.result = {k: latest[k] for k in ("id", "round", "acked")}
            self.result_revision = latest.get("revision", 0)
            message = latest.get("message")
            self._message = message if isinstance(message, dict) else None
            self.result_withdrawn = latest.get("withdrawn") is True
            self._result_ids.append(latest["id"])
        if left:
            log.info("%d result(s) from an earlier run still to send", left)
            self._take_up(self.outbox.pending())
        self._withdraw_lost()
        self._tasks = [self.service.spawn("hall-link", lambda: self._connect_forever(mqtt)),
                       self.service.spawn("hall-clock", self._watch_clock)]
        log.info("hall mode: table %s of hall %s, broker %s:%d", self.table, self.config.hall,
                 self.config.host, self.config.port)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        # A stop must not hang on the broker: a session says "offline" and disconnects within
        # its timeouts, and a link that has not let go by then is left behind (logged).
        stopped = await asyncio.gather(*(t.stop(STOP_S * self.rate) for t in self._tasks))
        if not all(stopped):
            log.warning("hall link: %s did not stop within %g s; left behind",
                        ", ".join(t.name for t, ok in zip(self._tasks, stopped, strict=True)
                                  if not ok), STOP_S)
        await self.outbox.close()

    # -- from the match (loop thread; returns at once) -------------------------------------

    def notify(self, dispatch: Dispatch) -> None:
        """Queue the dispatch's event records and its state for the sender task. Ticks alone
        send nothing: the desk extrapolates the shown clock from the state's `wall`."""
        effects = [e for e in dispatch.effects if not isinstance(e, Tick)]
        if not effects:
            return
        for effect in effects:
            if isinstance(effect, Reopened) and dispatch.status.phase is not Phase.FINISHED \
                    and self.result is not None \
                    and self.result["id"] == dispatch.status.match_id:
                self._withdraw(effect.revision)
            record = event_record(effect, dispatch.status)
            if record is None:
                continue
            record["wall"] = self.wall()
            if isinstance(effect, Signal):
                # How late the loop woke for it, on its own clock: the desk (and the bench)
                # can tell a slow table from a table whose wall clock is off.
                record["late_ms"] = round((dispatch.now - effect.due) / self.rate * 1000, 3)
            self._queue_event(record)
        # Stamped now: the desk runs the clock on from `wall`, whenever the state is sent.
        self._state = {**dispatch.document, "wall": self.wall()}
        self._state_due = True
        self._kick.set()

    def _state_now(self) -> None:
        """Send the status as it is when sent (a heartbeat, a result acknowledged, a
        reconnect): a dispatch's own state, if one waits, is older."""
        self._state = None
        self._state_due = True
        self._kick.set()

    def publish_result(self, result: Mapping[str, Any]) -> str:
        """Send a match result to the desk, QoS 1, until the broker acknowledges it.

        For the results feature: call it once per finished match with its results line.
        It returns at once with the result's id, the match's id (`match_id`): a result sent
        again (a reconnect, an outbox after a restart) is the same result to the desk, which
        stores each id once. The result is saved to the outbox and sent whenever the broker
        is reachable, also after a restart of this daemon.
        """
        result_id = str(result["match_id"])
        if result.get("state") == REOPENED:
            # The line that says the match is in play again (issue 42): the desk was told
            # when it reopened, by the withdrawal (`_withdraw`), and counts no result for it
            # until its next end's revision, which supersedes both.
            return result_id
        revision = int(result.get("revision") or 0)  # issue 28: a correction after the end
        # The match's own round (its results line's): journalled with the match, so a table
        # restarted mid-round still sends it (issue 30).
        self._queue_result(result_id, revision, result.get("round"), {"result": dict(result)})
        return result_id

    def _withdraw(self, revision: int) -> None:
        """The finished match whose result the desk may hold is in play again (ITHF 6.1 with
        4.8: `undo` of the golden goal): tell the desk at once, through the outbox like a
        result, so it no longer counts that result as final (issue 41 item 2). The match's
        next end sends revision `revision`, which supersedes the withdrawal."""
        assert self.result is not None
        self._queue_result(self.result["id"], revision, self.result["round"],
                           {"withdrawn": REOPENED, "result": None})

    def _withdraw_lost(self) -> None:
        """At a start: a daemon killed right after its match reopened may have left no
        withdrawal (nor its mark in `latest-result`), while the journal restored the match in
        play under the id of the result sent last. Withdraw that result now."""
        status = self.service.status()
        if self.result is not None and not self.result_withdrawn \
                and status.phase in IN_PLAY and status.match_id == self.result["id"]:
            log.info("match %s is in play again (reopened before a restart): its result "
                     "is withdrawn", status.match_id)
            self._withdraw(self.result_revision + 1)

    def _queue_result(self, result_id: str, revision: int, round_id: str | None,
                      body: dict[str, Any]) -> None:
        """Queue a result message (or a withdrawal) with its proof (`protocol.chain_proof`)
        in the outbox; it is this table's latest result, not acknowledged."""
        position = proof_position(revision, "withdrawn" in body)
        message = {"version": RESULT_VERSION, "id": result_id, "hall": self.config.hall,
                   "table": self.table, "revision": revision, "round": round_id,
                   "wall": self.wall(), **body}
        if 0 <= position <= CHAIN_LENGTH:  # past MAX_REVISION: no proof, the desk holds it
            message["proof"] = chain_proof(match_seed(self._secret, result_id), position)
        self.outbox.add(message)
        self._message = message
        self.result = {"id": result_id, "round": round_id, "acked": False}
        self.result_revision = revision
        self.result_withdrawn = "withdrawn" in body
        self._keep_latest()
        self._result_ids.append(result_id)
        self._state_now()

    def _take_up(self, entries: list[OutboxEntry]) -> None:
        """Results an earlier run left unsent: this table holds the latest for the desk (and
        a start_round waits for its acknowledgement), as the run that made it did."""
        for entry in entries:
            message = json.loads(entry.payload)  # Outbox.load parsed it once already
            self.result = {"id": entry.id, "round": message.get("round"), "acked": False}
            self.result_revision = int(message.get("revision") or 0)
            self._message = message
            self.result_withdrawn = message.get("withdrawn") is not None
            self._result_ids.append(entry.id)

    def _keep_latest(self) -> None:
        if self.result is not None:
            self.outbox.keep_latest({**self.result, "revision": self.result_revision,
                                     "withdrawn": self.result_withdrawn,
                                     "message": self._message})

    @property
    def round(self) -> str | None:
        """The round of the match on this table: the match's own (`teams`, `start_in`), kept
        in its journal and restored with it."""
        return self.service.status().round

    def status_extra(self) -> dict[str, Any]:
        return {"hall": {"name": self.config.hall, "table": self.table, "round": self.round,
                         "connected": self.connected, "clock": self.clock_sync.to_dict(),
                         "result": None if self.result is None else dict(self.result)}}

    def _queue_event(self, record: dict[str, Any]) -> None:
        if len(self._events) >= EVENT_BACKLOG:
            self._events.popleft()
            self._dropped += 1
        self._events.append(record)
        self._kick.set()

    # -- commands from the broker ----------------------------------------------------------

    def on_message(self, topic: str, payload: bytes, retained: bool = False) -> None:
        """A message on one of the command topics; never raises.

        `retained` is the broker's flag: a message it kept and delivers on (re)subscribing.
        """
        if retained:
            self._log.warning("retained", "ignored a retained message on %s: commands are "
                              "never retained (clear it with an empty retained message)", topic)
            return
        try:
            message = loads_bounded(payload, MAX_COMMAND_BYTES, MAX_DEPTH)
        except InputRefused as exc:
            self._log.warning("malformed", "ignored a message on %s: %s (it began %r)",
                              topic, exc, payload[:40])
            return
        if not isinstance(message, dict) or not isinstance(message.get("command"), str):
            self._log.warning("not a command", 'ignored %s: expected {"command": NAME, ...}, '
                              "got %.80s", topic, json.dumps(message))
            return
        name = message["command"]
        if message.get("hall", self.config.hall) != self.config.hall:
            self._log.info("other hall", "ignored %s for hall %.80r (this table is in hall %r)",
                           name, message.get("hall"), self.config.hall)
            return
        handler = self._commands.get(name)
        if handler is None:
            self._log.warning("unknown", "ignored unknown command %.80r on %s (known: %s)", name,
                              topic, ", ".join(self._commands))
            return
        try:
            answer = done_reply(*handler(message))
        except CommandRefused as exc:
            exc.command = exc.command or name
            answer = refused_reply(refusal(exc))
        except Exception:  # a bug must not take the link (or the match) down
            log.exception("command %s failed", name)
            answer = internal_error(name)
        if answer["ok"]:
            self._log.info("done", "%s done", name)
        else:
            self._log.info("refused", "%s refused: %s", name, answer["error"])
        self._queue_event(reply_record(name, message.get("id"), self.wall(), answer))

    def _execute(self, command: Command) -> str:
        return self.service.execute(command).phase.value

    def _phase(self) -> Phase:
        return self.service.status().phase

    def _start_round(self, message: Mapping[str, Any]) -> Done:
        """ITHF 4.4 for a whole hall: the start signal sounds at the instant `at` (epoch).

        The instant is converted to the loop's monotonic clock once, here; a later step of
        the wall clock (NTP) does not move the start. A finished match whose result the desk
        has acknowledged is reset first (no walk to the table); one whose result is not at
        the desk yet is refused, so a result is never lost to a new round.
        """
        at = _finite(message.get("at"))
        if at is None:
            raise CommandRefused("start_round_at")
        round_id = message.get("round")
        if round_id is not None and not isinstance(round_id, str):
            raise CommandRefused("round_string")
        reset = False
        if self._phase() is Phase.FINISHED:
            if self.result is None:
                raise CommandRefused("result_not_sent")
            if not self.result["acked"]:
                raise CommandRefused("result_not_acked", result=self.result["id"])
            self._execute(Reset())
            reset = True
        lead_s = (at - self.wall()) * self.rate
        # The round goes with the start (checked as a name, journalled with the match).
        phase = self._execute(StartIn(lead_s, round_id))
        # A stop-clock table (ISBHF 407 !1) is ready for the faceoff then: the clock waits.
        code = ("hall.done.reset_start" if reset else "hall.done.start") + (
            "_faceoff" if self.service.profile.clock == "stop" else "")
        return code, {"phase": phase, "in_s": round(lead_s / self.rate, 3)}

    def _teams(self, message: Mapping[str, Any]) -> Done:
        """The sides' names and the round from the desk's schedule (`timerd hall round
        load`), through the match's own `teams` command: its limits and refusals apply."""
        home, away, round_id = (message.get(k, "") for k in ("home", "away", "round"))
        if not all(isinstance(v, str) for v in (home, away, round_id)):
            raise CommandRefused("teams_strings")
        if round_id != (self.round or "") and self._phase() in ROUND_FIXED:
            raise CommandRefused("teams_in_play", round=self.round or "-",
                                 phase=self._phase().value, next=round_id)
        self._execute(Teams(home, away, round_id or self.round or ""))
        return ("hall.done.teams_round" if round_id else "hall.done.teams"), {
            "home": home, "away": away, **({"round": round_id} if round_id else {})}

    def _ack(self, message: Mapping[str, Any]) -> Done:
        """The desk has stored the result `result` (its id): a start_round may reset now."""
        result_id = message.get("result")
        # A desk's ack names the revision it stored (issue 28); an older one's ack does not
        # acknowledge the correction sent since.
        if self.result is not None and result_id == self.result["id"] \
                and message.get("revision", self.result_revision) == self.result_revision:
            self.result["acked"] = True
            self._keep_latest()
            self._state_now()
            return "hall.done.acked", {"result": result_id}
        if result_id in self._result_ids:
            return "hall.done.acked_earlier", {"result": result_id}
        if self.result is None:
            raise CommandRefused("ack_none_sent", result=str(result_id)[:40])
        raise CommandRefused("ack_unknown", result=str(result_id)[:40], sent=self.result["id"])

    def _reset(self, message: Mapping[str, Any]) -> Done:
        """The desk resets this table for a new match: never a match in play (that takes a
        long press at the table); a finished one even when its result is not acknowledged
        (it stays in the outbox until the broker has it, and in the results file).
        `finished_only` (`timerd hall reset --all-finished`): an idle table is left alone."""
        phase = self._phase()
        if phase in IN_PLAY:
            raise CommandRefused("reset_in_play", phase=phase.value)
        if message.get("finished_only") and phase is not Phase.FINISHED:
            if phase is Phase.IDLE:
                return "hall.done.idle_already", {}
            raise CommandRefused("reset_not_finished", phase=phase.value)
        code, params = "hall.done.phase", {}  # a result not at the desk stays where it is:
        if phase is Phase.FINISHED and self.result is None:
            code = "hall.done.reset_no_result"
        elif phase is Phase.FINISHED and self.result is not None and not self.result["acked"]:
            code, params = "hall.done.reset_not_acked", {"result": self.result["id"]}
        return code, {"phase": self._execute(Reset()), **params}

    # -- the connection --------------------------------------------------------------------

    async def _connect_forever(self, mqtt: ModuleType) -> None:
        """Keep a session with the broker, retrying with a doubling backoff."""
        first_s = min(1.0, self.config.reconnect_max_s)
        backoff_s = first_s
        while True:
            try:
                await self._session(mqtt)
                why = "the session ended"
            except mqtt.MqttError as exc:
                why = broker_error(exc)
            except Exception as exc:  # never let the link die of a bug; the match goes on
                log.exception("link failed")
                why = repr(exc)
            if self.connected:
                backoff_s = first_s  # it had worked: start the backoff over
            self.connected = False
            # A broker that comes and goes writes this once per 30 s, with a count.
            self._log.warning("broker lost", "broker %s:%d: %s; retrying in %g s",
                              self.config.host, self.config.port, why, backoff_s)
            await asyncio.sleep(backoff_s * self.rate)
            backoff_s = min(backoff_s * 2, self.config.reconnect_max_s)

    async def _session(self, mqtt: ModuleType) -> None:
        will = mqtt.Will(self.topics.status, "offline", qos=1, retain=True)
        client = mqtt_client(mqtt, self.config, f"timerd-{self.config.hall}-{self.table}",
                             self.rate, will)
        async with client:
            self.connected = True
            self._log.info("connected", "connected to %s:%d", self.config.host, self.config.port)
            if self._dropped:
                log.warning("%d events dropped while the broker was away", self._dropped)
                self._dropped = 0
            try:
                # Subscribed before it says "online": a desk that starts a round on seeing a
                # table online must never find it not yet listening.
                await client.subscribe([(self.topics.hall_cmd, 1), (self.topics.table_cmd, 1)])
                await client.publish(self.topics.status, "online", qos=1, retain=True)
                if self._message is not None and self.result is not None \
                        and not self.result["acked"]:
                    # The broker acknowledged it once, but a broker restarted since (a crash,
                    # no persistence) has lost it: sent again until the desk has stored it
                    # (the desk stores each revision once; issue 41 item 7).
                    await client.publish(self.topics.results, json.dumps(self._message),
                                         qos=1, retain=True)
                self._state_now()
                await _first_to_end(self._send(client), self._heartbeat(),
                                    self._receive(client))
            except asyncio.CancelledError:
                # A clean stop: say so, the will or not (a broker gone, a timeout).
                with contextlib.suppress(mqtt.MqttError, OSError):
                    await client.publish(self.topics.status, "offline", qos=1, retain=True,
                                         timeout=1.0 * self.rate)
                raise

    async def _receive(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            payload = message.payload
            self.on_message(str(message.topic),
                            payload if isinstance(payload, bytes) else str(payload).encode(),
                            retained=bool(message.retain))

    async def _send(self, client: aiomqtt.Client) -> None:
        while True:
            await self._kick.wait()
            self._kick.clear()
            if self._state_due:
                self._state_due = False
                state, self._state = self._state, None
                if state is None:
                    state = {**self.service.status_dict(), "wall": self.wall()}
                await client.publish(self.topics.state, json.dumps(state), qos=1, retain=True)
            while self._events:
                await client.publish(self.topics.events, json.dumps(self._events[0]))
                self._events.popleft()
            for entry in self.outbox.pending():
                await client.publish(self.topics.results, entry.payload, qos=1, retain=True)
                await self.outbox.done(entry)
                log.info("result %s acknowledged by the broker", entry.id)

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.config.heartbeat_s * self.rate)
            self._state_now()

    async def _watch_clock(self) -> None:
        while True:
            sync = await read_clock_sync(self.config.chronyc, 5.0 * self.rate,
                                         self.config.timedatectl)
            if sync != self.clock_sync:
                if sync.synced is False:
                    log.warning("this table's clock is not synchronised (%s)", sync.detail)
                self.clock_sync = sync
                self._state_now()
            await asyncio.sleep(self.config.clock_check_s * self.rate)


def _finite(value: Any) -> float | None:
    """A JSON number as a float, or None when it is none or no float can hold it (NaN, an
    integer of 400 digits: issue 41 item 3)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


class _Ended(Exception):
    """One of `_first_to_end`'s coroutines returned: its task group stops the others."""


async def _first_to_end(*coroutines: Coroutine[Any, Any, None]) -> None:
    """Run the coroutines together until one ends; cancel the rest and re-raise the first
    error as itself (an MqttError for `_connect_forever`). In a task group (issue 44 item 4):
    no task of them outlives the session or fails unseen."""

    async def ended(coroutine: Coroutine[Any, Any, None]) -> None:
        await coroutine
        raise _Ended

    try:
        async with asyncio.TaskGroup() as group:
            for coroutine in coroutines:
                group.create_task(ended(coroutine))
    except BaseExceptionGroup as failed:
        errors = [e for e in failed.exceptions if not isinstance(e, _Ended)]
        if errors:
            raise errors[0] from failed
