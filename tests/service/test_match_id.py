"""One match id (issue 14, invariant 8): the service gives a match its id when it is set up,
and the status, the journal's header, the results line and hall mode's result message all
carry that one; a match restored after a restart keeps it, and the tournament desk knows a
result sent again as the same result.

The table's real parts, wired as `timerd.app.serve` wires them (the journal, the service with
the match the journal recovers, the results file, hall mode's outbox as the results' listener),
on virtual time with real files; a restart is a second run over the same directories.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from tests.conftest import run_virtual, wired
from timerd.adapters.hall.link import HallLink, Outbox
from timerd.adapters.journal.format import JOURNAL_NAME
from timerd.adapters.journal.writer import Journal
from timerd.adapters.results.file import ResultsFile
from timerd.config import HallConfig, profiles
from timerd.core.match import Match
from timerd.disk import DiskWriter
from timerd.service import Service
from timerd.tools.hall_round import ResultStore, match_row

HALL = HallConfig(enabled=True, hall="hall", table="t1", chronyc="none", timedatectl="none")
#: The results file's id shape since its first version: users' tools parse it.
ID_SHAPE = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{6}$")


def header_id(tmp: Path) -> str | None:
    """The id in the journal's match header, None when no match is journalled."""
    text = (tmp / "state" / JOURNAL_NAME).read_text()
    return json.loads(text.splitlines()[0])["match"] if text else None


def run_table(tmp: Path, script: list[tuple[float, str]], until: float,
              look_at: tuple[float, ...] = (),
              profile: str = "ithf") -> dict[float, tuple[Any, Any]]:
    """Run the table for `until` s, giving `script`'s commands; at each of `look_at` note the
    status's match id and the journal header's. A second call over `tmp` is a restart."""

    async def main() -> dict[float, tuple[Any, Any]]:
        loop = asyncio.get_running_loop()
        # Inline: virtual time must not run on while a write is on another thread.
        writer = DiskWriter(inline=True)
        journal = Journal(tmp / "state", tmp / "run", loop, 7200.0, writer)
        service = Service(journal.recover(profiles.load(profile)))
        results = ResultsFile(tmp / "results.jsonl", writer=writer)
        if journal.recovery.match is not None:
            results.resume(journal.recovery.started_wall, journal.recovery.goal_walls)
        hall = HallLink(HALL, service, Outbox(tmp / "outbox", writer))
        results.listeners.append(hall.publish_result)
        seen: dict[float, tuple[Any, Any]] = {}
        async with journal:
            for part in (results, journal):
                wired(part, service)
            service.announce(*journal.announcement(service.status()))
            t0 = loop.time()
            for t, words in script:
                command, *args = words.split()
                loop.call_at(t0 + t, service.command, {"command": command, "args": args})
            for t in look_at:
                loop.call_at(t0 + t, lambda t=t: seen.__setitem__(
                    t, (service.status_dict()["match_id"], header_id(tmp))))
            task = asyncio.create_task(service.run())
            await asyncio.sleep(until)
            task.cancel()
        return seen

    result: dict[float, tuple[Any, Any]] = run_virtual(main)
    return result


def results_lines(tmp: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp / "results.jsonl").read_text().splitlines()]


def hall_messages(tmp: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_bytes()) for p in sorted((tmp / "outbox").glob("*.json"))]


def test_the_status_the_journal_the_results_line_and_the_hall_result_carry_one_id(
        tmp_path: Path) -> None:
    """Fails on the old code: the journal's header had a uuid of its own and hall mode's
    result message another, neither the results line's `match_id`."""
    # Named while idle (a desk's `round load`): journalled before the match is set up.
    seen = run_table(tmp_path, [(0, "teams Ann Bob"), (1, "start")], until=400,
                     look_at=(0.5, 60.0, 390.0))
    assert seen[0.5] == (None, "")  # named, not set up: no id yet
    match_id, journalled = seen[60.0]
    assert ID_SHAPE.match(match_id)
    assert journalled == match_id
    # Finished: the journal keeps it while it may be corrected (issue 42)
    assert seen[390.0] == (match_id, match_id)
    [line] = results_lines(tmp_path)
    assert line["match_id"] == match_id
    [message] = hall_messages(tmp_path)
    assert message["id"] == message["result"]["match_id"] == match_id


def test_a_match_restored_after_a_restart_keeps_its_id_in_its_result(tmp_path: Path) -> None:
    """Fails on the old code: the restored match got a new id for its results (`resume`), and
    the journal's header held yet another."""
    before = run_table(tmp_path, [(0, "start")], until=100, look_at=(50.0,))
    match_id, journalled = before[50.0]
    assert journalled == match_id
    after = run_table(tmp_path, [(1, "resume")], until=300, look_at=(0.5,))
    assert after[0.5] == (match_id, match_id)  # restored, paused: the same match
    [line] = results_lines(tmp_path)
    assert line["match_id"] == match_id
    assert line["score"] == {"home": 0, "away": 0}
    [message] = hall_messages(tmp_path)
    assert message["id"] == match_id


def test_a_reset_ends_the_id_and_the_next_match_gets_its_own(tmp_path: Path) -> None:
    seen = run_table(tmp_path, [(0, "start"), (40, "pause"), (41, "reset"), (50, "start")],
                     until=60, look_at=(30.0, 45.0, 55.0))
    first, second = seen[30.0][0], seen[55.0][0]
    assert seen[45.0] == (None, None)  # reset: no match set up, the journal compacted
    assert first != second
    assert seen[55.0][1] == second


def test_a_result_sent_again_is_one_result_at_the_desk(tmp_path: Path) -> None:
    """The desk stores a result under its id: a table that sends its match's result again
    (its outbox after a restart, a retry) adds nothing. Fails on the old code: each send
    made a new uuid, so the desk kept the same match twice."""
    run_table(tmp_path, [(0, "start")], until=400)
    [line] = results_lines(tmp_path)

    async def send_again() -> None:
        writer = DiskWriter(inline=True)
        hall = HallLink(HALL, Service(Match(profiles.load("ithf"))),
                        Outbox(tmp_path / "outbox", writer))
        hall.publish_result(line)

    run_virtual(send_again)
    messages = hall_messages(tmp_path)
    assert len(messages) == 2
    store = ResultStore(tmp_path / "desk")
    (tmp_path / "desk").mkdir()
    assert all(store.save(m, received=float(n)) for n, m in enumerate(messages))
    assert [p.stem for p in (tmp_path / "desk").iterdir()] == [line["match_id"]]
    row = match_row(messages[0])
    assert row["match_id"] == row["result_id"] == line["match_id"]
