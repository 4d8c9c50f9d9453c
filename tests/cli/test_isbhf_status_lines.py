"""`timerctl status` shows ball hockey's timeouts, penalties and stoppage countdowns."""

from __future__ import annotations

from timerd import profiles
from timerd.cli import format_status
from timerd.core.match import Match


def test_status_lines_for_timeouts_penalties_and_countdowns() -> None:
    match = Match(profiles.load("isbhf"))
    match.handle("start", 0.0)
    match.handle("stop", 10.0)
    for player in ("17", "4", "5"):
        match.handle("penalty", 11.0, "home", "minor", player)
    match.handle("timeout", 12.0, "away")
    match.handle("linechange", 12.0)
    match.handle("goalie-change", 13.0, "home")
    lines = format_status(match.status(14.0).to_dict()).splitlines()
    assert lines[-6:] == [
        "timeouts  home 1 left, away 0 left (running 0:28)",
        "penalty 1 home #17 minor 2:00",
        "penalty 2 home #4 minor 2:00",
        "penalty 3 home #5 minor 2:00 (waiting)",
        "line change visitors (1/3) 3.0",
        "goalie change home 9:59"]


def test_no_ball_hockey_lines_for_table_hockey() -> None:
    match = Match(profiles.load("ithf"))
    match.handle("start", 0.0)
    text = format_status(match.status(30.0).to_dict())
    assert "timeouts" not in text
    assert "penalty" not in text
