"""A start at a given instant (hall mode: every table of a round starts together), ITHF 4.4.

`start-in <seconds>` schedules the start signal; the pre-signal is planned the profile's lead
before it. Every match has this module (`timerd.core.rules.BUILT_IN`): the tournament desk
sends the command to whatever profile a table runs.

A stop clock (ball hockey, ISBHF 407 !1) runs only from the referee's faceoff: its scheduled
instant brings the match to "ready for the faceoff", the clock standing as at every later
period start (415a, ISBHF 401), with the profile's pre-signal then if it has one (no lead);
START, the faceoff, starts the clock and sounds the start signal.
"""

from __future__ import annotations

from dataclasses import dataclass

from timerd.core.commands import Command, arg, finite
from timerd.core.commands import seconds as read_seconds
from timerd.core.effects import Effect, Notice, Phase, SignalKind
from timerd.core.record import round_of
from timerd.core.refused import CommandRefused
from timerd.core.rule import CommandTable, RuleModule, Step
from timerd.core.settings import ITHF_LEAD_RANGE_S, ProfileBase, Settings


@dataclass(frozen=True)
class StartIn(Command):
    """From idle: the start signal `seconds` from now, in tournament round `round` (hall
    mode's `start_round`)."""

    name = "start-in"
    seconds: float = arg("seconds", read_seconds)
    round: str | None = arg("round", optional=True)

    def __post_init__(self) -> None:
        finite(self.seconds)  # a value made in code (hall mode) is held to the same bound


#: The longest `start_horizon_s` a profile may set: a day.
MAX_START_HORIZON_S = 86400.0


@dataclass(frozen=True)
class ScheduleSettings(Settings):
    """The scheduled start's key of a profile."""

    #: The furthest ahead a start may be scheduled (`start_in`, hall mode's `start_round`):
    #: a round starts within the hour it is called; an instant beyond is a typo or a forged
    #: command, and 1e308 s once bricked a table (issue 34).
    start_horizon_s: float = 3600.0

    def problems(self, profile: ProfileBase) -> list[str]:
        if 0 < self.start_horizon_s <= MAX_START_HORIZON_S:
            return []
        return [f"start_horizon_s = {self.start_horizon_s:g}: longer than 0 s and at most "
                f"{MAX_START_HORIZON_S:g} s (a day: a start is called the day of the round)"]


def min_pre_signal_lead_s(profile: ProfileBase) -> float:
    """The shortest pre-signal a scheduled start may keep: ITHF 4.4's 15 s, or the profile's
    own lead when that is shorter (a training profile)."""
    return min(ITHF_LEAD_RANGE_S[0], profile.pre_signal_lead_s)


class ScheduledStart(RuleModule):
    """The SCHEDULED phase: from idle to the pre-signal at its planned instant."""

    name = "scheduled_start"
    settings = ScheduleSettings
    declares = (StartIn,)

    def commands(self) -> CommandTable:
        return {StartIn: self.start_in}

    def start_in(self, command: StartIn, now: float) -> list[Effect]:
        """From idle: the start signal sounds `seconds` from now; `round_name`, when given,
        names the tournament round the match is played in (hall mode's `start_round`), checked
        as `teams` checks it and journalled with the start, so that a table restarted
        mid-round keeps its round (issue 30).

        When the start is closer than the profile's lead but still at least
        `min_pre_signal_lead_s` away, the pre-signal sounds at once with the shorter lead, so
        every table of the round still starts at the same instant; closer than that, the start
        is refused. A start that is due at once (a zero lead) is fired by `Match.handle`.
        A start further ahead than the profile's `start_horizon_s` (an hour), or a number
        that is not finite, is refused: no instant a tool sends can put the clock beyond what
        it can show or time (issue 34: `start_in 1e308` once bricked a table).
        """
        lead_s, round_name = command.seconds, command.round
        match = self.match
        horizon_s = ScheduleSettings.of(match.profile).start_horizon_s
        if lead_s > horizon_s:
            raise CommandRefused("start_too_far", ahead_s=lead_s, horizon_s=horizon_s)
        if match.phase is not Phase.IDLE:
            raise match.why_not("start")
        shortest = min_pre_signal_lead_s(match.profile)
        if lead_s < shortest:
            raise CommandRefused("start_too_late", lead_s=round(lead_s, 3), shortest_s=shortest)
        round_id = None if round_name is None else round_of(round_name)
        match.start_at = now + lead_s
        if round_name is not None:
            match.round = round_id
        if lead_s > match.profile.pre_signal_lead_s or match.profile.clock == "stop":
            return match.goto(Phase.SCHEDULED)
        effects = match.pre_signal(now)
        if lead_s < match.profile.pre_signal_lead_s:
            effects.append(LateStart(round(lead_s, 3)))
        return effects

    def next_step(self) -> Step | None:
        """The pre-signal, the profile's lead before the scheduled start (ITHF 4.4)."""
        match = self.match
        if match.phase is not Phase.SCHEDULED or match.start_at is None:
            return None
        if match.profile.clock == "stop":
            return match.start_at, self.ready_for_faceoff
        return match.start_at - match.profile.pre_signal_lead_s, match.pre_signal

    def ready_for_faceoff(self, at: float) -> list[Effect]:
        """ISBHF 401, 407 !1: the scheduled instant of a stop clock's match: stopped, ready
        for the referee's faceoff (START), which starts the clock (`Match.resume`)."""
        match = self.match
        match.start_at = None
        effects = match.goto(Phase.PAUSED)
        if match.profile.pre_signal_lead_s > 0:  # the profile's own signal for it
            effects.append(match.sound(SignalKind.PRE_SIGNAL, at,
                                       remaining_s=match.profile.period_s))
        effects.append(ReadyForFaceoff())
        return effects


@dataclass(frozen=True)
class LateStart(Notice):
    """ITHF 4.4: the start was set `lead_s` seconds ahead, less than the pre-signal's lead:
    the pre-signal sounds at once."""

    code = "notice.late_start"
    lead_s: float


@dataclass(frozen=True)
class ReadyForFaceoff(Notice):
    """ISBHF 401, 407 !1: a stop clock's scheduled instant came; START is the faceoff."""

    code = "notice.ready_for_faceoff"
