"""What the operator, the displays and the tools see of a match at one instant: `Status`, and
`snapshot`, which reads it off the match (the phase machine and its rule modules) at `now`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

from timerd.core.clock import MatchClock
from timerd.core.display import ClockFace, clock_face, next_change, tenth_only
from timerd.core.effects import Phase, Signal
from timerd.core.faceoff import FaceoffGuard
from timerd.core.profile import Profile
from timerd.core.record import Interruption, PeriodPlayed, periods_record
from timerd.core.rule import BreakKind, RuleModule
from timerd.core.score import Result, ScoreSheet, Side

#: What the rule modules show, as a profile without the module shows it (its key empty).
NOT_IN_PROFILE: dict[str, Any] = {
    "passive": dict.fromkeys(s.value for s in Side), "shootout": None, "timeouts": None,
    "penalties": [], "line_change": None, "goalie_change": {}, "ends_switched": False,
    "early_intermission": False}


@dataclass(frozen=True)
class Status:
    """What the operator, the displays and the tools see, computed at one instant."""

    profile: str
    phase: Phase
    period: int
    periods: int
    clock_running: bool
    period_s: float
    remaining_s: float  # 0 while a sudden-death overtime counts up (see overtime_s)
    elapsed_s: float
    start_in_s: float | None  # before the start or the overtime start: time until its signal
    interruption_s: float | None  # while paused: how long this interruption has lasted
    interruptions: int
    paused_total_s: float
    last_signal: str | None
    last_signal_remaining_s: float | None
    score: dict[str, int]
    goals: list[dict[str, Any]]  # every entry, counted or not (`Goal.to_dict`)
    faceoff_guard_s: float | None  # ITHF 5.6: guard time left while goals cannot count
    faceoff_pending: bool  # a counted goal awaits the faceoff that restarts play
    overtime: bool
    overtime_s: float | None  # overtime played so far (the count-up clock, ITHF 4.8)
    count_up: bool  # the shown clock is overtime_s counting up, not remaining_s
    passive: dict[str, float | None]  # ITHF 8.3: count left per side, 0 once warned
    result: dict[str, Any] | None  # once finished: `Result.to_dict` and the interruptions
    break_kind: str | None  # in a break: "overtime" (before it) or "intermission"
    ends_switched: bool  # ISBHF 401: the teams play on the ends they did not start on
    shootout: dict[str, Any] | None  # ISBHF 414b: attempts so far (`Shootout.to_dict`)
    #: ISBHF 412, when the profile has timeouts: per team {"left", "remaining_s"}, the time
    #: left on its running timeout or null.
    timeouts: dict[str, dict[str, Any]] | None
    #: Penalties not over: {"number", "side", "kind", "player", "remaining_s", "running"},
    #: running ones first (`PenaltyBox.shown`).
    penalties: list[dict[str, Any]]
    line_change: dict[str, Any] | None  # ISBHF 404b: {"stage", "number", "stages", "remaining_s"}
    goalie_change: dict[str, float]  # ISBHF 408: time left per team dressing a goalie
    early_intermission: bool  # ISBHF 407 !2: this period's intermission was taken early
    #: The players' or teams' names per side ("" when not given: the views say Home/Away),
    #: set by `teams`; kept over a reset, since the next match's names come the same way.
    teams: dict[str, str]
    round: str | None  # the tournament round the names belong to (hall mode), if given
    #: The match's one id (`Match.match_id`: the service's, from the set-up to the reset);
    #: null while no match is set up. The results line, the journal and hall mode carry it.
    match_id: str | None

    @property
    def clock_face(self) -> ClockFace:
        """What the big clock shows now (`timerd.core.display.clock_face`)."""
        goals = None
        if self.phase is Phase.SHOOTOUT and self.shootout is not None:
            goals = (self.shootout["goals"]["home"], self.shootout["goals"]["away"])
        return clock_face(remaining_s=self.remaining_s, count_up=self.count_up,
                          overtime_s=self.overtime_s, shootout_goals=goals,
                          break_left_s=self.start_in_s if self.phase is Phase.BREAK else None)

    def to_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["clock_face"] = self.clock_face.to_dict()
        return out


class Shown(Protocol):
    """What `snapshot` reads of a match (`timerd.core.match.Match`)."""

    profile: Profile
    phase: Phase
    period: int
    overtime: bool
    clock: MatchClock
    start_at: float | None
    paused_since: float | None
    interruptions: list[Interruption]
    last_signal: Signal | None
    sheet: ScoreSheet
    guard: FaceoffGuard
    result: Result | None
    replays: int
    rules: list[RuleModule]
    periods_played: list[PeriodPlayed]
    teams: dict[Side, str]
    round: str | None
    match_id: str | None
    break_kind: BreakKind | None

    def play_s(self, now: float) -> float: ...
    def remaining_s(self, now: float) -> float: ...
    def records(self) -> dict[str, Any]: ...


def snapshot(match: Shown, now: float) -> Status:
    """The match at `now`: the phase machine's clock, score and records, and what each of the
    profile's rule modules shows (`RuleModule.status`)."""
    paused_total = sum(i.length_s for i in match.interruptions)
    current = None
    if match.paused_since is not None:
        current = now - match.paused_since
        paused_total += current
    last = match.last_signal
    count_up = not math.isfinite(match.clock.length_s)
    in_play = match.phase in (Phase.RUNNING, Phase.PAUSED)
    teams = {side.value: name for side, name in match.teams.items()}
    result = None
    if match.result is not None:
        result = match.result.to_dict() | {
            "interruptions": [i.to_dict() for i in match.interruptions],
            "replays": match.replays,
            "periods": periods_record(match.periods_played, match.sheet.goals),
            "penalties": [], "timeouts": [], **match.records(), "teams": teams,
            "round": match.round}
    shown = dict(NOT_IN_PROFILE)
    for rule in match.rules:
        shown.update(rule.status(now))
    return Status(
        profile=match.profile.name,
        phase=match.phase,
        period=match.period,
        periods=match.profile.periods,
        clock_running=match.clock.running,
        period_s=match.profile.period_s if count_up else match.clock.length_s,
        remaining_s=match.remaining_s(now),
        elapsed_s=match.clock.elapsed(now),
        start_in_s=None if match.start_at is None else match.start_at - now,
        interruption_s=current,
        interruptions=len(match.interruptions) + (current is not None),
        paused_total_s=paused_total,
        last_signal=None if last is None else last.kind.value,
        last_signal_remaining_s=None if last is None else last.remaining_s,
        score={side.value: n for side, n in match.sheet.score().items()},
        goals=[g.to_dict() for g in match.sheet.goals],
        faceoff_guard_s=match.guard.remaining_s(match.play_s(now)) if in_play else None,
        faceoff_pending=match.guard.pending,
        overtime=match.overtime,
        overtime_s=match.clock.elapsed(now) if match.overtime else None,
        count_up=count_up,
        result=result,
        break_kind=match.break_kind,
        teams=teams,
        round=match.round,
        match_id=match.match_id,
        **shown,
    )


