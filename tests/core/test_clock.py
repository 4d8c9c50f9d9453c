"""MatchClock: time left is computed from an anchor (ITHF 4.1, 10.2), never counted down."""

from hypothesis import given
from hypothesis import strategies as st

from timerd.core.clock import MatchClock


def test_running_clock_counts_from_its_anchor():
    clock = MatchClock(300).started(1000.0)
    assert clock.remaining(1000.0) == 300
    assert clock.remaining(1060.5) == 239.5
    assert clock.when_elapsed(300) == 1300.0


def test_stopping_folds_elapsed_time_and_freezes_the_clock():
    clock = MatchClock(300).started(10.0).stopped(70.0)
    assert not clock.running
    assert clock.remaining(70.0) == clock.remaining(5000.0) == 240
    assert clock.when_elapsed(300) is None


def test_a_pause_moves_the_end_by_exactly_the_paused_time():
    clock = MatchClock(300).started(0.0).stopped(100.0).started(130.0)
    assert clock.when_elapsed(300) == 330.0


def test_starting_a_running_clock_keeps_its_anchor():
    clock = MatchClock(300).started(5.0)
    assert clock.started(50.0) is clock


@given(st.lists(st.tuples(st.floats(0.01, 200), st.floats(0.01, 600)), max_size=20))
def test_any_pauses_end_the_period_after_length_plus_paused_time(gaps):
    """ITHF 10.2: every interruption is added back, whatever the sequence."""
    clock = MatchClock(300).started(0.0)
    now = 0.0
    paused = 0.0
    for run_s, pause_s in gaps:
        if clock.remaining(now + run_s) <= 0:
            break
        now += run_s
        clock = clock.stopped(now)
        now += pause_s
        paused += pause_s
        clock = clock.started(now)
    end = clock.when_elapsed(300)
    assert end is not None
    assert abs(end - (300 + paused)) < 1e-6
