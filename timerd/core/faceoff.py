"""Faceoff timing: the guard after each faceoff (ITHF 5.6) and the passive-play count (8.3).

Both are measured in net play time (seconds the match clock has run since the start signal,
over all periods), not in wall time: an interruption freezes them with the clock (ITHF 10.2),
and a resume without a faceoff (ITHF 10.4, puck returned to the figure that had it) carries on
where they stood. The match converts play time to monotonic instants for its deadlines.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from timerd.core.score import Side


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


@dataclass
class PassivePlay:
    """ITHF 8.1-8.3: a count started when one side holds the puck; a warning at `limit_s`.

    Only one side can hold the puck, so starting a count for one side ends the other's.
    Pressing the same side again, a goal, or a faceoff clears the count. After the warning the
    side stays `warned` (the LED stays lit) until cleared.
    """

    limit_s: float | None  # None: this profile does not time passive play
    started_s: dict[Side, float] = field(default_factory=dict)
    warned: set[Side] = field(default_factory=set)

    def press(self, side: Side, play_s: float) -> bool:
        """Start `side`'s count, or clear it if it is counting or warned; True if started."""
        if side in self.started_s or side in self.warned:
            self.clear()
            return False
        self.clear()
        self.started_s[side] = play_s
        return True

    def due_s(self) -> tuple[float, Side] | None:
        """The play time of the next warning, and whose it is."""
        if self.limit_s is None or not self.started_s:
            return None
        side, start = next(iter(self.started_s.items()))
        return start + self.limit_s, side

    def warn(self, side: Side) -> None:
        self.started_s.pop(side, None)
        self.warned.add(side)

    def remaining_s(self, side: Side, play_s: float) -> float | None:
        if side in self.warned:
            return 0.0
        if self.limit_s is None or side not in self.started_s:
            return None
        return max(0.0, self.started_s[side] + self.limit_s - play_s)

    def clear(self) -> None:
        self.started_s.clear()
        self.warned.clear()
