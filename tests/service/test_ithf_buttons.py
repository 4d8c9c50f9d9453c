"""The scoring buttons and LEDs through gpiozero's MockFactory, on virtual time.

A press is the mock pin driven low (the button closes to ground against the pull-up), a release
driven high; everything after that is the real path: gpiozero callback, the service's debounce
and long-press logic, the match.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tests.conftest import Recorder, run_virtual
from timerd.adapters.gpio import GpioBoard
from timerd.app import attach
from timerd.config import Config, GpioConfig, profiles
from timerd.core.match import Match
from timerd.core.status import Status
from timerd.service import Service

Probe = Callable[[GpioBoard, Status], Any]


def run_panel(factory: Any, presses: list[tuple[float, str, float]], until: float,
              probes: dict[float, Probe] | None = None,
              profile: str = "ithf") -> tuple[Status, dict[float, Any], Recorder]:
    """Start a match at t=0 (start signal at 20), then hold `button` from t for `hold_s`.

    `probes` are read at their times (after what is due then has fired).
    """
    seen: dict[float, Any] = {}

    async def main() -> tuple[Status, dict[float, Any], Recorder]:
        loop = asyncio.get_running_loop()
        service = Service(Match(profiles.load(profile)))
        recorder = Recorder(loop, loop.time())
        config = Config()
        board = GpioBoard(GpioConfig(), config.signals, service, factory)
        attach(service, board)
        service.sound_outputs.append(board.buzzers)
        service.outputs += [board.leds, recorder]
        t0 = recorder.t0
        task = asyncio.create_task(service.run())
        service.execute(service.parse("start"))
        for t, name, hold_s in presses:
            pin = board.buttons[name].pin
            loop.call_at(t0 + t, pin.drive_low)
            loop.call_at(t0 + t + hold_s, pin.drive_high)
        for t, probe in (probes or {}).items():
            loop.call_at(t0 + t, lambda t=t, probe=probe: seen.__setitem__(
                t, probe(board, service.status())))
        await asyncio.sleep(until)
        task.cancel()
        status = service.status()
        board.close()
        return status, seen, recorder

    result: tuple[Status, dict[float, Any], Recorder] = run_virtual(main)
    return result


def guard_led(board: GpioBoard, status: Status) -> bool:
    return bool(board.leds.faceoff_guard.value)


def test_goal_buttons_enter_goals_and_the_guard_led_shows_the_guard(mock_factory: Any) -> None:
    # ITHF 5.6: the LED is lit from the start signal (the first faceoff) for 3 s
    status, seen, _ = run_panel(mock_factory, [
        (21.0, "goal_home", 0.2), (30.0, "goal_away", 0.2), (30.5, "goal_home", 0.1),
    ], until=40, probes={19.9: guard_led, 20.5: guard_led, 22.9: guard_led, 23.1: guard_led})
    assert seen == {19.9: False, 20.5: True, 22.9: True, 23.1: False}
    assert [(g["side"], g["counted"], g["reason"]) for g in status.goals] == [
        ("home", False, "faceoff_guard"), ("away", True, None), ("home", True, None)]
    assert status.score == {"home": 1, "away": 1}


def test_faceoff_button_restarts_the_guard(mock_factory: Any) -> None:
    status, seen, _ = run_panel(mock_factory, [
        (30.0, "goal_home", 0.1), (40.0, "faceoff", 0.1), (41.0, "goal_away", 0.1),
    ], until=50, probes={39.9: guard_led, 40.1: guard_led, 43.1: guard_led})
    assert seen == {39.9: False, 40.1: True, 43.1: False}
    assert [g["reason"] for g in status.goals] == [None, "faceoff_guard"]
    assert status.faceoff_pending is False


def test_undo_acts_only_on_a_long_press(mock_factory: Any) -> None:
    status, seen, recorder = run_panel(mock_factory, [
        (30.0, "goal_home", 0.1), (35.0, "goal_away", 0.1),
        (40.0, "undo", 0.5),  # a tap: nothing removed, the operator is told to hold it
        (45.0, "undo", 2.5),  # held past long_press_s (2 s): the away goal goes
    ], until=50, probes={44.0: lambda b, s: dict(s.score)})
    assert seen[44.0] == {"home": 1, "away": 1}
    assert status.score == {"home": 1, "away": 0}
    notices = [e["message"] for e in recorder.events("notice")]
    assert any("hold UNDO" in n for n in notices)
    assert any(n.startswith("undo: removed the Away goal") for n in notices)


def test_passive_buttons_count_warn_and_clear(mock_factory: Any) -> None:
    # ITHF 8.3: warning sound and LED 5 s after the press; pressing again clears both
    def passive_led(board: GpioBoard, status: Status) -> tuple[bool, float | None]:
        return bool(board.leds.passive.value), status.passive["home"]

    _, seen, recorder = run_panel(mock_factory, [
        (30.0, "passive_home", 0.1), (40.0, "passive_home", 0.1),
    ], until=45, probes={34.9: passive_led, 35.1: passive_led, 40.2: passive_led})
    assert seen[34.9][0] is False
    assert seen[35.1] == (True, 0.0)
    assert seen[40.2] == (False, None)
    assert [e["t"] for e in recorder.events("signal") if e["signal"] == "passive_warning"] == [
        35.0]


def test_rejected_goal_sounds_the_no_goal_pattern_on_the_buzzer(mock_factory: Any) -> None:
    # The distinct "no goal" pattern: two long tones (0.6 s, 0.15 s gap, 0.6 s)
    def buzzer(board: GpioBoard, status: Status) -> bool:
        return bool(board.buzzers.devices[0].value)

    _, seen, _ = run_panel(mock_factory, [(21.0, "goal_home", 0.1)], until=25, probes={
        21.3: buzzer, 21.65: buzzer, 21.9: buzzer, 22.4: buzzer})
    assert seen == {21.3: True, 21.65: False, 21.9: True, 22.4: False}


def test_simulate_line_shows_the_score_and_the_overtime_count_up() -> None:
    from timerd.adapters.terminal import status_line  # noqa: PLC0415

    match = Match(profiles.load("ithf-playoff"))
    match.handle(match.parse("start"), 0.0)
    match.poll(30.0)
    match.handle(match.parse("goal", "away"), 30.0)
    assert status_line(match.status(30.0)).startswith(" 4:50  0:1  running")
    match.handle(match.parse("faceoff"), 40.0)
    match.handle(match.parse("goal", "home"), 200.0)
    match.poll(380.0)  # 1:1 at 0:00, overtime from 350
    assert status_line(match.status(380.0)).startswith("OT +0:30  1:1  running")
