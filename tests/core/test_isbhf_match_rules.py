"""Ball hockey's rules as the match composes them, with literal times: penalties in game time,
timeouts, the goalie countdown, scorers (the intermission: `test_intermission.py`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import refused, said
from timerd.config import profiles
from timerd.core.effects import Phase, Signal, SignalKind
from timerd.core.match import Match
from timerd.core.rules.timeouts import TeamTimeouts


def kinds(effects: list) -> list[SignalKind]:
    return [e.kind for e in effects if isinstance(e, Signal)]


def started(profile: str = "isbhf") -> Match:
    match = Match(profiles.load(profile))
    match.handle(match.parse("start"), 0.0)
    return match


def test_penalty_expiry_is_a_deadline_of_the_game_clock() -> None:
    match = started()
    match.handle(match.parse("stop"), 100.0)
    match.handle(match.parse("penalty", "away", "minor", "8"), 101.0)
    assert match.next_deadline() is None  # the clock is stopped: nothing runs down
    match.handle(match.parse("start"), 160.0)
    assert match.next_deadline() == 280.0  # 2:00 of game time from the restart
    assert match.status(200.0).penalties[0]["remaining_s"] == 80.0
    effects = match.poll(280.0)
    assert kinds(effects) == [SignalKind.PENALTY_END]
    assert match.status(281.0).penalties == []


def test_a_penalty_ending_with_the_period_ends_in_that_period() -> None:
    match = started()
    match.handle(match.parse("stop"), 780.0)
    match.handle(match.parse("penalty", "home", "minor"), 780.0)
    # it runs out at 15:00 of the period, as the period ends
    match.handle(match.parse("start"), 790.0)
    effects = match.poll(910.0)
    assert kinds(effects) == [SignalKind.PENALTY_END, SignalKind.PERIOD_END]
    assert match.result is None


def test_a_penalty_given_in_the_intermission_starts_with_the_next_period() -> None:
    match = started()
    match.poll(900.0)
    match.handle(match.parse("penalty", "home", "major", "5"), 950.0)
    match.poll(1500.0)
    match.handle(match.parse("start"), 1510.0)
    assert match.status(1570.0).penalties[0]["remaining_s"] == 240.0
    assert kinds(match.poll(1810.0)) == [SignalKind.PENALTY_END]


def test_penalty_commands_are_refused_with_reasons() -> None:
    with refused("profile ithf has no penalties"):
        (m := started("ithf")).handle(m.parse("penalty", "home", "minor"), 30.0)
    with refused("no match is running"):
        (m := Match(profiles.load("isbhf"))).handle(m.parse("penalty", "home", "minor"), 0.0)
    match = started()
    with refused('no penalty kind "minr"'):
        match.handle(match.parse("penalty", "home", "minr"), 10.0)
    with refused("takes a penalty number"):
        match.handle(match.parse("penalty-cancel", "home", "x"), 10.0)
    usage = "penalty refused: it takes <home|away> <minor|major|misconduct> [player], got 0"
    with refused(usage.replace("|", r"\|").replace("[", r"\[")):
        match.handle(match.parse("penalty"), 10.0)


def test_isbhf_412_timeout_refusals_and_the_timeout_clock() -> None:
    with refused("profile ithf has no timeouts"):
        (m := started("ithf")).handle(m.parse("timeout", "home"), 30.0)
    match = started()
    with refused("the clock is running; a timeout is asked for in "
                                             r"a stoppage \(ISBHF 412\)"):
        match.handle(match.parse("timeout", "home"), 50.0)
    match.handle(match.parse("stop"), 60.0)
    match.handle(match.parse("timeout", "home"), 61.0)
    assert match.next_deadline() == 91.0
    assert kinds(match.poll(91.0)) == [SignalKind.TIMEOUT_END]
    assert match.status(92.0).timeouts == {"home": {"left": 0, "remaining_s": None},
                                           "away": {"left": 1, "remaining_s": None}}
    match.poll(900.0 + 10)  # nothing: the clock is stopped
    match.handle(match.parse("start"), 100.0)
    match.poll(940.0)  # the period ends at 15:00 net: an intermission
    assert match.phase is Phase.BREAK
    with refused("timeout refused: a timed break runs"):
        match.handle(match.parse("timeout", "away"), 950.0)


def test_a_faceoff_during_a_timeout_ends_it() -> None:
    match = started()
    match.handle(match.parse("stop"), 60.0)
    match.handle(match.parse("timeout", "away"), 61.0)
    effects = match.handle(match.parse("start"), 75.0)
    assert "timeout Away ended by the faceoff after 14 s" in said(effects)
    assert match.next_deadline() == 900.0 + 15.0  # only the period end is left
    timeouts = next(r for r in match.rules if isinstance(r, TeamTimeouts)).timeouts
    assert timeouts.taken[0].lasted_s == 14.0


def test_isbhf_408_goalie_change_countdown() -> None:
    match = started()
    with refused("the clock is running; stop it first"):
        match.handle(match.parse("goalie-change", "home"), 100.0)
    match.handle(match.parse("stop"), 100.0)
    match.handle(match.parse("goalie-change", "home"), 101.0)
    assert match.status(161.0).goalie_change == {"home": 540.0}
    effects = match.poll(701.0)
    assert kinds(effects) == [SignalKind.GOALIE_CHANGE_END]
    assert match.status(702.0).goalie_change == {}
    match.handle(match.parse("goalie-change", "away"), 710.0)
    # dressed early: the faceoff ends the countdown
    effects = match.handle(match.parse("start"), 800.0)
    assert "goalie change Away ended by the faceoff" in said(effects)
    assert match.status(801.0).goalie_change == {}


def test_isbhf_420_422_goal_with_scorer_and_assists() -> None:
    match = started()
    match.handle(match.parse("stop"), 100.0)
    match.handle(match.parse("goal", "home", "17", "4", "9"), 101.0)
    match.handle(match.parse("goal", "away", "8"), 102.0)
    assert [(g["scorer"], g["assists"]) for g in match.status(103.0).goals] == [
        ("17", ["4", "9"]), ("8", [])]
    with refused("different players"):
        match.handle(match.parse("goal", "home", "17", "17"), 104.0)
    with refused("shirt number"):
        match.handle(match.parse("goal", "home", "seventeen"), 104.0)
    with refused("got 5"):
        match.handle(match.parse("goal", "home", "1", "2", "3", "4"), 104.0)


def test_the_result_holds_periods_penalties_and_timeouts() -> None:
    match = started()
    match.handle(match.parse("stop"), 100.0)
    match.handle(match.parse("goal", "home", "17"), 100.5)
    match.handle(match.parse("penalty", "away", "minor", "3"), 101.0)
    match.handle(match.parse("timeout", "away"), 102.0)
    match.handle(match.parse("start"), 140.0)
    for t in (1640.0, 3140.0):  # period ends at 940, 2440 (+600 intermissions)
        match.poll(t)
        match.handle(match.parse("start"), t)
    match.poll(4100.0)
    assert match.status(4100.0).phase is Phase.FINISHED
    result = match.status(4100.0).result
    assert result is not None
    assert [(p["period"], p["played_s"], p["goals"]) for p in result["periods"]] == [
        (1, 900.0, {"home": 1, "away": 0}), (2, 900.0, {"home": 0, "away": 0}),
        (3, 900.0, {"home": 0, "away": 0})]
    assert [(p["kind"], p["end"], p["ended_s"]) for p in result["penalties"]] == [
        ("minor", "expired", 220.0)]
    assert result["timeouts"] == [{"side": "away", "period": 1, "match_time_s": 100.0,
                                   "lasted_s": 30.0}]


def test_reset_forgets_penalties_and_timeouts() -> None:
    match = started()
    match.handle(match.parse("stop"), 10.0)
    match.handle(match.parse("penalty", "home", "minor"), 11.0)
    match.handle(match.parse("timeout", "home"), 12.0)
    match.handle(match.parse("reset"), 13.0)
    status = match.status(14.0)
    assert status.penalties == []
    assert status.timeouts == {"home": {"left": 1, "remaining_s": None},
                               "away": {"left": 1, "remaining_s": None}}
    assert match.next_deadline() is None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(0.5, 90.0), min_size=1, max_size=40), st.sampled_from(
    ["minor", "major", "misconduct"]))
def test_a_penalty_is_served_in_exactly_its_game_time_whatever_the_stoppages(
        gaps: list[float], kind: str) -> None:
    # Whistles every `gap` s from the start; the penalty is given in the first stoppage. It
    # ends after exactly its duration of running clock, however the stoppages fall, unless
    # the period ends first.
    match = started()
    now = gaps[0]
    match.handle(match.parse("stop"), now)
    match.handle(match.parse("penalty", "home", kind), now)
    given_play = match.play_s(now)
    ran = 0.0  # running clock since it was given, as the test counts it
    ended_at_run = None
    for gap in [*gaps[1:], 1000.0]:
        running = match.phase is Phase.RUNNING
        if not running:
            match.handle(match.parse("start"), now)
        for effect in match.poll(now + gap):
            if isinstance(effect, Signal) and effect.kind is SignalKind.PENALTY_END:
                ended_at_run = ran + (effect.due - now)
        if match.phase is Phase.RUNNING:
            ran += gap
            now += gap
            match.handle(match.parse("stop"), now)
        else:
            break  # the period ended
        now += 1.0  # a second of stoppage
        if ended_at_run is not None:
            break
    duration = {"minor": 120.0, "major": 300.0, "misconduct": 600.0}[kind]
    if given_play + duration <= 900.0:
        assert ended_at_run == pytest.approx(duration)
