"""The match state machine: commands and time in, effects out.

`handle(command, now)` applies an operator's command; `poll(now)` fires whatever is due by
`now`; `next_deadline()` tells the service when to call `poll` next. Both `handle` and `poll`
return the effects (signals to sound, phase changes, goals, notices) in the order they happen.
Every signal is planned in match time, so an interruption moves all later signals with it
(ITHF 10.2), and each one fires exactly once however late `poll` is called.

The match composes the rule modules rather than holding their state itself: the score sheet
(`score.py`), the faceoff guard and passive-play count (`faceoff.py`), the clock (`clock.py`),
the shootout (`shootout.py`), penalty clocks (`penalties.py`), timeouts (`timeouts.py`) and the
countdowns of a stoppage (`countdowns.py`). It decides, from the phase and the time, whether a
goal counts, whether a command is allowed now, and when a period, a break or the match ends.
Each module is present only when the profile asks for it: there are no per-sport branches.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from timerd.core.clock import MatchClock
from timerd.core.countdowns import GoalieChange, LineChange
from timerd.core.display import ClockFace, clock_face
from timerd.core.effects import (
    CommandRefused,
    Effect,
    FaceoffGuardChanged,
    Notice,
    Phase,
    PhaseChanged,
    Signal,
    SignalKind,
)
from timerd.core.faceoff import FaceoffGuard, PassivePlay
from timerd.core.penalties import Penalty, PenaltyBox, parse_player
from timerd.core.profile import ITHF_LEAD_RANGE_S, Overtime, Profile
from timerd.core.score import Ending, Goal, GoalReason, Result, ScoreSheet, Side, parse_side
from timerd.core.shootout import Shootout
from timerd.core.timeouts import Timeouts

#: What a timed break leads to.
BreakKind = Literal["overtime", "intermission"]

#: Signals that acknowledge a press rather than mark match time; not shown as "last signal".
ACKNOWLEDGEMENTS = frozenset({SignalKind.PAUSE, SignalKind.RESUME, SignalKind.GOAL,
                              SignalKind.GOAL_REJECTED})


@dataclass(frozen=True)
class PlannedSignal:
    """A signal at `at_elapsed_s` of net time into a period."""

    at_elapsed_s: float
    kind: SignalKind
    beeps: int
    remaining_s: float


def signal_plan(profile: Profile, period: int) -> tuple[PlannedSignal, ...]:
    """The timed signals of one period, in order, ending with its period-end or final signal."""
    length = profile.period_s
    placed = [PlannedSignal(length - s.remaining_s, s.signal, s.beeps, s.remaining_s)
              for s in profile.signals]
    end = SignalKind.FINAL if period == profile.periods else SignalKind.PERIOD_END
    placed.append(PlannedSignal(length, end, 1, 0.0))
    if profile.half_period_signal and period == profile.periods:
        placed.append(_half(length))
    return tuple(sorted(placed, key=lambda p: p.at_elapsed_s))


def overtime_plan(overtime: Overtime, half: bool = False) -> tuple[PlannedSignal, ...]:
    """A timed overtime ends with the final signal (a period end if a shootout follows);
    an untimed one only with a goal. `half`: the outdoor half-time signal (ISBHF 407 !3)."""
    if overtime.length_s is None:
        return ()
    end = SignalKind.FINAL if overtime.shootout_rounds is None else SignalKind.PERIOD_END
    plan = [PlannedSignal(overtime.length_s, end, 1, 0.0)]
    if half:
        plan.insert(0, _half(overtime.length_s))
    return tuple(plan)


def _half(length_s: float) -> PlannedSignal:
    """ISBHF 407 !3: on outdoor rinks the teams switch ends at half of the last period and of
    overtime."""
    return PlannedSignal(length_s / 2, SignalKind.HALF_PERIOD, 1, length_s / 2)


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
    #: ISBHF 407 !2: the time that was left when the intermission came early, if it did.
    early_intermission_left_s: float | None = None


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


#: The longest name `teams` takes for a side or a round (a scoreboard line holds about that).
NAME_MAX = 40

#: A command's action and the names of its arguments ("name?" marks an optional one).
CommandTable = dict[str, tuple[Callable[..., list[Effect]], tuple[str, ...]]]


@dataclass
class Match:
    """One match under one profile, from idle to finished."""

    profile: Profile
    phase: Phase = Phase.IDLE
    period: int = 1
    overtime: bool = False
    clock: MatchClock = field(init=False)
    start_at: float | None = None  # when the start (or overtime start) signal is due
    paused_since: float | None = None
    interruptions: list[Interruption] = field(default_factory=list)
    last_signal: Signal | None = None
    sheet: ScoreSheet = field(default_factory=ScoreSheet)
    guard: FaceoffGuard = field(init=False)
    passive: PassivePlay = field(init=False)
    result: Result | None = None
    replays: int = 0  # ITHF 4.5: restarts from the start, goals kept
    #: ITHF 4.6: what showed, besides a counted goal, that a side was at the table after the
    #: start signal (a faceoff, its passive-play count), by side (`has_played`).
    took_part: dict[Side, str] = field(default_factory=dict)
    shootout: Shootout | None = None  # ISBHF 414b, once overtime ended tied
    penalty_box: PenaltyBox | None = field(init=False)
    timeouts: Timeouts | None = field(init=False)
    goalie_change: GoalieChange | None = field(init=False)
    line_change: LineChange | None = None  # ISBHF 404b, while one runs
    periods_played: list[PeriodPlayed] = field(default_factory=list)
    teams: dict[Side, str] = field(default_factory=lambda: dict.fromkeys(Side, ""))
    round: str | None = None
    _early_break_left_s: float | None = None  # ISBHF 407 !2, in the current period
    _half_switches: int = 0  # ISBHF 407 !3: switches of ends at half-time so far
    _played_before_s: float = 0.0  # net time of the periods before this one
    _break_warning_at: float | None = None
    _break_kind: BreakKind | None = None
    _plan: tuple[PlannedSignal, ...] = ()
    _next: int = 0
    #: What time produced in `handle` before its command was refused, and since when: the
    #: next `poll` or `handle` hands it out first, so a refusal never swallows a signal.
    _held: list[Effect] = field(default_factory=list)
    _held_at: float | None = None

    def __post_init__(self) -> None:
        self.guard = FaceoffGuard(self.profile.faceoff_guard_s)
        self.passive = PassivePlay(self.profile.passive_play_s)
        self._fresh_records()
        self._enter_period(1)

    # -- queries ---------------------------------------------------------------------------

    def play_s(self, now: float) -> float:
        """Net match time since the start signal, over every period and overtime."""
        return self._played_before_s + self.clock.elapsed(now)

    def next_deadline(self) -> float | None:
        """The monotonic instant at which `poll` has something to fire, if any."""
        upcoming = self._next_timed()
        due = [] if upcoming is None else [upcoming[0]]
        if self._held_at is not None:
            due.append(self._held_at)
        return min(due, default=None)

    def status(self, now: float) -> Status:
        paused_total = sum(i.length_s for i in self.interruptions)
        current = None
        if self.paused_since is not None:
            current = now - self.paused_since
            paused_total += current
        last = self.last_signal
        play = self.play_s(now)
        count_up = not math.isfinite(self.clock.length_s)
        in_play = self.phase in (Phase.RUNNING, Phase.PAUSED)
        result = None
        if self.result is not None:
            result = self.result.to_dict() | {
                "interruptions": [i.to_dict() for i in self.interruptions],
                "replays": self.replays,
                "periods": self._periods_record(),
                "penalties": [] if self.penalty_box is None else [
                    p.record() for p in self.penalty_box.penalties],
                "timeouts": [] if self.timeouts is None else [
                    t.record() for t in self.timeouts.taken],
                "teams": {side.value: name for side, name in self.teams.items()},
                "round": self.round}
        return Status(
            profile=self.profile.name,
            phase=self.phase,
            period=self.period,
            periods=self.profile.periods,
            clock_running=self.clock.running,
            period_s=self.profile.period_s if count_up else self.clock.length_s,
            remaining_s=self._remaining_s(now),
            elapsed_s=self.clock.elapsed(now),
            start_in_s=None if self.start_at is None else self.start_at - now,
            interruption_s=current,
            interruptions=len(self.interruptions) + (current is not None),
            paused_total_s=paused_total,
            last_signal=None if last is None else last.kind.value,
            last_signal_remaining_s=None if last is None else last.remaining_s,
            score={side.value: n for side, n in self.sheet.score().items()},
            goals=[g.to_dict() for g in self.sheet.goals],
            faceoff_guard_s=self.guard.remaining_s(play) if in_play else None,
            faceoff_pending=self.guard.pending,
            overtime=self.overtime,
            overtime_s=self.clock.elapsed(now) if self.overtime else None,
            count_up=count_up,
            passive={s.value: self.passive.remaining_s(s, play) for s in Side},
            result=result,
            break_kind=self._break_kind,
            # ISBHF 401: every period and overtime; 407 !3: and at half-time outdoors.
            ends_switched=self.profile.switch_ends
            and (self.period - 1 + self._half_switches) % 2 == 1,
            shootout=None if self.shootout is None else self.shootout.to_dict(),
            timeouts=None if self.timeouts is None else self.timeouts.shown(now),
            penalties=[] if self.penalty_box is None else self.penalty_box.shown(play),
            line_change=None if self.line_change is None else self.line_change.shown(now),
            goalie_change={} if self.goalie_change is None else self.goalie_change.shown(now),
            early_intermission=self._early_break_left_s is not None,
            teams={side.value: name for side, name in self.teams.items()},
            round=self.round,
        )

    # -- commands --------------------------------------------------------------------------

    def handle(self, command: str, now: float, *args: str) -> list[Effect]:
        """Apply an operator command at `now`; raise CommandRefused with the reason if not allowed.

        Signals already due fire first: a pause pressed just after a signal's instant does not
        swallow that signal, and a goal pressed at the final signal is judged after it (6.5).
        When the command is then refused, what fired is held, not lost: the next `poll` (due at
        once, `next_deadline`) or `handle` returns it first, so a refused press at the final
        signal still ends the match with its result.
        """
        commands = self.commands()
        if command not in commands:
            raise CommandRefused(f"unknown command {command!r}; known: "
                                 + ", ".join(sorted(commands)))
        action, usage = commands[command]
        required = sum(not u.endswith("?") for u in usage)
        if not required <= len(args) <= len(usage):
            wanted = " ".join(f"[{u[:-1]}]" if u.endswith("?") else f"<{u}>"
                              for u in usage) or "no arguments"
            raise CommandRefused(f"{command} takes {wanted}, got {len(args)}")
        self._hold(self._fire_due(now), now)
        effects = action(now, *args)  # CommandRefused: the held effects wait for `poll`
        return self._release() + effects

    def commands(self) -> CommandTable:
        """Every command this match takes, with the names of its arguments."""
        kinds = "|".join(self.profile.penalties.kinds) if self.profile.penalties else "kind"
        return {
            "start": (self.start, ()),
            "teams": (self.set_teams, ("home-name", "away-name", "round?")),
            "pause": (self.pause, ()),
            "stop": (self.pause, ()),
            "resume": (self.resume, ("faceoff?",)),
            "toggle": (self.toggle, ()),
            "reset": (self.reset, ()),
            "goal": (self.goal, ("home|away", "scorer?", "assist?", "assist?")),
            "faceoff": (self.faceoff, ()),
            "undo": (self.undo, ()),
            "passive": (self.passive_play, ("home|away",)),
            "forfeit": (self.forfeit, ("home|away",)),
            "walkout": (self.walkout, ("home|away",)),
            "replay": (self.replay, ()),
            "shot": (self.shot, ("home|away", "scored|missed")),
            "timeout": (self.timeout, ("home|away",)),
            "penalty": (self.penalty, ("home|away", kinds, "player?")),
            "penalty-cancel": (self.penalty_cancel, ("home|away", "number?")),
            "linechange": (self.linechange, ()),
            "early-intermission": (self.early_intermission, ()),
            "goalie-change": (self.goalie_change_begin, ("home|away",)),
            "start_in": (self.start_in, ("seconds",)),
        }

    def start(self, now: float) -> list[Effect]:
        """From idle: sound the pre-signal now; the start signal follows after the lead (4.4)."""
        if self.phase is Phase.PAUSED:
            return self.resume(now)
        if self.phase is not Phase.IDLE:
            raise CommandRefused(self._why_not("start"))
        self.start_at = now + self.profile.pre_signal_lead_s
        effects = self._goto(Phase.PRE_SIGNAL)
        if self.profile.pre_signal_lead_s > 0:  # a zero lead starts at once, with no pre-signal
            effects.append(self._sound(SignalKind.PRE_SIGNAL, now,
                                       remaining_s=self.profile.period_s))
        effects.extend(self._fire_due(now))
        return effects

    def min_pre_signal_lead_s(self) -> float:
        """The shortest pre-signal a scheduled start may keep: ITHF 4.4's 15 s, or the
        profile's own lead when that is shorter (a training profile)."""
        return min(ITHF_LEAD_RANGE_S[0], self.profile.pre_signal_lead_s)

    def schedule_start(self, now: float, start_at: float) -> list[Effect]:
        """From idle: the start signal sounds at the instant `start_at` (hall mode).

        The pre-signal is planned the profile's lead before it (ITHF 4.4). When the start is
        closer than that lead but still at least `min_pre_signal_lead_s()` away, the
        pre-signal sounds at once with the shorter lead, so every table of the round still
        starts at the same instant; closer than that, the start is refused.
        """
        if self.phase is not Phase.IDLE:
            raise CommandRefused(self._why_not("start"))
        lead_s = start_at - now
        shortest = self.min_pre_signal_lead_s()
        if lead_s < shortest:
            raise CommandRefused(
                f"start refused: the start instant is {lead_s:.1f} s away, too late for the "
                f"{shortest:g} s pre-signal ITHF 4.4 asks for")
        self.start_at = start_at
        if lead_s > self.profile.pre_signal_lead_s:
            return self._goto(Phase.SCHEDULED)
        effects = self._goto(Phase.PRE_SIGNAL)
        effects.append(self._sound(SignalKind.PRE_SIGNAL, now, remaining_s=self.profile.period_s))
        if lead_s < self.profile.pre_signal_lead_s:
            effects.append(Notice(f"late start: pre-signal {lead_s:.1f} s before the start"))
        effects.extend(self._fire_due(now))  # a zero lead starts at once
        return effects

    def start_in(self, now: float, seconds: str) -> list[Effect]:
        """`start_in <seconds>`: schedule_start with the start signal `seconds` from now."""
        try:
            lead_s = float(seconds)
        except ValueError:
            raise CommandRefused(f"start_in takes a number of seconds, got {seconds!r}") from None
        if not math.isfinite(lead_s):
            raise CommandRefused(f"start_in takes a number of seconds, got {seconds!r}")
        return self.schedule_start(now, now + lead_s)

    def pause(self, now: float) -> list[Effect]:
        """ITHF 10.1: stop the clock at once; the time lost is added back (10.2).

        The faceoff guard and the passive count stand still with the clock.
        """
        if self.phase is not Phase.RUNNING:
            raise CommandRefused(self._why_not("pause"))
        self.clock = self.clock.stopped(now)
        self.paused_since = now
        effects = self._goto(Phase.PAUSED)
        effects.append(self._sound(SignalKind.PAUSE, now, remaining_s=self._remaining_s(now)))
        return effects

    def resume(self, now: float, how: str = "") -> list[Effect]:
        """Play on after an interruption, with a new faceoff (`resume faceoff`, or a faceoff
        marked during the pause) or with the puck returned to the figure that had it, in which
        case a running guard carries on (ITHF 10.4)."""
        if how not in ("", "faceoff"):
            raise CommandRefused(f"resume takes nothing or `faceoff`, not {how!r}")
        if self.phase is not Phase.PAUSED:
            raise CommandRefused(self._why_not("resume"))
        self._close_interruption(now)
        self.clock = self.clock.started(now)
        effects = self._goto(Phase.RUNNING)
        effects.append(self._sound(SignalKind.RESUME, now, remaining_s=self._remaining_s(now)))
        effects.extend(self._play_restarts(now))
        # ISBHF 407 !1, 415a,c: a stop clock starts when the ball is dropped, so its restart is
        # the faceoff (a goal's pending one included).
        if how or self.guard.on_resume or self.profile.clock == "stop":
            self._both_took_part(f"a faceoff at {_mmss(self.play_s(now))}")
            effects.extend(self._faceoff_at(now))
        return effects

    def toggle(self, now: float) -> list[Effect]:
        """The START/PAUSE button: start from idle, pause while running, resume while paused."""
        if self.phase is Phase.RUNNING:
            return self.pause(now)
        return self.start(now)

    def reset(self, now: float) -> list[Effect]:
        """Back to idle for a new match; refused while the clock runs, so play is never lost."""
        if self.phase is Phase.RUNNING:
            raise CommandRefused(self._why_not("reset"))
        previous = self.phase
        self._rewind()
        self.interruptions.clear()
        self.last_signal = None
        self.sheet = ScoreSheet()
        self.result = None
        self.shootout = None
        self.replays = 0
        self.took_part.clear()
        self._fresh_records()
        self.phase = Phase.IDLE
        if previous is Phase.IDLE:
            return [Notice("reset: already idle")]
        return [PhaseChanged(Phase.IDLE, previous)]

    def goal(self, now: float, side_word: str, *players: str) -> list[Effect]:
        """Enter a goal, optionally with the scorer's and up to two assistants' shirt numbers
        (ISBHF 420-422). It counts unless it came before the start (ITHF 5.1), inside the
        faceoff guard (5.6), at or after the final signal (6.5) or during an interruption
        (10.3); an entry that does not count is kept with its reason and sounds "no goal".
        The first counted goal of overtime ends the match (4.8). A counted goal against a
        short-handed team ends its minor penalty (power-play goal)."""
        side = self._side(side_word)
        if self.phase in (Phase.IDLE, Phase.SHOOTOUT):
            raise CommandRefused(self._why_not("goal"))
        try:
            numbers = [parse_player(p) for p in players]
        except ValueError as exc:
            raise CommandRefused(f"goal refused: {exc}") from exc
        if len(set(numbers)) < len(numbers):
            raise CommandRefused("goal refused: the scorer and the assistants are different "
                                 "players (ISBHF 420-422)")
        reason = self._goal_rejection(now)
        goal = Goal(side, self.play_s(now), reason is None, reason, self.period, self.overtime,
                    now, numbers[0] if numbers else None, tuple(numbers[1:]))
        self.sheet.add(goal)
        effects: list[Effect] = [goal]
        if self.phase is Phase.RUNNING:
            self.passive.clear()  # ITHF 8.3: a goal ends the count
        if reason is not None:
            effects.append(self._sound(SignalKind.GOAL_REJECTED, now,
                                       remaining_s=self._remaining_s(now)))
        elif self.overtime:
            effects.append(self._sound(SignalKind.FINAL, now))
            effects.extend(self._finish(Ending.OVERTIME, now))
        else:
            self.guard.pending = True  # play restarts with a faceoff at the centre
            effects.append(self._sound(SignalKind.GOAL, now, remaining_s=self._remaining_s(now)))
            power_play = None if self.penalty_box is None else \
                self.penalty_box.power_play_goal(side, goal.match_time_s)
            if power_play is not None:
                ended, started = power_play
                effects.append(self._sound(SignalKind.PENALTY_END, now,
                                           remaining_s=self._remaining_s(now)))
                effects.append(Notice(f"power-play goal: penalty {ended.number} "
                                      f"({_penalty_name(ended)}) is over"))
                effects += _penalties_starting(started)
        return effects

    def faceoff(self, now: float) -> list[Effect]:
        """Mark a faceoff (after a goal, a puck off the table, a "block" call, ITHF 7.1): the
        guard restarts (5.6). During an interruption it is kept for the resume (10.4)."""
        if self.phase is Phase.RUNNING:
            self._both_took_part(f"a faceoff at {_mmss(self.play_s(now))}")
            return self._faceoff_at(now) or [Notice("faceoff")]
        if self.phase is Phase.PAUSED:
            self.guard.pending = False
            self.guard.on_resume = True
            return [Notice("faceoff marked: play resumes with a faceoff (ITHF 10.4)")]
        raise CommandRefused(self._why_not("faceoff"))

    def undo(self, now: float) -> list[Effect]:
        """Remove the last goal entered (a mistaken press); a finished match's result stands."""
        if self.phase is Phase.FINISHED:
            raise CommandRefused(self._why_not("undo"))
        goal = self.sheet.undo()
        if goal is None:
            raise CommandRefused("undo refused: there is no goal entry to remove")
        if goal.counted:
            self.guard.pending = False
        how = "counted" if goal.reason is None else f"not counted: {goal.reason}"
        score = self.sheet.score()
        return [Notice(f"undo: removed the {goal.side} goal at {_mmss(goal.match_time_s)} "
                       f"({how}); score {score[Side.HOME]}:{score[Side.AWAY]}")]

    def set_teams(self, now: float, home: str, away: str, round_name: str = "") -> list[Effect]:
        """Name the two sides (players in ITHF, teams in ISBHF) and, from a tournament desk,
        the round. Any phase: a name is put right mid-match without touching the clock.
        Names are one line of at most `NAME_MAX` printable characters; "" clears one."""
        names = {Side.HOME: home.strip(), Side.AWAY: away.strip()}
        for side, name in names.items():
            if len(name) > NAME_MAX or not name.isprintable():
                raise CommandRefused(f"teams refused: the {side} name must be at most "
                                     f"{NAME_MAX} printable characters on one line")
        if len(round_name) > NAME_MAX or not round_name.isprintable():
            raise CommandRefused(f"teams refused: the round must be at most {NAME_MAX} "
                                 "printable characters on one line")
        self.teams = names
        self.round = round_name.strip() or None
        shown = " - ".join(name or str(side) for side, name in names.items())
        return [Notice(f"teams: {shown}" + (f" (round {self.round})" if self.round else ""))]

    def passive_play(self, now: float, side_word: str) -> list[Effect]:
        """ITHF 8.3: `side` holds the puck; warn after the profile's count unless it is
        pressed again (cleared), or a goal or faceoff comes first."""
        side = self._side(side_word)
        if self.passive.limit_s is None:
            raise CommandRefused(f"passive refused: profile {self.profile.name} does not time "
                                 "passive play")
        if self.phase is not Phase.RUNNING:
            raise CommandRefused(self._why_not("passive"))
        started = self.passive.press(side, self.play_s(now))
        if started:  # ITHF 8.1: the side holds the puck
            self.took_part.setdefault(side, f"passive play at {_mmss(self.play_s(now))}")
        what = f"counting {self.passive.limit_s:g} s" if started else "cleared"
        return [Notice(f"passive play {side}: {what}")]

    def forfeit(self, now: float, side_word: str) -> list[Effect]:
        """ITHF 4.6: `side` was not at the table and ready `forfeit_window_s` (30 s) after the
        start signal, so it loses by the profile's `forfeit_score` (0:5 by default).

        The 30 s are match time, like every other time of the match (an interruption adds its
        length, ITHF 10.2): a forfeit is accepted from 4:30 on the clock of a 5:00 match.
        Before that it is refused with the time the player still has. It stays possible for as
        long as the absent side has not played (`has_played`); a player who played and then
        leaves walks out instead (4.7). Only in the first period, never in overtime.
        """
        side = self._side(side_word)
        window = self.profile.forfeit_window_s
        rule = (f"ITHF 4.6 gives {side} {window:g} s after the start signal to be at the "
                "table and ready")
        if self.phase in (Phase.SCHEDULED, Phase.PRE_SIGNAL):
            raise CommandRefused(f"forfeit refused: the start signal has not sounded; {rule}")
        if self.phase not in (Phase.RUNNING, Phase.PAUSED) or self.overtime or self.period > 1:
            why = self._why_not("forfeit").partition(": ")[2] if self.period == 1 else \
                "it is about the start of the match, and this is a later period"
            raise CommandRefused(f"forfeit refused: ITHF 4.6 applies from {window:g} s after "
                                 f"the start signal; {why}")
        played = self.play_s(now)
        if played < window:
            clock = _mmss(self.profile.period_s - window)
            raise CommandRefused(f"forfeit refused: {rule}; {window - played:.1f} s left "
                                 f"(a forfeit is possible from {clock} on the clock)")
        evidence = self.has_played(side)
        if evidence is not None:
            raise CommandRefused(f"forfeit refused: {side} has played ({evidence}), so ITHF "
                                 f"4.6 no longer applies; a player who leaves walks out "
                                 f"(`walkout {side}`, ITHF 4.7)")
        self._close_interruption(now)
        low, high = self.profile.forfeit_score
        self.sheet.forfeit(side, (low, high), played, now)
        effects: list[Effect] = [self._sound(SignalKind.FINAL, now)]
        return effects + self._finish(Ending.FORFEIT, now, side)

    def has_played(self, side: Side) -> str | None:
        """ITHF 4.6: what shows that `side` was at the table after the start signal, or None.

        A counted goal of its own (one removed with `undo` no longer shows it), a passive-play
        count of its own (it held the puck, ITHF 8.1), or any faceoff after the start signal
        (marked, or `resume faceoff`): a faceoff needs both players at the table, so after one
        neither side is absent. A goal entry that did not count shows nothing: it may have
        been a mistaken press.
        """
        goal = next((g for g in self.sheet.goals
                     if g.side is side and g.counted and g.reason is None), None)
        if goal is not None:
            return f"a counted goal at {_mmss(goal.match_time_s)}"
        return self.took_part.get(side)

    def walkout(self, now: float, side_word: str) -> list[Effect]:
        """ITHF 4.7: `side` left mid-match: its goals are erased, the opponent gets five more."""
        side = self._side(side_word)
        if self.phase not in (Phase.RUNNING, Phase.PAUSED, Phase.BREAK):
            raise CommandRefused(self._why_not("walkout"))
        self._close_interruption(now)
        self.sheet.walkout(side, self.profile.walkout_award, self.play_s(now), now)
        effects: list[Effect] = [self._sound(SignalKind.FINAL, now)]
        return effects + self._finish(Ending.WALKOUT, now, side)

    def replay(self, now: float) -> list[Effect]:
        """ITHF 4.5: play the match again from the start (the timer failed); both sides keep
        the goals they had. A new pre-signal sounds and the start follows after the lead."""
        if self.phase not in (Phase.RUNNING, Phase.PAUSED, Phase.BREAK):
            raise CommandRefused(self._why_not("replay"))
        self._close_interruption(now)
        self.replays += 1
        self._rewind()
        effects = self._goto(Phase.IDLE)
        effects.extend(self.start(now))
        score = self.sheet.score()
        effects.append(Notice(f"replay from the start (ITHF 4.5): goals kept, "
                              f"{score[Side.HOME]}:{score[Side.AWAY]}"))
        return effects

    def shot(self, now: float, side_word: str, outcome: str) -> list[Effect]:
        """ISBHF 414b: enter one shootout attempt; the match ends once it is decided."""
        side = self._side(side_word)
        if outcome not in ("scored", "missed"):
            raise CommandRefused(f"shot takes scored or missed, not {outcome!r}")
        if self.shootout is None or self.phase is not Phase.SHOOTOUT:
            raise CommandRefused(self._why_not("shot"))
        try:
            self.shootout.record(side, outcome == "scored")
        except ValueError as exc:
            raise CommandRefused(f"shot refused: {exc}") from exc
        goals = self.shootout.goals
        effects: list[Effect] = [Notice(f"shootout: {side} {outcome}, "
                                        f"{goals(Side.HOME)}:{goals(Side.AWAY)}")]
        winner = self.shootout.winner()
        if winner is not None:
            effects.append(self._sound(SignalKind.FINAL, now))
            effects.extend(self._finish(Ending.SHOOTOUT, now, winner=winner))
        return effects

    def timeout(self, now: float, side_word: str) -> list[Effect]:
        """ISBHF 412: `side` takes its timeout: only while the clock is stopped, one per team
        per match, not both teams in one stoppage. Its end sounds `timeout_end`."""
        side = self._side(side_word)
        if self.timeouts is None:
            raise CommandRefused(f"timeout refused: profile {self.profile.name} has no timeouts")
        if self.phase is not Phase.PAUSED:
            why = "the clock is running; a timeout is asked for in a stoppage (ISBHF 412)" \
                if self.phase is Phase.RUNNING else self._why_not("").partition(": ")[2]
            raise CommandRefused(f"timeout refused: {why}")
        try:
            taken = self.timeouts.request(side, now, self.play_s(now), self.period)
        except ValueError as exc:
            raise CommandRefused(f"timeout refused: {exc}") from exc
        return [Notice(f"timeout {side}: {taken.length_s:g} s (ISBHF 412)")]

    def penalty(self, now: float, side_word: str, kind: str, player: str = "") -> list[Effect]:
        """Give `side` a penalty of `kind` (minor, major, misconduct), optionally naming the
        player. It is served in game time; it waits while two of the team's run."""
        side = self._side(side_word)
        box = self._penalties("penalty")
        try:
            given = box.give(side, kind, parse_player(player) if player else None,
                             self.play_s(now), self.period)
        except ValueError as exc:
            raise CommandRefused(f"penalty refused: {exc}") from exc
        state = "running" if given.running else "waiting (two of the team's run)"
        return [Notice(f"penalty {given.number}: {_penalty_name(given)} "
                       f"{_mmss(given.rule.duration_s)}, {state}")]

    def penalty_cancel(self, now: float, side_word: str, number: str = "") -> list[Effect]:
        """Lift `side`'s penalty `number` (as numbered in the status), or its last one given:
        a penalty entered by mistake. A waiting penalty may take its place."""
        side = self._side(side_word)
        box = self._penalties("penalty-cancel")
        if number and not number.isdigit():
            raise CommandRefused(f"penalty-cancel takes a penalty number, not {number!r}")
        try:
            lifted, started = box.cancel(side, int(number) if number else None,
                                         self.play_s(now))
        except ValueError as exc:
            raise CommandRefused(f"penalty-cancel refused: {exc}") from exc
        return [Notice(f"penalty {lifted.number} cancelled: {_penalty_name(lifted)}"),
                *_penalties_starting(started)]

    def linechange(self, now: float) -> list[Effect]:
        """ISBHF 404b: start the line-change stages (visitors, home, faceoff preparation),
        each 5 s, with a `line_change` signal after each (as many beeps as its number)."""
        rule = self.profile.line_change
        if rule is None:
            raise CommandRefused(f"linechange refused: profile {self.profile.name} has no "
                                 "line-change helper")
        if self.phase is not Phase.PAUSED:
            why = "teams change lines in a stoppage (ISBHF 404b); stop the clock first" \
                if self.phase is Phase.RUNNING else self._why_not("").partition(": ")[2]
            raise CommandRefused(f"linechange refused: {why}")
        running = None if self.line_change is None else self.line_change.shown(now)
        if running is not None:
            raise CommandRefused(f"linechange refused: a line change runs (stage "
                                 f"{running['number']} of {running['stages']}, "
                                 f"{running['stage']})")
        self.line_change = LineChange(rule, now)
        return [Notice("line change: " + ", ".join(
            f"{stage} {rule.stage_s:g} s" for stage in rule.stages) + " (ISBHF 404b)")]

    def early_intermission(self, now: float) -> list[Effect]:
        """ISBHF 407 !2: after an unforeseen delay in the last minutes of a period before the
        last, the intermission starts at once; the time left is played after it on the same
        ends, and the next period then follows without an intermission."""
        rest = self.profile.intermission
        window = None if rest is None else rest.early_window_s
        if rest is None or window is None:
            raise CommandRefused(f"early-intermission refused: profile {self.profile.name} "
                                 "has no early intermission")
        if self.phase is not Phase.PAUSED:
            why = "stop the clock for the delay first" if self.phase is Phase.RUNNING else \
                self._why_not("").partition(": ")[2]
            raise CommandRefused(f"early-intermission refused: {why}")
        if self.overtime or self.period >= self.profile.periods:
            raise CommandRefused("early-intermission refused: ISBHF 407 !2 allows it only in a "
                                 "period followed by an intermission (the 1st or 2nd)")
        if self._early_break_left_s is not None:
            raise CommandRefused("early-intermission refused: this period's intermission was "
                                 "already taken")
        left = self._remaining_s(now)
        if left > window:
            raise CommandRefused(f"early-intermission refused: {_mmss(left)} is left, and ISBHF "
                                 f"407 !2 allows it only in the last {_mmss(window)} of a period")
        self._close_interruption(now)
        self._early_break_left_s = left
        effects: list[Effect] = [Notice(f"early intermission: {_mmss(left)} of period "
                                        f"{self.period} follows it, on the same ends "
                                        "(ISBHF 407 !2)")]
        return effects + self._start_break("intermission", now, rest.length_s, rest.warning_s)

    def goalie_change_begin(self, now: float, side_word: str) -> list[Effect]:
        """ISBHF 408: `side` has no goalie who can go on; it gets ten minutes to dress
        another player. The countdown ends with `goalie_change_end`, or with the faceoff."""
        side = self._side(side_word)
        if self.goalie_change is None:
            raise CommandRefused(f"goalie-change refused: profile {self.profile.name} has no "
                                 "goalie-change countdown")
        if self.phase not in (Phase.PAUSED, Phase.BREAK):
            why = "the clock is running; stop it first" if self.phase is Phase.RUNNING else \
                self._why_not("").partition(": ")[2]
            raise CommandRefused(f"goalie-change refused: {why}")
        try:
            self.goalie_change.begin(side, now)
        except ValueError as exc:
            raise CommandRefused(f"goalie-change refused: {exc}") from exc
        return [Notice(f"goalie change {side}: {_mmss(self.goalie_change.length_s)} to dress "
                       "a goalie (ISBHF 408)")]

    def _penalties(self, command: str) -> PenaltyBox:
        if self.penalty_box is None:
            raise CommandRefused(f"{command} refused: profile {self.profile.name} has no "
                                 "penalties")
        if self.phase in (Phase.IDLE, Phase.PRE_SIGNAL, Phase.SHOOTOUT, Phase.FINISHED):
            raise CommandRefused(self._why_not(command))
        return self.penalty_box

    def _why_not(self, command: str) -> str:
        hints = {
            Phase.IDLE: "no match is running; press START to begin",
            Phase.SCHEDULED: "a start is scheduled and the pre-signal follows by itself; "
                             "long-press RESET to cancel",
            Phase.PRE_SIGNAL: "the pre-signal is sounding and the start follows by itself; "
                              "long-press RESET to cancel",
            Phase.RUNNING: "the clock is running; pause first",
            Phase.PAUSED: "the match is paused; resume it, or long-press RESET to end it",
            Phase.BREAK: "a timed break runs (before overtime, ITHF 4.8, or an "
                         "intermission, ISBHF 410) and ends by itself",
            Phase.SHOOTOUT: "the shootout decides the match; enter attempts with `shot`",
            Phase.FINISHED: "the match has finished and its result is recorded; "
                            "long-press RESET for a new match",
        }
        if command == "faceoff" and self.phase in (Phase.IDLE, Phase.PRE_SIGNAL):
            return "faceoff refused: the start signal is the first faceoff (ITHF 5.1)"
        return f"{command} refused: {hints[self.phase]}"

    # -- time ------------------------------------------------------------------------------

    def poll(self, now: float) -> list[Effect]:
        """Fire, once each and in time order, everything due by `now`, after what a refused
        command held back (`handle`)."""
        return self._release() + self._fire_due(now)

    def _hold(self, effects: list[Effect], now: float) -> None:
        if effects and self._held_at is None:
            self._held_at = now
        self._held.extend(effects)

    def _release(self) -> list[Effect]:
        held, self._held, self._held_at = self._held, [], None
        return held

    def _fire_due(self, now: float) -> list[Effect]:
        effects: list[Effect] = []
        while (upcoming := self._next_timed()) is not None and upcoming[0] <= now:
            due, fire = upcoming
            effects.extend(fire(due))
        return effects

    def _next_timed(self) -> tuple[float, Callable[[float], list[Effect]]] | None:
        """The earliest timed step of the current phase, and what it does."""
        steps: list[tuple[float, Callable[[float], list[Effect]]]] = []
        if self.phase is Phase.SCHEDULED and self.start_at is not None:
            steps.append((self.start_at - self.profile.pre_signal_lead_s, self._pre_signal_due))
        elif self.phase in (Phase.PRE_SIGNAL, Phase.BREAK) and self.start_at is not None:
            if self._break_warning_at is not None:
                steps.append((self._break_warning_at, self._break_warning))
            end = self._end_intermission if self._break_kind == "intermission" \
                else self._begin_play
            steps.append((self.start_at, end))
        elif self.phase is Phase.RUNNING:
            # Listed first: a penalty that runs out with the period ends in that period.
            if self.penalty_box is not None and (p := self.penalty_box.next_end()) is not None:
                due = self._when_played(p.ends_s() or 0.0)
                if due is not None:
                    steps.append((due, self._penalty_over))
            if self._next < len(self._plan):
                due = self.clock.when_elapsed(self._plan[self._next].at_elapsed_s)
                if due is not None:
                    steps.append((due, self._fire_planned))
            if self.guard.until_s is not None:
                due = self._when_played(self.guard.until_s)
                if due is not None:
                    steps.append((due, self._guard_over))
            if (warning := self.passive.due_s()) is not None:
                due = self._when_played(warning[0])
                if due is not None:
                    steps.append((due, self._passive_warning))
        # Countdowns of real time, which exist only while the clock stands still.
        if self.timeouts is not None and (at := self.timeouts.ends_at()) is not None:
            steps.append((at, self._timeout_over))
        if self.line_change is not None and (at := self.line_change.next_end()) is not None:
            steps.append((at, self._line_change_stage))
        if self.goalie_change is not None and (goalie := self.goalie_change.next_end()):
            steps.append((goalie[0], self._goalie_change_over))
        # Stable: on a tie the planned signal (listed first) wins, so a final ends the rest.
        return min(steps, key=lambda s: s[0], default=None)

    def _pre_signal_due(self, at: float) -> list[Effect]:
        """A scheduled start (hall mode): the pre-signal, the profile's lead before the start
        instant (ITHF 4.4)."""
        effects = self._goto(Phase.PRE_SIGNAL)
        effects.append(self._sound(SignalKind.PRE_SIGNAL, at, remaining_s=self.profile.period_s))
        return effects

    def _when_played(self, play_s: float) -> float | None:
        return self.clock.when_elapsed(play_s - self._played_before_s)

    def _begin_play(self, at: float) -> list[Effect]:
        """The start signal (ITHF 5.1) or the overtime start (4.8): each is a faceoff."""
        kind = SignalKind.START
        if self._break_kind == "overtime" and self.profile.overtime is not None:
            kind = SignalKind.OVERTIME_START
            self._enter_overtime(self.profile.overtime)
        # Anchor at the planned instant, not at `now`: a late wake-up does not shift the match.
        self.clock = self.clock.started(at)
        self.start_at = None
        self._break_warning_at = None
        self._break_kind = None
        effects = self._goto(Phase.RUNNING)
        effects.append(self._sound(kind, at, remaining_s=self._remaining_s(at)))
        effects.extend(self._play_restarts(at))
        effects.extend(self._faceoff_at(at))
        return effects

    def _enter_overtime(self, overtime: Overtime) -> None:
        self._played_before_s += self.clock.elapsed_at_anchor
        self.overtime = True
        self.period += 1
        self.clock = MatchClock(math.inf if overtime.length_s is None else overtime.length_s)
        self._plan = overtime_plan(overtime, self.profile.half_period_signal)
        self._next = 0

    def _start_break(self, kind: BreakKind, at: float, length_s: float,
                     warning_s: float | None) -> list[Effect]:
        self._break_kind = kind
        self.start_at = at + length_s
        self._break_warning_at = None if warning_s is None else self.start_at - warning_s
        return self._goto(Phase.BREAK)

    def _end_intermission(self, at: float) -> list[Effect]:
        """ISBHF 410: the intermission is over; the period starts with the referee's faceoff."""
        self.start_at = None
        self._break_warning_at = None
        self._break_kind = None
        effects = self._goto(Phase.PAUSED)
        effects.append(self._sound(SignalKind.INTERMISSION_END, at,
                                   remaining_s=self._remaining_s(at)))
        return effects

    def _break_warning(self, at: float) -> list[Effect]:
        self._break_warning_at = None
        left = 0.0 if self.start_at is None else self.start_at - at
        return [self._sound(SignalKind.BREAK_WARNING, at, remaining_s=left)]

    def _fire_planned(self, due: float) -> list[Effect]:
        planned = self._plan[self._next]
        self._next += 1
        effects: list[Effect] = [self._sound(planned.kind, due, planned.beeps,
                                             planned.remaining_s)]
        if planned.kind is SignalKind.HALF_PERIOD:
            self._half_switches += 1  # ISBHF 407 !3
        if planned.kind in (SignalKind.FINAL, SignalKind.PERIOD_END):
            effects.extend(self._end_period(planned.at_elapsed_s, due))
        return effects

    def _penalty_over(self, at: float) -> list[Effect]:
        box = self.penalty_box
        ended = None if box is None else box.next_end()
        if box is None or ended is None:
            return []
        started = box.expire(ended)
        effects: list[Effect] = [
            self._sound(SignalKind.PENALTY_END, at, remaining_s=self._remaining_s(at)),
            Notice(f"penalty {ended.number} over: {_penalty_name(ended)}")]
        return effects + _penalties_starting(started)

    def _timeout_over(self, at: float) -> list[Effect]:
        if self.timeouts is None or self.timeouts.end(at) is None:
            return []
        return [self._sound(SignalKind.TIMEOUT_END, at, remaining_s=self._remaining_s(at))]

    def _line_change_stage(self, at: float) -> list[Effect]:
        if self.line_change is None:
            return []
        _, number = self.line_change.finish_stage()
        if self.line_change.over:
            self.line_change = None
        return [self._sound(SignalKind.LINE_CHANGE, at, number, self._remaining_s(at))]

    def _goalie_change_over(self, at: float) -> list[Effect]:
        due = None if self.goalie_change is None else self.goalie_change.next_end()
        if self.goalie_change is None or due is None:
            return []
        self.goalie_change.end(due[1])
        return [self._sound(SignalKind.GOALIE_CHANGE_END, at, remaining_s=self._remaining_s(at)),
                Notice(f"goalie change {due[1]}: the time is over (ISBHF 408)")]

    def _play_restarts(self, now: float) -> list[Effect]:
        """The clock starts: the stoppage and whatever ran in it are over (the timeout, the
        line change, the goalie's dressing time)."""
        effects: list[Effect] = []
        if self.timeouts is not None:
            ended = self.timeouts.play_started(now)
            if ended is not None:
                effects.append(Notice(f"timeout {ended.side} ended by the faceoff after "
                                      f"{ended.lasted_s or 0.0:.0f} s"))
        if self.line_change is not None:
            effects.append(Notice("line change ended by the faceoff"))
            self.line_change = None
        if self.goalie_change is not None:
            for side in list(self.goalie_change.ends_at):
                self.goalie_change.end(side)
                effects.append(Notice(f"goalie change {side} ended by the faceoff"))
        return effects

    def _guard_over(self, at: float) -> list[Effect]:
        self.guard.until_s = None
        return [FaceoffGuardChanged(active=False)]

    def _passive_warning(self, at: float) -> list[Effect]:
        warning = self.passive.due_s()
        if warning is None:
            return []
        self.passive.warn(warning[1])
        return [self._sound(SignalKind.PASSIVE_WARNING, at, remaining_s=self._remaining_s(at))]

    def _end_period(self, at_elapsed_s: float, at: float) -> list[Effect]:
        self.clock = self.clock.stopped_at_elapsed(at_elapsed_s)
        self.guard.clear()
        self.passive.clear()
        self._log_period(at_elapsed_s)
        early = self._early_break_left_s is not None
        if self.overtime:  # a timed overtime ran out without a goal
            ot = self.profile.overtime
            rounds = None if ot is None else ot.shootout_rounds
            if rounds is not None and self.sheet.tied():
                self.shootout = Shootout(rounds)  # ISBHF 414b
                return self._goto(Phase.SHOOTOUT)
            return self._finish(Ending.OVERTIME, at)
        if self.period < self.profile.periods:
            self._played_before_s += at_elapsed_s
            self._enter_period(self.period + 1)
            # The next period waits for its faceoff: the operator starts it (ISBHF 401),
            # after the intermission if the profile has one (410).
            self.guard.on_resume = True
            rest = self.profile.intermission
            if early:  # ISBHF 407 !2: the intermission was taken; the next period follows
                return [*self._goto(Phase.PAUSED),
                        Notice("no intermission: it was taken early (ISBHF 407 !2)")]
            if rest is None:
                return self._goto(Phase.PAUSED)
            return self._start_break("intermission", at, rest.length_s, rest.warning_s)
        if self.sheet.tied() and self.profile.overtime is not None:
            # ITHF 4.8: the final signal has sounded; overtime follows a short break.
            ot = self.profile.overtime
            if ot.auto_start:
                return self._start_break("overtime", at, ot.break_s, ot.break_warning_s)
            # A stop clock: overtime waits, after the break, for the referee's faceoff.
            self._enter_overtime(ot)
            self.guard.on_resume = True
            return self._start_break("intermission", at, ot.break_s, ot.break_warning_s)
        return self._finish(Ending.REGULAR, at)

    def _finish(self, how: Ending, at: float, side: Side | None = None,
                winner: Side | None = None) -> list[Effect]:
        self.clock = self.clock.stopped(at)
        self.start_at = None
        self._break_warning_at = None
        self._break_kind = None
        self.guard.clear()
        self.passive.clear()
        if self.clock.elapsed(at) > 0:
            self._log_period(self.clock.elapsed(at))
        if self.penalty_box is not None:
            self.penalty_box.close(self.play_s(at))
        if self.timeouts is not None:
            self.timeouts.end(at)
        if self.goalie_change is not None:
            self.goalie_change.ends_at.clear()
        self.line_change = None
        winner = winner or self.sheet.leader()
        points = None
        if self.profile.points:  # ISBHF 413a: win, tie, loss
            win, tie, loss = self.profile.points
            points = {s: tie if winner is None else win if s is winner else loss for s in Side}
        self.result = Result(how, self.sheet.score(), winner, side, self.play_s(at),
                             self.clock.elapsed(at) if self.overtime else None, points,
                             None if self.shootout is None else self.shootout.to_dict())
        return self._goto(Phase.FINISHED)

    def _goal_rejection(self, now: float) -> GoalReason | None:
        if self.phase is Phase.PRE_SIGNAL:
            return GoalReason.BEFORE_START
        if self._break_kind == "intermission":
            return GoalReason.INTERMISSION
        if self.phase in (Phase.BREAK, Phase.FINISHED):
            return GoalReason.FINAL_SIGNAL
        if self.phase is Phase.PAUSED and self.paused_since is None:
            return GoalReason.INTERMISSION  # the period awaits its first faceoff
        if self.phase is Phase.PAUSED and not self.profile.goals_count_while_stopped:
            return GoalReason.INTERRUPTION
        if self.guard.active(self.play_s(now)):
            return GoalReason.FACEOFF_GUARD
        return None

    def _faceoff_at(self, at: float) -> list[Effect]:
        self.passive.clear()
        if self.guard.faceoff(self.play_s(at)):
            return [FaceoffGuardChanged(active=True)]
        return []

    def _both_took_part(self, evidence: str) -> None:
        for side in Side:
            self.took_part.setdefault(side, evidence)

    def _close_interruption(self, now: float) -> None:
        if self.paused_since is not None:
            self.interruptions.append(Interruption(
                self.period, self.clock.elapsed(now), now - self.paused_since))
        self.paused_since = None

    def _rewind(self) -> None:
        """Clock, period and timed state back to before the start (the sheet is kept)."""
        self.start_at = None
        self.paused_since = None
        self._break_warning_at = None
        self._break_kind = None
        self._played_before_s = 0.0
        self.overtime = False
        self.guard.clear()
        self.passive.clear()
        self.line_change = None
        self.periods_played = []
        self._half_switches = 0
        self._enter_period(1)

    def _fresh_records(self) -> None:
        """Penalties, timeouts and countdowns as the profile has them, none used yet."""
        rules = self.profile
        self.penalty_box = None if rules.penalties is None else PenaltyBox(rules.penalties)
        self.timeouts = None if rules.timeouts is None else Timeouts(rules.timeouts)
        self.goalie_change = None if rules.goalie_change_s is None else \
            GoalieChange(rules.goalie_change_s)
        self.line_change = None

    def _enter_period(self, period: int) -> None:
        self.period = period
        self.clock = MatchClock(self.profile.period_s)
        self._plan = signal_plan(self.profile, period)
        self._next = 0
        self._early_break_left_s = None

    def _log_period(self, played_s: float) -> None:
        """Keep the current period as played, once (a shootout's end does not add one)."""
        if self.periods_played and self.periods_played[-1].period == self.period:
            return
        self.periods_played.append(PeriodPlayed(self.period, self.overtime, played_s,
                                                self._early_break_left_s))

    def _periods_record(self) -> list[dict[str, Any]]:
        """The periods for the results, each with the goals counted in it."""
        out = []
        for p in self.periods_played:
            goals = dict.fromkeys((s.value for s in Side), 0)
            for goal in self.sheet.goals:
                if goal.counted and goal.period == p.period and goal.reason is None:
                    goals[goal.side.value] += 1
            out.append({"period": p.period, "overtime": p.overtime,
                        "played_s": round(p.played_s, 3), "goals": goals,
                        "early_intermission_left_s": p.early_intermission_left_s})
        return out

    def _remaining_s(self, now: float) -> float:
        remaining = self.clock.remaining(now)
        return remaining if math.isfinite(remaining) else 0.0

    def _side(self, word: str) -> Side:
        try:
            return parse_side(word)
        except ValueError as exc:
            raise CommandRefused(str(exc)) from exc

    def _goto(self, phase: Phase) -> list[Effect]:
        previous, self.phase = self.phase, phase
        return [PhaseChanged(phase, previous)] if phase is not previous else []

    def _sound(self, kind: SignalKind, due: float, beeps: int = 1,
               remaining_s: float = 0.0) -> Signal:
        signal = Signal(kind, due, beeps, remaining_s, self.period)
        if kind not in ACKNOWLEDGEMENTS:
            self.last_signal = signal
        return signal


def _penalties_starting(started: list[Penalty]) -> list[Effect]:
    return [Notice(f"penalty {p.number} starts: {_penalty_name(p)}") for p in started]


def _penalty_name(penalty: Penalty) -> str:
    player = f" #{penalty.player}" if penalty.player else ""
    return f"{penalty.side}{player} {penalty.kind}"


def _mmss(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"
