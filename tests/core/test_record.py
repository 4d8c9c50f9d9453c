"""What a match keeps for the results (timerd.core.record): the names and the periods."""

from __future__ import annotations

import pytest

from timerd.core.record import NAME_MAX, PeriodPlayed, Teams, TeamsWithRound, names, periods_record
from timerd.core.refused import CommandRefused
from timerd.core.score import Goal, GoalReason, Side


def test_names_are_trimmed_and_said_with_the_round() -> None:
    teams, round_id, notice = names(" HC Kometa ", "", " 3 ")
    assert (teams, round_id) == ({Side.HOME: "HC Kometa", Side.AWAY: ""}, "3")
    assert notice == TeamsWithRound("HC Kometa", "away", "3")
    assert (notice.code, notice.params) == (
        "notice.teams_round", {"home": "HC Kometa", "away": "away", "round": "3"})
    assert names("A", "B")[1:] == (None, Teams("A", "B", ""))


@pytest.mark.parametrize(("home", "round_name", "code"), [
    ("x" * (NAME_MAX + 1), "", "name_too_long"), ("A", "two\nlines", "round_too_long")])
def test_a_name_no_scoreboard_can_show_is_refused(home: str, round_name: str,
                                                  code: str) -> None:
    with pytest.raises(CommandRefused) as info:
        names(home, "B", round_name)
    assert info.value.code == code


def test_a_period_counts_its_own_goals_in_play_and_keeps_what_the_modules_kept() -> None:
    goals = [Goal(Side.HOME, 10.0, True, None, 1), Goal(Side.AWAY, 20.0, False,
                                                        GoalReason.INTERRUPTION, 1),
             Goal(Side.AWAY, 950.0, True, None, 2),
             Goal(Side.HOME, 960.0, True, GoalReason.WALKOUT_AWARD, 2)]
    periods = [PeriodPlayed(1, False, 900.0, {"early_intermission_left_s": 200.0}),
               PeriodPlayed(2, False, 900.0004)]
    assert periods_record(periods, goals, {"early_intermission_left_s": None}) == [
        {"period": 1, "overtime": False, "played_s": 900.0, "goals": {"home": 1, "away": 0},
         "early_intermission_left_s": 200.0},
        {"period": 2, "overtime": False, "played_s": 900.0, "goals": {"home": 0, "away": 1},
         "early_intermission_left_s": None}]
