"""ITHF 4.6 from the buttons, without a keyboard (issue 15): hold RESET and the GOAL button of
the side that is present for `long_press_s`; the other side forfeits. Real gpiozero devices on
the MockFactory, edges from another thread, the service on virtual time.

The start signal is at t=20 (pre-signal lead 20 s), so a forfeit is possible from t=50.
"""

import asyncio

from gpiozero.pins import mock

from tests.adapters.test_gpio import in_thread
from tests.conftest import Recorder, run_virtual, said
from timerd import config
from timerd.adapters.gpio import GpioBoard
from timerd.app import attach
from timerd.config import profiles
from timerd.core.effects import Phase
from timerd.core.match import Match
from timerd.core.score import Ending, Side
from timerd.service import Service

PINS = config.load(None, []).gpio
HOLD = PINS.long_press_s


def chord(monkeypatch, script):
    """Start a match, then at each (t, pin, pressed) drive that pin; return what happened."""
    async def main():
        loop = asyncio.get_running_loop()
        monkeypatch.setattr(mock, "monotonic", loop.time)
        factory = mock.MockFactory(pin_class=mock.MockPWMPin)
        service = Service(Match(profiles.load("ithf")))
        board = GpioBoard(PINS, config.load(None, []).signals, service, factory)
        attach(service, board)
        recorder = Recorder(loop)
        service.sound_outputs.append(board.buzzers)
        service.outputs += [board.leds, recorder]
        task = asyncio.create_task(service.run())
        await asyncio.sleep(0)
        service.execute(service.parse("start"))
        for at, pin, pressed in script:
            await asyncio.sleep(at - loop.time())
            p = factory.pin(PINS.buttons[pin])
            in_thread(p.drive_low if pressed else p.drive_high)
        await asyncio.sleep(HOLD + 1)
        status = service.match.status(loop.time())
        notices = said(e for _, e, _ in recorder.seen)
        task.cancel()
        board.close()
        factory.reset()
        return service.match, status, notices

    return run_virtual(main)


def test_reset_with_goal_home_held_is_a_forfeit_of_away(monkeypatch) -> None:
    match, status, _ = chord(monkeypatch, [
        (60.0, "reset", True), (60.4, "goal_home", True),
        (60.4 + HOLD + 0.1, "goal_home", False), (60.4 + HOLD + 0.2, "reset", False)])
    assert match.phase is Phase.FINISHED
    assert match.result is not None
    assert (match.result.how, match.result.side, match.result.winner) == (
        Ending.FORFEIT, Side.AWAY, Side.HOME)
    assert status.score == {"home": 5, "away": 0}


def test_reset_with_goal_away_held_is_a_forfeit_of_home_also_while_paused(monkeypatch) -> None:
    """Paused, RESET alone would reset after long_press_s; held with GOAL it never does."""
    match, status, _ = chord(monkeypatch, [
        (55.0, "start_pause", True), (55.1, "start_pause", False),
        (60.0, "goal_away", True), (60.0, "reset", True)])
    assert match.result is not None
    assert (match.result.how, match.result.side) == (Ending.FORFEIT, Side.HOME)
    assert status.score == {"home": 0, "away": 5}


def test_the_chord_before_30_s_is_refused_with_the_time_left(monkeypatch) -> None:
    match, status, notices = chord(monkeypatch, [(40.0, "reset", True),
                                                 (40.5, "goal_home", True)])
    assert match.phase is Phase.RUNNING
    assert status.score == {"home": 0, "away": 0}  # the GOAL press scored nothing either
    assert notices == [f"forfeit refused: ITHF 4.6 gives Away 30 s after the start signal "
                       f"to be at the table and ready; {9.5 - HOLD:.1f} s left (a forfeit "
                       "is possible from 4:30 on the clock)"]


def test_letting_go_early_does_nothing_and_the_goal_press_does_not_score(monkeypatch) -> None:
    """Also no "hold RESET" hint: RESET's release was part of the chord."""
    match, status, notices = chord(monkeypatch, [
        (60.0, "reset", True), (60.5, "goal_home", True),
        (60.5 + HOLD / 2, "goal_home", False), (60.6 + HOLD / 2, "reset", False)])
    assert match.phase is Phase.RUNNING
    assert status.score == {"home": 0, "away": 0}
    assert notices == []


def test_a_goal_press_without_reset_still_scores(monkeypatch) -> None:
    _, status, _ = chord(monkeypatch, [(60.0, "goal_home", True), (60.1, "goal_home", False)])
    assert status.score == {"home": 1, "away": 0}
