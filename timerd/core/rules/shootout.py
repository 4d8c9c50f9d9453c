"""The shootout tracker (ISBHF 414b): a series of attempts per team, then one each until decided.

Teams alternate: a team may not shoot again before the other has caught up. The tracker
declares the winner as soon as the result can no longer change: during the series when one
team's goals exceed what the other can still reach, afterwards when a round ends unequal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from timerd.core.commands import Command, arg, one_of
from timerd.core.effects import Effect, Notice, Phase, SignalKind
from timerd.core.frozen import read_only
from timerd.core.refused import CommandRefused
from timerd.core.rule import CommandTable, MatchView, RuleModule
from timerd.core.score import Ending, Side, parse_side
from timerd.core.settings import ProfileBase, Settings


@dataclass(frozen=True)
class Shot(Command):
    """ISBHF 414b: one shootout attempt of `side`, `scored` or `missed`."""

    name = "shot"
    side: Side = arg("home|away", parse_side)
    outcome: str = arg("scored|missed", one_of("scored", "missed", code="shot_outcome"))


@dataclass
class Shootout:
    rounds: int = 5  # ISBHF 414b: 5 per team, then 1 per team
    attempts: dict[Side, list[bool]] = field(default_factory=lambda: {s: [] for s in Side})

    def record(self, side: Side, scored: bool) -> None:
        """Enter one attempt; CommandRefused says why it cannot be taken."""
        winner = self.winner()
        if winner is not None:
            raise CommandRefused("shootout_decided", winner=winner.value)
        if len(self.attempts[side]) > len(self.attempts[side.opponent]):
            raise CommandRefused("shoots_next", side=side.opponent.value)
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


@dataclass(frozen=True)
class ShootoutSettings(Settings):
    """The shootout has no key of its own: its rounds are the overtime's (`[overtime]
    shootout_rounds`, ISBHF 414b), which it checks against `rules`."""

    def problems(self, profile: ProfileBase) -> list[str]:
        rounds = None if profile.overtime is None else profile.overtime.shootout_rounds
        if ("shootout" in profile.rules) == (rounds is not None):
            return []
        return ["rules: a shootout (ISBHF 414b) needs both `shootout` in rules and "
                "[overtime] shootout_rounds"]


class Shootouts(RuleModule):
    """ISBHF 414b in a match: a timed overtime that ends tied goes to a shootout of the
    profile's `overtime.shootout_rounds` (5), attempts entered with `shot SIDE scored|missed`;
    the match ends once the shootout is decided."""

    name = "shootout"
    settings = ShootoutSettings
    #: ISBHF 414b: the attempts so far (`Shootout.to_dict`), in the status and the result.
    shows = records = MappingProxyType({"shootout": None})
    declares = (Shot,)

    def __init__(self, match: MatchView) -> None:
        super().__init__(match)
        overtime = match.profile.overtime
        self.rounds = (overtime.shootout_rounds if overtime else None) or 5
        self.shootout: Shootout | None = None

    def commands(self) -> CommandTable:
        return {Shot: self.shot}

    def shot(self, command: Shot, now: float) -> list[Effect]:
        """Enter one attempt; the match ends once the shootout is decided."""
        side, outcome = command.side, command.outcome
        if self.shootout is None or self.match.phase is not Phase.SHOOTOUT:
            raise self.match.why_not("shot")
        self.shootout.record(side, outcome == "scored")
        goals = self.shootout.goals
        told = ShotScored if outcome == "scored" else ShotMissed
        effects: list[Effect] = [told(side, {s: goals(s) for s in Side})]
        winner = self.shootout.winner()
        if winner is not None:
            effects.append(self.match.sound(SignalKind.FINAL, now))
            effects.extend(self.match.finish(Ending.SHOOTOUT, now, winner=winner))
        return effects

    def tied_after_overtime(self, at: float) -> list[Effect] | None:
        self.shootout = Shootout(self.rounds)
        return []

    def status(self, now: float) -> Mapping[str, Any]:
        return {"shootout": None if self.shootout is None else read_only(self.shootout.to_dict())}

    def record(self) -> Mapping[str, Any]:
        return {"shootout": None if self.shootout is None else self.shootout.to_dict()}


@dataclass(frozen=True)
class ShotTaken(Notice):
    """ISBHF 414b: `side`'s attempt; `score` is the shootout's goals so far."""

    side: Side
    score: Mapping[Side, int]


@dataclass(frozen=True)
class ShotScored(ShotTaken):
    code = "notice.shot_scored"


@dataclass(frozen=True)
class ShotMissed(ShotTaken):
    code = "notice.shot_missed"
