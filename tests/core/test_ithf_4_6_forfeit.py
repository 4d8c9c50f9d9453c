"""ITHF 4.6: a player not at the table and ready 30 s after the start loses by the forfeit score.

Issue 15: timerd used to allow a forfeit only in the first 30 s and refuse it after, the
opposite of the rule. The start signal is at t=20 in every test here (pre-signal lead 20 s),
so 30 s of match time after it is t=50.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.conftest import refused
from timerd.config import profiles
from timerd.core.effects import Phase, Signal, SignalKind
from timerd.core.match import Match
from timerd.core.rules.rulings import Rulings
from timerd.core.score import Ending, Side


def has_played(match: Match, side: Side) -> tuple[str, str] | None:
    """The rulings module's judgement of ITHF 4.6's "has played"."""
    return next(r for r in match.rules if isinstance(r, Rulings)).has_played(side)


def started(profile: str = "ithf") -> Match:
    match = Match(profiles.load(profile))
    match.handle(match.parse("start"), 0.0)
    match.poll(20.0)
    return match


def test_a_forfeit_before_30_s_is_refused_with_the_time_the_player_still_has() -> None:
    """Fails on main (accepted there)."""
    match = started()
    with refused(r"18\.0 s left \(a forfeit is possible from "
                                             r"4:30 on the clock\)"):
        match.handle(match.parse("forfeit", "away"), 32.0)
    with refused(r"0\.5 s left"):
        match.handle(match.parse("forfeit", "away"), 49.5)
    assert match.phase is Phase.RUNNING
    assert match.result is None


def test_a_forfeit_from_30_s_on_ends_the_match_by_the_forfeit_score() -> None:
    """Fails on main (refused after 30 s there)."""
    for at in (50.0, 50.15, 200.0):  # exactly 30 s, just after, 3 minutes into the match
        match = started()
        effects = match.handle(match.parse("forfeit", "away"), at)
        assert [e.kind for e in effects if isinstance(e, Signal)][-1] is SignalKind.FINAL
        assert match.phase is Phase.FINISHED
        assert match.result is not None
        assert (match.result.how, match.result.side, match.result.winner) == (
            Ending.FORFEIT, Side.AWAY, Side.HOME)
        assert match.status(at).score == {"home": 5, "away": 0}


def test_the_forfeit_score_comes_from_the_profile() -> None:
    match = Match(replace(profiles.load("ithf"), forfeit_score=(0, 3)))
    match.handle(match.parse("start"), 0.0)
    match.handle(match.parse("forfeit", "home"), 60.0)
    assert match.status(60.0).score == {"home": 0, "away": 3}


def test_the_30_s_are_match_time_so_an_interruption_adds_to_them() -> None:
    match = started()
    match.handle(match.parse("pause"), 30.0)  # 10 s played
    match.handle(match.parse("resume"), 90.0)
    with refused(r"5\.0 s left"):
        match.handle(match.parse("forfeit", "away"), 105.0)  # 25 s played
    match.handle(match.parse("pause"), 110.0)
    match.handle(match.parse("forfeit", "away"), 200.0)  # 30 s played, paused: accepted
    assert match.result is not None
    assert match.result.played_s == pytest.approx(30.0)
    assert match.interruptions[-1].length_s == pytest.approx(90.0)


def test_a_side_with_a_counted_goal_has_played_and_walks_out_instead() -> None:
    match = started()
    match.handle(match.parse("goal", "home"), 40.0)  # 20 s played: counted
    with refused(r"Home has played \(a counted goal at 0:20\).*"
                                             r"`walkout home`, ITHF 4\.7"):
        match.handle(match.parse("forfeit", "home"), 60.0)
    match.handle(match.parse("forfeit", "away"), 60.0)  # the other side has not played
    assert match.status(60.0).score == {"home": 5, "away": 0}


def test_a_goal_that_did_not_count_or_was_undone_does_not_show_play() -> None:
    match = started()
    # inside the 3-s guard after the start (ITHF 5.6)
    match.handle(match.parse("goal", "home"), 21.0)
    match.handle(match.parse("goal", "home"), 40.0)  # counted, then removed as a mistaken press
    match.handle(match.parse("undo"), 41.0)
    assert has_played(match, Side.HOME) is None
    match.handle(match.parse("forfeit", "home"), 55.0)
    assert match.status(55.0).score == {"home": 0, "away": 5}


def test_a_faceoff_after_the_start_shows_that_both_sides_are_at_the_table() -> None:
    match = started()
    match.handle(match.parse("faceoff"), 35.0)  # a puck off the table: a faceoff needs both players
    for side in ("home", "away"):
        with refused(r"has played \(a faceoff at 0:15\)", "forfeit_played"):
            match.handle(match.parse("forfeit", side), 60.0)
    resumed = started()
    resumed.handle(resumed.parse("pause"), 30.0)
    resumed.handle(resumed.parse("resume", "faceoff"), 40.0)
    assert has_played(resumed, Side.AWAY) == ("faceoff", 10.0)


def test_a_passive_play_count_shows_that_its_side_holds_the_puck() -> None:
    match = started()
    match.handle(match.parse("passive", "away"), 35.0)  # ITHF 8.1: away holds the puck
    with refused(r"Away has played \(passive play at 0:15\)"):
        match.handle(match.parse("forfeit", "away"), 60.0)
    match.handle(match.parse("forfeit", "home"), 60.0)
    assert match.result is not None


@pytest.mark.parametrize(("profile", "setup", "at", "message"), [
    ("ithf", lambda m: m.handle(m.parse("start"), 0.0), 5.0,
     "the start signal has not sounded; ITHF 4.6"),
    ("ithf", lambda m: None, 5.0, "ITHF 4.6 applies from 30 s after the start signal"),
    ("ithf-playoff", lambda m: (m.handle(m.parse("start"), 0.0), m.poll(400.0)), 401.0,
     "ITHF 4.6 applies from 30 s after the start signal; it is about the start"),
])
def test_a_forfeit_outside_the_first_period_of_play_is_refused(profile, setup, at,
                                                               message) -> None:
    match = Match(profiles.load(profile))
    setup(match)
    with refused(message):
        match.handle(match.parse("forfeit", "home"), at)


def test_a_reset_forgets_who_played() -> None:
    match = started()
    match.handle(match.parse("faceoff"), 35.0)
    match.handle(match.parse("pause"), 36.0)
    match.handle(match.parse("reset"), 37.0)
    match.handle(match.parse("start"), 40.0)
    match.handle(match.parse("forfeit", "home"), 90.0)
    assert match.result is not None
