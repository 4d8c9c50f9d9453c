"""The shown clock: rounded up like every scoreboard, tenths in the last 10 s."""

import pytest

from timerd.core.display import next_change, shown_clock


@pytest.mark.parametrize(("remaining", "shown"), [
    (300, "5:00"), (299.9, "5:00"), (299.0, "4:59"), (60.0, "1:00"), (59.01, "1:00"),
    (10.0, "0:10"), (9.95, "0:10"), (9.9, "9.9"), (0.01, "0.1"), (0, "0:00"), (-3, "0:00"),
])
def test_shown_clock(remaining, shown):
    assert shown_clock(remaining) == shown


@pytest.mark.parametrize(("remaining", "change"), [
    (300.0, 1.0), (299.5, 0.5), (10.5, 0.5), (10.0, 0.1), (5.25, 0.05),
])
def test_next_change_is_when_the_shown_clock_reads_differently(remaining, change):
    assert next_change(remaining) == pytest.approx(change)
    assert shown_clock(remaining - change + 1e-4) == shown_clock(remaining)
    assert shown_clock(remaining - change) != shown_clock(remaining)
