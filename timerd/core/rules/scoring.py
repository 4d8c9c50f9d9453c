"""The score desk: goals (ITHF 5.1, 5.6, 6.5, 10.3, 4.8), faceoffs (5.6, 7.1, 10.4) and the
sides' names (the undo of an entry is `rules.corrections`). Every match has it, whatever its profile
(`timerd.core.rules.BUILT_IN`): a bare clock keeps the score too, with no guard unless the
profile sets `faceoff_guard_s`.

The phase machine keeps the faceoff guard itself (a resume or the start signal is a faceoff);
this module decides what an entered goal is worth and marks the faceoffs the operator calls.
"""

from __future__ import annotations

from dataclasses import dataclass

from timerd.core.buttons import Button
from timerd.core.commands import Command, arg
from timerd.core.effects import Effect, FaceoffGuardChanged, Notice, Phase, SignalKind
from timerd.core.record import names
from timerd.core.refused import CommandRefused
from timerd.core.rule import CommandTable, RuleModule, Step
from timerd.core.score import Ending, GoalReason, Side, parse_player, parse_side, shirt_numbers
from timerd.core.score import Goal as Entry
from timerd.core.settings import ProfileBase, Settings


@dataclass(frozen=True)
class Goal(Command):
    """A goal for `side`, with the scorer's and up to two assistants' shirt numbers (ISBHF
    420-422)."""

    name = "goal"
    side: Side = arg("home|away", parse_side)
    scorer: str | None = arg("scorer", parse_player, optional=True)
    assists: tuple[str, ...] = arg("assist", parse_player, repeat=2)

    def __post_init__(self) -> None:
        shirt_numbers(players(self.scorer, self.assists))  # a player named twice is refused


def players(scorer: str | None, assists: tuple[str, ...]) -> tuple[str, ...]:
    """A goal's scorer and assistants as shirt numbers, in that order."""
    return (*([scorer] if scorer else []), *assists)


@dataclass(frozen=True)
class Teams(Command):
    """The two sides' names and, from a tournament desk, the round."""

    name = "teams"
    home: str = arg("home-name")
    away: str = arg("away-name")
    round: str | None = arg("round", optional=True)


@dataclass(frozen=True)
class Faceoff(Command):
    """A faceoff (ITHF 5.6, 7.1, 10.4)."""

    name = "faceoff"


@dataclass(frozen=True)
class ScoringSettings(Settings):
    """The score desk's key of a profile."""

    #: ITHF 10.3: with a running clock, a goal during an interruption does not count. A stop
    #: clock (ISBHF 407) stops at every whistle, goals included, so it sets this true.
    goals_count_while_stopped: bool = False


