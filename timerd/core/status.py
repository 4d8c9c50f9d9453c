"""What the operator, the displays and the tools see of a match at one instant (`Status`), and
the records it keeps of how it was played (interruptions, periods)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from timerd.core.display import ClockFace, clock_face
from timerd.core.effects import Phase


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
