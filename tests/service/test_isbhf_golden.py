"""Golden traces of ball hockey (ISBHF) on virtual time: see test_ithf_golden for the format."""

from __future__ import annotations

import pytest

from tests.conftest import check_golden, goals, play, signals, trace


def test_isbhf_410_regular_match_with_stoppages() -> None:
    # Whistles stop the clock (407); each period ends at 15:00 net time, each intermission
    # runs 10:00 by itself with a warning a minute before its end (410); a tie stands (413).
    events = check_golden("isbhf_410_regular_match_with_stoppages", trace("isbhf", [
        (0, "start"), (100, "stop"), (101, "goal home"), (130, "start"),  # period 1: +30 s
        (960, "goal away"),  # in the intermission: not counted
        (1600, "start"),  # period 2 after the intermission (930 + 600 = 1530) and a wait
        (2000, "stop"), (2010, "goal away"), (2020, "start"),  # period 2: +20 s
        (3120, "start"),  # period 3 (2520 + 600)
    ], until=4100))
    assert [s for s in signals(events) if s[1] not in ("pause", "resume", "goal",
                                                       "goal_rejected")] == [
        (0, "start"), (930, "period_end"), (1470, "break_warning"), (1530, "intermission_end"),
        (2520, "period_end"), (3060, "break_warning"), (3120, "intermission_end"),
        (4020, "final")]
    assert goals(events) == [(101, "home", True, None), (960, "away", False, "intermission"),
                             (2010, "away", True, None)]
    states = [e["state"] for e in events if e["type"] == "state"]
    assert states[-1] == "finished"


def test_isbhf_411_414b_playoff_overtime_and_shootout() -> None:
    # 1:1 after three periods (3900, with the two intermissions): a 10:00 break, the referee's
    # faceoff starts a 10:00 sudden-death overtime (4500), nobody scores, and the shootout is
    # decided after three attempts each: home 3 of 3, away 0 of 3 with two left.
    recorder = play("isbhf-playoff", [
        (0, "start"), (100, "goal home"), (200, "goal away"),
        (1500, "start"), (2400, "goal home"),  # at the period end: not counted
        (3000, "start"),
        (4000, "goal away"),  # before overtime's faceoff: not counted
        (4500, "start"),
        (5150, "goal home"),  # in the shootout: refused (`shot` enters attempts)
        (5151, "shot home scored"), (5152, "shot away missed"), (5153, "shot home scored"),
        (5154, "shot away missed"), (5155, "shot home scored"), (5156, "shot home scored"),
        (5157, "shot away missed"),
    ], until=5200)
    events = check_golden("isbhf_411_414b_playoff_overtime_and_shootout", recorder.events())
    timed = [s for s in signals(events) if s[1] not in ("pause", "resume", "goal",
                                                        "goal_rejected")]
    assert timed == [
        (0, "start"), (900, "period_end"), (1440, "break_warning"), (1500, "intermission_end"),
        (2400, "period_end"), (2940, "break_warning"), (3000, "intermission_end"),
        (3900, "final"), (4440, "break_warning"), (4500, "intermission_end"),
        (5100, "period_end"), (5157, "final")]
    assert goals(events)[2:] == [(2400, "home", False, "intermission"),
                                 (4000, "away", False, "intermission")]
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert any("goal refused: the shootout decides" in n for n in notices)
    assert any(n.startswith("shot refused: Away shoots next") for n in notices)
    status = recorder.seen[-1][2]
    assert status.result is not None
    assert (status.result["how"], status.result["winner"]) == ("shootout", "home")
    assert status.result["overtime_s"] == 600.0
    assert status.result["shootout"]["goals"] == {"home": 3, "away": 0}
    assert status.result["points"] == {"home": 2, "away": 0}
    assert status.score == {"home": 1, "away": 1}


def notices(events):
    return [(e["t"], e["message"]) for e in events if e["type"] == "notice"]


def only(events, *kinds):
    return [s for s in signals(events) if s[1] in kinds]


