"""What a profile says, as data: the phase machine's own settings (`ProfileBase`) and
`Settings`, the part of a profile a rule module owns.

A profile says how long a period is, how many there are, whether the clock runs through play
(ITHF 4.2) or only between faceoff and whistle, how long the pre-signal leads the start, and
where in each period the timed signals sound: `ProfileBase`. Everything else (passive play's
count, the penalties, the timeouts, the intermission...) belongs to the rule module that reads
it, declared there as a `Settings` dataclass (`RuleModule.settings`); `timerd.core.profile`
composes `Profile`, one flat table as the TOML file has it, from the base and every registered
module's settings.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, Self

from timerd.core.checks import at_most, hours, pattern, scores
from timerd.core.signals import SignalKind

#: ITHF 4.4: the pre-signal sounds 15 to 30 s before the start.
ITHF_LEAD_RANGE_S = (15.0, 30.0)

#: Signals whose place a profile may choose. The start, period ends and final are implied.
PLACEABLE = frozenset({SignalKind.INTERVAL, SignalKind.LAST_30})

#: ITHF 4.4 counts the minutes left in beeps; more than this cannot be counted by ear.
MAX_BEEPS = 20
#: Periods and placed signals a profile may have at most: more than either rulebook knows
#: (ISBHF 410: three periods), to catch a typo, not a club.
MAX_PERIODS = 9
MAX_SIGNALS = 60
#: Timeouts per team, rounds of a shootout, penalties of a team running at once (ISBHF 412:
#: one timeout; 414b: five rounds; two penalties): a team has no more players than this.
MAX_COUNT = 20


#: ITHF 4.4: the cue for the last 30 seconds sounds at this much time left.
ITHF_LAST_30_S = 30.0
#: ITHF 4.1: a match lasts five minutes, one period.
ITHF_MATCH_S = 300.0
_NOT_ITHF = "(set ithf_conformant = false for a training profile)"


def _left(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def ithf_4_1_length_problems(periods: int, period_s: float) -> list[str]:
    """ITHF 4.1, checked for a profile that says it conforms (issue 42 item 3): a match lasts
    five minutes, played as one period of 300 s. Each line names the key and the clause."""
    out = []
    if periods != 1:
        out.append(f"periods = {periods}: ITHF 4.1 plays a match as one period {_NOT_ITHF}")
    if abs(period_s - ITHF_MATCH_S) > 1e-6:
        out.append(f"period_s = {period_s:g}: ITHF 4.1 says a match lasts five minutes, "
                   f"{ITHF_MATCH_S:g} s {_NOT_ITHF}")
    return out


def ithf_4_4_signal_problems(signals: tuple[PlacedSignal, ...], period_s: float) -> list[str]:
    """ITHF 4.4, checked exactly for a profile that says it conforms (issue 28): one
    last-30 cue, at 0:30 left; interval signals either at the thirds of the period, or at
    every whole minute left with as many beeps as minutes are left (the fifths of a 5-minute
    match). Each line names the signal and the clause."""
    out = []
    cues = [(i, s) for i, s in enumerate(signals) if s.signal is SignalKind.LAST_30]
    if not cues:
        out.append(f"signals: ITHF 4.4 asks for the cue for the last 30 seconds at "
                   f"{_left(ITHF_LAST_30_S)} left {_NOT_ITHF}")
    out += [f"signals[{i}] last_30 at {_left(s.remaining_s)} left: ITHF 4.4 gives the cue "
            f"for the last 30 seconds at {_left(ITHF_LAST_30_S)} left {_NOT_ITHF}"
            for i, s in cues if abs(s.remaining_s - ITHF_LAST_30_S) > 1e-6]
    if len(cues) > 1:
        out.append(f"signals: {len(cues)} last_30 cues; ITHF 4.4 has one {_NOT_ITHF}")
    intervals = [(i, s) for i, s in enumerate(signals) if s.signal is SignalKind.INTERVAL]
    at = sorted((round(s.remaining_s, 6) for _, s in intervals), reverse=True)
    thirds = [round(period_s * 2 / 3, 6), round(period_s / 3, 6)]
    minutes = [float(60 * m) for m in range(math.ceil(period_s / 60) - 1, 0, -1)]
    if at == thirds:
        return out
    if at != minutes:
        shown = ", ".join(_left(a) for a in at) or "none"
        out.append(f"signals: the interval signals (at {shown} left) are neither at the "
                   f"thirds of the period ({', '.join(_left(t) for t in thirds)} left) nor "
                   f"at every whole minute left ({', '.join(_left(m) for m in minutes)}): "
                   f"ITHF 4.4 {_NOT_ITHF}")
        return out
    out += [f"signals[{i}] interval at {_left(s.remaining_s)} left has {s.beeps} beep(s): "
            f"ITHF 4.4 gives as many beeps as minutes are left, {round(s.remaining_s) // 60} "
            f"{_NOT_ITHF}" for i, s in intervals if s.beeps != round(s.remaining_s) // 60]
    return out


@dataclass(frozen=True)
class PlacedSignal:
    """A signal at a point of each period, counted as match time left (`remaining_s`)."""

    signal: SignalKind
    remaining_s: float
    beeps: int = 1


@dataclass(frozen=True)
class Overtime:
    """What follows a tie after regular time (ITHF 4.8: play-off matches).

    After the final signal a short break runs (`break_s`, with a warning `break_warning_s`
    before its end), then overtime starts with a new faceoff. `length_s` None: the clock counts
    up until the first counted goal (sudden death, ITHF 4.8); a number: a timed overtime
    (ball hockey, ISBHF 411).
    """

    length_s: float | None = None
    break_s: float = 30.0
    break_warning_s: float | None = 10.0
    #: True: overtime starts with its own signal at the break's end (ITHF 4.8). False: a stop
    #: clock's overtime waits after the break for the referee's faceoff (ISBHF 401).
    auto_start: bool = True
    #: ISBHF 414b: still tied after a timed overtime, a shootout of this many rounds (none: the
    #: tie stands).
    shootout_rounds: int | None = None

    def problems(self) -> list[str]:
        out = []
        if self.length_s is not None and self.length_s <= 0:
            out.append(f"length_s = {self.length_s:g}: must be longer than 0 s (or none)")
        if self.break_s < 0:
            out.append(f"break_s = {self.break_s:g}: must not be negative")
        if self.shootout_rounds is not None and self.shootout_rounds < 1:
            out.append(f"shootout_rounds = {self.shootout_rounds}: at least one (or none)")
        out += hours(length_s=self.length_s, break_s=self.break_s)
        out += at_most(MAX_COUNT, "ISBHF 414b: five rounds, then one round at a time",
                       shootout_rounds=self.shootout_rounds)
        if self.break_warning_s is not None and not 0 < self.break_warning_s < self.break_s:
            out.append(f"break_warning_s = {self.break_warning_s:g}: must lie inside the "
                       f"break, between 0 and {self.break_s:g} s (or none)")
        return out


#: Why a count after a faceoff or of passive play is at most a minute (their one reason,
#: shared by the guard here and passive play's count, `rules/passive.py`).
GUARD_WHY = "ITHF 5.6: 3 s; ITHF 8.3: 5 s"


@dataclass(frozen=True)
class ProfileBase:
    """The phase machine's settings: what every match has, whatever rule modules it lists."""

    name: str
    description: str = ""
    #: The rule modules of this profile (`timerd.core.rules.MODULES`): passive play (ITHF
    #: 8.3), the rulings (4.5-4.7), penalties, timeouts (ISBHF 412), the line change (404b),
    #: the goalie change (408), the intermission and the switch of ends (410, 407 !2, 401),
    #: the shootout (414b). None listed: a bare clock. Their settings are their own keys and
    #: sections (each module's `Settings`), or the rulebook's values where one is left out.
    rules: tuple[str, ...] = ()
    #: True for an ITHF table hockey profile: its pre-signal and signals are checked against
    #: ITHF 4.4. False (the neutral default) for ball hockey, training or house rules.
    ithf_conformant: bool = False
    #: "running": time runs even when the puck is not in play (ITHF 4.2); a pause is an
    #: interruption. "stop": net time, started and stopped by the referee (ISBHF 407).
    clock: Literal["running", "stop"] = "running"
    periods: int = 1
    period_s: float = 300.0  # ITHF 4.1: five minutes
    pre_signal_lead_s: float = 20.0  # ITHF 4.4
    signals: tuple[PlacedSignal, ...] = ()
    #: ITHF 5.6: goals within this many seconds of a faceoff do not count (none: no guard).
    faceoff_guard_s: float | None = None
    #: ITHF 4.8: overtime after a tie (play-off profiles); none: a tie stands.
    overtime: Overtime | None = None
    #: ISBHF 413a: points for a win, a tie and a loss, shown in the result (empty: none).
    points: tuple[int, ...] = ()
    #: ISBHF 407 !3: on outdoor rinks a signal at half of the last period and of a timed
    #: overtime, where the teams switch ends.
    half_period_signal: bool = False
    #: The horn relay (a loud 12 V horn): for each signal that blows it, one pulse as on, off,
    #: on, ... seconds. Empty: the horn stays silent.
    horn: Mapping[SignalKind, tuple[float, ...]] = field(
        default_factory=lambda: MappingProxyType({}))

    def problems(self) -> list[str]:
        """The phase machine's checks; each line starts with the key it is about."""
        out = []
        if len(self.name) > 40 or not self.name.isprintable():
            out.append(f"name = {self.name[:50]!r}: at most 40 printable characters on one "
                       "line (the status and the results show it)")
        if len(self.description) > 200:
            out.append(f"description: at most 200 characters (it has {len(self.description)})")
        if self.periods < 1:
            out.append(f"periods = {self.periods}: a match has at least one period")
        out += at_most(MAX_PERIODS, "ISBHF 410 has three", periods=self.periods)
        if self.period_s <= 0:
            out.append(f"period_s = {self.period_s}: a period must last longer than 0 s")
        out += hours(period_s=self.period_s)
        if self.pre_signal_lead_s < 0:
            out.append(f"pre_signal_lead_s = {self.pre_signal_lead_s}: must not be negative")
        out += at_most(300, "a pre-signal leads the start, ITHF 4.4: 15 to 30 s", " s",
                       pre_signal_lead_s=self.pre_signal_lead_s)
        lo, hi = ITHF_LEAD_RANGE_S
        if self.ithf_conformant and not lo <= self.pre_signal_lead_s <= hi:
            out.append(
                f"pre_signal_lead_s = {self.pre_signal_lead_s:g}: ITHF 4.4 asks for the "
                f"pre-signal {lo:g} to {hi:g} s before the start "
                "(set ithf_conformant = false for a training profile)"
            )
        if self.faceoff_guard_s is not None and self.faceoff_guard_s <= 0:
            out.append(f"faceoff_guard_s = {self.faceoff_guard_s:g}: must be longer than 0 s "
                       "(or none)")
        out += at_most(60, GUARD_WHY, " s", faceoff_guard_s=self.faceoff_guard_s)
        if self.points and len(self.points) != 3:
            out.append(f"points = {list(self.points)}: give three, for a win, a tie and a loss")
        out += scores("points", self.points)
        for i, s in enumerate(self.signals):
            where = f"signals[{i}]"
            if s.signal not in PLACEABLE:
                allowed = ", ".join(sorted(PLACEABLE))
                out.append(f"{where}.signal = {s.signal!r}: a profile places only {allowed}")
            if not 0 < s.remaining_s < self.period_s:
                out.append(f"{where}.remaining_s = {s.remaining_s:g}: must lie inside the "
                           f"period, between 0 and {self.period_s:g} s")
            if s.beeps < 1:
                out.append(f"{where}.beeps = {s.beeps}: at least one beep")
            out += at_most(MAX_BEEPS, "ITHF 4.4: a beep for each minute left; more cannot be "
                           "counted by ear", **{f"{where}.beeps": s.beeps})
        if self.ithf_conformant:
            out += ithf_4_1_length_problems(self.periods, self.period_s)
            out += ithf_4_4_signal_problems(self.signals, self.period_s)
        if len(self.signals) > MAX_SIGNALS:
            out.append(f"signals: at most {MAX_SIGNALS} placed signals (one a minute of an "
                       "hour's period)")
        for kind, blast in self.horn.items():
            out += pattern(f"horn.{kind}", blast)
        return out


@dataclass(frozen=True)
class Settings:
    """A rule module's part of a profile (`RuleModule.settings`): its keys as fields, with the
    rulebook's values as defaults, merged flat into `Profile` (a key is written in the
    profile's file as it is named here, a section as a nested dataclass, e.g. `[timeouts]`),
    and its checks. The module reads it back typed with `of(profile)`."""

    @classmethod
    def of(cls, profile: ProfileBase) -> Self:
        """This module's settings as `profile` has them."""
        return cls(**{f.name: getattr(profile, f.name) for f in dataclasses.fields(cls)})

    def problems(self, profile: ProfileBase) -> list[str]:
        """Its lines of `Profile.problems()` (`profile`: the whole, for a check across
        modules); each starts with the key it is about."""
        return []
