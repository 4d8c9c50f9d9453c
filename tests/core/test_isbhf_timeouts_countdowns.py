"""Timeouts (ISBHF 412), the line change (404b) and the goalie's dressing time (408) on their own,
with literal monotonic times."""

from __future__ import annotations

from tests.conftest import refused
from timerd.core.profile import LineChangeRule, TimeoutRule
from timerd.core.rules.stoppage import GoalieChange, LineChange
from timerd.core.rules.timeouts import Timeouts
from timerd.core.score import Side

HOME, AWAY = Side.HOME, Side.AWAY


def test_isbhf_412_one_timeout_per_team_with_its_clock() -> None:
    t = Timeouts(TimeoutRule())
    taken = t.request(HOME, 100.0, 250.0, 1)
    assert t.ends_at() == 130.0
    assert t.shown(110.0) == {"home": {"left": 0, "remaining_s": 20.0},
                              "away": {"left": 1, "remaining_s": None}}
    done = t.end(130.0)
    assert done is not None
    assert done.lasted_s == 30.0
    assert t.taken == [done]
    assert done.record() == {"side": "home", "period": 1, "match_time_s": 250.0,
                             "lasted_s": 30.0}
    assert taken.started_at == done.started_at
    t.play_started(200.0)
    with refused(r"Home has used its timeouts: 1 per team per match \(ISBHF 412", "timeouts_used"):
        t.request(HOME, 300.0, 400.0, 2)


def test_isbhf_412_not_both_teams_in_the_same_stoppage() -> None:
    t = Timeouts(TimeoutRule())
    t.request(HOME, 100.0, 250.0, 1)
    t.end(130.0)
    with refused("Home took a timeout in this stoppage", "timeout_this_stoppage"):
        t.request(AWAY, 140.0, 250.0, 1)
    assert t.play_started(150.0) is None  # nothing was running any more
    t.request(AWAY, 400.0, 300.0, 1)  # a later stoppage
    assert [x.side for x in t.taken] == [HOME, AWAY]


def test_play_restarting_ends_a_running_timeout_early() -> None:
    t = Timeouts(TimeoutRule(per_team=2, length_s=60.0))
    t.request(AWAY, 10.0, 5.0, 1)
    ended = t.play_started(25.0)
    assert ended is not None
    assert ended.lasted_s == 15.0
    assert t.ends_at() is None
    assert t.left(AWAY) == 1


def test_isbhf_404b_line_change_stages() -> None:
    change = LineChange(LineChangeRule(), 50.0)
    assert change.shown(51.0) == {"stage": "visitors", "number": 1, "stages": 3,
                                  "remaining_s": 4.0}
    ends = []
    while (end := change.next_end()) is not None:
        ends.append((end, *change.finish_stage()))
    assert ends == [(55.0, "visitors", 1), (60.0, "home", 2), (65.0, "faceoff", 3)]
    assert change.over
    assert change.shown(66.0) is None


def test_isbhf_408_goalie_change_countdown_per_team() -> None:
    goalie = GoalieChange(600.0)
    goalie.begin(AWAY, 100.0)
    goalie.begin(HOME, 50.0)
    with refused("already dressing", "goalie_dressing"):
        goalie.begin(HOME, 60.0)
    assert goalie.next_end() == (650.0, HOME)
    assert goalie.shown(150.0) == {"away": 550.0, "home": 500.0}
    goalie.end(HOME)
    assert goalie.next_end() == (700.0, AWAY)
