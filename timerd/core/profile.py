"""Rule profiles: what a match is, as data. The core reads a profile; it has no `if ithf:`.

A profile says how long a period is, how many there are, whether the clock runs through play
(ITHF 4.2) or only between faceoff and whistle, how long the pre-signal leads the start, and
where in each period the timed signals sound. Built-in profiles are TOML files in
`timerd/profiles/`; a user's own file has the same shape.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from timerd.core.checks import SCORE_MAX, at_most, durations, hours, pattern, scores
from timerd.core.effects import SignalKind

#: ITHF 4.4: the pre-signal sounds 15 to 30 s before the start.
ITHF_LEAD_RANGE_S = (15.0, 30.0)

#: Signals whose place a profile may choose. The start, period ends and final are implied.
PLACEABLE = frozenset({SignalKind.INTERVAL, SignalKind.LAST_30})

#: The longest `start_horizon_s` a profile may set: a day.
MAX_START_HORIZON_S = 86400.0

#: ITHF 4.4 counts the minutes left in beeps; more than this cannot be counted by ear.
MAX_BEEPS = 20
#: Periods, placed signals, penalty kinds and line-change stages a profile may have at most:
#: more than either rulebook knows (ISBHF 410: three periods), to catch a typo, not a club.
MAX_PERIODS = 9
MAX_SIGNALS = 60
MAX_KINDS = 16
MAX_STAGES = 10
#: Timeouts per team, rounds of a shootout, penalties of a team running at once (ISBHF 412:
#: one timeout; 414b: five rounds; two penalties): a team has no more players than this.
MAX_COUNT = 20


#: ITHF 4.4: the cue for the last 30 seconds sounds at this much time left.
ITHF_LAST_30_S = 30.0
_NOT_ITHF = "(set ithf_conformant = false for a training profile)"


def _left(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


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
class TimeoutRule:
    """ISBHF 412: each team may take `per_team` timeouts of `length_s` in a match, asked for
    while the clock is stopped; both teams may not take one in the same stoppage."""

    per_team: int = 1
    length_s: float = 30.0

    def problems(self) -> list[str]:
        out = []
        if self.per_team < 1:
            out.append(f"per_team = {self.per_team}: at least one (or leave [timeouts] out)")
        out += at_most(MAX_COUNT, "ISBHF 412: one per team", per_team=self.per_team)
        return out + durations(length_s=self.length_s) + hours(length_s=self.length_s)


@dataclass(frozen=True)
class PenaltyKind:
    """One kind of penalty: how long it runs in game time, and how it affects the team."""

    duration_s: float
    #: The team plays one player short while it runs, so it counts toward `max_running` and a
    #: goal against the team is a power-play goal. False for a misconduct: the player sits out
    #: but is replaced at once.
    short_handed: bool = True
    #: A minor penalty ends early when the opponent scores while the team is short-handed.
    ends_on_goal: bool = False


def _default_penalty_kinds() -> Mapping[str, PenaltyKind]:
    return MappingProxyType({
        "minor": PenaltyKind(120.0, ends_on_goal=True),
        "major": PenaltyKind(300.0),
        "misconduct": PenaltyKind(600.0, short_handed=False),
    })


@dataclass(frozen=True)
class PenaltyRules:
    """Penalty clocks that run only while the game clock runs (minor 2:00, major 5:00,
    misconduct 10:00 by default); at most `max_running` short-handed penalties of a team run at
    once, the others wait their turn."""

    kinds: Mapping[str, PenaltyKind] = field(default_factory=_default_penalty_kinds)
    max_running: int = 2

    def problems(self) -> list[str]:
        out = []
        if not self.kinds:
            out.append("kinds: give at least one kind (or leave [penalties] out)")
        if len(self.kinds) > MAX_KINDS:
            out.append(f"kinds: at most {MAX_KINDS} kinds of penalty (ISBHF knows three)")
        for name, kind in self.kinds.items():
            out += durations(**{f"kinds.{name}.duration_s": kind.duration_s})
            out += hours(**{f"kinds.{name}.duration_s": kind.duration_s})
        if self.max_running < 1:
            out.append(f"max_running = {self.max_running}: at least one")
        return out + at_most(MAX_COUNT, "a team has no more players to send off",
                             max_running=self.max_running)


@dataclass(frozen=True)
class LineChangeRule:
    """ISBHF 404b: in a stoppage the visitors get 5 s to change, then the home team 5 s, then
    the teams have 5 s to line up for the faceoff; a signal after each stage."""

    stages: tuple[str, ...] = ("visitors", "home", "faceoff")
    stage_s: float = 5.0

    def problems(self) -> list[str]:
        out = []
        if not self.stages:
            out.append("stages: give at least one stage")
        if len(self.stages) > MAX_STAGES:
            out.append(f"stages: at most {MAX_STAGES} stages (ISBHF 404b has three)")
        return out + durations(stage_s=self.stage_s) + at_most(
            60, "ISBHF 404b: 5 s a stage", " s", stage_s=self.stage_s)


#: The rule modules a profile may list (`timerd.core.rules.MODULES`): each is one feature.
RULE_NAMES = ("passive", "rulings", "penalties", "timeouts", "line_change", "goalie_change",
              "intermission", "shootout")


@dataclass(frozen=True)
class Profile:
    name: str
    description: str = ""
    #: The rule modules of this profile (RULE_NAMES): passive play (ITHF 8.3), the rulings
    #: (4.5-4.7), penalties, timeouts (ISBHF 412), the line change (404b), the goalie change
    #: (408), the intermission and the switch of ends (410, 407 !2, 401), the shootout (414b).
    #: None listed: a bare clock. Their settings are the sections
    #: below, or the rulebook's values where a section is left out.
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
    #: The furthest ahead a start may be scheduled (`start_in`, hall mode's `start_round`):
    #: a round starts within the hour it is called; an instant beyond is a typo or a forged
    #: command, and 1e308 s once bricked a table (issue 34).
    start_horizon_s: float = 3600.0
    signals: tuple[PlacedSignal, ...] = ()
    #: ITHF 5.6: goals within this many seconds of a faceoff do not count (none: no guard).
    faceoff_guard_s: float | None = None
    #: ITHF 10.3: with a running clock, a goal during an interruption does not count. A stop
    #: clock (ISBHF 407) stops at every whistle, goals included, so it sets this true.
    goals_count_while_stopped: bool = False
    #: ITHF 8.3: the passive-play count (none: not timed).
    passive_play_s: float | None = 5.0
    #: ITHF 4.6: a player not at the table and ready this long (match time) after the start
    #: signal forfeits; `forfeit` is accepted from then on, while the side has not played...
    forfeit_window_s: float = 30.0
    #: ...and gives this score: the absent side's goals, then the present side's.
    forfeit_score: tuple[int, ...] = (0, 5)
    #: ITHF 4.7: the goals the opponent of a player who walks out gets on top of their own.
    walkout_award: int = 5
    #: ISBHF 420 !1: a goal may be revoked (`undo`) only until the faceoff that follows it.
    undo_until_faceoff: bool = False
    #: ITHF 6.1 with 4.8, ISBHF 420 !1 with 411: `undo` of the entry that ended the match
    #: reopens it up to this long after the end (and until RESET or the next match).
    reopen_within_s: float = 600.0
    #: ITHF 4.8: overtime after a tie (play-off profiles); none: a tie stands.
    overtime: Overtime | None = None
    #: ISBHF 410: the break between periods (the `intermission` rule module's settings).
    intermission: Intermission | None = None
    #: ISBHF 401: teams switch ends every period and overtime (shown in the status by the
    #: `intermission` rule module).
    switch_ends: bool = False
    #: ISBHF 413a: points for a win, a tie and a loss, shown in the result (empty: none).
    points: tuple[int, ...] = ()
    #: ISBHF 412: timeouts (none: this profile has none).
    timeouts: TimeoutRule | None = None
    #: Penalty clocks (none: this profile has none).
    penalties: PenaltyRules | None = None
    #: ISBHF 404b: the line-change helper (none: not offered).
    line_change: LineChangeRule | None = None
    #: ISBHF 408: time a team gets to dress a new goalie (none: no countdown).
    goalie_change_s: float | None = None
    #: ISBHF 407 !3: on outdoor rinks a signal at half of the last period and of a timed
    #: overtime, where the teams switch ends.
    half_period_signal: bool = False
    #: The horn relay (a loud 12 V horn): for each signal that blows it, one pulse as on, off,
    #: on, ... seconds. Empty: the horn stays silent.
    horn: Mapping[SignalKind, tuple[float, ...]] = field(
        default_factory=lambda: MappingProxyType({}))

    def problems(self) -> list[str]:
        out = self._rule_problems()
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
        out += hours(period_s=self.period_s, goalie_change_s=self.goalie_change_s,
                     forfeit_window_s=self.forfeit_window_s,
                     reopen_within_s=self.reopen_within_s)
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
        if self.passive_play_s is not None and self.passive_play_s <= 0:
            out.append(f"passive_play_s = {self.passive_play_s:g}: must be longer than 0 s "
                       "(or none)")
        out += at_most(60, "ITHF 5.6: 3 s; ITHF 8.3: 5 s", " s",
                       faceoff_guard_s=self.faceoff_guard_s, passive_play_s=self.passive_play_s)
        if self.forfeit_window_s < 0:
            out.append(f"forfeit_window_s = {self.forfeit_window_s:g}: must not be negative")
        if len(self.forfeit_score) != 2:
            out.append(f"forfeit_score = {list(self.forfeit_score)}: give two goal counts, "
                       "the absent side's and the present side's, e.g. [0, 5]")
        out += scores("forfeit_score", self.forfeit_score)
        if self.points and len(self.points) != 3:
            out.append(f"points = {list(self.points)}: give three, for a win, a tie and a loss")
        out += scores("points", self.points)
        if self.walkout_award < 0:
            out.append(f"walkout_award = {self.walkout_award}: must not be negative")
        out += at_most(SCORE_MAX, "two digits on the scoreboard", walkout_award=self.walkout_award)
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
            out += ithf_4_4_signal_problems(self.signals, self.period_s)
        if len(self.signals) > MAX_SIGNALS:
            out.append(f"signals: at most {MAX_SIGNALS} placed signals (one a minute of an "
                       "hour's period)")
        if self.goalie_change_s is not None and self.goalie_change_s <= 0:
            out.append(f"goalie_change_s = {self.goalie_change_s:g}: must be longer than 0 s "
                       "(or none)")
        for kind, blast in self.horn.items():
            out += pattern(f"horn.{kind}", blast)
        return out

    def _rule_problems(self) -> list[str]:
        out = [f"rules: {name!r} is not a rule module; known: {', '.join(RULE_NAMES)}"
               for name in self.rules if name not in RULE_NAMES]
        if self.reopen_within_s < 0:
            out.append(f"reopen_within_s = {self.reopen_within_s:g}: must not be negative "
                       "(0: a finished match is never reopened)")
        if len(set(self.rules)) < len(self.rules):
            out.append("rules: a rule module is listed twice")
        if not 0 < self.start_horizon_s <= MAX_START_HORIZON_S:
            out.append(f"start_horizon_s = {self.start_horizon_s:g}: longer than 0 s and at "
                       f"most {MAX_START_HORIZON_S:g} s (a day: a start is called the day of "
                       "the round)")
        rounds = None if self.overtime is None else self.overtime.shootout_rounds
        if ("shootout" in self.rules) != (rounds is not None):
            out.append("rules: a shootout (ISBHF 414b) needs both `shootout` in rules and "
                       "[overtime] shootout_rounds")
        if "intermission" not in self.rules and (self.intermission or self.switch_ends):
            out.append("rules: [intermission] and switch_ends (ISBHF 410, 401) need "
                       "`intermission` in rules")
        return out
