"""Ball hockey (ISBHF) on the shared core: net time, intermissions, ends."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import refused
from timerd.config import profiles
from timerd.core.effects import Phase, Signal, SignalKind
from timerd.core.match import Match
from timerd.core.rules.shootout import Shootout
from timerd.core.score import Side


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.5, 400.0), max_size=60))
def test_isbhf_410_net_time_of_a_regular_match_is_45_minutes(gaps: list[float]) -> None:
    # Whatever the whistles (stop/start every `gap` s), three periods of 15:00 net time are
    # played, and the intermissions run by themselves between them.
    match = Match(profiles.load("isbhf"))
    now = 0.0
    match.handle(match.parse("start"), now)
    for gap in gaps:
        now += gap
        match.poll(now)
        if match.phase is Phase.FINISHED:
            break
        if match.phase is not Phase.BREAK:
            match.handle(match.parse("toggle"), now)
    while match.phase is not Phase.FINISHED:  # play out whatever is left
        deadline = match.next_deadline()
        now = deadline if deadline is not None else now + 1.0
        match.poll(now)
        if match.phase is Phase.PAUSED:
            match.handle(match.parse("start"), now)
    assert match.result is not None
    assert match.result.played_s == pytest.approx(2700.0)
    assert match.result.how == "regular"


def test_isbhf_410_intermission_runs_by_itself_with_a_warning() -> None:
    match = Match(profiles.load("isbhf"))
    match.handle(match.parse("start"), 0.0)
    effects = match.poll(900.0)
    assert [e.kind for e in effects if isinstance(e, Signal)] == [SignalKind.PERIOD_END]
    status = match.status(900.0)
    assert (status.phase, status.break_kind, status.start_in_s) == (Phase.BREAK, "intermission",
                                                                    600.0)
    with refused("intermission"):
        match.handle(match.parse("start"), 1000.0)
    assert [e.kind for e in match.poll(1500.0) if isinstance(e, Signal)] == [
        SignalKind.BREAK_WARNING, SignalKind.INTERMISSION_END]
    assert match.phase is Phase.PAUSED
    assert match.status(1500.0).ends_switched is True  # ISBHF 401
    match.handle(match.parse("start"), 1520.0)  # the referee's faceoff starts period 2
    assert match.status(1530.0).remaining_s == pytest.approx(890.0)


def test_isbhf_goal_while_the_clock_is_stopped_counts_and_not_in_intermission() -> None:
    match = Match(profiles.load("isbhf"))
    match.handle(match.parse("start"), 0.0)
    match.handle(match.parse("stop"), 100.0)  # the whistle after the goal
    match.handle(match.parse("goal", "home"), 102.0)
    match.handle(match.parse("start"), 130.0)
    match.handle(match.parse("goal", "away"), 131.0)  # no faceoff guard in ball hockey
    match.poll(930.0)
    match.handle(match.parse("goal", "away"), 940.0)
    assert [(g.counted, g.reason) for g in match.sheet.goals] == [
        (True, None), (True, None), (False, "intermission")]


def shoot(shootout: Shootout, *rounds: str) -> None:
    """Rounds as "xo": home scored (x) or missed (o), then away."""
    for pair in rounds:
        for side, mark in zip((Side.HOME, Side.AWAY), pair, strict=True):
            if shootout.winner() is None:
                shootout.record(side, mark == "x")


@pytest.mark.parametrize(("rounds", "winner", "taken"), [
    (("xo", "xo", "xo"), Side.HOME, (3, 3)),  # 3:0 with two left each: decided
    (("xx", "ox", "oo", "ox"), Side.AWAY, (4, 4)),  # 1:3 with one left each
    (("oo", "oo", "oo", "oo", "xo"), Side.HOME, (5, 5)),
    (("xx",) * 5 + ("oo", "xo"), Side.HOME, (7, 7)),  # sudden death (414b)
    (("xx",) * 5 + ("ox",), Side.AWAY, (6, 6)),
])
def test_isbhf_414b_shootout_is_decided_as_soon_as_it_cannot_change(
        rounds: tuple[str, ...], winner: Side, taken: tuple[int, int]) -> None:
    shootout = Shootout()
    shoot(shootout, *rounds)
    assert shootout.winner() is winner
    assert (len(shootout.attempts[Side.HOME]), len(shootout.attempts[Side.AWAY])) == taken


def test_isbhf_414b_shootout_undecided_and_alternation() -> None:
    shootout = Shootout()
    shoot(shootout, "xo", "xo")
    shootout.record(Side.HOME, True)  # 3:0 with away still to shoot 3: not decided yet
    assert shootout.winner() is None
    with refused("Away shoots next", "shoots_next"):
        shootout.record(Side.HOME, True)
    shootout.record(Side.AWAY, False)  # 3:0 with 2 left: away cannot catch up
    assert shootout.winner() is Side.HOME
    with refused("decided", "shootout_decided"):
        shootout.record(Side.AWAY, True)


@pytest.mark.parametrize(("goals", "winner", "points"), [
    ((), None, {"home": 1, "away": 1}),  # a tie stands, a point each
    (("away",), Side.AWAY, {"home": 0, "away": 2}),  # more goals wins 2 points
])
def test_isbhf_413a_points_after_three_periods(goals: tuple[str, ...], winner: Side | None,
                                               points: dict[str, int]) -> None:
    match = Match(profiles.load("isbhf"))
    match.handle(match.parse("start"), 0.0)
    # the whistle, the goals, the faceoff: all at 100 s, so
    match.handle(match.parse("stop"), 100.0)
    for side in goals:  # the periods end where they would without them
        match.handle(match.parse("goal", side), 100.0)
    match.handle(match.parse("start"), 100.0)
    for t in (1500.0, 3000.0):  # after each intermission, the referee's faceoff
        match.poll(t)
        match.handle(match.parse("start"), t)
    match.poll(4000.0)
    assert match.result is not None
    assert (match.result.how, match.result.winner) == ("regular", winner)
    assert match.result.to_dict()["points"] == points
