"""The referee's rulings of ITHF 4.5-4.7: a match played again (replay), a player who was not
at the table in time (forfeit), a player who leaves (walk-out).

`forfeit`: 30 s of match time after the start signal (the profile's `forfeit_window_s`; an
interruption adds its length, ITHF 10.2) a side that is not at the table and ready loses by
the profile's `forfeit_score` (0:5). Before that it is refused with the time the player still
has; from then on it is accepted as long as the absent side has not played (`has_played`),
only in the first period. A player who played and then leaves walks out instead (4.7): the
walker's goals are erased and the opponent gets `walkout_award` (5) on top of their own.
`replay` (4.5) plays the match again from the start with the goals kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from timerd.core.buttons import ButtonChord
from timerd.core.checks import SCORE_MAX, at_most, hours, scores
from timerd.core.commands import Command, arg
from timerd.core.effects import Effect, Notice, Phase, SignalKind
from timerd.core.refused import CommandRefused
from timerd.core.rule import CommandTable, RuleModule
from timerd.core.score import Ending, Side, parse_side
from timerd.core.settings import ProfileBase, Settings


@dataclass(frozen=True)
class Forfeit(Command):
    """ITHF 4.6: `side` was not at the table and ready in time."""

    name = "forfeit"
    side: Side = arg("home|away", parse_side)


@dataclass(frozen=True)
class Walkout(Command):
    """ITHF 4.7: `side` left mid-match."""

    name = "walkout"
    side: Side = arg("home|away", parse_side)


@dataclass(frozen=True)
class Replay(Command):
    """ITHF 4.5: the match again from the start, the goals kept."""

    name = "replay"


@dataclass(frozen=True)
class RulingSettings(Settings):
    """The rulings' keys of a profile (ITHF 4.6, 4.7)."""

    #: ITHF 4.6: a player not at the table and ready this long (match time) after the start
    #: signal forfeits; `forfeit` is accepted from then on, while the side has not played...
    forfeit_window_s: float = 30.0
    #: ...and gives this score: the absent side's goals, then the present side's.
    forfeit_score: tuple[int, ...] = (0, 5)
    #: ITHF 4.7: the goals the opponent of a player who walks out gets on top of their own.
    walkout_award: int = 5

    def problems(self, profile: ProfileBase) -> list[str]:
        out = hours(forfeit_window_s=self.forfeit_window_s)
        if self.forfeit_window_s < 0:
            out.append(f"forfeit_window_s = {self.forfeit_window_s:g}: must not be negative")
        if len(self.forfeit_score) != 2:
            out.append(f"forfeit_score = {list(self.forfeit_score)}: give two goal counts, "
                       "the absent side's and the present side's, e.g. [0, 5]")
        out += scores("forfeit_score", self.forfeit_score)
        if self.walkout_award < 0:
            out.append(f"walkout_award = {self.walkout_award}: must not be negative")
        return out + at_most(SCORE_MAX, "two digits on the scoreboard",
                             walkout_award=self.walkout_award)


class Rulings(RuleModule):
    """ITHF 4.5 replay, 4.6 forfeit and 4.7 walk-out."""

    name = "rulings"
    settings = RulingSettings
    declares = (Forfeit, Walkout, Replay)
    #: ITHF 4.6 without a keyboard: RESET held with the GOAL button of the side that is
    #: present (the one the forfeit score's goals go to) is the other side's forfeit.
    chords = (ButtonChord(("reset", "goal_home"), Forfeit(Side.AWAY)),
              ButtonChord(("reset", "goal_away"), Forfeit(Side.HOME)))

    def commands(self) -> CommandTable:
        return {Forfeit: self.forfeit, Walkout: self.walkout,
                Replay: lambda _, now: self.replay(now)}

    def forfeit(self, command: Forfeit, now: float) -> list[Effect]:
        """ITHF 4.6: `side` was not at the table and ready `forfeit_window_s` after the start
        signal, so it loses by the profile's `forfeit_score`."""
        match, profile = self.match, RulingSettings.of(self.match.profile)
        side = command.side
        window = profile.forfeit_window_s
        if match.phase in (Phase.SCHEDULED, Phase.PRE_SIGNAL):
            raise CommandRefused("forfeit_before_start", side=side.value, window=window)
        if match.period > 1 or match.overtime:
            raise CommandRefused("forfeit_later_period", window=window)
        if match.phase not in (Phase.RUNNING, Phase.PAUSED):
            raise CommandRefused("forfeit_not_in_play", window=window,
                                 phase=match.phase.value)
        played = match.play_s(now)
        if played < window:
            raise CommandRefused("forfeit_too_soon", side=side.value, window=window,
                                 left_s=round(window - played, 3),
                                 clock=match.profile.period_s - window)
        evidence = self.has_played(side)
        if evidence is not None:
            raise CommandRefused("forfeit_played", side=side.value, evidence=evidence[0],
                                 at=evidence[1], word=side.value)
        match.close_interruption(now)
        low, high = profile.forfeit_score
        match.sheet.forfeit(side, (low, high), played, now)
        return [match.sound(SignalKind.FINAL, now), *match.finish(Ending.FORFEIT, now, side)]

    def has_played(self, side: Side) -> tuple[str, float] | None:
        """ITHF 4.6: what shows that `side` was at the table after the start signal, or None.

        A counted goal of its own (one removed with `undo` no longer shows it), a passive-play
        count of its own (it held the puck, ITHF 8.1), or any faceoff after the start signal
        (marked, or `resume faceoff`): a faceoff needs both players at the table, so after one
        neither side is absent. A goal entry that did not count shows nothing: it may have
        been a mistaken press.
        """
        goal = next((g for g in self.match.sheet.goals
                     if g.side is side and g.counted and g.reason is None), None)
        if goal is not None:
            return "goal", round(goal.match_time_s, 3)
        return self.match.took_part.get(side)

    def walkout(self, command: Walkout, now: float) -> list[Effect]:
        """ITHF 4.7: `side` left mid-match: its goals are erased, the opponent gets five more.
        The final signal ends the match, unless it sounded already (a walk-out in the break
        before overtime, ITHF 4.8, ISBHF 411: it does not sound twice)."""
        match, side = self.match, command.side
        if match.phase not in (Phase.RUNNING, Phase.PAUSED, Phase.BREAK):
            raise match.why_not("walkout")
        match.close_interruption(now)
        award = RulingSettings.of(match.profile).walkout_award
        match.sheet.walkout(side, award, match.play_s(now), now)
        if match.phase is Phase.BREAK and (match.break_kind == "overtime" or match.overtime):
            return match.finish(Ending.WALKOUT, now, side)  # the break before overtime
        return [match.sound(SignalKind.FINAL, now), *match.finish(Ending.WALKOUT, now, side)]

    def replay(self, now: float) -> list[Effect]:
        """ITHF 4.5: play the match again from the start (the timer failed); both sides keep
        the goals they had. A new pre-signal sounds and the start follows after the lead."""
        match = self.match
        if match.phase not in (Phase.RUNNING, Phase.PAUSED, Phase.BREAK):
            raise match.why_not("replay")
        match.close_interruption(now)
        effects = match.restart(now)
        effects.append(Replayed(match.sheet.score()))
        return effects


@dataclass(frozen=True)
class Replayed(Notice):
    """ITHF 4.5: the match is played again from the start, each side keeping `score`."""

    code = "notice.replay"
    score: Mapping[Side, int]
