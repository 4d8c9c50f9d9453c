"""The composition root (issue 14, invariant 4): `app.build` builds and wires a whole table
as `timerd run` serves it, with gpiozero's MockFactory for the pins and real files in the
test's own state directories.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path
from typing import Any

from tests.conftest import run_virtual
from timerd import __version__, app
from timerd.config import Config, SerialConfig, WebConfig

#: The daemon's defaults, but no web port (the suite's daemons must not fight over 8080).
CONFIG = Config(web=WebConfig(enabled=False))


def build_and(tmp_path: Path, factory: Any, act: Any) -> Any:
    async def main() -> Any:
        async with contextlib.AsyncExitStack() as stack:
            daemon = await app.build(
                CONFIG, app.RunOptions(simulate=True, control=tmp_path / "control.sock"),
                factory, stack)
            return act(daemon)

    return run_virtual(main)


def test_build_wires_every_part_in_one_order_buzzer_first(tmp_path: Path, mock_factory) -> None:
    def look(daemon: app.Daemon) -> tuple[list[str], set[str], set[str], dict[str, Any]]:
        service = daemon.service
        assert service.sound_outputs[:2] == [daemon.board.buzzers, daemon.board.horn]
        return ([type(o).__name__ for o in (*service.sound_outputs, None, *service.outputs)],
                set(service.buttons), set(service.extra_commands), service.status_dict())

    outputs, buttons, commands, status = build_and(tmp_path, mock_factory, look)
    # The sound outputs, handed each signal first: the buzzer and the horn, then the speaker.
    # Then the outputs: the LEDs, the journal before the results (a match's end: the ending
    # command, then its results line, then the compaction), the results (their key in the
    # status before any output reads it), the speaker (a reset ends its sounds), the notifier
    # after the journal (READY never vouches for a command not yet written), the switch last.
    assert outputs == ["Buzzers", "Horn", "Speaker", "NoneType", "Leds", "Journal",
                       "ResultsFile", "Speaker", "SystemdNotifier", "ProfileSwitch"]
    assert {"start_pause", "reset", "goal_home", "goal_away"} <= buttons  # the board's
    assert "mute" in commands  # the speaker's
    assert (status["version"], status["clock_rule"], status["match_id"]) == (
        __version__, "running", None)
    assert status["storage"]["ok"] is True  # the disk writer's key


def test_the_tenths_are_ticked_only_for_a_display_that_shows_them(
        tmp_path: Path, mock_factory) -> None:
    """Issue 16 (CPU): the LED digits (`[serial] port`) and the terminal show the tenths of
    the last 10 s; the web page runs them itself. Without either, the service ticks once a
    second."""
    assert build_and(tmp_path, mock_factory, lambda daemon: daemon.service.tenths) is False

    async def main() -> bool:
        # A display not plugged in yet is still a display (it is retried, and shows them).
        config = replace(CONFIG, serial=SerialConfig(port=str(tmp_path / "ttyUSB9")))
        async with contextlib.AsyncExitStack() as stack:
            daemon = await app.build(
                config, app.RunOptions(simulate=True, control=tmp_path / "control.sock"),
                mock_factory, stack)
            return daemon.service.tenths

    assert run_virtual(main) is True


def test_a_built_table_answers_a_command_and_a_refusal_with_its_code(
        tmp_path: Path, mock_factory) -> None:
    def act(daemon: app.Daemon) -> tuple[dict[str, Any], dict[str, Any]]:
        service = daemon.service
        refused = service.command({"command": "goal", "args": ["home"]})
        started = service.command({"command": "start"})
        return refused, started

    refused, started = build_and(tmp_path, mock_factory, act)
    assert (refused["ok"], refused["code"]) == (False, "refused.in_idle")
    assert started["status"]["phase"] == "pre_signal"
    assert started["status"]["match_id"] is not None  # minted by the service at the set-up
