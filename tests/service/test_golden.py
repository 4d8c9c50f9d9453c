"""Golden traces of the match clock and its signals (ITHF 4.4, 10.1, 10.2): scripted matches on
the real service (virtual time) and the exact event stream each must give, in tests/golden/.
Beside the full trace, each test states the signal instants the rules fix, worked out by hand.
"""

from __future__ import annotations

from tests.conftest import check_golden, signals, trace

MINUTES = [(80.0, "interval"), (140.0, "interval"), (200.0, "interval"), (260.0, "interval")]


def beeps(events):
    return [e["beeps"] for e in events if e.get("signal") == "interval"]


def test_ithf_4_4_match_with_minute_signals():
    events = check_golden("ithf_4_4_minute_signals", trace("ithf", [(0, "start")], until=360))
    # pre-signal at START, start 20 s later, then 4:00, 3:00, 2:00, 1:00 left, 0:30, 0:00
    assert signals(events) == [(0.0, "pre_signal"), (20.0, "start"), *MINUTES,
                               (290.0, "last_30"), (320.0, "final")]
    assert beeps(events) == [4, 3, 2, 1]
    assert events[-1]["state"] == "finished"


def test_ithf_4_4_match_with_thirds():
    events = check_golden("ithf_4_4_thirds", trace("ithf-thirds", [(0, "start")], until=360))
    assert signals(events) == [(0.0, "pre_signal"), (20.0, "start"), (120.0, "interval"),
                               (220.0, "interval"), (290.0, "last_30"), (320.0, "final")]
    assert beeps(events) == [2, 1]


def test_ithf_10_2_two_interruptions_one_across_the_1_00_signal():
    # 15 s interruption at 4:30 left; 42.5 s interruption from 1:10 left, where the 1:00
    # signal would have sounded at t=275 without it.
    events = check_golden("ithf_10_2_two_interruptions", trace("ithf", [
        (0, "start"), (50, "pause"), (65, "resume"), (265, "pause"), (307.5, "resume"),
    ], until=420))
    assert signals(events) == [
        (0.0, "pre_signal"), (20.0, "start"), (50.0, "pause"), (65.0, "resume"),
        (95.0, "interval"), (155.0, "interval"), (215.0, "interval"), (265.0, "pause"),
        (307.5, "resume"), (317.5, "interval"), (347.5, "last_30"), (377.5, "final")]
    assert beeps(events) == [4, 3, 2, 1]
    # ITHF 10.2: the final comes 300 s of play plus 57.5 s of interruptions after the start
    assert 377.5 - 20.0 == 300 + 15 + 42.5
