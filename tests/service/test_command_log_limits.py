"""The service's line per command is rate-limited (issue 13 item 10): a flood of refused
commands from any surface is one line per 30 s with a count, never a line each; the line that
holds a result that could not be written is never limited. On virtual time."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from conftest import run_virtual

from timerd.adapters.results.file import ResultsFile
from timerd.config import profiles
from timerd.core.match import Match
from timerd.service import Service


def test_a_flood_of_refused_commands_is_one_line_per_30_s_and_the_result_line_stays(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Fails on main: 2,000 lines for 2,000 refused commands."""
    caplog.set_level(logging.INFO)
    unwritable = tmp_path / "results.jsonl"
    unwritable.mkdir()  # a directory: the result cannot be appended

    async def main() -> None:
        service = Service(Match(profiles.load("ithf")))
        service.outputs.append(ResultsFile(unwritable))
        task = asyncio.create_task(service.run())
        try:
            assert service.command({"command": "start", "args": []})["ok"]
            for _ in range(1000):
                assert not service.command({"command": "resume", "args": []})["ok"]
            await asyncio.sleep(40)  # past the interval: its end's line carries the count
            for _ in range(1000):
                assert not service.command({"command": "resume", "args": []})["ok"]
            await asyncio.sleep(330)  # the final signal: the match ends, its result is lost
            assert service.status().phase == "finished"
        finally:
            task.cancel()

    run_virtual(main)
    refused = [r.getMessage() for r in caplog.records
               if r.name == "timerd.service" and "resume" in r.getMessage()]
    assert len(refused) == 3, refused  # the first; each interval's end with its count
    assert "[998 more like this since the last such line]" in refused[1]
    assert "[999 more like this since the last such line]" in refused[2]
    lost = [r for r in caplog.records if "not written to" in r.getMessage()]
    assert lost  # at least once, and again at each retry (every 30 s): never rate-limited
    assert '"score"' in lost[0].getMessage()  # the whole result, in the log
