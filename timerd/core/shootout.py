"""The shootout tracker (ISBHF 414b): a series of attempts per team, then one each until decided.

Teams alternate: a team may not shoot again before the other has caught up. The tracker
declares the winner as soon as the result can no longer change: during the series when one
team's goals exceed what the other can still reach, afterwards when a round ends unequal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from timerd.core.score import Side


@dataclass
class Shootout:
    rounds: int = 5  # ISBHF 414b: 5 per team, then 1 per team
    attempts: dict[Side, list[bool]] = field(default_factory=lambda: {s: [] for s in Side})

    def record(self, side: Side, scored: bool) -> None:
        """Enter one attempt; ValueError says why it cannot be taken."""
        if self.winner() is not None:
            raise ValueError(f"the shootout is decided: {self.winner()} won")
        if len(self.attempts[side]) > len(self.attempts[side.opponent]):
            raise ValueError(f"{side.opponent} shoots next (teams alternate)")
        self.attempts[side].append(scored)

    def goals(self, side: Side) -> int:
        return sum(self.attempts[side])

    def winner(self) -> Side | None:
        taken = {s: len(self.attempts[s]) for s in Side}
        goals = {s: self.goals(s) for s in Side}
        if max(taken.values()) <= self.rounds:  # the series: can the other still catch up?
            for side in Side:
                if goals[side] > goals[side.opponent] + self.rounds - taken[side.opponent]:
                    return side
            return None
        if taken[Side.HOME] == taken[Side.AWAY] and goals[Side.HOME] != goals[Side.AWAY]:
            return max(Side, key=lambda s: goals[s])  # sudden death: an unequal round
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"rounds": self.rounds,
                "attempts": {s.value: list(self.attempts[s]) for s in Side},
                "goals": {s.value: self.goals(s) for s in Side},
                "winner": None if self.winner() is None else str(self.winner())}
