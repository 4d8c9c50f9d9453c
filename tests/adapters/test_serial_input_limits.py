"""The serial display's input limits (issue 13, docs/service.md "Limits and failure modes"),
over a pty pair on virtual time: commands past a burst and a rate are answered `no` and never
run, counted in the status, and logged once per 30 s; overlong lines are skipped whole."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from conftest import Recorder

from tests.adapters.test_serial_display import DisplayEnd, fields_of, with_display
from tests.loop_debug import ACTIVE as LOOP_DEBUG
from timerd.adapters.serial_display import COMMAND_BURST, COMMANDS_PER_S, SerialDisplay
from timerd.adapters.serial_protocol import frame
from timerd.service import Service

STATUS = frame(["TDC", "1", "status"])  # always applied, changes nothing: every `no` is a drop


@pytest.mark.skipif(LOOP_DEBUG, reason="virtual time beside a real pty: debug mode's slower "
                    "turns let the virtual clock run ahead of the pty's lines, and the rate "
                    "it checks with it; the ordinary run covers it")
def test_a_flood_of_commands_is_cut_to_the_burst_and_the_rate(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Fails on main: all 100 commands of the flood were run, each with its own log line."""
    caplog.set_level(logging.INFO, "timerd.serial")
    end = DisplayEnd(tmp_path / "display")
    answers: list[str] = []

    async def replies(count: int) -> None:
        for _ in range(count):
            answers.append(fields_of(await end.line(lambda line: line.startswith(b"$TDR")))[2])

    async def body(service: Service, display: SerialDisplay, recorder: Recorder) -> None:
        await end.line(lambda line: line.startswith(b"$TDS"))
        began = service.now()
        for _ in range(10):  # 100 commands at once, in pieces the pty takes without blocking
            end.send(STATUS * 10)
            await replies(10)
        took_s = service.now() - began
        assert answers.count("ok") <= COMMAND_BURST + COMMANDS_PER_S * took_s
        assert answers.count("no") == display.commands_dropped >= 100 - COMMAND_BURST - 1
        await asyncio.sleep(1.0)  # the bucket fills again
        answers.clear()
        end.send(STATUS)
        await replies(1)
        assert answers == ["ok"]
        assert service.status_dict()["serial_display"]["commands_dropped"] == \
            display.commands_dropped
        assert display.bad_lines.total == 0

    try:
        with_display(end.link, body)
    finally:
        end.close()
    lines = [r.getMessage() for r in caplog.records]
    assert sum(line.startswith("serial display: status") for line in lines) == 1, lines
    assert sum("refused" in line for line in lines) == 1, lines


def test_an_overlong_line_is_skipped_whole_and_the_next_one_runs(tmp_path: Path) -> None:
    end = DisplayEnd(tmp_path / "display")

    async def body(service: Service, display: SerialDisplay, recorder: Recorder) -> None:
        await end.line(lambda line: line.startswith(b"$TDS"))
        # A command line made long (129 bytes and more), sent in pieces: skipped to its end.
        long_line = STATUS.rstrip(b"\n") + b"x" * 2000 + b"\n"
        for start in range(0, len(long_line), 500):
            end.send(long_line[start:start + 500])
            await asyncio.sleep(0)
        end.send(STATUS)
        reply = await end.line(lambda line: line.startswith(b"$TDR"))
        assert fields_of(reply) == ["TDR", "1", "ok", "status"]
        assert display.bad_lines.total == 1

    try:
        with_display(end.link, body)
    finally:
        end.close()
