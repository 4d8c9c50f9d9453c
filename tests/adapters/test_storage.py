"""Storage: the order of the journal and the results line, a torn results file, a full or
failing state directory, and nothing blocking the loop (issue 13 items 4 to 6, issue 16).

Faults are injected at the os level (`os.write` raising ENOSPC for the state directory's
files) under the real service, journal and results file; the writer is the real thread.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import shutil
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import dispatch, play, run_virtual
from gpiozero import LED

from tests.hall_rig import wait_until
from timerd.adapters.gpio import Leds
from timerd.adapters.journal.format import JOURNAL_NAME, parse_journal, recover
from timerd.adapters.journal.writer import Journal
from timerd.adapters.results.file import PENDING_DIR, RETRY_S, ResultsFile
from timerd.adapters.results.format import recent_results
from timerd.app import keep_results
from timerd.config import profiles
from timerd.core.effects import Phase, PhaseChanged
from timerd.core.match import Match
from timerd.disk import DiskWriter
from timerd.service import Service


@dataclass
class Disk:
    """The state directory's device: `full` makes every write to a file in it fail ENOSPC,
    as a full SD card does; the runtime directory (RAM) stays writable."""

    state: Path
    full: bool = False
    refused: int = 0
    error: int = errno.ENOSPC

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real_write = os.write

        def write(fd: int, data: Any) -> int:
            if self.full and _path_of(fd).startswith(str(self.state)):
                self.refused += 1
                raise OSError(self.error, os.strerror(self.error))
            return real_write(fd, data)

        monkeypatch.setattr(os, "write", write)


def _path_of(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


@dataclass
class Table:
    """The service with the journal and the results file on one disk writer, as the daemon
    wires them (timerd/app.py), on virtual time, the writes inline."""

    tmp: Path
    service: Service
    journal: Journal
    results: ResultsFile
    replies: list[dict[str, Any]] = field(default_factory=list)

    @property
    def results_path(self) -> Path:
        assert self.results.path is not None
        return self.results.path

    async def ack(self, words: str) -> dict[str, Any]:
        name, *args = words.split()
        reply = await self.service.acknowledge({"command": name, "args": args})
        self.replies.append(reply)
        return reply

    async def until(self, t: float) -> None:
        """Sleep until match-loop time `t` (from the table's start)."""
        loop = asyncio.get_running_loop()
        await asyncio.sleep(max(0.0, self.t0 + t - loop.time()))

    t0: float = 0.0

    async def drained(self) -> None:
        """Wait for every write queued so far (a no-op job behind them, of its own kind)."""
        await self.journal.writer.submit("drain", lambda: None).done

    def journal_lines(self) -> list[dict[str, Any]]:
        records, _ = parse_journal((self.tmp / "state" / JOURNAL_NAME).read_bytes())
        return records

    def results_lines(self) -> list[dict[str, Any]]:
        if not self.results_path.exists():
            return []
        return [json.loads(x) for x in self.results_path.read_text().splitlines()]


def run_table(tmp: Path, drive: Callable[[Table], Awaitable[Any]],
              profile: str = "ithf", results_dir: str = "state") -> Any:
    """`drive` the table; the results file and its pending copies in `results_dir` (a
    `[results] path` elsewhere than the journal's state directory)."""
    async def main() -> Any:
        loop = asyncio.get_running_loop()
        # Inline: virtual time must not run on while a write is on another thread; the
        # writer thread itself is tested on a real loop below.
        journal = Journal(tmp / "state", tmp / "run", loop, 7200.0, DiskWriter(inline=True))
        service = Service(journal.recover(profiles.load(profile)))
        service.durability = journal.synced
        results = ResultsFile(tmp / results_dir / "results.jsonl", writer=journal.writer,
                              pending=tmp / results_dir / PENDING_DIR,
                              spare=tmp / "run" / PENDING_DIR)
        keep_results(journal, results)
        service.status_extras += [journal.writer.status_extra, results.status_extra]
        async with journal:
            # The journal before the results: the order on disk must not hang on this one.
            service.outputs += [journal, results]
            table = Table(tmp, service, journal, results, t0=loop.time())
            task = asyncio.create_task(service.run())
            try:
                return await drive(table)
            finally:
                task.cancel()

    return run_virtual(main)


# -- the order: the ending command, then the result, then the compaction (issue 13 item 4) -----

def test_the_result_is_written_only_once_the_golden_goal_is_journalled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails on main: the results line was fsynced before the golden goal's journal line, so
    a crash between them restored the overtime as running and a second, contradicting result
    followed. Here a crash at the instant the results line is made durable finds the journal
    of a finished match (recovery reports it, nothing to resume), and the compaction comes
    only after the results line."""
    journal_at_result: list[bytes] = []
    results_at_compaction: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        real_fsync(fd)
        where = _path_of(fd)
        journal = tmp_path / "state" / JOURNAL_NAME
        if where.endswith("results.jsonl"):
            journal_at_result.append(journal.read_bytes())
        elif where.endswith(JOURNAL_NAME) and journal.stat().st_size == 0:
            results = tmp_path / "state" / "results.jsonl"
            results_at_compaction.append(results.read_text() if results.exists() else "")

    monkeypatch.setattr(os, "fsync", fsync)

    async def drive(table: Table) -> dict[str, Any]:
        await table.ack("start")
        await table.until(360.0)  # ithf-playoff tied at 320: 30 s break, overtime from 350
        await table.ack("goal away")  # the golden goal (ITHF 4.8)
        await table.until(400.0)
        finished = table.service.status_dict()
        await table.ack("reset")  # the journal keeps the match until then (issue 42)
        await table.until(410.0)
        return finished

    status = run_table(tmp_path, drive, profile="ithf-playoff")
    assert status["phase"] == "finished"
    assert len(journal_at_result) == 1
    records, warnings = parse_journal(journal_at_result[0])
    assert warnings == []
    assert [r["command"] for r in records if r["type"] == "command"] == ["start", "goal"]
    crashed = recover(records, None, now=0.0, wall_now=records[-1]["wall"], run="next",
                      resume_within_s=60)
    assert crashed.outcome == "finished"  # finished: no second result can follow
    assert len(results_at_compaction) == 1
    assert json.loads(results_at_compaction[0])["how"] == "overtime"


# -- a torn results file (issue 13 item 5) -----------------------------------------------------

def test_a_torn_last_line_in_the_results_file_does_not_swallow_the_next_result(
        tmp_path: Path) -> None:
    """Fails on main: the new record was glued onto the fragment, and both were lost to
    `timerd results` and the web page."""
    path = tmp_path / "results.jsonl"
    earlier = json.dumps({"match_id": "20260101T100000Z-aaaaaa", "score": {"home": 2}})
    path.write_text(earlier + "\n" + '{"match_id": "20260101T101000Z-bbbbbb", "sco')

    def setup(service: Service) -> None:
        service.outputs.append(ResultsFile(path))

    play("ithf", [(0, "start"), (30, "goal home")], until=400, setup=setup)
    kept = recent_results(path)
    assert len(kept) == 2
    assert kept[0]["match_id"] == "20260101T100000Z-aaaaaa"
    assert kept[1]["score"] == {"home": 1, "away": 0}
    lines = path.read_text().split("\n")
    assert lines[1] == '{"match_id": "20260101T101000Z-bbbbbb", "sco'  # left, on its own
    assert lines[-1] == ""  # the file ends with a whole line


# -- a full state directory (issue 13 item 6) --------------------------------------------------

def test_a_full_card_is_said_in_the_reply_and_status_and_the_result_is_written_later(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails on main: the goal was acknowledged `ok` though it was not on disk, the status
    said nothing, and the result was lost for good. Here the reply says `durable: false`,
    the status has the fault and the pending result, the match goes on, the result is kept
    (in memory and in the runtime directory) and written once the card has room again."""
    disk = Disk(tmp_path / "state")
    disk.install(monkeypatch)

    async def drive(table: Table) -> dict[str, Any]:
        started = await table.ack("start")
        await table.journal.synced()
        disk.full = True
        await table.until(60.0)
        goal = await table.ack("goal home")
        during = table.service.status_dict()
        await table.until(330.0)  # the final signal at 320: the match went on
        await table.drained()
        ended = table.service.status_dict()
        copies = sorted((tmp_path / "run" / PENDING_DIR).glob("*.json"))
        lines_while_full = table.results_lines()
        disk.full = False
        await table.until(330.0 + RETRY_S + 1.0)
        await table.drained()
        return {"started": started, "goal": goal, "during": during, "ended": ended,
                "copies": copies, "full": lines_while_full, "lines": table.results_lines(),
                "after": table.service.status_dict()}

    out = run_table(tmp_path, drive)
    assert out["started"]["ok"]
    assert "durable" not in out["started"]
    goal = out["goal"]
    assert goal["ok"] is True
    assert goal["durable"] is False
    assert "No space left on device (ENOSPC)" in goal["warning"]
    assert goal["status"]["score"] == {"home": 1, "away": 0}  # the goal counts all the same
    storage = out["during"]["storage"]
    assert storage["ok"] is False
    assert "ENOSPC" in storage["faults"]["journal"]
    assert out["ended"]["phase"] == "finished"
    assert out["ended"]["storage"]["pending_results"] == 1
    assert "ENOSPC" in out["ended"]["storage"]["faults"]["results"]
    assert out["full"] == []
    assert len(out["copies"]) == 1  # kept in RAM, surviving a restart of timerd
    assert [r["score"] for r in out["lines"]] == [{"home": 1, "away": 0}]
    assert out["after"]["storage"] == {"ok": True, "faults": {}, "pending_results": 0}
    assert not list((tmp_path / "run" / PENDING_DIR).glob("*.json"))
    assert disk.refused > 0


def test_a_kept_match_followed_by_another_gives_its_result_after_a_crash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 36: the results file (and its pending copy) cannot be written, the journal can:
    the journal keeps the finished match, the next match's lines follow it, and the daemon
    stops before the retry (the result only in its memory). The next start writes the kept
    match's result (once) and restores the running one; the old code dropped the kept match
    as "an earlier unclosed match"."""
    disk = Disk(tmp_path / "results")
    disk.install(monkeypatch)

    async def two_matches(table: Table) -> dict[str, Any]:
        disk.full = True
        await table.ack("start")
        await table.until(330.0)  # the first match ends; its result cannot be written
        await table.drained()
        first = table.service.status_dict()
        await table.ack("reset")
        await table.ack("start")
        await table.until(400.0)  # the second runs; then a restart before the retry
        return {"first": first, "second": table.service.status_dict()["match_id"]}

    out = run_table(tmp_path, two_matches, results_dir="results")
    assert out["first"]["phase"] == "finished"
    assert out["first"]["storage"]["pending_results"] == 1
    disk.full = False
    shutil.rmtree(tmp_path / "run")  # a power cut: the copy in RAM is gone too

    async def restart(table: Table) -> dict[str, Any]:
        await table.drained()
        return {"lines": table.results_lines(), "status": table.service.status_dict()}

    after = run_table(tmp_path, restart, results_dir="results")
    assert [r["match_id"] for r in after["lines"]] == [out["first"]["match_id"]]
    assert after["status"]["match_id"] == out["second"]
    assert after["status"]["phase"] == "paused"  # restored (ITHF 10.1)
    again = run_table(tmp_path, restart, results_dir="results")
    assert [r["match_id"] for r in again["lines"]] == [out["first"]["match_id"]]


def test_a_result_that_could_not_be_written_is_written_at_the_next_start_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails on main: a result that could not be written was only in the log. Here the copy
    in the runtime directory is written by the next start, and once only: a copy left by a
    crash after its line was written is not written again."""
    disk = Disk(tmp_path / "state")
    disk.install(monkeypatch)

    async def full_to_the_end(table: Table) -> int:
        await table.ack("start")
        await table.journal.synced()
        disk.full = True
        await table.until(330.0)
        await table.drained()
        return int(table.service.status_dict()["storage"]["pending_results"])

    assert run_table(tmp_path, full_to_the_end) == 1
    copy = next((tmp_path / "run" / PENDING_DIR).glob("*.json"))
    saved = copy.read_bytes()
    disk.full = False

    async def next_start(table: Table) -> list[dict[str, Any]]:
        await table.drained()
        return table.results_lines()

    first = run_table(tmp_path, next_start)
    assert [(r["how"], r["played_s"]) for r in first] == [("regular", 300.0)]
    copy.write_bytes(saved)  # as if killed between the line and the removal of the copy
    again = run_table(tmp_path, next_start)
    assert again == first


@pytest.mark.parametrize("error", [errno.EROFS, errno.EIO, errno.EACCES])
def test_a_read_only_or_failing_card_is_said_like_a_full_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: int) -> None:
    """A card remounted read-only after an error (EROFS), a dying one (EIO), a directory the
    service user lost (EACCES): the same reply, status and retry as for a full card."""
    disk = Disk(tmp_path / "state", error=error)
    disk.install(monkeypatch)

    async def drive(table: Table) -> tuple[dict[str, Any], dict[str, Any]]:
        await table.ack("start")
        await table.journal.synced()
        disk.full = True
        goal = await table.ack("goal home")
        await table.until(330.0)
        await table.drained()
        return goal, table.service.status_dict()["storage"]

    goal, storage = run_table(tmp_path, drive)
    name = errno.errorcode[error]
    assert goal["durable"] is False
    assert f"({name})" in goal["warning"]
    assert f"({name})" in storage["faults"]["results"]
    assert storage["pending_results"] == 1


