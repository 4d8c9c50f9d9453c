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

from timerd.core.display import elapsed_clock as mmss
from timerd.core.effects import CommandRefused, Effect, Notice, Phase, SignalKind
from timerd.core.rule import CommandTable, RuleModule
from timerd.core.score import Ending, Side


class Rulings(RuleModule):
    """ITHF 4.5 replay, 4.6 forfeit and 4.7 walk-out."""

    name = "rulings"
    absent = "has no rulings of ITHF 4.5-4.7 (replay, forfeit, walk-out)"
    command_names = frozenset({"forfeit", "walkout", "replay"})

    def commands(self) -> CommandTable:
        return {"forfeit": (self.forfeit, ("home|away",)),
                "walkout": (self.walkout, ("home|away",)),
                "replay": (self.replay, ())}

    def forfeit(self, now: float, side_word: str) -> list[Effect]:
        """ITHF 4.6: `side` was not at the table and ready `forfeit_window_s` after the start
        signal, so it loses by the profile's `forfeit_score`."""
        match, profile = self.match, self.match.profile
        side = match.side(side_word)
        window = profile.forfeit_window_s
        rule = (f"ITHF 4.6 gives {side} {window:g} s after the start signal to be at the "
                "table and ready")
        if match.phase in (Phase.SCHEDULED, Phase.PRE_SIGNAL):
            raise CommandRefused(f"forfeit refused: the start signal has not sounded; {rule}")
        if match.phase not in (Phase.RUNNING, Phase.PAUSED) or match.overtime or match.period > 1:
            why = match.why_not("forfeit").partition(": ")[2] if match.period == 1 else \
                "it is about the start of the match, and this is a later period"
            raise CommandRefused(f"forfeit refused: ITHF 4.6 applies from {window:g} s after "
                                 f"the start signal; {why}")
        played = match.play_s(now)
        if played < window:
            clock = mmss(profile.period_s - window)
            raise CommandRefused(f"forfeit refused: {rule}; {window - played:.1f} s left "
                                 f"(a forfeit is possible from {clock} on the clock)")
        evidence = self.has_played(side)
        if evidence is not None:
            raise CommandRefused(f"forfeit refused: {side} has played ({evidence}), so ITHF "
                                 f"4.6 no longer applies; a player who leaves walks out "
                                 f"(`walkout {side}`, ITHF 4.7)")
        match.close_interruption(now)
        low, high = profile.forfeit_score
        match.sheet.forfeit(side, (low, high), played, now)
        return [match.sound(SignalKind.FINAL, now), *match.finish(Ending.FORFEIT, now, side)]

    def has_played(self, side: Side) -> str | None:
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
            return f"a counted goal at {mmss(goal.match_time_s)}"
        return self.match.took_part.get(side)

    def walkout(self, now: float, side_word: str) -> list[Effect]:
        """ITHF 4.7: `side` left mid-match: its goals are erased, the opponent gets five more."""
        match = self.match
        side = match.side(side_word)
        if match.phase not in (Phase.RUNNING, Phase.PAUSED, Phase.BREAK):
            raise CommandRefused(match.why_not("walkout"))
        match.close_interruption(now)
        match.sheet.walkout(side, match.profile.walkout_award, match.play_s(now), now)
        return [match.sound(SignalKind.FINAL, now), *match.finish(Ending.WALKOUT, now, side)]

    def replay(self, now: float) -> list[Effect]:
        """ITHF 4.5: play the match again from the start (the timer failed); both sides keep
        the goals they had. A new pre-signal sounds and the start follows after the lead."""
        match = self.match
        if match.phase not in (Phase.RUNNING, Phase.PAUSED, Phase.BREAK):
            raise CommandRefused(match.why_not("replay"))
        match.close_interruption(now)
        effects = match.restart(now)
        score = match.sheet.score()
        effects.append(Notice(f"replay from the start (ITHF 4.5): goals kept, "
                              f"{score[Side.HOME]}:{score[Side.AWAY]}"))
        return effects
