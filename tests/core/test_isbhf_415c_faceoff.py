"""ISBHF 415c: after a goal play restarts with a faceoff at centre; on a stop clock (407 !1)
the clock starts when the ball is dropped, so START after a goal is that faceoff (issue 15)."""

from __future__ import annotations

from timerd.cli import format_status
from timerd.config import profiles
from timerd.core.match import Match


def test_start_after_a_goal_is_the_faceoff_and_clears_the_pending_flag() -> None:
    """Fails on main: `faceoff_pending` stayed true while the clock ran again."""
    match = Match(profiles.load("isbhf"))
    match.handle(match.parse("start"), 0.0)
    match.handle(match.parse("stop"), 100.0)  # the whistle at the goal
    match.handle(match.parse("goal", "home", "9"), 101.0)
    assert match.status(102.0).faceoff_pending is True
    assert "faceoff pending" in format_status(match.status(102.0).to_dict())
    match.handle(match.parse("start"), 130.0)  # the faceoff at centre restarts the clock
    status = match.status(131.0)
    assert status.clock_running is True
    assert status.faceoff_pending is False
    assert status.to_dict()["faceoff_pending"] is False  # /api/state, MQTT, serial source
    assert "faceoff pending" not in format_status(status.to_dict())  # timerctl status
