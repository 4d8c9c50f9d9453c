"""How a clock reads on every display (terminal, web page, LED digits): one rule, one place."""

from __future__ import annotations

import math


def shown_clock(remaining_s: float) -> str:
    """Time left as a scoreboard shows it.

    Whole seconds are rounded up, as every scoreboard does (the clock reads 0:00 only when time
    is up, and 5:00 at the start); in the last 10 s tenths are shown, also rounded up ("9.9").
    """
    remaining_s = max(0.0, remaining_s)
    tenths = math.ceil(round(remaining_s * 10, 6))
    if 0 < tenths < 100:
        return f"{tenths // 10}.{tenths % 10}"
    whole = math.ceil(round(remaining_s, 6))
    return f"{whole // 60}:{whole % 60:02d}"


def next_change(remaining_s: float) -> float:
    """How much time (seconds of match time) until `shown_clock` would read differently."""
    if remaining_s <= 0:
        return math.inf
    step = 0.1 if remaining_s <= 10 else 1.0
    units = round(remaining_s / step, 6)
    below = math.ceil(units) - 1  # the next shown value is reached at this many steps
    return max(remaining_s - below * step, 1e-6)
