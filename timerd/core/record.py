"""What a match keeps for the results beside the score sheet (`score.py`): the names of the
sides and the round, the interruptions (ITHF 10.1), and the periods as played, each with its
goals.

The phase machine (`match.py`) keeps them and calls these to check a name and to lay the
periods out in the result; neither depends on a phase or a clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from timerd.core.effects import Notice
from timerd.core.refused import CommandRefused
from timerd.core.score import Goal, Side

#: The longest name `teams` takes for a side or a round (a scoreboard line holds about that).
NAME_MAX = 40


@dataclass(frozen=True)
class Interruption:
    """ITHF 10.1: the clock stood still for `length_s` from `at_elapsed_s` of match time."""

    period: int
    at_elapsed_s: float
    length_s: float

    def to_dict(self) -> dict[str, Any]:
        return {"period": self.period, "start_s": round(self.at_elapsed_s, 3),
                "length_s": round(self.length_s, 3)}


@dataclass(frozen=True)
class PeriodPlayed:
    """A period (or overtime) as played, for the results."""

    period: int
    overtime: bool
    played_s: float
    #: What the rule modules keep of it (ISBHF 407 !2: the time that was left when the
    #: intermission came early, `early_intermission_left_s`).
    kept: Mapping[str, Any] = field(default_factory=dict)


def names(home: str, away: str, round_name: str = "") -> tuple[dict[Side, str], str | None,
                                                                 Notice]:
    """The two sides' names (players in ITHF, teams in ISBHF) and the round, each one line of
    at most `NAME_MAX` printable characters ("" clears one), and the notice that says them;
    CommandRefused names the one that does not fit."""
    teams = {Side.HOME: home.strip(), Side.AWAY: away.strip()}
    for side, name in teams.items():
        if len(name) > NAME_MAX or not name.isprintable():
            raise CommandRefused("name_too_long", side=side.value, max=NAME_MAX)
    round_id = round_of(round_name)
    told = TeamsWithRound if round_id else Teams
    notice = told(teams[Side.HOME] or "home", teams[Side.AWAY] or "away", round_id or "")
    return teams, round_id, notice


def round_of(round_name: str) -> str | None:
    """A round's name as `teams` and `start_in` take it: at most `NAME_MAX` printable
    characters on one line (no control or bidi characters: `str.isprintable`), stripped;
    None for none. From the wire too (hall mode's `start_round`, issue 34)."""
    if len(round_name) > NAME_MAX or not round_name.isprintable():
        raise CommandRefused("round_too_long", max=NAME_MAX)
    return round_name.strip() or None


def periods_record(periods: list[PeriodPlayed], goals: list[Goal],
                   absent: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The periods for the results, each with the goals counted in it (not the awarded ones,
    ITHF 4.6-4.7) and what the rule modules kept of it (`absent`: every registered module's
    keys as a profile without it keeps them, `RuleModule.period_records`: ISBHF 407 !2's
    `early_intermission_left_s`; handed in, as the rule modules import this module for
    `names`)."""
    out = []
    for p in periods:
        counted = dict.fromkeys((s.value for s in Side), 0)
        for goal in goals:
            if goal.counted and goal.period == p.period and goal.reason is None:
                counted[goal.side.value] += 1
        out.append({"period": p.period, "overtime": p.overtime,
                    "played_s": round(p.played_s, 3), "goals": counted,
                    **absent, **p.kept})
    return out


@dataclass(frozen=True)
class Teams(Notice):
    """`teams`: the sides' names, `home` and `away` (the side's word when none is given)."""

    code = "notice.teams"
    home: str
    away: str
    round: str


@dataclass(frozen=True)
class TeamsWithRound(Teams):
    """`teams` with the round's name, `round`."""

    code = "notice.teams_round"
