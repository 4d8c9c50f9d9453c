"""Golden traces of ball hockey (ISBHF) on virtual time: see test_ithf_golden for the format."""

from __future__ import annotations

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
    assert any(n.startswith("shot refused: away shoots next") for n in notices)
    status = recorder.seen[-1][2]
    assert status.result is not None
    assert (status.result["how"], status.result["winner"]) == ("shootout", "home")
    assert status.result["overtime_s"] == 600.0
    assert status.result["shootout"]["goals"] == {"home": 3, "away": 0}
    assert status.result["points"] == {"home": 2, "away": 0}
    assert status.score == {"home": 1, "away": 1}