def test_without_a_journal_every_reply_says_it_is_not_durable(tmp_path: Path) -> None:
    """A state directory that cannot be used at the start (here a file stands in its way):
    the daemon runs without crash safety, and says so in each reply and in the status."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        loop = asyncio.get_running_loop()
        journal = Journal(blocker / "state", tmp_path / "run", loop, 60, DiskWriter(loop))
        service = Service(journal.recover(profiles.load("ithf")))
        service.durability = journal.synced
        service.status_extras.append(journal.writer.status_extra)
        async with journal:
            service.outputs.append(journal)
            reply = await service.acknowledge({"command": "start"})
            return reply, service.status_dict()["storage"]

    reply, storage = run_virtual(main)
    assert reply["ok"] is True
    assert reply["durable"] is False
    assert "no journal: Not a directory" in reply["warning"]
    assert storage["ok"] is False
    assert "Not a directory" in storage["faults"]["journal"]


def test_a_journal_that_missed_lines_on_a_full_card_is_written_whole_when_it_can(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails on main: the journal went on without the goal that could not be written, so a
    crash later restored the match without it. Here the next write, once there is room,
    rewrites the whole journal of the match."""
    disk = Disk(tmp_path / "state")
    disk.install(monkeypatch)

    async def drive(table: Table) -> list[dict[str, Any]]:
        await table.ack("start")
        await table.journal.synced()
        disk.full = True
        await table.until(60.0)
        assert (await table.ack("goal home")).get("durable") is False
        disk.full = False
        await table.until(100.0)
        assert "durable" not in await table.ack("pause")
        return table.journal_lines()

    records = run_table(tmp_path, drive)
    assert [(r["command"], r["args"]) for r in records if r["type"] == "command"] == [
        ("start", []), ("goal", ["home"]), ("pause", [])]


