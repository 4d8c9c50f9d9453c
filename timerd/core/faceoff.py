"""Faceoff timing: the guard after each faceoff (ITHF 5.6).

It is measured in net play time (seconds the match clock has run since the start signal,
over all periods), not in wall time: an interruption freezes them with the clock (ITHF 10.2),
and a resume without a faceoff (ITHF 10.4, puck returned to the figure that had it) carries on
where they stood. The match converts play time to monotonic instants for its deadlines.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class FaceoffGuard:
    """ITHF 5.6: a goal counts only once `guard_s` have passed after the last faceoff.

    `pending` is set after a counted goal: play must restart with a faceoff, which the operator
    marks. `on_resume` is a faceoff marked during an interruption: the guard starts when play
    resumes (ITHF 10.4).
    """

    guard_s: float | None  # None: the profile has no guard (every goal counts in play)
    until_s: float | None = None  # play time at which the current guard ends
    pending: bool = False
    on_resume: bool = False

    def faceoff(self, play_s: float) -> bool:
        """Mark a faceoff at `play_s`; True if a guard now runs."""
        self.pending = False
        self.on_resume = False
        self.until_s = None if self.guard_s is None else play_s + self.guard_s
        return self.until_s is not None

    def remaining_s(self, play_s: float) -> float | None:
        if self.until_s is None or play_s >= self.until_s:
            return None
        return self.until_s - play_s

    def active(self, play_s: float) -> bool:
        return self.remaining_s(play_s) is not None

    def ended(self, play_s: float) -> bool:
        """True once when the running guard is over (for the LED going out)."""
        if self.until_s is not None and play_s >= self.until_s:
            self.until_s = None
            return True
        return False

    def clear(self) -> None:
        self.until_s = None
        self.pending = False
        self.on_resume = False
