"""The score sheet: goals as entered, whether each counted and why not, and the match result.

A goal is always recorded, counted or not, so that the operator, the results file and a
tournament organiser see every claim with the reason the timer gave (ITHF 5.6, 6.5, 10.3).
The score is derived from the entries, never kept beside them: it is the number of counted
entries per side. Results that the rules impose rather than play (a forfeit, ITHF 4.6; a
walk-out, ITHF 4.7) erase entries and add awarded ones, so that rule holds for them too.

This module knows nothing of clocks or phases; the match decides whether a goal counts and
hands the sheet a finished entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from timerd.core.refused import CommandRefused

#: A player is entered by shirt number (or a short code): what a scoreboard can show.
PLAYER = re.compile(r"[0-9A-Za-z]{1,3}")


def parse_player(word: str) -> str:
    """A player's shirt number as entered; CommandRefused says what is accepted."""
    if not PLAYER.fullmatch(word):
        raise CommandRefused("player", given=word)
    return word


class Side(StrEnum):
    HOME = "home"
    AWAY = "away"

    @property
    def opponent(self) -> Side:
        return Side.AWAY if self is Side.HOME else Side.HOME


class GoalReason(StrEnum):
    """Why an entry is not counted, or why a counted one was not scored in play."""

    BEFORE_START = "before_start"  # ITHF 5.1: play begins with the start signal
    FACEOFF_GUARD = "faceoff_guard"  # ITHF 5.6: within 3 s of a faceoff
    FINAL_SIGNAL = "final_signal"  # ITHF 6.5: at or after the final signal
    INTERRUPTION = "interruption"  # ITHF 10.3: while the match is interrupted
    INTERMISSION = "intermission"  # ISBHF 410: between periods
    FORFEIT_ERASED = "forfeit_erased"  # ITHF 4.6: the forfeit score replaces play
    FORFEIT_AWARD = "forfeit_award"  # ITHF 4.6: a goal of the forfeit score
    WALKOUT_ERASED = "walkout_erased"  # ITHF 4.7: the walker's goals are erased
    WALKOUT_AWARD = "walkout_award"  # ITHF 4.7: the opponent's five extra goals


#: Entries made by a ruling rather than by a goal button; `undo` never removes them.
AWARDS = frozenset({GoalReason.FORFEIT_AWARD, GoalReason.WALKOUT_AWARD})


class Ending(StrEnum):
    """How a match ended, as the results file records it."""

    REGULAR = "regular"
    OVERTIME = "overtime"  # ITHF 4.8: a golden goal (or the end of a timed overtime)
    FORFEIT = "forfeit"  # ITHF 4.6
    WALKOUT = "walkout"  # ITHF 4.7
    SHOOTOUT = "shootout"  # ISBHF 414b


def parse_side(word: str) -> Side:
    """`home` or `away` (also `h`/`a`); CommandRefused names the choices."""
    for side in Side:
        if word.lower() in (side.value, side.value[0]):
            return side
    raise CommandRefused("side", given=word)


def shirt_numbers(players: tuple[str, ...]) -> list[str]:
    """A goal's scorer and assistants as entered (ISBHF 420-422); CommandRefused when one is
    not a shirt number or a player is named twice."""
    numbers = [parse_player(p) for p in players]
    if len(set(numbers)) < len(numbers):
        raise CommandRefused("same_player")
    return numbers


