"""A buzzer signal as a list of on/off instants, so the event loop can time every edge."""

from __future__ import annotations


def pulses(pattern_s: tuple[float, ...], beeps: int = 1,
           gap_s: float = 0.35) -> list[tuple[float, float]]:
    """(on, off) offsets in seconds from the signal's start.

    `pattern_s` is one beep (on, off, on, ... seconds); it is repeated `beeps` times, `gap_s`
    apart, so ITHF 4.4's "as many beeps as minutes are left" is countable by ear.
    """
    out: list[tuple[float, float]] = []
    t = 0.0
    for n in range(max(beeps, 1)):
        if n:
            t += gap_s
        for i, length in enumerate(pattern_s):
            if i % 2 == 0:
                out.append((t, t + length))
            t += length
    return out
