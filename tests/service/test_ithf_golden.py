"""Golden traces of the ITHF scoring rules: scripted matches on virtual time, and the exact
event stream each must give, checked in as data under tests/golden/.

A change that moves a signal, counts a goal differently or rewords a refusal shows up as a
diff. After a deliberate change, rerun with TIMERD_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

from tests.conftest import check_golden, goals, play, signals, trace


def test_ithf_5_6_goal_inside_faceoff_guard() -> None:
    # Start signal at t=20 is the first faceoff; a faceoff press at 60 restarts the guard
    # (also the "block" call, ITHF 7.1).
    events = check_golden("ithf_5_6_goal_inside_faceoff_guard", trace("ithf", [
        (0, "start"), (22.9, "goal home"), (23.0, "goal home"), (60, "faceoff"),
        (62.5, "goal away"), (63.5, "goal away"),
    ], until=70))
    assert goals(events) == [(22.9, "home", False, "faceoff_guard"), (23.0, "home", True, None),
                             (62.5, "away", False, "faceoff_guard"), (63.5, "away", True, None)]
    assert (22.9, "goal_rejected") in signals(events)
    assert [e["active"] for e in events if e["type"] == "faceoff_guard"] == [True, False] * 2


def test_ithf_6_5_goal_at_the_final_signal() -> None:
    events = check_golden("ithf_6_5_goal_at_the_final_signal", trace("ithf", [
        (0, "start"), (100, "goal home"), (319.9, "goal away"), (320, "goal away"),
        (321, "goal home"),
    ], until=330))
    assert goals(events) == [(100, "home", True, None), (319.9, "away", True, None),
                             (320, "away", False, "final_signal"),
                             (321, "home", False, "final_signal")]
    finals = [i for i, e in enumerate(events) if e.get("signal") == "final"]
    first_rejected = next(i for i, e in enumerate(events) if e.get("counted") is False)
    assert finals
    assert finals[0] < first_rejected  # the final sounds, then the goal is judged


def test_ithf_10_3_goal_while_paused() -> None:
    events = check_golden("ithf_10_3_goal_while_paused", trace("ithf", [
        (0, "start"), (50, "pause"), (55, "goal home"), (60, "resume"), (70, "goal home"),
    ], until=75))
    assert goals(events) == [(55, "home", False, "interruption"), (70, "home", True, None)]


def test_ithf_10_4_resume_with_or_without_faceoff() -> None:
    # Resume without a faceoff: the puck goes back to its figure and goals count at once.
    # `resume faceoff`, or a faceoff marked in the pause, restarts the guard at the resume.
    events = check_golden("ithf_10_4_resume_with_or_without_faceoff", trace("ithf", [
        (0, "start"), (50, "pause"), (60, "resume"), (60.5, "goal home"),
        (70, "pause"), (80, "resume faceoff"), (81, "goal away"), (84, "goal away"),
        (90, "pause"), (95, "faceoff"), (100, "toggle"), (101, "goal home"),
    ], until=110))
    assert goals(events) == [(60.5, "home", True, None), (81, "away", False, "faceoff_guard"),
                             (84, "away", True, None), (101, "home", False, "faceoff_guard")]


def test_ithf_4_8_playoff_overtime_golden_goal() -> None:
    # Tied 1:1 at 0:00 (t=320): final signal, a 30-s break with a warning 10 s before its end,
    # overtime starts at t=350 with its faceoff (guard applies), counts up, and the first
    # counted goal ends the match with the final signal.
    recorder = play("ithf-playoff", [
        (0, "start"), (100, "goal home"), (200, "goal away"), (330, "goal home"),
        (351, "goal away"), (412.5, "goal home"),
    ], until=420)
    events = check_golden("ithf_4_8_playoff_overtime_golden_goal", recorder.events())
    timed = [s for s in signals(events) if s[1] not in ("goal", "goal_rejected")]
    assert timed[-4:] == [(320, "final"), (340, "break_warning"),
                          (350, "overtime_start"), (412.5, "final")]
    assert goals(events)[2:] == [(330, "home", False, "final_signal"),
                                 (351, "away", False, "faceoff_guard"),
                                 (412.5, "home", True, None)]
    status = recorder.seen[-1][2]
    assert status.result is not None
    assert status.result["how"] == "overtime"
    assert status.result["winner"] == "home"
    assert status.result["overtime_s"] == 62.5
    # the count-up clock ticked every second of overtime
    ticks = [t for t, e, s in recorder.seen if s.overtime and type(e).__name__ == "Tick"]
    assert len(ticks) >= 60


def test_ithf_4_8_decided_match_ends_at_the_final_signal() -> None:
    events = check_golden("ithf_4_8_decided_match_ends_at_the_final_signal", trace(
        "ithf-playoff", [(0, "start"), (100, "goal home")], until=400))
    assert signals(events)[-1] == (320, "final")
    assert events[-1]["type"] == "state"
    assert events[-1]["state"] == "finished"


def test_ithf_4_6_forfeit_refused_within_30_s() -> None:
    """ITHF 4.6: 29 s after the start signal the absent player still has a second: refused,
    with the time left, and the match runs on. Fails on main (accepted there)."""
    events = check_golden("ithf_4_6_forfeit_refused_within_30_s", trace("ithf", [
        (0, "start"), (49, "forfeit away"),
    ], until=60))
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert len(notices) == 1
    assert "ITHF 4.6" in notices[0]
    assert "1.0 s left" in notices[0]
    assert [e["state"] for e in events if e["type"] == "state"][-1] == "running"


def test_ithf_4_6_forfeit_accepted_after_30_s() -> None:
    """ITHF 4.6: 31 s after the start signal the absent player (no goal, no faceoff since the
    start) loses by the forfeit score. Fails on main (refused there)."""
    recorder = play("ithf", [(0, "start"), (51, "forfeit away")], until=60)
    events = check_golden("ithf_4_6_forfeit_accepted_after_30_s", recorder.events())
    assert (51, "final") in signals(events)
    status = recorder.seen[-1][2]
    assert status.score == {"home": 5, "away": 0}
    assert status.result is not None
    assert (status.result["how"], status.result["side"]) == ("forfeit", "away")


def test_ithf_4_7_walkout() -> None:
    recorder = play("ithf", [
        (0, "start"), (30, "goal home"), (60, "faceoff"), (80, "goal away"), (90, "faceoff"),
        (100, "goal home"), (150, "walkout home"),
    ], until=160)
    check_golden("ithf_4_7_walkout", recorder.events())
    status = recorder.seen[-1][2]
    assert status.score == {"home": 0, "away": 6}
    assert status.result is not None
    assert (status.result["how"], status.result["winner"]) == ("walkout", "away")


def test_ithf_4_5_replay_keeps_goals() -> None:
    recorder = play("ithf", [
        (0, "start"), (40, "goal home"), (90, "pause"), (100, "replay"),
        (125, "goal away"),
    ], until=440)
    events = check_golden("ithf_4_5_replay_keeps_goals", recorder.events())
    assert [s for s in signals(events) if s[1] in ("pre_signal", "start", "final")] == [
        (0, "pre_signal"), (20, "start"), (100, "pre_signal"), (120, "start"), (420, "final")]
    status = recorder.seen[-1][2]
    assert status.score == {"home": 1, "away": 1}
    assert status.result is not None
    assert status.result["replays"] == 1


def test_ithf_8_3_passive_play_warning() -> None:
    recorder = play("ithf", [
        (0, "start"), (30, "passive home"), (40, "passive home"),  # cleared at 40
        (50, "passive away"), (52, "pause"), (60, "resume"),  # the count stands still
        (70, "passive home"), (72, "goal home"),  # a goal clears it
    ], until=80)
    events = check_golden("ithf_8_3_passive_play_warning", recorder.events())
    assert [s for s in signals(events) if s[1] == "passive_warning"] == [(35, "passive_warning"),
                                                                         (63, "passive_warning")]
    warned = [(t, s.passive) for t, e, s in recorder.seen if t in (36, 63, 72)]
    assert (63, {"home": None, "away": 0.0}) in warned
    assert recorder.seen[-1][2].passive == {"home": None, "away": None}


def test_undo_removes_the_last_goal() -> None:
    recorder = play("ithf", [
        (0, "start"), (30, "goal home"), (40, "faceoff"), (50, "goal home"), (55, "undo"),
    ], until=60)
    events = check_golden("ithf_undo_removes_the_last_goal", recorder.events())
    assert recorder.seen[-1][2].score == {"home": 1, "away": 0}
    assert any(e["type"] == "notice" and e["message"].startswith("undo: removed the Home goal")
               for e in events)
