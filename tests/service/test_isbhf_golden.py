"""Golden traces of ball hockey (ISBHF) on virtual time: see test_ithf_golden for the format."""

from __future__ import annotations

from tests.service.test_ithf_golden import check_golden, goals, signals, trace


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
