"""Corrections as a referee makes them (issue 28): `undo` around the goal that decides a match
(ITHF 6.1 with 4.8; ISBHF 420 !1 with 411), ISBHF 420 !1 (no undo after the faceoff that
follows a goal), a power-play goal taken back (its minor runs again) and ISBHF 420 !3 (the
scorer and assists put right). Each test fails on the code before issue 28.

ITHF: the start signal at t=20 (the pre-signal leads it by 20 s), the final at t=320.
"""

from __future__ import annotations

import pytest

from timerd.config import profiles
from timerd.core.effects import (
    Phase,
    Reopened,
    ResultAbandoned,
    ResultCorrected,
    Signal,
    SignalKind,
)
from timerd.core.match import Match
from timerd.core.refused import CommandRefused
from timerd.core.rules.corrections import MAX_REVISIONS, GoalCorrected
from timerd.core.score import Ending, Side
from timerd.i18n import Messages


def ithf_with_goals(profile: str, *goals: tuple[float, str]) -> Match:
    """`profile`'s match from its start signal at t=20, with `goals` (t, side) entered."""
    match = Match(profiles.load(profile))
    match.handle(match.parse("start"), 0.0)
    match.poll(20.0)
    for at, side in goals:
        match.handle(match.parse("goal", side), at)
    return match


def ithf_playoff_in_overtime() -> Match:
    """1:1 at the final signal (t=320), the 30-s break, overtime from t=350."""
    match = ithf_with_goals("ithf-playoff", (100.0, "home"), (200.0, "away"))
    match.poll(350.0)
    assert match.overtime
    assert match.phase is Phase.RUNNING
    return match


def test_ithf_6_1_4_8_undo_of_the_golden_goal_reopens_overtime_paused() -> None:
    match = ithf_playoff_in_overtime()
    match.handle(match.parse("goal", "home"), 370.0)  # the golden goal ends the match...
    assert match.phase is Phase.FINISHED
    effects = match.handle(match.parse("undo"), 400.0)  # ...but the puck bounced out (ITHF 6.1)
    # Revision 1 says the match is in play again, no winner (issue 42 item 2)
    assert [e for e in effects if isinstance(e, Reopened)] == [Reopened(1, 3, in_play=True)]
    status = match.status(400.0)
    assert status.phase is Phase.PAUSED
    assert status.result is None
    assert status.score == {"home": 1, "away": 1}
    assert status.overtime_s == pytest.approx(20.0)  # as it stood at the entry
    assert status.interruption_s == pytest.approx(30.0)  # paused since the entry
    # the restart is a faceoff (ITHF 10.4): its guard runs
    match.handle(match.parse("resume"), 410.0)
    assert match.status(411.0).faceoff_guard_s == pytest.approx(2.0)
    effects = match.handle(match.parse("goal", "away"), 420.0)
    assert match.result is not None
    assert match.result.winner is Side.AWAY
    assert match.result.overtime_s == pytest.approx(30.0)
    assert ResultCorrected(2) in effects  # supersedes revision 1, "reopened"
    assert match.status(420.0).result["revision"] == 2  # type: ignore[index]


def test_reset_of_a_reopened_match_gives_a_revision_that_says_it_was_abandoned() -> None:
    """Issue 42 item 2 (old code: RESET gave nothing, revision 0 "home wins" stood)."""
    match = ithf_playoff_in_overtime()
    match.handle(match.parse("goal", "home"), 370.0)
    match.handle(match.parse("undo"), 400.0)  # reopened: revision 1, in play
    effects = match.handle(match.parse("reset"), 410.0)
    abandoned = [e for e in effects if isinstance(e, ResultAbandoned)]
    assert abandoned == [ResultAbandoned(2, None, {"home": 1, "away": 1})]
    assert match.phase is Phase.IDLE
    # A match that was never reopened, or ended again, is reset as ever: nothing abandoned.
    for script in ([], [("resume", 420.0), ("goal", 430.0, "away")]):
        again = ithf_playoff_in_overtime()
        again.handle(again.parse("goal", "home"), 370.0)
        if script:
            again.handle(again.parse("undo"), 400.0)
            for name, at, *args in script:
                again.handle(again.parse(name, *args), at)
        assert not any(isinstance(e, ResultAbandoned)
                       for e in again.handle(again.parse("reset"), 500.0))


