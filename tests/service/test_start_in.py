"""A scheduled start through the real service on virtual time: the countdown ticks, and the
signals sound at the planned instants (hall mode's start_round ends in `start_in`)."""

from __future__ import annotations

from tests.conftest import play
from timerd.core.effects import Tick


def test_start_in_sounds_the_pre_signal_one_lead_before_and_the_start_on_the_instant() -> None:
    recorder = play("ithf", [(1.0, "start_in 45")], until=70.0)
    signals = [(e["t"], e["signal"]) for e in recorder.events("signal")]
    assert signals[:2] == [(26.0, "pre_signal"), (46.0, "start")]
    states = [(e["t"], e["state"]) for e in recorder.events("state")]
    assert states[:3] == [(1.0, "scheduled"), (26.0, "pre_signal"), (46.0, "running")]


def test_the_shown_countdown_ticks_while_scheduled() -> None:
    recorder = play("ithf", [(0.0, "start_in 40")], until=5.5)
    ticks = [round(t, 6) for t, effect, _ in recorder.seen if isinstance(effect, Tick)]
    assert ticks[-5:] == [1.0, 2.0, 3.0, 4.0, 5.0]
