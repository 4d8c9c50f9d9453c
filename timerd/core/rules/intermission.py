"""Between and within the periods of ball hockey: the intermission (ISBHF 410), the early
intermission (407 !2) and the switch of ends (401, 407 !3).

The break itself is a phase of the match (`Phase.BREAK`, shared with the break before
overtime, ITHF 4.8 and ISBHF 411); this module decides that a period before the last is
followed by one, of the profile's length (`[intermission]`), or by none when it was taken
early, and starts it early on the referee's `early-intermission`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from timerd.core.checks import durations, hours
from timerd.core.commands import Command
from timerd.core.effects import Effect, Notice, Phase, Signal, SignalKind
from timerd.core.refused import CommandRefused
from timerd.core.rule import CommandTable, MatchView, RuleModule
from timerd.core.settings import ProfileBase, Settings


@dataclass(frozen=True)
class Intermission:
    """The break between periods (ISBHF 410: 10:00). It runs by itself, with a warning
    `warning_s` before its end and a signal at its end; the next period then starts with the
    referee's faceoff."""

    length_s: float = 600.0
    warning_s: float | None = 60.0
    #: ISBHF 407 !2: after an unforeseen delay in this much time left of a period that is not
    #: the last, the referee may start the intermission at once (none: not allowed).
    early_window_s: float | None = None

    def problems(self) -> list[str]:
        out = durations(length_s=self.length_s)
        out += hours(length_s=self.length_s, early_window_s=self.early_window_s)
        if self.early_window_s is not None and self.early_window_s <= 0:
            out.append(f"early_window_s = {self.early_window_s:g}: must be longer than 0 s "
                       "(or none)")
        if self.warning_s is not None and not 0 < self.warning_s < self.length_s:
            out.append(f"warning_s = {self.warning_s:g}: must lie inside the intermission, "
                       f"between 0 and {self.length_s:g} s (or none)")
        return out


@dataclass(frozen=True)
class IntermissionSettings(Settings):
    """The intermission's keys of a profile."""

    #: ISBHF 410: the break between periods.
    intermission: Intermission | None = None
    #: ISBHF 401: teams switch ends every period and overtime (shown in the status as
    #: `ends_switched`).
    switch_ends: bool = False

    def problems(self, profile: ProfileBase) -> list[str]:
        if "intermission" in profile.rules or not (self.intermission or self.switch_ends):
            return []
        return ["rules: [intermission] and switch_ends (ISBHF 410, 401) need `intermission` "
                "in rules"]


@dataclass(frozen=True)
class EarlyIntermission(Command):
    """ISBHF 407 !2: the intermission at once, after an unforeseen delay."""

    name = "early-intermission"


class Intermissions(RuleModule):
    """ISBHF 410 in a match: after each period but the last, an intermission that runs by
    itself (a warning before its end, a signal at its end), the next period then waiting for
    the referee's faceoff; 407 !2: the `early-intermission` command; 401 and 407 !3: which
    ends the teams play on (`ends_switched`)."""

    name = "intermission"
    settings = IntermissionSettings
    #: ISBHF 401: the teams play on the ends they did not start on; 407 !2: this period's
    #: intermission was taken early. Each period's entry in the result: the time that was
    #: left when its intermission came early.
    shows = MappingProxyType({"ends_switched": False, "early_intermission": False})
    period_records = MappingProxyType({"early_intermission_left_s": None})
    declares = (EarlyIntermission,)

    @classmethod
    def offered(cls, profile: ProfileBase) -> frozenset[str]:
        """`early-intermission` only where the intermission may come early (ISBHF 407 !2:
        `early_window_s`)."""
        rest = IntermissionSettings.of(profile).intermission
        early = rest is not None and rest.early_window_s is not None
        return super().offered(profile) - (set() if early else {EarlyIntermission.name})

    def __init__(self, match: MatchView) -> None:
        super().__init__(match)
        self.own = IntermissionSettings.of(match.profile)
        self.rest = self.own.intermission or Intermission()
        #: ISBHF 407 !2: the time left in the current period when its intermission came early.
        self.early_left_s: float | None = None
        #: ISBHF 407 !3: switches of ends at half-time so far (outdoors).
        self.half_switches = 0

    def commands(self) -> CommandTable:
        return {EarlyIntermission: lambda _, now: self.early(now)}

    def early(self, now: float) -> list[Effect]:
        """ISBHF 407 !2: after an unforeseen delay in the last minutes of a period before the
        last, the intermission starts at once; the time left is played after it on the same
        ends, and the next period then follows without an intermission."""
        match, window = self.match, self.rest.early_window_s
        if window is None:
            raise CommandRefused("lacks_early_intermission", profile=match.profile.name)
        if match.phase is Phase.RUNNING:
            raise CommandRefused("stop_first")
        if match.phase is not Phase.PAUSED:
            raise match.why_not("early-intermission")
        if match.overtime or match.period >= match.profile.periods:
            raise CommandRefused("early_last_period")
        if self.early_left_s is not None:
            raise CommandRefused("early_taken")
        left = match.remaining_s(now)
        if left > window:
            raise CommandRefused("early_too_soon", left=round(left, 3), within=window)
        match.close_interruption(now)
        self.early_left_s = left
        notice = IntermissionComesEarly(round(left, 3), match.period)
        return [notice, *match.start_break("intermission", now, self.rest.length_s,
                                           self.rest.warning_s)]

    def planned_signal(self, signal: Signal) -> None:
        if signal.kind is SignalKind.HALF_PERIOD:
            self.half_switches += 1  # ISBHF 407 !3

    def next_period(self, at: float) -> list[Effect] | None:
        """ISBHF 410: the intermission; none if it was taken early (407 !2)."""
        if self.early_left_s is None:
            return self.match.start_break("intermission", at, self.rest.length_s,
                                          self.rest.warning_s)
        self.early_left_s = None
        return [*self.match.goto(Phase.PAUSED), NoIntermission()]

    def rewound(self) -> None:
        self.early_left_s = None
        self.half_switches = 0

    def status(self, now: float) -> Mapping[str, Any]:
        switches = self.match.period - 1 + self.half_switches  # 401: every period and overtime
        return {"ends_switched": self.own.switch_ends and switches % 2 == 1,
                "early_intermission": self.early_left_s is not None}

    def period_record(self) -> Mapping[str, Any]:
        return {"early_intermission_left_s": self.early_left_s}


@dataclass(frozen=True)
class IntermissionComesEarly(Notice):
    """ISBHF 407 !2: the intermission comes early, `left` seconds before period `period`'s
    end."""

    code = "notice.early_intermission"
    left: float
    period: int


@dataclass(frozen=True)
class NoIntermission(Notice):
    """ISBHF 407 !2: no intermission after this period; it was taken early."""

    code = "notice.no_intermission"