def next_shown_change(status: Status, now: float, tenths: bool) -> tuple[float, bool] | None:
    """When the shown clock (or pre-signal countdown, or interruption length) next changes,
    and whether only its tenths will (`Tick.tenth`); tenths only where `tenths` are shown."""
    if status.phase is Phase.RUNNING and status.count_up and status.overtime_s is not None:
        return now + 1.0 - (status.overtime_s % 1.0), False  # ITHF 4.8: overtime counts up
    counting_down = (Phase.SCHEDULED, Phase.PRE_SIGNAL, Phase.BREAK)
    left = status.remaining_s if status.phase is Phase.RUNNING else \
        status.start_in_s if status.phase in counting_down else None
    if left is not None:
        step = next_change(left, tenths)
        return now + step, tenth_only(left - step)
    if status.phase is Phase.PAUSED and status.interruption_s is not None:
        return now + 1.0 - (status.interruption_s % 1.0), False
    return None


class Timed(Protocol):
    """A match as `check` sees it."""

    def status(self, now: float) -> Status: ...

    def next_deadline(self) -> float | None: ...


def check(match: Timed, now: float) -> Status:
    """Raise (a defect: never CommandRefused) unless `match`, as it stands at `now`, can be
    shown and timed: its status, the shown clock's next change, a finite next deadline; the
    status, for the dispatch that hands it out. The service asks this of every command the
    match accepted before it hands the command to any output (the journal among them), and
    the journal's replay of every record it restores: a command the core took but cannot
    live with is never journalled, and a journal never holds what a restart would die of
    (issue 34)."""
    status = match.status(now)
    next_shown_change(status, now, tenths=True)
    deadline = match.next_deadline()
    if deadline is not None and not math.isfinite(deadline):
        raise ValueError(f"the match's next deadline is {deadline!r}")
    return status