def test_isbhf_412_timeouts_refused_when_spent_or_in_the_same_stoppage() -> None:
    events = check_golden("isbhf_412_timeouts_refused_when_spent_or_in_the_same_stoppage",
                          trace("isbhf", [
        (0, "start"), (100, "stop"),
        (101, "timeout home"),  # 30 s from here
        (105, "timeout away"),  # refused: home took one in this stoppage
        (140, "start"),
        (200, "timeout away"),  # refused: the clock runs
        (300, "stop"), (301, "timeout away"),
        (310, "timeout home"),  # refused: spent
        (340, "start"), (400, "stop"),
        (401, "timeout away"),  # refused: spent
    ], until=450))
    assert only(events, "timeout_end") == [(131.0, "timeout_end"), (331.0, "timeout_end")]
    assert notices(events) == [
        (101.0, "timeout Home: 30 s (ISBHF 412)"),
        (105.0, "timeout refused: Home took a timeout in this stoppage, and both teams may not "
                "take one in the same stoppage (ISBHF 412)"),
        (200.0, "timeout refused: the clock is running; a timeout is asked for in a stoppage "
                "(ISBHF 412)"),
        (301.0, "timeout Away: 30 s (ISBHF 412)"),
        (310.0, "timeout refused: Home has used its timeouts: 1 per team per match "
                "(ISBHF 412)"),
        (401.0, "timeout refused: Away has used its timeouts: 1 per team per match "
                "(ISBHF 412)")]


def test_isbhf_minor_penalties_two_overlapping_and_a_power_play_goal_ends_the_first() -> None:
    # Home #17 from 1:00 of play (t=70), home #4 from 1:30 (t=110): two minors overlap. Away
    # scores in the stoppage at 2:10 of play: home is two short, so the minor closest to its
    # end (#17) ends at once; #4 serves its 2:00 to 3:30 of play (t=240).
    events = check_golden("isbhf_minor_penalties_overlap_and_a_power_play_goal", trace("isbhf", [
        (0, "start"), (60, "stop"), (61, "penalty home minor 17"), (70, "start"),
        (100, "stop"), (101, "penalty home minor 4"), (110, "start"),
        (150, "stop"), (151, "goal away 9 11"), (160, "start"),
    ], until=300))
    assert only(events, "goal", "penalty_end") == [
        (151.0, "goal"), (151.0, "penalty_end"), (240.0, "penalty_end")]
    assert [n for n in notices(events) if "penalty" in n[1]] == [
        (61.0, "penalty 1: Home #17 minor 2:00, running"),
        (101.0, "penalty 2: Home #4 minor 2:00, running"),
        (151.0, "power-play goal: penalty 1 (Home #17 minor) is over"),
        (240.0, "penalty 2 over: Home #4 minor")]
    goal = next(e for e in events if e["type"] == "goal")
    assert (goal["scorer"], goal["assists"], goal["counted"]) == ("9", ["11"], True)


def test_isbhf_minor_penalty_does_not_run_while_the_clock_is_stopped() -> None:
    # Given at 0:30 of play in a long stoppage; it runs from the faceoff at t=300, stands
    # still through the stoppage from t=350 to 400, and ends after 2:00 of play at t=470.
    recorder = play("isbhf", [
        (0, "start"), (30, "stop"), (31, "penalty away minor 8"), (300, "start"),
        (350, "stop"), (400, "start"),
    ], until=500)
    events = check_golden("isbhf_minor_penalty_does_not_run_while_the_clock_is_stopped",
                          recorder.events())
    assert only(events, "penalty_end") == [(470.0, "penalty_end")]
    shown = {round(t, 3): s.penalties for t, _, s in recorder.seen if t in (31.0, 350.0)}
    assert shown[31.0][0]["remaining_s"] == 120.0
    assert shown[350.0][0]["remaining_s"] == 70.0
    assert 470 - 300 - (400 - 350) == 120


def test_isbhf_407_2_early_intermission() -> None:
    # A delay at 11:40 of period 1 (3:20 left): the intermission starts at once (t=710), the
    # 3:20 are played after it on the same ends, and period 2 follows without an intermission.
    recorder = play("isbhf", [
        (0, "start"), (700, "stop"), (710, "early-intermission"),
        (1320, "start"),  # the rest of period 1 after the 10:00 intermission (ends 1310)
        (1600, "start"),  # period 2 at once after the period end at 1520
    ], until=1700)
    events = check_golden("isbhf_407_2_early_intermission", recorder.events())
    timed = [s for s in signals(events) if s[1] not in ("pause", "resume")]
    assert timed == [(0.0, "start"), (1250.0, "break_warning"), (1310.0, "intermission_end"),
                     (1520.0, "period_end")]
    states = [(e["t"], e["state"], e["period"]) for e in events if e["type"] == "state"]
    assert states[3:] == [(710.0, "break", 1), (1310.0, "paused", 1), (1320.0, "running", 1),
                          (1520.0, "paused", 2), (1600.0, "running", 2)]
    ends = {round(t, 3): s.ends_switched for t, _, s in recorder.seen}
    assert (ends[1320.0], ends[1600.0]) == (False, True)
    t, _, status = recorder.seen[-1]  # period 2 runs from 1600 on its full 15:00
    assert status.remaining_s == pytest.approx(900.0 - (t - 1600.0))
