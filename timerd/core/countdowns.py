"""Countdowns of real time during a stoppage: the line change (ISBHF 404b) and the time to dress
a new goalie (408).

Both run in monotonic time while the game clock stands still, each end is a deadline with a
signal, and a restart of play ends them (the faceoff has come). The match composes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from timerd.core.profile import LineChangeRule
from timerd.core.score import Side


@dataclass
class LineChange:
    """ISBHF 404b: consecutive stages (visitors 5 s, home 5 s, faceoff preparation 5 s) from
    `started_at`, with a signal at the end of each. `done` counts the stages whose signal has
    sounded."""

    rule: LineChangeRule
    started_at: float
    done: int = 0

    @property
    def over(self) -> bool:
        return self.done >= len(self.rule.stages)

    def next_end(self) -> float | None:
        """When the current stage ends."""
        if self.over:
            return None
        return self.started_at + (self.done + 1) * self.rule.stage_s

    def finish_stage(self) -> tuple[str, int]:
        """The current stage is over: its name and number (1-based), counted as done."""
        self.done += 1
        return self.rule.stages[self.done - 1], self.done

    def shown(self, now: float) -> dict[str, Any] | None:
        end = self.next_end()
        if end is None:
            return None
        return {"stage": self.rule.stages[self.done], "number": self.done + 1,
                "stages": len(self.rule.stages), "remaining_s": round(max(0.0, end - now), 3)}


@dataclass
class GoalieChange:
    """ISBHF 408: a team whose goalies cannot go on gets `length_s` to dress another player as
    goalie; one countdown per team, from the command to its signal."""

    length_s: float
    ends_at: dict[Side, float] = field(default_factory=dict)

    def begin(self, side: Side, now: float) -> float:
        if side in self.ends_at:
            raise ValueError(f"{side} is already dressing a goalie")
        self.ends_at[side] = now + self.length_s
        return self.ends_at[side]

    def next_end(self) -> tuple[float, Side] | None:
        return min(((at, side) for side, at in self.ends_at.items()), default=None)

    def end(self, side: Side) -> None:
        self.ends_at.pop(side, None)

    def shown(self, now: float) -> dict[str, float]:
        """Time left per team that is dressing a goalie."""
        return {side.value: round(max(0.0, at - now), 3) for side, at in self.ends_at.items()}