class Scoring(RuleModule):
    """Goals, faceoffs and names: the commands every profile has."""

    name = "scoring"
    settings = ScoringSettings
    declares = (Teams, Goal, Faceoff)
    buttons = (
        Button("goal_home", "The home side's GOAL button (ITHF 5.6).",
               press=Goal(Side.HOME), pin=23, keys=("KEY_KP7",), panel="h",
               panel_help="key.goal"),
        Button("goal_away", "The away side's GOAL button (ITHF 5.6).",
               press=Goal(Side.AWAY), pin=24, keys=("KEY_KP9",), panel="a"),
        Button("faceoff", "The FACEOFF button: the puck is dropped, the face-off guard starts "
               "(ITHF 5.6).", press=Faceoff(), pin=25, keys=("KEY_KP5",), panel="f",
               panel_help="key.faceoff"),
    )

    @classmethod
    def offered(cls, profile: ProfileBase) -> frozenset[str]:
        """`faceoff` only where a guard runs after it (ITHF 5.6: ball hockey's faceoff is the
        referee's START, ISBHF 401)."""
        if profile.faceoff_guard_s is not None:
            return super().offered(profile)
        return super().offered(profile) - {Faceoff.name}

    def commands(self) -> CommandTable:
        return {Teams: self.set_teams, Goal: self.goal,
                Faceoff: lambda _, now: self.mark_faceoff(now)}

    def next_step(self) -> Step | None:
        """ITHF 5.6: the end of the faceoff guard (its LED goes out), in play."""
        match = self.match
        if match.phase is not Phase.RUNNING or match.guard.until_s is None:
            return None
        due = match.when_played(match.guard.until_s)
        return None if due is None else (due, self._guard_over)

    def _guard_over(self, at: float) -> list[Effect]:
        self.match.guard.until_s = None
        return [FaceoffGuardChanged(active=False)]

    def goal(self, command: Goal, now: float) -> list[Effect]:
        """Enter a goal, optionally with the scorer's and up to two assistants' shirt numbers
        (ISBHF 420-422). It counts unless it came before the start (ITHF 5.1), inside the
        faceoff guard (5.6), at or after the final signal (6.5) or during an interruption
        (10.3); an entry that does not count is kept with its reason and sounds "no goal".
        The first counted goal of overtime ends the match (4.8). The rule modules answer
        every entry (`RuleModule.goal_entered`: a passive count ends, a power-play goal)."""
        match = self.match
        if match.phase in (Phase.IDLE, Phase.SHOOTOUT):
            raise match.why_not("goal")
        reason = self._rejection(now)
        goal = match.sheet.add(Entry(command.side, match.play_s(now), reason is None, reason,
                                     match.period, match.overtime, now, command.scorer,
                                     command.assists))
        effects: list[Effect] = [goal]
        if reason is not None:
            effects.append(match.sound(SignalKind.GOAL_REJECTED, now,
                                       remaining_s=match.remaining_s(now)))
        elif match.overtime:
            effects.append(match.sound(SignalKind.FINAL, now))
            effects.extend(match.finish(Ending.OVERTIME, now))
            return effects
        else:
            match.guard.pending = True  # play restarts with a faceoff at the centre
            effects.append(match.sound(SignalKind.GOAL, now, remaining_s=match.remaining_s(now)))
        effects.extend(match.goal_entered(goal, now))
        return effects

    def _rejection(self, now: float) -> GoalReason | None:
        """Why a goal entered at `now` does not count, if it does not."""
        match = self.match
        if match.phase is Phase.PRE_SIGNAL:
            return GoalReason.BEFORE_START
        if match.break_kind == "intermission":
            return GoalReason.INTERMISSION
        if match.phase in (Phase.BREAK, Phase.FINISHED):
            return GoalReason.FINAL_SIGNAL
        if match.phase is Phase.PAUSED and match.paused_since is None:
            return GoalReason.INTERMISSION  # the period awaits its first faceoff
        counts = ScoringSettings.of(match.profile).goals_count_while_stopped
        if match.phase is Phase.PAUSED and not counts:
            return GoalReason.INTERRUPTION
        if match.guard.active(match.play_s(now)):
            return GoalReason.FACEOFF_GUARD
        return None

    def mark_faceoff(self, now: float) -> list[Effect]:
        """Mark a faceoff (after a goal, a puck off the table, a "block" call, ITHF 7.1): the
        guard restarts (5.6). During an interruption it is kept for the resume (10.4)."""
        match = self.match
        if match.phase is Phase.RUNNING:
            match.both_took_part(("faceoff", match.play_s(now)))
            return match.faceoff_at(now) or [FaceoffMarked()]
        if match.phase is Phase.PAUSED:
            match.guard.pending = False
            match.guard.on_resume = True
            return [FaceoffKept()]
        if match.phase in (Phase.IDLE, Phase.PRE_SIGNAL):  # ITHF 5.1: the start is a faceoff
            raise CommandRefused("start_is_faceoff")
        raise match.why_not("faceoff")

    def set_teams(self, command: Teams, now: float) -> list[Effect]:
        """Name the two sides and, from a tournament desk, the round (`record.names`). Any
        phase: a name is put right mid-match without touching the clock."""
        self.match.teams, self.match.round, notice = names(command.home, command.away,
                                                          command.round or "")
        return [notice]



@dataclass(frozen=True)
class FaceoffMarked(Notice):
    """ITHF 5.6, 7.1: a faceoff marked while the clock runs: the guard restarts."""

    code = "notice.faceoff"


@dataclass(frozen=True)
class FaceoffKept(Notice):
    """ITHF 10.4: a faceoff marked during an interruption: the guard restarts on resume."""

    code = "notice.faceoff_marked"
