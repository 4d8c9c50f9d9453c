"""The end of a match is one sequence on the disk writer, submitted in order by the dispatch
that ended it (issue 32 item 5; docs/service.md): the ending command's journal line, the
results line, then the journal's compaction, once that line is on disk (issue 36)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import run_virtual
from timerd.adapters.journal.format import JOURNAL_NAME
from timerd.adapters.journal.writer import Journal
from timerd.adapters.results.file import ResultsFile
from timerd.app import keep_results
from timerd.config import profiles
from timerd.disk import DiskWriter, Write
from timerd.service import Service


class Recording(DiskWriter):
    """The disk writer, inline, noting after each job what the journal and the results file
    hold: (kind, the journal's last line: its command, signal or type; results lines)."""

    def __init__(self, state: Path) -> None:
        super().__init__(inline=True)
        self.state = state
        self.jobs: list[tuple[str, str | None, int]] = []

    def submit(self, what: str, work: Callable[[], None]) -> Write:
        write = super().submit(what, work)
        journal = self.state / JOURNAL_NAME
        lines = journal.read_text().splitlines() if journal.exists() else []
        record = json.loads(lines[-1]) if lines else {}
        last = record.get("command") or record.get("signal") or record.get("type")
        results = self.state / "results.jsonl"
        self.jobs.append((what, last, len(results.read_text().splitlines())
                          if results.exists() else 0))
        return write


def test_the_end_of_a_match_is_one_sequence_on_the_disk_writer(tmp_path: Path) -> None:
    """Fails on the old code: the results line was submitted a loop turn after the dispatch
    that ended the match, and the compaction a turn after that, each adapter counting
    `call_soon` turns; here all three are submitted, in order, by that dispatch."""

    async def main() -> list[tuple[str, str | None, int]]:
        loop = asyncio.get_running_loop()
        writer = Recording(tmp_path / "state")
        journal = Journal(tmp_path / "state", tmp_path / "run", loop, 7200.0, writer)
        service = Service(journal.recover(profiles.load("ithf")))
        results = ResultsFile(tmp_path / "state" / "results.jsonl", writer=writer)
        keep_results(journal, results)
        async with journal:
            service.outputs += [journal, results]  # as app.build orders them
            task = asyncio.create_task(service.run())
            service.execute(service.parse("start"))
            await asyncio.sleep(60)
            before = len(writer.jobs)
            service.execute(service.parse("forfeit", "home"))  # ITHF 4.6: ends the match
            ended: list[tuple[str, str | None, Any]] = writer.jobs[before:]  # same turn
            task.cancel()
        return ended

    ended = run_virtual(main)
    assert ended == [("journal", "final", 0),  # the final signal's mark (ITHF 4.6)
                     ("journal", "forfeit", 0),  # the ending command, journalled
                     ("results", "forfeit", 1)]  # its results line
    # The journal keeps the finished match (on disk already) for its window of corrections
    # (issue 42 item 1): emptied at RESET, the next match or the window's end
    # (tests/adapters/test_journal.py).
