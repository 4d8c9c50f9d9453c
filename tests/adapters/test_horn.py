"""Ball hockey's GPIO parts through gpiozero's MockFactory on virtual time: the horn relay and the
LINE CHANGE button (ISBHF 404b)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest
from gpiozero.pins import mock

from tests.conftest import Recorder, run_virtual
from timerd.adapters.gpio import GpioBoard
from timerd.app import attach
from timerd.config import Config, GpioConfig, profiles
from timerd.core.effects import Signal, SignalKind
from timerd.core.match import Match
from timerd.core.profile import Profile
from timerd.service import Service


def horn_states(factory: Any, monkeypatch: pytest.MonkeyPatch, gpio: GpioConfig,
                script: list[tuple[float, str]], *, watch_from: float,
                until: float, switch_to: Profile | None = None) -> list[tuple[float, bool]]:
    """Play `script` on isbhf with the board on `factory` (the board built under isbhf, then
    the match replaced by one under `switch_to` if given, as a profile switch does); the horn
    pin's (gap, level) changes from `watch_from` on, the first entry being its level then."""

    async def main() -> list[tuple[float, bool]]:
        loop = asyncio.get_running_loop()
        monkeypatch.setattr(mock, "monotonic", loop.time)  # pin timestamps on virtual time
        service = Service(Match(profiles.load("isbhf")))
        board = GpioBoard(gpio, Config().signals, service, factory)
        attach(service, board)
        service.sound_outputs += [board.buzzers, board.horn]
        service.outputs.append(board.leds)
        if switch_to is not None:
            service.replace_match(switch_to)
        t0 = loop.time()
        for t, words in script:
            loop.call_at(t0 + t, lambda w=words: service.execute(service.parse(*w.split())))
        pin = factory.pin(gpio.horn_pin)
        loop.call_at(t0 + watch_from, pin.clear_states)
        task = asyncio.create_task(service.run())
        await asyncio.sleep(until)
        task.cancel()
        states = [(round(s.timestamp, 6), bool(s.state)) for s in pin.states]
        board.close()  # (gpiozero then releases the pin; that edge is not ours)
        return states

    result: list[tuple[float, bool]] = run_virtual(main)
    return result


def test_horn_relay_blows_the_profiles_pulse_at_the_period_end(mock_factory, monkeypatch):
    # A relay module that switches on while its input is low: idle high, one 1.5 s low pulse
    # at 15:00 of net time (the profile's [horn] period_end), nothing for the whistles.
    gpio = replace(GpioConfig(), horn_active_high=False)
    states = horn_states(mock_factory, monkeypatch, gpio,
                         [(0, "start"), (100, "stop"), (110, "start")], watch_from=0.5,
                         until=915)
    assert len(states) == 3
    assert states == [(0.0, True), (909.5, False), (1.5, True)]


def test_the_horn_blows_the_pulse_of_the_profile_switched_to(mock_factory, monkeypatch):
    """Issue 32 item 5: a profile switch (`Service.replace_match`, as app.ProfileSwitch does
    once a restored match under another profile is reset) takes the horn along: the period
    end's pulse is the new profile's 0.5 s, not the 1.5 s of the profile the board was built
    under. Fails with the old horn, whose pulses were read once, when the board was built."""
    short = replace(profiles.load("isbhf"), horn={SignalKind.PERIOD_END: (0.5,)})
    gpio = replace(GpioConfig(), horn_active_high=False)
    states = horn_states(mock_factory, monkeypatch, gpio,
                         [(0, "start"), (100, "stop"), (110, "start")], watch_from=0.5,
                         until=915, switch_to=short)
    assert states == [(0.0, True), (909.5, False), (0.5, True)]


def test_horn_relay_final_signal_pattern_active_high(mock_factory, monkeypatch):
    # The final signal (after three periods and two 10:00 intermissions): on 1.0, off 0.4,
    # on 2.0 s. Active high: idle low.
    states = horn_states(mock_factory, monkeypatch, GpioConfig(),
                         [(0, "start"), (1500, "start"), (3000, "start")], watch_from=3890,
                         until=3910)
    assert len(states) == 5
    assert states == [(0.0, False), (10.0, True), (1.0, False), (0.4, True), (2.0, False)]


def test_line_change_button_runs_three_stages_with_a_signal_after_each(mock_factory,
                                                                       monkeypatch):
    async def main() -> tuple[list[tuple[float, int]], list[str]]:
        loop = asyncio.get_running_loop()
        monkeypatch.setattr(mock, "monotonic", loop.time)
        service = Service(Match(profiles.load("isbhf")))
        recorder = Recorder(loop, loop.time())
        gpio = GpioConfig()
        board = GpioBoard(gpio, Config().signals, service, mock_factory)
        attach(service, board)
        service.sound_outputs += [board.buzzers, board.horn]
        service.outputs.append(recorder)
        task = asyncio.create_task(service.run())
        service.execute(service.parse("start"))
        await asyncio.sleep(60)
        button = mock_factory.pin(gpio.buttons["line_change"])
        button.drive_low()  # pressed while the clock runs: refused, play goes on
        await asyncio.sleep(0.2)
        button.drive_high()
        await asyncio.sleep(10)
        service.execute(service.parse("stop"))
        await asyncio.sleep(2)
        button.drive_low()  # t = 72.2: in the stoppage
        await asyncio.sleep(0.2)
        button.drive_high()
        await asyncio.sleep(30)
        task.cancel()
        board.close()
        stages = [(round(t, 6), e.beeps) for t, e, _ in recorder.seen
                  if isinstance(e, Signal) and e.kind is SignalKind.LINE_CHANGE]
        notices = [r["message"] for r in recorder.events("notice")]
        return stages, notices

    stages, notices = run_virtual(main)
    # The press acts on its first edge (72.2); the stages end 5, 10 and 15 s later.
    assert stages == [(77.2, 1), (82.2, 2), (87.2, 3)]
    assert notices[0].startswith("linechange refused: teams change lines in a stoppage")
    assert notices[1] == "line change: 3 stages of 5 s (ISBHF 404b)"
