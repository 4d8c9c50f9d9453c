"""Passive play (ITHF 8.1-8.3): PASSIVE HOME/AWAY starts a 5-s count for the side that holds
the puck; the warning signal sounds when it runs out. Demanding the faceoff is the player's
call: a faceoff, a goal, or the same button again clears the count.

The count is kept in net play time (seconds the match clock has run), so an interruption
freezes it with the clock (ITHF 10.2) and a resume without a faceoff (10.4) carries on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from timerd.core.buttons import Button
from timerd.core.checks import at_most
from timerd.core.commands import Command, arg
from timerd.core.effects import Effect, Notice, Phase, SignalKind
from timerd.core.frozen import ReadOnlyDict
from timerd.core.rule import CommandTable, MatchView, RuleModule, Shown, Step
from timerd.core.score import Goal, Side, parse_side
from timerd.core.settings import GUARD_WHY, ProfileBase, Settings


@dataclass(frozen=True)
class PassivePress(Command):
    """ITHF 8.1: `side` holds the puck (the same side again clears the count)."""

    name = "passive"
    side: Side = arg("home|away", parse_side)


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


@dataclass(frozen=True)
class PassiveSettings(Settings):
    """Passive play's key of a profile."""

    #: ITHF 8.3: the passive-play count (none: not timed).
    passive_play_s: float | None = 5.0

    def problems(self, profile: ProfileBase) -> list[str]:
        out = []
        if self.passive_play_s is not None and self.passive_play_s <= 0:
            out.append(f"passive_play_s = {self.passive_play_s:g}: must be longer than 0 s "
                       "(or none)")
        return out + at_most(60, GUARD_WHY, " s", passive_play_s=self.passive_play_s)


class Passive(RuleModule):
    """ITHF 8.3 in a match: the `passive SIDE` command while the clock runs, the warning as
    a timed step, the count cleared by a goal, a faceoff or the end of play; the count per
    side in the status (`passive`: seconds left, 0 once warned)."""

    name = "passive"
    settings = PassiveSettings
    #: ITHF 8.3: the count left per side, 0 once warned (null: none running).
    shows = MappingProxyType({"passive": dict.fromkeys(s.value for s in Side)})
    #: As `timerctl status` shows it: a line per side that holds the puck, its seconds to
    #: the warning (ITHF 8.1), or that it was warned (8.2).
    display = MappingProxyType({"passive": Shown(
        None, "sides", texts={"st.passive": "value", "st.passive_warned": ""},
        fields={"side": ("side", "side"), "s": ("value", "tenths")},
        runs={"value": ("play", "")})})  # ITHF 8.1: counted in play time
    declares = (PassivePress,)
    buttons = (
        Button("passive_home", "The home side's PASSIVE button (passive play, ITHF 8.3).",
               press=PassivePress(Side.HOME), pin=16, keys=("KEY_KP4",), panel="1",
               panel_help="key.passive"),
        Button("passive_away", "The away side's PASSIVE button (passive play, ITHF 8.3).",
               press=PassivePress(Side.AWAY), pin=20, keys=("KEY_KP6",), panel="2"),
    )

    def __init__(self, match: MatchView) -> None:
        super().__init__(match)
        self.count = PassivePlay(PassiveSettings.of(match.profile).passive_play_s or 5.0)

    def commands(self) -> CommandTable:
        return {PassivePress: self.press}

    def press(self, command: PassivePress, now: float) -> list[Effect]:
        """`side` holds the puck; warn after the profile's count unless it is pressed again
        (cleared), or a goal or faceoff comes first."""
        side = command.side
        if self.match.phase is not Phase.RUNNING:
            raise self.match.why_not("passive")
        play = self.match.play_s(now)
        started = self.count.press(side, play)
        if started:  # ITHF 8.1: the side holds the puck (ITHF 4.6: it is at the table)
            self.match.took_part.setdefault(side, ("passive", play))
        told = PassiveCounting if started else PassiveCleared
        return [told(side, self.count.limit_s)]

    def next_step(self) -> Step | None:
        warning = self.count.due_s()
        if self.match.phase is not Phase.RUNNING or warning is None:
            return None
        due = self.match.when_played(warning[0])
        return None if due is None else (due, self._warning)

    def _warning(self, at: float) -> list[Effect]:
        warning = self.count.due_s()
        if warning is None:
            return []
        self.count.warn(warning[1])
        return [self.match.sound(SignalKind.PASSIVE_WARNING, at,
                                 remaining_s=self.match.remaining_s(at))]

    def goal_entered(self, goal: Goal, now: float) -> list[Effect]:
        if self.match.phase is Phase.RUNNING:
            self.count.clear()  # ITHF 8.3: a goal ends the count
        return []

    def faceoff(self, at: float) -> None:
        self.count.clear()

    def play_stops(self) -> None:
        self.count.clear()

    def finish(self, at: float) -> None:
        self.count.clear()

    def status(self, now: float) -> Mapping[str, Any]:
        play = self.match.play_s(now)
        return {"passive": ReadOnlyDict({s.value: self.count.remaining_s(s, play) for s in Side})}


@dataclass(frozen=True)
class PassiveCount(Notice):
    """ITHF 8.1: `side`'s count of `s` seconds to the warning (None: this profile does not
    time passive play)."""

    side: Side
    s: float | None


@dataclass(frozen=True)
class PassiveCounting(PassiveCount):
    """`side` holds the puck: the count starts."""

    code = "notice.passive_counting"


@dataclass(frozen=True)
class PassiveCleared(PassiveCount):
    """Pressed again: the count is cleared."""

    code = "notice.passive_cleared"
