"""The penalty box on its own, in play time (net seconds): which penalties run, which wait, and
how they end."""

from __future__ import annotations

from tests.conftest import refused
from timerd.core.profile import PenaltyRules
from timerd.core.rules.penalties import PenaltyBox, PenaltyEnd, parse_player
from timerd.core.score import Side

HOME, AWAY = Side.HOME, Side.AWAY


def box() -> PenaltyBox:
    return PenaltyBox(PenaltyRules())  # minor 2:00, major 5:00, misconduct 10:00, two at once


def test_default_durations_and_a_single_minor_runs_out() -> None:
    b = box()
    assert {k: v.duration_s for k, v in b.rules.kinds.items()} == {
        "minor": 120.0, "major": 300.0, "misconduct": 600.0}
    minor = b.give(HOME, "minor", "17", 10.0, 1)
    assert minor.running
    assert minor.remaining_s(70.0) == 60.0
    assert b.next_end() is minor
    assert minor.ends_s() == 130.0
    assert b.expire(minor) == []
    assert (minor.end, minor.ended_s, b.active()) == (PenaltyEnd.EXPIRED, 130.0, [])


def test_at_most_two_short_handed_penalties_of_a_team_run_and_the_third_waits() -> None:
    b = box()
    first = b.give(HOME, "minor", "1", 0.0, 1)
    second = b.give(HOME, "major", "2", 30.0, 1)
    third = b.give(HOME, "minor", "3", 40.0, 1)
    away = b.give(AWAY, "minor", "9", 40.0, 1)  # the other team has its own two places
    misconduct = b.give(HOME, "misconduct", "4", 50.0, 1)  # not short-handed: runs at once
    assert [p.running for p in (first, second, third, away, misconduct)] == [
        True, True, False, True, True]
    assert third.remaining_s(100.0) == 120.0  # a waiting penalty does not run down
    # The first ends at 120: the waiting one starts at that instant, not when it is noticed.
    assert b.next_end() is first
    assert b.expire(first) == [third]
    assert third.started_s == 120.0
    assert third.ends_s() == 240.0
    shown = b.shown(200.0)
    assert [(p["number"], p["running"]) for p in shown] == [(4, True), (3, True), (2, True),
                                                            (5, True)]
    assert shown[1] == {"number": 3, "side": "home", "kind": "minor", "player": "3",
                        "remaining_s": 40.0, "running": True, "short_handed": True}
    # The misconduct's player is replaced: his team plays full strength (no power play).
    assert [p["short_handed"] for p in shown if p["kind"] == "misconduct"] == [False]


def test_waiting_penalties_are_listed_after_the_running_ones() -> None:
    b = box()
    for player in ("1", "2", "3"):
        b.give(HOME, "minor", player, 0.0, 1)
    assert [(p["player"], p["running"]) for p in b.shown(0.0)] == [
        ("1", True), ("2", True), ("3", False)]


def test_a_power_play_goal_ends_the_minor_closest_to_its_end() -> None:
    b = box()
    first = b.give(HOME, "minor", None, 0.0, 1)
    second = b.give(HOME, "minor", None, 30.0, 1)
    waiting = b.give(HOME, "minor", None, 35.0, 1)
    ended = b.power_play_goal(AWAY, 50.0)
    assert ended == (first, [waiting])
    assert (first.end, first.ended_s) == (PenaltyEnd.GOAL, 50.0)
    assert second.running
    assert waiting.started_s == 50.0


def test_no_early_end_unless_the_penalised_team_is_short_handed() -> None:
    b = box()
    b.give(HOME, "minor", None, 0.0, 1)
    b.give(AWAY, "minor", None, 0.0, 1)
    assert b.power_play_goal(AWAY, 10.0) is None  # four on four: both play on
    assert b.power_play_goal(HOME, 10.0) is None
    c = box()
    c.give(HOME, "minor", None, 0.0, 1)
    assert c.power_play_goal(HOME, 10.0) is None  # a short-handed goal ends nothing


def test_a_major_and_a_misconduct_are_served_in_full() -> None:
    b = box()
    b.give(HOME, "major", None, 0.0, 1)
    b.give(HOME, "misconduct", None, 0.0, 1)
    assert b.power_play_goal(AWAY, 10.0) is None
    assert len(b.active()) == 2


def test_cancel_by_number_or_the_last_one_and_a_waiting_one_moves_up() -> None:
    b = box()
    b.give(HOME, "minor", "1", 0.0, 1)
    b.give(HOME, "minor", "2", 0.0, 1)
    b.give(HOME, "minor", "3", 0.0, 1)
    lifted, started = b.cancel(HOME, 1, 20.0)
    assert (lifted.player, lifted.end) == ("1", PenaltyEnd.CANCELLED)
    assert [p.player for p in started] == ["3"]
    lifted, _ = b.cancel(HOME, None, 20.0)
    assert lifted.player == "3"
    with refused("Away has no penalty that is not over", "no_penalty"):
        b.cancel(AWAY, None, 20.0)
    with refused("Home has no penalty 1 that is not over", "no_penalty_number"):
        b.cancel(HOME, 1, 20.0)


def test_unknown_kind_and_bad_player_are_refused_with_the_choices() -> None:
    with refused(r'no penalty kind "double".*minor, major, misconduct', "penalty_kind"):
        box().give(HOME, "double", None, 0.0, 1)
    with refused("shirt number", "player"):
        parse_player("#17")
    assert parse_player("17") == "17"


def test_close_ends_whatever_is_not_served_and_records_it() -> None:
    b = box()
    b.give(AWAY, "minor", "9", 800.0, 1)
    b.close(850.0)
    assert b.penalties[0].record() == {
        "number": 1, "side": "away", "kind": "minor", "player": "9", "period": 1,
        "duration_s": 120.0, "given_s": 800.0, "started_s": 800.0, "ended_s": 850.0,
        "end": "match_over"}