def test_isbhf_420_1_411_undo_of_the_overtime_goal_waits_for_the_faceoff() -> None:
    match = Match(profiles.load("isbhf-playoff"))
    match.handle(match.parse("start"), 0.0)  # the first faceoff: period 1 runs
    for period_start in (0.0, 1500.0, 3000.0):  # 900 s of play, 600 s of intermission
        if period_start:
            match.poll(period_start)
            match.handle(match.parse("start"), period_start)
        match.poll(period_start + 900.0)
    assert match.phase is Phase.BREAK  # 0:0, the break before overtime (ISBHF 411)
    match.poll(4500.0)
    match.handle(match.parse("start"), 4500.0)  # the overtime's faceoff
    match.handle(match.parse("stop"), 4560.0)
    match.handle(match.parse("goal", "away"), 4561.0)
    assert match.phase is Phase.FINISHED
    match.handle(match.parse("undo"), 4570.0)
    status = match.status(4580.0)
    assert status.phase is Phase.PAUSED
    assert status.overtime
    assert status.score["away"] == 0
    assert status.overtime_s == pytest.approx(60.0)
    assert not status.clock_running
    match.handle(match.parse("start"), 4600.0)  # START is the faceoff: the clock runs on
    assert match.status(4610.0).overtime_s == pytest.approx(70.0)


def test_ithf_6_1_undo_of_the_last_regular_entry_after_the_final_corrects_the_result() -> None:
    match = ithf_with_goals("ithf", (100.0, "home"), (310.0, "home"))
    match.poll(320.0)
    assert match.result is not None
    assert match.result.score[Side.HOME] == 2
    effects = match.handle(match.parse("undo"), 330.0)
    assert match.phase is Phase.FINISHED  # the final result stands, corrected
    assert match.result.score == {Side.HOME: 1, Side.AWAY: 0}
    assert ResultCorrected(1) in effects
    assert Reopened(1, 2) in effects
    assert match.status(330.0).result["revision"] == 1  # type: ignore[index]


def test_ithf_4_8_a_correction_that_ties_a_playoff_match_brings_the_overtime() -> None:
    match = ithf_with_goals("ithf-playoff", (100.0, "home"), (310.0, "home"))
    match.poll(320.0)
    assert match.phase is Phase.FINISHED
    match.handle(match.parse("undo"), 330.0)  # 1:0 was a mistaken 2:0... and 0:0 after the next
    match.handle(match.parse("undo"), 331.0)
    assert match.phase is Phase.BREAK
    assert match.result is None
    fired = [e.kind for e in match.poll(361.0) if isinstance(e, Signal)]
    assert SignalKind.OVERTIME_START in fired
    assert match.overtime


def test_reopen_is_refused_after_the_profiles_time_limit() -> None:
    match = ithf_playoff_in_overtime()
    match.handle(match.parse("goal", "home"), 370.0)
    with pytest.raises(CommandRefused) as refused:
        match.handle(match.parse("undo"), 370.0 + 601.0)
    assert refused.value.code == "reopen_too_late"
    assert match.phase is Phase.FINISHED
    assert match.result is not None


def test_reopen_is_refused_after_a_reset() -> None:
    match = ithf_playoff_in_overtime()
    match.handle(match.parse("goal", "home"), 370.0)
    match.handle(match.parse("reset"), 380.0)
    with pytest.raises(CommandRefused):
        match.handle(match.parse("undo"), 381.0)


def test_an_entry_after_the_end_is_removed_without_touching_the_result() -> None:
    match = ithf_playoff_in_overtime()
    match.handle(match.parse("goal", "home"), 370.0)
    match.handle(match.parse("goal", "away"), 372.0)  # after the end: not counted
    effects = match.handle(match.parse("undo"), 375.0)
    assert match.phase is Phase.FINISHED
    assert not any(
        isinstance(e, Reopened | ResultCorrected) for e in effects)
    assert match.result is not None
    assert match.result.how is Ending.OVERTIME


