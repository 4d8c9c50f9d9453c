"""The match clock as a value: time left is computed from an anchor, never decremented."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class MatchClock:
    """Net match time of one period.

    While running, `elapsed(now) = elapsed_at_anchor + (now - anchor)`; stopping folds the time
    since the anchor into `elapsed_at_anchor`. A pause therefore moves every later deadline by
    exactly the paused time (ITHF 10.2) without any bookkeeping of its own.
    """

    length_s: float
    elapsed_at_anchor: float = 0.0
    anchor: float | None = None  # monotonic instant the clock last started; None when stopped

    @property
    def running(self) -> bool:
        return self.anchor is not None

    def elapsed(self, now: float) -> float:
        if self.anchor is None:
            return self.elapsed_at_anchor
        return self.elapsed_at_anchor + (now - self.anchor)

    def remaining(self, now: float) -> float:
        """Time left; 0 on a clock without a length (an untimed overtime, ITHF 4.8: the next
        goal ends it), which has no time left to show."""
        return self.length_s - self.elapsed(now) if math.isfinite(self.length_s) else 0.0

    def started(self, now: float) -> MatchClock:
        return self if self.anchor is not None else replace(self, anchor=now)

    def stopped(self, now: float) -> MatchClock:
        if self.anchor is None:
            return self
        return replace(self, elapsed_at_anchor=self.elapsed(now), anchor=None)

    def shifted(self, shift: float) -> MatchClock:
        """The same clock on a clock `shift` seconds ahead (`core.rebase`)."""
        return self if self.anchor is None else replace(self, anchor=self.anchor + shift)

    def stopped_at_elapsed(self, elapsed_s: float) -> MatchClock:
        """Stop with exactly `elapsed_s` on the clock (a period ends at its length, not later)."""
        return replace(self, elapsed_at_anchor=elapsed_s, anchor=None)

    def when_elapsed(self, elapsed_s: float) -> float | None:
        """The monotonic instant the clock reaches `elapsed_s`, or None while it is stopped."""
        if self.anchor is None:
            return None
        return self.anchor + (elapsed_s - self.elapsed_at_anchor)