def test_a_storage_fault_flashes_the_last_30_s_led_unless_it_is_lit(mock_factory: Any) -> None:
    """hw/README.md: the red last-30-s LED flashes while something cannot be written; lit
    steadily in the last 30 s of a match (ITHF 4.4) as always; off once all is written."""
    led = LED(13, pin_factory=mock_factory)
    leds = Leds(None, None, led)
    match = Match(profiles.load("ithf"))
    match.handle(match.parse("start"), 0.0)
    match.poll(30.0)
    early = match.status(30.0)  # 5:00 from 20 s on: 4:50 left
    match.poll(300.0)
    late = match.status(300.0)  # 0:20 left
    tick = PhaseChanged(Phase.RUNNING, Phase.PRE_SIGNAL)
    leds.notify(dispatch(early, tick))
    assert led.value == 0
    leds.storage({"results": "No space left on device (ENOSPC)"})
    pin = mock_factory.pin(13)
    pin.clear_states()
    wait_until(lambda: len(pin.states) >= 3 or None, 10, "the LED flashing")  # its thread
    leds.notify(dispatch(late, tick))
    assert led.value == 1
    assert not leds.blinking
    leds.notify(dispatch(early, tick))
    leds.storage({})
    assert led.value == 0
    assert not leds.blinking
    led.close()


