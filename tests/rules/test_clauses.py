"""Rule clauses that no other test checked by itself (the coverage table, README.md here).

Each test breaks if timerd stops doing what its clause says: the times are the rule's, literal.
The ITHF start signal is at t=20 (the pre-signal leads it by 20 s, ITHF 4.4).
"""

from __future__ import annotations

import pytest

from timerd.config import profiles
from timerd.core.effects import Phase, Signal, SignalKind
from timerd.core.match import Match
from timerd.core.score import Ending, GoalReason, Side


def ithf_started() -> Match:
    match = Match(profiles.load("ithf"))
    match.handle(match.parse("start"), 0.0)
    match.poll(20.0)
    return match


def test_ithf_4_1_a_match_lasts_five_minutes() -> None:
    match = ithf_started()
    assert match.status(20.0).remaining_s == 300.0
    match.poll(319.9)
    assert match.phase is Phase.RUNNING
    final = [e.kind for e in match.poll(320.0) if isinstance(e, Signal)]
    assert final == [SignalKind.FINAL]
    assert match.result is not None
    assert match.result.played_s == pytest.approx(300.0)


def test_ithf_4_2_goals_and_faceoffs_do_not_stop_the_running_clock() -> None:
    match = ithf_started()
    match.handle(match.parse("goal", "home"), 100.0)
    match.handle(match.parse("faceoff"), 110.0)
    status = match.status(120.0)
    assert status.phase is Phase.RUNNING
    assert status.remaining_s == pytest.approx(200.0)


def test_ithf_5_1_play_begins_with_the_start_signal_which_is_the_first_faceoff() -> None:
    match = Match(profiles.load("ithf"))
    match.handle(match.parse("start"), 0.0)
    match.handle(match.parse("goal", "home"), 10.0)  # in the pre-signal's lead: play has not begun
    match.poll(20.0)
    # inside the 3 s after the start: its faceoff guard
    match.handle(match.parse("goal", "away"), 21.0)
    match.handle(match.parse("goal", "away"), 23.5)
    assert [(g.side, g.counted, g.reason) for g in match.sheet.goals] == [
        (Side.HOME, False, GoalReason.BEFORE_START),
        (Side.AWAY, False, GoalReason.FACEOFF_GUARD),
        (Side.AWAY, True, None)]


def test_isbhf_407_1_net_time_runs_from_the_drop_of_the_ball_to_the_whistle() -> None:
    match = Match(profiles.load("isbhf"))
    match.handle(match.parse("start"), 0.0)  # the ball is dropped
    match.handle(match.parse("stop"), 100.0)  # the whistle
    assert match.status(125.0).remaining_s == pytest.approx(800.0)
    match.handle(match.parse("start"), 130.0)
    assert match.status(140.0).remaining_s == pytest.approx(790.0)


def test_isbhf_401_415a_414_overtime_starts_with_a_faceoff_and_its_first_goal_wins() -> None:
    match = Match(profiles.load("isbhf-playoff"))
    match.handle(match.parse("start"), 0.0)
    now = 0.0
    # Three goalless periods, each started by START; then the break before overtime.
    while not (match.phase is Phase.PAUSED and match.status(now).overtime):
        deadline = match.next_deadline()
        assert deadline is not None
        now = deadline
        match.poll(now)
        if match.phase is Phase.PAUSED:
            status = match.status(now + 30.0)
            assert status.clock_running is False  # waits for the referee's faceoff (415a)
            if not status.overtime:
                match.handle(match.parse("start"), now + 30.0)
                now += 30.0
    status = match.status(now)
    assert (status.phase, status.ends_switched) == (Phase.PAUSED, True)  # 401: ends switch
    match.handle(match.parse("start"), now + 5.0)  # the faceoff at centre
    match.handle(match.parse("goal", "away"), now + 65.0)  # sudden death (411, 414)
    assert match.phase is Phase.FINISHED
    assert match.result is not None
    assert (match.result.how, match.result.winner) == (Ending.OVERTIME, Side.AWAY)

