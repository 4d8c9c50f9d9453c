"""GPIO through gpiozero's MockFactory: real gpiozero devices, real callbacks from threads."""

import asyncio
import threading
from pathlib import Path

import pytest
from gpiozero.pins import mock

from tests.conftest import run_virtual
from timerd import config
from timerd.adapters.gpio import GpioBoard, NoGpio, pin_factory
from timerd.app import attach
from timerd.config import profiles
from timerd.core.effects import Phase, SignalKind
from timerd.core.match import Match
from timerd.service import Service
from timerd.tools.sound_test import sound_test

CONFIG = config.load(None, [])
CONFIG_NO_SPEAKER = config.load(None, ["speaker.enabled=false"])
PINS = CONFIG.gpio


def in_thread(fn):
    """Run fn in another thread, as lgpio's callback thread would, and wait for it."""
    thread = threading.Thread(target=fn)
    thread.start()
    thread.join()


async def board_and_service(factory, monkeypatch):
    loop = asyncio.get_running_loop()
    # Pin state timestamps on the loop's (virtual) clock, so edges can be checked in time.
    monkeypatch.setattr(mock, "monotonic", loop.time)
    service = Service(Match(profiles.load("ithf")))
    board = GpioBoard(PINS, CONFIG.signals, service, factory)
    attach(service, board)
    service.sound_outputs.append(board.buzzers)
    service.outputs.append(board.leds)
    task = asyncio.create_task(service.run())
    await asyncio.sleep(0)
    return service, board, task


def test_a_button_press_from_another_thread_starts_the_match(mock_factory, monkeypatch):
    async def main():
        service, board, task = await board_and_service(mock_factory, monkeypatch)
        pin = mock_factory.pin(PINS.buttons["start_pause"])
        in_thread(pin.drive_low)
        await asyncio.sleep(0.001)
        phase = service.match.phase
        task.cancel()
        board.close()
        return phase

    assert run_virtual(main) is Phase.PRE_SIGNAL


def test_chatter_within_the_debounce_time_gives_one_action(mock_factory, monkeypatch):
    async def main():
        service, board, task = await board_and_service(mock_factory, monkeypatch)
        pin = mock_factory.pin(PINS.buttons["start_pause"])

        def bounce():
            for _ in range(15):
                pin.drive_low()
                pin.drive_high()
            pin.drive_low()

        in_thread(bounce)
        await asyncio.sleep(0.5)
        in_thread(pin.drive_high)
        await asyncio.sleep(1)
        start_in = service.status().start_in_s
        task.cancel()
        board.close()
        return service.match.phase, start_in

    phase, start_in = run_virtual(main)
    # One toggle: the pre-signal started once (a second toggle would have been refused,
    # a third would not exist); 1.5 s of the 20 s lead have passed.
    assert phase is Phase.PRE_SIGNAL
    assert start_in == pytest.approx(18.5)


def test_reset_acts_only_on_a_long_press(mock_factory, monkeypatch):
    async def main():
        service, board, task = await board_and_service(mock_factory, monkeypatch)
        service.execute(service.parse("start"))
        await asyncio.sleep(30)
        service.execute(service.parse("pause"))
        reset = mock_factory.pin(PINS.buttons["reset"])
        in_thread(reset.drive_low)
        await asyncio.sleep(0.8)
        in_thread(reset.drive_high)
        await asyncio.sleep(1)
        after_short = service.match.phase
        in_thread(reset.drive_low)
        await asyncio.sleep(PINS.long_press_s + 0.1)
        after_long = service.match.phase
        in_thread(reset.drive_high)
        task.cancel()
        board.close()
        return after_short, after_long

    assert run_virtual(main) == (Phase.PAUSED, Phase.IDLE)


def test_buzzer_pin_gives_the_interval_pattern(mock_factory, monkeypatch):
    """ITHF 4.4: 4 beeps at 4:00 left: 0.25 s on, 0.35 s apart, timed by the loop."""

    async def main():
        service, board, task = await board_and_service(mock_factory, monkeypatch)
        buzzer = mock_factory.pin(PINS.buzzer_pins[0])
        service.execute(service.parse("start"))
        await asyncio.sleep(20 + 59)  # a second before 4:00 left
        buzzer.clear_states()
        await asyncio.sleep(5)
        task.cancel()
        board.close()
        return [(round(s.timestamp, 6), bool(s.state)) for s in buzzer.states]

    states = run_virtual(main)
    # clear_states() records the current level first; then 4 x (on after a gap, off 0.25 s on)
    assert len(states) == 1 + 8
    assert states[0][1] is False
    expected = [(1.0, True), (0.25, False)] + [(0.35, True), (0.25, False)] * 3
    assert states[1:] == expected


def test_leds_show_running_paused_and_the_last_30_seconds(mock_factory, monkeypatch):
    async def main():
        service, board, task = await board_and_service(mock_factory, monkeypatch)
        led = {name: mock_factory.pin(getattr(PINS, f"led_{name}_pin"))
               for name in ("running", "paused", "last_30")}
        seen = []

        def look():
            seen.append(tuple(led[n].state for n in ("running", "paused", "last_30")))

        service.execute(service.parse("start"))
        await asyncio.sleep(30)
        look()
        service.execute(service.parse("pause"))
        await asyncio.sleep(0)
        look()
        service.execute(service.parse("resume"))
        await asyncio.sleep(265)
        look()
        await asyncio.sleep(60)
        look()
        task.cancel()
        board.close()
        return seen

    assert run_virtual(main) == [(True, False, False), (False, True, False),
                                 (True, False, True), (False, False, False)]


def test_closing_the_board_silences_the_buzzer(mock_factory, monkeypatch):
    async def main():
        service, board, task = await board_and_service(mock_factory, monkeypatch)
        service.execute(service.parse("start"))  # the pre-signal sounds now
        await asyncio.sleep(0.05)
        buzzing = mock_factory.pin(PINS.buzzer_pins[0]).state
        task.cancel()
        board.close()
        return buzzing, mock_factory.pin(PINS.buzzer_pins[0]).state

    assert run_virtual(main) == (True, False)


def test_sound_test_ends_each_buzzer_pulse_without_a_running_match(mock_factory, monkeypatch):
    """`timerd sound-test` sounds the buzzer with no match loop running: the pause chirp's
    50 ms pulse still ends (a pulse's later edges are timed by the service only while it runs;
    until then by the loop's own timer)."""

    async def main():
        loop = asyncio.get_running_loop()
        monkeypatch.setattr(mock, "monotonic", loop.time)
        buzzer = mock_factory.pin(PINS.buzzer_pins[0])
        said = []
        ok = await sound_test(CONFIG_NO_SPEAKER, [SignalKind.PAUSE], 1, mock_factory, said.append)
        return ok, said, [(round(s.timestamp, 6), bool(s.state)) for s in buzzer.states]

    ok, said, states = run_virtual(main)
    assert ok
    assert said == ["pause: buzzer on GPIO22 (0.05 s)"]
    rises = [t for t, on in states if on]
    falls = [t for t, on in states[1:] if not on]
    assert len(rises) == 1
    assert falls
    assert falls[0] - rises[0] == pytest.approx(0.05)


def test_no_real_pin_factory_says_so_and_points_to_simulate():
    if Path("/proc/device-tree/model").exists():
        pytest.skip("this machine has GPIO")
    with pytest.raises(NoGpio, match="--simulate"):
        pin_factory("auto")