def play_out(match: Match, period_1_ends: float) -> None:
    """Periods 2 and 3 of an ISBHF match without a stoppage: each after its 10:00
    intermission, started by the referee's faceoff at once."""
    at = period_1_ends
    for _ in range(2):
        at += 600.0
        match.poll(at)
        match.handle(match.parse("start"), at)
        at += 900.0
    match.poll(at)


def isbhf_started() -> Match:
    match = Match(profiles.load("isbhf"))
    match.handle(match.parse("start"), 0.0)  # the first faceoff
    return match


def test_isbhf_420_1_no_undo_after_the_faceoff_that_follows_the_goal() -> None:
    match = isbhf_started()
    match.handle(match.parse("stop"), 100.0)
    match.handle(match.parse("goal", "home"), 101.0)
    match.handle(match.parse("start"), 130.0)  # the faceoff after the goal
    match.handle(match.parse("stop"), 145.0)
    with pytest.raises(CommandRefused) as refused:
        match.handle(match.parse("undo"), 146.0)
    assert refused.value.code == "undo_after_faceoff"
    assert match.sheet.score()[Side.HOME] == 1


def test_isbhf_420_1_a_goal_can_be_revoked_until_that_faceoff() -> None:
    match = isbhf_started()
    match.handle(match.parse("stop"), 100.0)
    match.handle(match.parse("goal", "home"), 101.0)
    match.handle(match.parse("undo"), 110.0)
    assert match.sheet.score()[Side.HOME] == 0


def test_isbhf_420_1_undo_of_a_power_play_goal_gives_the_minor_back_its_time() -> None:
    match = isbhf_started()
    match.handle(match.parse("stop"), 10.0)
    # 2:00 from the faceoff at t=20
    match.handle(match.parse("penalty", "away", "minor", "7"), 10.0)
    match.handle(match.parse("penalty", "away", "minor", "8"), 11.0)
    match.handle(match.parse("penalty", "away", "minor", "9"), 12.0)  # waits: two already run
    match.handle(match.parse("start"), 20.0)
    match.handle(match.parse("stop"), 95.1)  # 75.1 s served: 44.9 s left
    # a power-play goal ends #7's minor; #9's starts
    match.handle(match.parse("goal", "home"), 96.0)
    match.handle(match.parse("undo"), 97.0)  # taken back: it was never a goal
    shown = {p["player"]: p for p in match.status(97.0).penalties or []}
    assert shown["7"]["running"]
    assert shown["7"]["remaining_s"] == pytest.approx(44.9)
    assert not shown["9"]["running"]
    assert shown["9"]["remaining_s"] == pytest.approx(120.0)
    match.handle(match.parse("start"), 100.0)
    fired = match.poll(144.9)
    assert any(isinstance(e, Signal) and e.kind is SignalKind.PENALTY_END for e in fired)


def test_isbhf_420_3_correct_the_scorer_and_assists_of_any_goal() -> None:
    match = isbhf_started()
    match.handle(match.parse("stop"), 100.0)
    match.handle(match.parse("goal", "home", "9", "4"), 101.0)
    match.handle(match.parse("start"), 120.0)
    match.handle(match.parse("stop"), 200.0)
    match.handle(match.parse("goal", "away", "11"), 201.0)
    before = match.status(202.0)
    # goal 1, long after its faceoff
    match.handle(match.parse("correct", "1", "10", "4", "5"), 202.0)
    after = match.status(202.0)
    assert after.goals[0]["scorer"] == "10"
    assert after.goals[0]["assists"] == ["4", "5"]
    assert after.score == before.score
    assert after.elapsed_s == before.elapsed_s
    with pytest.raises(CommandRefused) as refused:
        match.handle(match.parse("correct", "7", "10"), 203.0)
    assert refused.value.code == "no_goal_number"


