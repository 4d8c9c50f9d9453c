"""The match state machine: commands and time in, effects out.

`handle(command, now)` applies an operator's command; `poll(now)` fires whatever is due by
`now`; `next_deadline()` tells the service when to call `poll` next. Both `handle` and `poll`
return the effects (signals to sound, phase changes, goals, notices) in the order they happen.
Every signal is planned in match time, so an interruption moves all later signals with it
(ITHF 10.2), and each one fires exactly once however late `poll` is called.

The match is the phase machine: idle, the pre-signal (ITHF 4.4), play and interruptions
(10.1-10.4), periods, breaks (an intermission when the `intermission` module has one follow a
period, ISBHF 410; the break before overtime), overtime (ITHF 4.8, ISBHF 411) and the end,
with the score sheet (`score.py`), the faceoff guard (`faceoff.py`, ITHF 5.6) and the clock
(`clock.py`). Everything else is a rule module (`timerd.core.rules`): the score desk (goals,
marked faceoffs, undo, names), which every match has, and each feature of a rulebook that the
profile lists. The match asks each module, in a loop, for its commands, its next timed step
and what it does at a goal, a faceoff, a signal, a restart, the end of a period or of the
match. There is no per-sport branch: a profile without rules is a bare clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from timerd.core.clock import MatchClock
from timerd.core.commands import Command, Pause, Reset, Resume, Start, Stop, Toggle
from timerd.core.effects import (
    AlreadyIdle,
    Effect,
    FaceoffGuardChanged,
    Phase,
    PhaseChanged,
    Signal,
    SignalKind,
)
from timerd.core.faceoff import FaceoffGuard
from timerd.core.plan import PlannedSignal, overtime_plan, signal_plan
from timerd.core.profile import Overtime, Profile
from timerd.core.record import Interruption, PeriodPlayed
from timerd.core.refused import CommandRefused
from timerd.core.refused import named as _named
from timerd.core.rule import BreakKind, CommandTable, RuleModule, Step, recorded, timed_steps
from timerd.core.rules import BUILT_IN, MODULES, undeclared
from timerd.core.score import Ending, Goal, Result, ScoreSheet, Side, table_points
from timerd.core.status import Status, snapshot


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
    result: Result | None = None
    replays: int = 0  # ITHF 4.5: restarts from the start, goals kept
    #: ITHF 4.6: what showed, besides a counted goal, that a side was at the table after the
    #: start signal (a faceoff, its passive-play count), by side (`has_played`).
    took_part: dict[Side, tuple[str, float]] = field(default_factory=dict)
    #: The profile's rule modules (`timerd.core.rules`), made afresh for every match.
    rules: list[RuleModule] = field(init=False)
    periods_played: list[PeriodPlayed] = field(default_factory=list)
    #: In a break: "overtime" (before it, ITHF 4.8) or "intermission" (ISBHF 410).
    break_kind: BreakKind | None = None
    teams: dict[Side, str] = field(default_factory=lambda: dict.fromkeys(Side, ""))
    round: str | None = None
    #: The match's one id (results, journal, hall), given by the service when the match is
    #: set up (`Service.mint_id`); the core never makes one, so it stays deterministic. A
    #: reset forgets it (the next match gets its own); a replay (ITHF 4.5) keeps it.
    match_id: str | None = None
    _played_before_s: float = 0.0  # net time of the periods before this one
    _break_warning_at: float | None = None
    _plan: tuple[PlannedSignal, ...] = ()
    _next: int = 0
    #: What time produced in `handle` before its command was refused, and since when: the
    #: next `poll` or `handle` hands it out first, so a refusal never swallows a signal.
    _held: list[Effect] = field(default_factory=list)
    _held_at: float | None = None
    #: A fired final's (or period end's) end: due at once, first, a step of its own (`poll`).
    _period_ends: Step | None = None

    def __post_init__(self) -> None:
        self.guard = FaceoffGuard(self.profile.faceoff_guard_s)
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
        """What the match shows at `now` (`timerd.core.status.snapshot`)."""
        return snapshot(self, now)

    # -- commands --------------------------------------------------------------------------

    def handle(self, command: Command, now: float) -> list[Effect]:
        """Apply an operator command at `now`; raise CommandRefused with the reason if not allowed.

        Signals already due fire first: a pause pressed just after a signal's instant does not
        swallow that signal, and a goal pressed at the final signal is judged after it (6.5);
        what the command itself makes due at once (a start with no lead) follows it.
        When the command is then refused, what fired is held, not lost: the next `poll` (due at
        once, `next_deadline`) or `handle` returns it first, so a refused press at the final
        signal still ends the match with its result.
        """
        action = self.commands().get(type(command))
        if action is None:
            raise _named(command.name, undeclared(command.name, self.commands(), self.profile))
        self._hold(self._fire_due(now), now)
        try:
            effects = action(command, now)
        except CommandRefused as exc:  # the held effects wait for `poll`
            raise _named(command.name, exc) from None
        return self._release() + effects + self._fire_due(now)

    def parse(self, name: str, *words: str) -> Command:
        """Command `name` (hyphenated; `start_in` reads as `start-in`) from its words as this
        match declares it (`Command.parse`), at every edge; CommandRefused says what is wrong."""
        declared, name = {cls.name: cls for cls in self.commands()}, name.replace("_", "-")
        try:
            if name not in declared:
                raise undeclared(name, declared.values(), self.profile)
            return declared[name].parse(words, self.profile)
        except CommandRefused as exc:
            raise _named(name, exc) from None

    def commands(self) -> CommandTable:
        """Every command this match takes, by type, and what handles it: the phase
        machine's own and those of the profile's rule modules."""
        table: CommandTable = {
            Start: lambda _, now: self.start(now),
            Pause: lambda _, now: self.pause(now),
            Stop: lambda _, now: self.pause(now),
            Resume: lambda command, now: self.resume(now, command.how is not None),
            Toggle: lambda _, now: self.toggle(now),
            Reset: lambda _, now: self.reset(now),
        }
        for rule in self.rules:
            table.update(rule.commands())
        return table

    def start(self, now: float) -> list[Effect]:
        """From idle: sound the pre-signal now; the start signal follows after the lead (4.4)."""
        if self.phase is Phase.PAUSED:
            return self.resume(now)
        if self.phase is not Phase.IDLE:
            raise self.why_not("start")
        self.start_at = now + self.profile.pre_signal_lead_s
        if self.profile.pre_signal_lead_s > 0:
            return self.pre_signal(now)
        return self.goto(Phase.PRE_SIGNAL)  # a zero lead starts at once, with no pre-signal

    def pre_signal(self, at: float) -> list[Effect]:
        """Enter the pre-signal phase, its signal at `at`; the start is due at `start_at`."""
        effects = self.goto(Phase.PRE_SIGNAL)
        effects.append(self.sound(SignalKind.PRE_SIGNAL, at, remaining_s=self.profile.period_s))
        return effects

    def pause(self, now: float) -> list[Effect]:
        """ITHF 10.1: stop the clock at once; the time lost is added back (10.2).

        The faceoff guard and the passive count stand still with the clock.
        """
        if self.phase is not Phase.RUNNING:
            raise self.why_not("pause")
        self.clock = self.clock.stopped(now)
        self.paused_since = now
        effects = self.goto(Phase.PAUSED)
        effects.append(self.sound(SignalKind.PAUSE, now, remaining_s=self.remaining_s(now)))
        return effects

    def resume(self, now: float, faceoff: bool = False) -> list[Effect]:
        """Play on after an interruption, with a new faceoff (`resume faceoff`, or a faceoff
        marked during the pause) or with the puck returned to the figure that had it, in which
        case a running guard carries on (ITHF 10.4)."""
        if self.phase is not Phase.PAUSED:
            raise self.why_not("resume")
        if self.paused_since is None and self.play_s(now) == 0:  # a scheduled stop clock's
            return self._begin_play(now)  # first faceoff (`rules.scheduled`): its start signal
        self.close_interruption(now)
        self.clock = self.clock.started(now)
        effects = self.goto(Phase.RUNNING)
        effects.append(self.sound(SignalKind.RESUME, now, remaining_s=self.remaining_s(now)))
        effects.extend(self._play_restarts(now))
        # ISBHF 407 !1, 415a,c: a stop clock starts when the ball is dropped, so its restart is
        # the faceoff (a goal's pending one included).
        if faceoff or self.guard.on_resume or self.profile.clock == "stop":
            self.both_took_part(("faceoff", self.play_s(now)))
            effects.extend(self.faceoff_at(now))
        return effects

    def toggle(self, now: float) -> list[Effect]:
        """The START/PAUSE button: start from idle, pause while running, resume while paused."""
        if self.phase is Phase.RUNNING:
            return self.pause(now)
        return self.start(now)

    def reset(self, now: float) -> list[Effect]:
        """Back to idle for a new match; refused while the clock runs, so play is never lost."""
        if self.phase is Phase.RUNNING:
            raise self.why_not("reset")
        previous, told = self.phase, [e for rule in self.rules for e in rule.reset(now)]
        self._rewind()
        self.interruptions.clear()
        self.last_signal = None
        self.sheet = ScoreSheet()
        self.result = None
        self.replays = 0
        self.took_part.clear()
        self._fresh_records()
        self.phase = Phase.IDLE
        self.match_id = None
        if previous is Phase.IDLE:
            return [AlreadyIdle()]
        return [*told, PhaseChanged(Phase.IDLE, previous)]

    def restart(self, now: float) -> list[Effect]:
        """ITHF 4.5: the match again from the start, the goals kept (`replay`)."""
        self.replays += 1
        self._rewind()
        effects = self.goto(Phase.IDLE)
        effects.extend(self.start(now))
        return effects

    def why_not(self, command: str) -> CommandRefused:
        """The refusal of `command` in the current phase: what the phase allows instead."""
        return _named(command, CommandRefused(f"in_{self.phase.value}"))

    # -- time ------------------------------------------------------------------------------

    def poll(self, now: float, *, to_signal: bool = False) -> list[Effect]:
        """Fire, once each and in time order, everything due by `now`, after what a refused
        command held back (`handle`); with `to_signal`, to the first step that sounds a signal,
        the rest still due: a final sounds before the match works out its end (issue 33)."""
        return self._release() + self._fire_due(now, to_signal)

    def _hold(self, effects: list[Effect], now: float) -> None:
        if effects and self._held_at is None:
            self._held_at = now
        self._held.extend(effects)

    def _release(self) -> list[Effect]:
        held, self._held, self._held_at = self._held, [], None
        return held

    def _fire_due(self, now: float, to_signal: bool = False) -> list[Effect]:
        effects: list[Effect] = []
        while (upcoming := self._next_timed()) is not None and upcoming[0] <= now:
            effects.extend(fired := upcoming[1](upcoming[0]))
            if to_signal and any(isinstance(effect, Signal) for effect in fired):
                break
        return effects

    def _next_timed(self) -> Step | None:
        """The earliest timed step of the current phase, and what it does: the phase
        machine's and the rule modules'. On a tie the one listed first wins: a module's step
        `ahead_of_signals` (a penalty that runs out with the period ends in that period), then
        the planned signal (a final ends the rest), then the others; a fired final's end first."""
        if self._period_ends is not None:
            return self._period_ends
        steps, later = timed_steps(self.rules)
        if self.phase in (Phase.PRE_SIGNAL, Phase.BREAK) and self.start_at is not None:
            if self._break_warning_at is not None:
                steps.append((self._break_warning_at, self._break_warning))
            end = self._end_intermission if self.break_kind == "intermission" \
                else self._begin_play
            steps.append((self.start_at, end))
        elif self.phase is Phase.RUNNING and self._next < len(self._plan):
            due = self.clock.when_elapsed(self._plan[self._next].at_elapsed_s)
            if due is not None:
                steps.append((due, self._fire_planned))
        steps += later
        return min(steps, key=lambda s: s[0], default=None)

    def when_played(self, play_s: float) -> float | None:
        return self.clock.when_elapsed(play_s - self._played_before_s)

    def _begin_play(self, at: float) -> list[Effect]:
        """The start signal (ITHF 5.1) or the overtime start (4.8): each is a faceoff."""
        kind = SignalKind.START
        if self.break_kind == "overtime" and self.profile.overtime is not None:
            kind = SignalKind.OVERTIME_START
            self._enter_overtime(self.profile.overtime)
        # Anchor at the planned instant, not at `now`: a late wake-up does not shift the match.
        self.clock = self.clock.started(at)
        self.start_at = self._break_warning_at = self.break_kind = None
        effects = self.goto(Phase.RUNNING)
        effects.append(self.sound(kind, at, remaining_s=self.remaining_s(at)))
        effects.extend(self._play_restarts(at))
        effects.extend(self.faceoff_at(at))
        return effects

    def _enter_overtime(self, overtime: Overtime) -> None:
        self._played_before_s += self.clock.elapsed_at_anchor
        self.overtime = True
        self.period += 1
        self.clock = MatchClock(math.inf if overtime.length_s is None else overtime.length_s)
        self._plan = overtime_plan(overtime, self.profile.half_period_signal)
        self._next = 0

    def start_break(self, kind: BreakKind, at: float, length_s: float,
                    warning_s: float | None) -> list[Effect]:
        """A break of `length_s` from `at`, a `break_warning` `warning_s` before its end: an
        intermission (ISBHF 410) or the break before overtime (ITHF 4.8, ISBHF 411)."""
        self.break_kind = kind
        self.start_at = at + length_s
        self._break_warning_at = None if warning_s is None else self.start_at - warning_s
        return self.goto(Phase.BREAK)

    def _end_intermission(self, at: float) -> list[Effect]:
        """ISBHF 410: the intermission is over; the period starts with the referee's faceoff."""
        self.start_at = self._break_warning_at = self.break_kind = None
        effects = self.goto(Phase.PAUSED)
        effects.append(self.sound(SignalKind.INTERMISSION_END, at,
                                   remaining_s=self.remaining_s(at)))
        return effects

    def _break_warning(self, at: float) -> list[Effect]:
        self._break_warning_at = None
        left = 0.0 if self.start_at is None else self.start_at - at
        return [self.sound(SignalKind.BREAK_WARNING, at, remaining_s=left)]

    def _fire_planned(self, due: float) -> list[Effect]:
        planned = self._plan[self._next]
        self._next += 1
        signal = self.sound(planned.kind, due, planned.beeps, planned.remaining_s)
        for rule in self.rules:
            rule.planned_signal(signal)
        if planned.kind in (SignalKind.FINAL, SignalKind.PERIOD_END):
            self._period_ends = due, partial(self._end_period, planned.at_elapsed_s)
        return [signal]

    def _play_restarts(self, now: float) -> list[Effect]:
        """The clock starts: the stoppage and whatever ran in it are over (the timeout, the
        line change, the goalie's dressing time)."""
        return [effect for rule in self.rules for effect in rule.play_restarts(now)]

    def _end_period(self, at_elapsed_s: float, at: float) -> list[Effect]:
        self._period_ends = None
        self.clock = self.clock.stopped_at_elapsed(at_elapsed_s)
        self.guard.clear()
        self._play_stops()
        self._log_period(at_elapsed_s)
        if self.overtime:  # a timed overtime ran out without a goal
            if self.sheet.tied():
                for rule in self.rules:  # ISBHF 414b: a shootout
                    follows = rule.tied_after_overtime(at)
                    if follows is not None:
                        return [*self.goto(Phase.SHOOTOUT), *follows]
            return self.finish(Ending.OVERTIME, at)
        if self.period < self.profile.periods:
            self._played_before_s += at_elapsed_s
            self._enter_period(self.period + 1)
            # The next period waits for its faceoff: the operator starts it (ISBHF 401),
            # after what a rule module has follow the period (an intermission, 410).
            self.guard.on_resume = True
            for rule in self.rules:
                follows = rule.next_period(at)
                if follows is not None:
                    return follows
            return self.goto(Phase.PAUSED)
        return self.regular_time_over(at)

    def regular_time_over(self, at: float) -> list[Effect]:
        """The final signal at `at` (or a correction after it, `rules.corrections`): a tie
        goes to overtime after its break (ITHF 4.8, ISBHF 411), else the match ends."""
        if self.sheet.tied() and self.profile.overtime is not None:
            for rule in self.rules:  # the match as it stood (`rules.corrections`)
                rule.overtime_follows(at)
            ot = self.profile.overtime
            if ot.auto_start:
                return self.start_break("overtime", at, ot.break_s, ot.break_warning_s)
            # A stop clock: overtime waits, after the break, for the referee's faceoff.
            self._enter_overtime(ot)
            self.guard.on_resume = True
            return self.start_break("intermission", at, ot.break_s, ot.break_warning_s)
        return self.finish(Ending.REGULAR, at)

    def finish(self, how: Ending, at: float, side: Side | None = None,
                winner: Side | None = None) -> list[Effect]:
        """The match ends at `at`, `how` (`side` forfeited or walked out): its result is kept."""
        told = [effect for rule in self.rules for effect in rule.ending(how, at)]
        self.clock = self.clock.stopped(at)
        self.start_at = self._break_warning_at = self.break_kind = None
        self.guard.clear()
        if self.clock.elapsed(at) > 0:
            self._log_period(self.clock.elapsed(at))
        for rule in self.rules:
            rule.finish(at)
        winner = winner or self.sheet.leader()
        self.result = Result(how, self.sheet.score(), winner, side, self.play_s(at),
                             self.clock.elapsed(at) if self.overtime else None,
                             table_points(self.profile.points, winner),
                             self.records().get("shootout"))
        return self.goto(Phase.FINISHED) + told

    def goal_entered(self, goal: Goal, now: float) -> list[Effect]:
        """Every rule module's answer to an entered goal (ITHF 8.3: it ends a passive count;
        a power-play goal ends a minor penalty, `rules.penalties`)."""
        return [effect for rule in self.rules for effect in rule.goal_entered(goal, now)]

    def goal_undone(self, goal: Goal, now: float) -> list[Effect]:
        """Every rule module's answer to a goal taken back (a power-play goal's minor)."""
        return [effect for rule in self.rules for effect in rule.goal_undone(goal, now)]

    def faceoff_at(self, at: float) -> list[Effect]:
        """A faceoff at `at` (the start signal, a marked one, a resume with one): the rule
        modules hear of it and the guard starts (ITHF 5.6)."""
        for rule in self.rules:
            rule.faceoff(at)
        if self.guard.faceoff(self.play_s(at)):
            return [FaceoffGuardChanged(active=True)]
        return []

    def both_took_part(self, evidence: tuple[str, float]) -> None:
        """ITHF 4.6: `evidence` that both sides were at the table, unless one was already."""
        for side in Side:
            self.took_part.setdefault(side, evidence)

    def close_interruption(self, now: float) -> None:
        if self.paused_since is not None:
            self.interruptions.append(Interruption(
                self.period, self.clock.elapsed(now), now - self.paused_since))
        self.paused_since = None

    def _rewind(self) -> None:
        """Clock, period and timed state back to before the start (the sheet is kept)."""
        self.start_at = self.paused_since = self._break_warning_at = self.break_kind = None
        self._played_before_s = 0.0
        self.overtime = False
        self.guard.clear()
        self._play_stops()
        self.periods_played = []
        for rule in self.rules:
            rule.rewound()
        self._enter_period(1)

    def _fresh_records(self) -> None:
        """The built-in modules and the profile's, none used yet (penalties, timeouts...)."""
        self.rules = [module(self) for module in BUILT_IN]
        self.rules += [MODULES[name](self) for name in self.profile.rules]

    def _play_stops(self) -> None:
        for rule in self.rules:
            rule.play_stops()

    def records(self) -> dict[str, Any]:
        """What the rule modules keep in the result (penalties, timeouts, the shootout)."""
        return recorded(self.rules)

    def _enter_period(self, period: int) -> None:
        self.period = period
        self.clock = MatchClock(self.profile.period_s)
        self._plan = signal_plan(self.profile, period)
        self._next = 0

    def _log_period(self, played_s: float) -> None:
        """Keep the current period as played, once (a shootout's end does not add one)."""
        if self.periods_played and self.periods_played[-1].period == self.period:
            return
        self.periods_played.append(
            PeriodPlayed(self.period, self.overtime, played_s, recorded(self.rules, period=True)))

    def remaining_s(self, now: float) -> float:
        return self.clock.remaining(now)

    def goto(self, phase: Phase) -> list[Effect]:
        """Enter `phase`: its PhaseChanged, if it is a change."""
        previous, self.phase = self.phase, phase
        return [PhaseChanged(phase, previous)] if phase is not previous else []

    def sound(self, kind: SignalKind, due: float, beeps: int = 1,
               remaining_s: float = 0.0) -> Signal:
        signal = Signal(kind, due, beeps, remaining_s, self.period)
        if not kind.acknowledges:
            self.last_signal = signal
        return signal
