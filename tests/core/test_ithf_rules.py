"""The ITHF scoring rules in the pure core, with literal times (start signal at t=20)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from tests.conftest import refused
from timerd.config import profiles
from timerd.config.schema import SchemaError, build
from timerd.core.effects import FaceoffGuardChanged, Signal, SignalKind
from timerd.core.match import Match
from timerd.core.profile import Overtime, Profile
from timerd.core.score import Goal


def started(profile: str = "ithf") -> Match:
    match = Match(profiles.load(profile))
    match.handle(match.parse("start"), 0.0)
    match.poll(20.0)
    return match


def kinds(effects: list[object]) -> list[SignalKind]:
    return [e.kind for e in effects if isinstance(e, Signal)]


def test_status_carries_the_scoring_keys() -> None:
    match = started()
    match.handle(match.parse("goal", "home"), 25.0)
    status = match.status(26.0).to_dict()
    assert status["score"] == {"home": 1, "away": 0}
    assert status["goals"] == [{"number": 1, "side": "home", "match_time_s": 5.0,
                                "counted": True, "reason": None, "period": 1,
                                "overtime": False, "scorer": None, "assists": []}]
    assert status["faceoff_pending"] is True
    assert status["faceoff_guard_s"] is None
    assert status["overtime"] is False
    assert status["overtime_s"] is None
    assert status["passive"] == {"home": None, "away": None}
    assert status["result"] is None


def test_the_guard_shows_its_time_left_and_stands_still_in_a_pause() -> None:
    # ITHF 5.6 with 10.2: a pause freezes the guard; resuming without a faceoff continues it
    match = started()
    assert match.status(21.0).faceoff_guard_s == pytest.approx(2.0)
    match.handle(match.parse("pause"), 21.0)
    assert match.status(30.0).faceoff_guard_s == pytest.approx(2.0)
    match.handle(match.parse("resume"), 40.0)
    assert match.status(41.5).faceoff_guard_s == pytest.approx(0.5)
    assert [e for e in match.poll(42.0) if isinstance(e, FaceoffGuardChanged)] == [
        FaceoffGuardChanged(active=False)]


def test_a_faceoff_clears_pending_and_the_passive_count() -> None:
    match = started()
    match.handle(match.parse("goal", "home"), 30.0)
    match.handle(match.parse("passive", "away"), 31.0)
    assert match.status(32.0).passive["away"] == pytest.approx(4.0)
    match.handle(match.parse("faceoff"), 32.0)
    status = match.status(32.0)
    assert (status.faceoff_pending, status.passive["away"]) == (False, None)
    assert status.faceoff_guard_s == pytest.approx(3.0)


@pytest.mark.parametrize(("command", "args", "message"), [
    ("goal", ("home",), "no match is running"),
    ("faceoff", (), "start signal is the first faceoff"),
    ("forfeit", ("home",), "ITHF 4.6"),
    ("walkout", ("away",), "walkout refused"),
    ("replay", (), "replay refused"),
    ("goal", ("left",), "home or away"),
    ("resume", ("later",), "nothing or `faceoff`"),
])
def test_refusals_in_idle_say_why(command: str, args: tuple[str, ...], message: str) -> None:
    match = Match(profiles.load("ithf"))
    with refused(message):
        match.handle(match.parse(command, *args), 0.0)


def test_argument_counts_are_checked_with_optional_ones_shown() -> None:
    match = started()
    with refused(r"resume refused: it takes \[faceoff\], got 2"):
        match.handle(match.parse("resume", "faceoff", "now"), 30.0)
    with refused(re.escape(
            "goal refused: it takes <home|away> [scorer] [assist] [assist], got 0")):
        match.handle(match.parse("goal"), 30.0)


def test_undo_needs_an_entry_and_leaves_a_finished_result_alone() -> None:
    match = started()
    with refused("no goal entry"):
        match.handle(match.parse("undo"), 30.0)
    match.handle(match.parse("goal", "home"), 30.0)
    match.handle(match.parse("walkout", "away"), 40.0)
    with refused("finished"):
        match.handle(match.parse("undo"), 41.0)


@pytest.mark.parametrize("at", [320.0, 321.5, 345.0])  # 345: after the break's warning
def test_a_walkout_in_the_break_before_overtime_does_not_sound_the_final_twice(at: float) -> None:
    """ITHF 4.7 and 4.8: the final signal sounded at 0:00 and the break began; a walk-out in
    the break ends the match with its result but no second final signal. (Found by the
    refused-command property test: two FINAL signals at 320 s.)"""
    match = started("ithf-playoff")
    assert kinds(match.poll(320.0))[-1] is SignalKind.FINAL
    effects = match.handle(match.parse("walkout", "home"), at)
    assert SignalKind.FINAL not in kinds(effects)
    assert match.result is not None
    assert match.result.how.value == "walkout"


def test_a_walkout_in_play_sounds_the_final_signal() -> None:
    match = started()
    assert kinds(match.handle(match.parse("walkout", "home"), 50.0)) == [SignalKind.FINAL]


def test_passive_play_is_refused_when_the_profile_does_not_time_it() -> None:
    match = Match(replace(profiles.load("ithf"), rules=("rulings",)))
    match.handle(match.parse("start"), 0.0)
    match.poll(20.0)
    with refused("does not time passive play"):
        match.handle(match.parse("passive", "home"), 30.0)


def test_timed_overtime_ends_with_the_final_signal() -> None:
    # A profile with a 60-s overtime (as ball hockey will have): a tie stands at its end.
    profile = replace(profiles.load("ithf-playoff"),
                      overtime=Overtime(length_s=60.0, break_s=0.0, break_warning_s=None))
    match = Match(profile)
    match.handle(match.parse("start"), 0.0)
    effects = match.poll(320.0)
    assert kinds(effects)[-2:] == [SignalKind.FINAL, SignalKind.OVERTIME_START]
    assert match.status(330.0).remaining_s == pytest.approx(50.0)
    assert kinds(match.poll(380.0)) == [SignalKind.FINAL]
    assert match.result is not None
    assert (match.result.how, match.result.winner, match.result.overtime_s) == (
        "overtime", None, 60.0)


def test_count_up_overtime_status() -> None:
    match = Match(profiles.load("ithf-playoff"))
    match.handle(match.parse("start"), 0.0)
    match.poll(357.0)  # overtime started at 350, its guard ran out at 353
    status = match.status(357.25)
    assert (status.overtime, status.count_up, status.remaining_s) == (True, True, 0.0)
    assert status.overtime_s == pytest.approx(7.25)
    assert status.period == 2
    assert match.next_deadline() is None  # nothing timed: only a goal ends sudden death


def test_goals_count_while_stopped_is_profile_data() -> None:
    # A stop clock (ball hockey) stops at the goal's whistle: the goal still counts.
    match = Match(replace(profiles.load("ithf"), goals_count_while_stopped=True,
                          faceoff_guard_s=None))
    match.handle(match.parse("start"), 0.0)
    match.poll(20.0)
    match.handle(match.parse("pause"), 30.0)
    effects = match.handle(match.parse("goal", "away"), 30.5)
    assert [e.counted for e in effects if isinstance(e, Goal)] == [True]


def test_playoff_profile_loads_with_sudden_death_overtime() -> None:
    profile = profiles.load("ithf-playoff")
    assert profile.overtime == Overtime(length_s=None, break_s=30.0, break_warning_s=10.0)
    assert profile.forfeit_score == (0, 5)


@pytest.mark.parametrize(("data", "keys"), [
    ({"faceoff_guard_s": 0, "forfeit_score": [5], "walkout_award": -1, "passive_play_s": -5},
     ("faceoff_guard_s", "forfeit_score", "walkout_award", "passive_play_s")),
    ({"overtime": {"break_s": 10, "break_warning_s": 20, "length_s": 0}},
     ("overtime.break_warning_s", "overtime.length_s")),
])
def test_profile_problems_name_the_scoring_keys(data: dict[str, object],
                                                keys: tuple[str, ...]) -> None:
    with pytest.raises(SchemaError) as caught:
        build(Profile, {"name": "x", **data})
    for key in keys:
        assert key in str(caught.value)