def test_isbhf_420_3_a_correction_is_told_with_shirt_numbers_the_catalogue_shows() -> None:
    """The notice carries the shirt numbers as they are (the scorer, or None; the assists as
    a list), and the catalogue alone shows them, "-" for none (issue 32 item 3)."""
    match = isbhf_started()
    match.handle(match.parse("stop"), 100.0)
    match.handle(match.parse("goal", "home", "9", "4"), 101.0)
    told = match.handle(match.parse("correct", "1", "10", "4", "5"), 102.0)
    assert told == [GoalCorrected(1, Side.HOME, "10", ("4", "5"))]
    params = told[0].params  # type: ignore[attr-defined]
    assert params == {"number": 1, "side": "home", "scorer": "10", "assists": ["4", "5"]}
    assert Messages("en").notice("notice.corrected", params) == \
        "goal 1 (Home): scorer 10, assists 4, 5 (ISBHF 420 !3)"
    bare = {"number": 1, "side": "home", "scorer": None, "assists": []}
    assert Messages("en").notice("notice.corrected", bare) == \
        "goal 1 (Home): scorer -, assists - (ISBHF 420 !3)"


def test_isbhf_420_3_a_correction_after_the_end_is_a_new_revision() -> None:
    match = isbhf_started()
    match.handle(match.parse("stop"), 100.0)
    match.handle(match.parse("goal", "home", "9"), 101.0)
    match.handle(match.parse("start"), 120.0)
    play_out(match, 920.0)  # 20 s stopped in period 1
    assert match.phase is Phase.FINISHED
    effects = match.handle(match.parse("correct", "1", "10"), 3930.0)
    assert ResultCorrected(1) in effects
    result = match.status(3930.0).result
    assert result is not None
    assert result["revision"] == 1
    assert match.status(3930.0).goals[0]["scorer"] == "10"


# -- issue 28 item 7: the open points, decided -------------------------------------------------

def isbhf_after_period_1(profile: str = "isbhf") -> Match:
    """Period 1 played from t=0 without a stoppage: its horn at t=900, the intermission to
    t=1500, then the wait for period 2's faceoff."""
    match = Match(profiles.load(profile))
    match.handle(match.parse("start"), 0.0)
    match.poll(900.0)
    assert match.phase is Phase.BREAK
    return match


def test_isbhf_412_no_timeout_in_the_wait_for_a_periods_faceoff() -> None:
    """Decision: the wait after an intermission is no stoppage of play (412: "in a
    stoppage"); old code: the timeout was granted and ran before the faceoff."""
    match = isbhf_after_period_1()
    match.poll(1500.0)
    assert match.phase is Phase.PAUSED
    with pytest.raises(CommandRefused) as refused:
        match.handle(match.parse("timeout", "home"), 1510.0)
    assert refused.value.code == "timeout_before_faceoff"
    match.handle(match.parse("start"), 1520.0)
    match.handle(match.parse("stop"), 1530.0)
    match.handle(match.parse("timeout", "home"), 1531.0)  # a stoppage of period 2: granted
    assert match.status(1532.0).timeouts["home"]["left"] == 0  # type: ignore[index]


def test_isbhf_410_420_a_goal_of_the_last_second_entered_in_the_intermission() -> None:
    """Old code: a goal entered after the horn was never counted."""
    match = isbhf_after_period_1()
    # a plain goal in the intermission: not counted
    match.handle(match.parse("goal", "home"), 905.0)
    assert match.sheet.score()[Side.HOME] == 0
    match.handle(match.parse("undo"), 906.0)
    effects = match.handle(match.parse("late-goal", "home", "9"), 910.0)
    [goal] = [g for g in match.sheet.goals if g.counted]
    assert goal in effects
    assert (goal.period, goal.match_time_s, goal.scorer) == (1, 900.0, "9")
    assert match.sheet.score()[Side.HOME] == 1
    assert match.phase is Phase.BREAK  # the intermission runs on


def test_isbhf_410_420_a_late_goal_after_the_last_period_corrects_the_result() -> None:
    match = Match(profiles.load("isbhf"))
    match.handle(match.parse("start"), 0.0)
    play_out(match, 900.0)
    assert match.result is not None
    assert match.result.winner is None  # 0:0, a point each (413a)
    effects = match.handle(match.parse("late-goal", "away"), 3920.0)
    assert ResultCorrected(1) in effects
    assert match.phase is Phase.FINISHED
    assert match.result.winner is Side.AWAY
    assert match.sheet.goals[-1].period == 3