@dataclass(frozen=True)
class Goal:
    """One goal entry.

    `match_time_s` is net match time since the start signal, over all periods and overtime;
    `at` is the monotonic instant it was entered (the results layer turns it into wall time).
    """

    side: Side
    match_time_s: float
    counted: bool
    reason: GoalReason | None = None
    period: int = 1
    overtime: bool = False
    at: float = 0.0
    scorer: str | None = None  # ISBHF 420-422: shirt numbers, when entered
    assists: tuple[str, ...] = ()  # at most two (ISBHF 422)
    #: The entry's number in its match (1, 2, ...; given by the score sheet, never reused
    #: after an undo): how the results and the journal tell entries apart.
    number: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The entry as the status shows it; the core knows no wall time (the results line
        adds `wall_time`, the status document `goal_wall_times`)."""
        return {"number": self.number, "side": self.side.value,
                "match_time_s": round(self.match_time_s, 3), "counted": self.counted,
                "reason": None if self.reason is None else self.reason.value,
                "period": self.period, "overtime": self.overtime,
                "scorer": self.scorer, "assists": list(self.assists)}


@dataclass
class ScoreSheet:
    goals: list[Goal] = field(default_factory=list)
    entered: int = 0  # entries numbered so far (awards included)

    def score(self) -> dict[Side, int]:
        out = dict.fromkeys(Side, 0)
        for goal in self.goals:
            out[goal.side] += goal.counted
        return out

    def tied(self) -> bool:
        score = self.score()
        return score[Side.HOME] == score[Side.AWAY]

    def leader(self) -> Side | None:
        score = self.score()
        if score[Side.HOME] == score[Side.AWAY]:
            return None
        return max(Side, key=lambda s: score[s])

    def add(self, goal: Goal) -> Goal:
        """Enter `goal`; returns it with its number."""
        self.entered += 1
        numbered = replace(goal, number=self.entered)
        self.goals.append(numbered)
        return numbered

    def undo(self) -> Goal | None:
        """Remove and return the last goal entered with a button (awards stay)."""
        for i in range(len(self.goals) - 1, -1, -1):
            if self.goals[i].reason not in AWARDS:
                return self.goals.pop(i)
        return None

    def forfeit(self, absent: Side, score: tuple[int, int], match_time_s: float,
                at: float) -> None:
        """ITHF 4.6: the forfeit score (absent side's goals, present side's) replaces play."""
        self._erase(lambda g: True, GoalReason.FORFEIT_ERASED)
        self._award(absent, score[0], GoalReason.FORFEIT_AWARD, match_time_s, at)
        self._award(absent.opponent, score[1], GoalReason.FORFEIT_AWARD, match_time_s, at)

    def walkout(self, walker: Side, award: int, match_time_s: float, at: float) -> None:
        """ITHF 4.7: the walker's goals are erased; the opponent gets `award` more."""
        self._erase(lambda g: g.side is walker, GoalReason.WALKOUT_ERASED)
        self._award(walker.opponent, award, GoalReason.WALKOUT_AWARD, match_time_s, at)

    def _erase(self, which: Any, reason: GoalReason) -> None:
        self.goals = [replace(g, counted=False, reason=reason) if g.counted and which(g) else g
                      for g in self.goals]

    def _award(self, side: Side, n: int, reason: GoalReason, match_time_s: float,
               at: float) -> None:
        for _ in range(n):
            self.add(Goal(side, match_time_s, True, reason, at=at))


@dataclass(frozen=True)
class Result:
    """How a finished match ended; `side` is the side that forfeited or walked out."""

    how: Ending
    score: dict[Side, int]
    winner: Side | None
    side: Side | None = None
    played_s: float = 0.0
    overtime_s: float | None = None
    points: dict[Side, int] | None = None  # ISBHF 413a, when the profile gives points
    shootout: dict[str, Any] | None = None  # ISBHF 414b: `Shootout.to_dict`

    def to_dict(self) -> dict[str, Any]:
        return {"how": self.how.value,
                "points": None if self.points is None else {
                    s.value: n for s, n in self.points.items()},
                "shootout": self.shootout,
                "score": {s.value: n for s, n in self.score.items()},
                "winner": None if self.winner is None else self.winner.value,
                "side": None if self.side is None else self.side.value,
                "played_s": round(self.played_s, 3),
                "overtime_s": None if self.overtime_s is None else round(self.overtime_s, 3)}


def table_points(points: tuple[int, ...], winner: Side | None) -> dict[Side, int] | None:
    """ISBHF 413a: each side's points for the table, from the profile's (win, tie, loss);
    None when the profile gives none."""
    if not points:
        return None
    win, tie, loss = points
    return {s: tie if winner is None else win if s is winner else loss for s in Side}