# -- nothing blocks the loop (issue 16 item 1) -------------------------------------------------

#: Each fsync of the slow card, in real seconds: an SD card at its worst.
SLOW_FSYNC_S = 1.2
#: How late the loop may be while the card is that slow: half of one fsync, generous for a
#: loaded machine (0.38 s was seen at a load average of 8), where the old code was late by a
#: whole fsync for each command it waited for on the loop.
LOOP_MARGIN_S = 0.6


def test_a_slow_card_holds_up_the_replies_but_never_the_loop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Fails on main: each command's fsync ran while the loop waited (a whole fsync late). On a
    real loop with every fsync SLOW_FSYNC_S: a 10 ms ticker is never more than LOOP_MARGIN_S late,
    asyncio's debug mode reports no slow callback, and a reply still waits for its line (or
    says, past the writer's `slow_s`, that it is not on disk yet)."""
    real_fsync = os.fsync

    def slow_fsync(fd: int) -> None:
        time.sleep(SLOW_FSYNC_S)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)

    async def main() -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        loop.set_debug(True)
        loop.slow_callback_duration = LOOP_MARGIN_S
        writer = DiskWriter(loop, slow_s=0.1)
        journal = Journal(tmp_path / "state", tmp_path / "run", loop, 7200.0, writer)
        service = Service(journal.recover(profiles.load("ithf")))
        service.durability = journal.synced
        late: list[float] = []

        async def ticker() -> None:
            while True:
                due = loop.time() + 0.01
                await asyncio.sleep(0.01)
                late.append(loop.time() - due)

        async with writer, journal:
            service.outputs.append(journal)
            tasks = [asyncio.create_task(service.run()), asyncio.create_task(ticker())]
            started = await service.acknowledge({"command": "start"})
            writer.slow_s = 10.0
            # In the pre-signal: journalled, not counted (ITHF 5.6 guard starts later).
            paused = await service.acknowledge({"command": "goal", "args": ["home"]})
            on_disk = (tmp_path / "state" / JOURNAL_NAME).read_bytes()
            for task in tasks:
                task.cancel()
        return {"late": max(late), "ticks": len(late), "started": started, "goal": paused,
                "on_disk": on_disk}

    with asyncio.Runner() as runner:
        out = runner.run(main())
    assert out["ticks"] >= 20  # the loop ran on through three slow fsyncs
    assert out["late"] < LOOP_MARGIN_S
    assert not [r for r in caplog.records if r.name == "asyncio" and "took" in r.message]
    assert out["started"]["durable"] is False
    assert "not on disk after 0.1 s" in out["started"]["warning"]
    assert out["goal"]["ok"] is True
    assert "durable" not in out["goal"]  # it waited for its line, which is there
    records, _ = parse_journal(out["on_disk"])
    assert [r["command"] for r in records if r["type"] == "command"] == ["start", "goal"]