def test_isbhf_410_420_a_late_goal_is_refused_during_play_and_on_a_running_clock() -> None:
    match = isbhf_started()
    with pytest.raises(CommandRefused) as refused:
        match.handle(match.parse("late-goal", "home"), 10.0)
    assert refused.value.code == "late_goal_when"
    ithf = ithf_with_goals("ithf")
    with pytest.raises(CommandRefused) as refused:
        ithf.handle(ithf.parse("late-goal", "home"), 330.0)
    assert refused.value.code == "unknown"  # a running clock keeps ITHF 6.5


def test_isbhf_410_420_411_a_late_goal_in_the_break_before_overtime_decides_the_match() -> None:
    """0:0 after three periods of `isbhf-playoff`: the break before overtime runs. The goal
    of the last second, entered then, ends the match in regular time (no overtime)."""
    match = Match(profiles.load("isbhf-playoff"))
    match.handle(match.parse("start"), 0.0)
    play_out(match, 900.0)
    assert match.phase is Phase.BREAK
    assert match.overtime
    effects = match.handle(match.parse("late-goal", "home", "17"), 3930.0)
    assert match.phase is Phase.FINISHED
    assert not match.overtime
    assert match.result is not None
    assert (match.result.how, match.result.winner, match.result.overtime_s) == (
        Ending.REGULAR, Side.HOME, None)
    assert not any(isinstance(e, ResultCorrected) for e in effects)  # the first result
    assert match.status(3930.0).result["revision"] == 0  # type: ignore[index]


def test_isbhf_420_1_the_last_goal_cannot_be_revoked_after_its_faceoff_once_ended() -> None:
    match = isbhf_started()
    match.handle(match.parse("stop"), 100.0)
    match.handle(match.parse("goal", "home"), 101.0)
    match.handle(match.parse("start"), 120.0)  # the faceoff after the goal; the periods run out
    play_out(match, 920.0)
    assert match.phase is Phase.FINISHED
    with pytest.raises(CommandRefused) as refused:
        match.handle(match.parse("undo"), 3930.0)
    assert refused.value.code == "undo_after_faceoff"


def test_corrections_after_the_end_are_bounded_with_a_clear_refusal() -> None:
    """Issue 42 item 5 (old code: 2000 `correct`s gave 2000 revisions, 2000 results lines):
    past MAX_REVISIONS a correction after the end is refused; the result stands as it was."""
    match = ithf_with_goals("ithf", (100.0, "home"))
    match.poll(320.0)
    for n in range(1, MAX_REVISIONS + 1):
        effects = match.handle(match.parse("correct", "1", str(n)), 320.0 + n)
        assert ResultCorrected(n) in effects
    with pytest.raises(CommandRefused) as refused:
        match.handle(match.parse("correct", "1", "99"), 400.0)
    assert refused.value.code == "too_many_corrections"
    assert refused.value.params == {"most": MAX_REVISIONS}
    text = Messages("en").refusal(refused.value)
    assert f"corrected {MAX_REVISIONS} times already" in text
    assert match.status(400.0).result["revision"] == MAX_REVISIONS  # type: ignore[index]
    assert match.sheet.goals[0].scorer == str(MAX_REVISIONS)  # the last one taken stands
    # `undo` that would reopen it (two revisions: in play, then its end) is refused too.
    with pytest.raises(CommandRefused, match="too_many_corrections"):
        match.handle(match.parse("undo"), 401.0)
    assert match.phase is Phase.FINISHED


def test_a_reopen_is_refused_when_its_end_could_pass_the_bound() -> None:
    match = ithf_playoff_in_overtime()
    match.handle(match.parse("goal", "home"), 370.0)
    for n in range(1, MAX_REVISIONS):  # one revision left: not enough for a reopen
        match.handle(match.parse("correct", "3", str(n)), 370.0 + n)
    with pytest.raises(CommandRefused, match="too_many_corrections"):
        match.handle(match.parse("undo"), 400.0)
    match.handle(match.parse("correct", "3", "7"), 401.0)  # the last correction of names
    assert match.status(401.0).result["revision"] == MAX_REVISIONS  # type: ignore[index]
