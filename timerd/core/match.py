"""The match state machine: commands and time in, effects out.

`handle(command, now)` applies an operator's command; `poll(now)` fires whatever the plan has
due by `now`; `next_deadline()` tells the service when to call `poll` next. Both `handle` and
`poll` return the effects (signals to sound, phase changes, notices) in the order they happen.
Every signal is planned in match time, so an interruption moves all later signals with it
(ITHF 10.2), and each one fires exactly once however late `poll` is called.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from timerd.core.clock import MatchClock
from timerd.core.effects import (
    CommandRefused,
    Effect,
    Notice,
    Phase,
    PhaseChanged,
    Signal,
    SignalKind,
)
from timerd.core.profile import ITHF_LEAD_RANGE_S, Profile


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
    return tuple(sorted(placed, key=lambda p: p.at_elapsed_s))


@dataclass(frozen=True)
class Interruption:
    """ITHF 10.1: the clock stood still for `length_s` from `at_elapsed_s` of match time."""

    period: int
    at_elapsed_s: float
    length_s: float


@dataclass(frozen=True)
class Status:
    """What the operator, the displays and the tools see, computed at one instant."""

    profile: str
    phase: Phase
    period: int
    periods: int
    clock_running: bool
    period_s: float
    remaining_s: float
    elapsed_s: float
    start_in_s: float | None  # during the pre-signal: time until the start signal
    interruption_s: float | None  # while paused: how long this interruption has lasted
    interruptions: int
    paused_total_s: float
    last_signal: str | None
    last_signal_remaining_s: float | None

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass
class Match:
    """One match under one profile, from idle to finished."""

    profile: Profile
    phase: Phase = Phase.IDLE
    period: int = 1
    clock: MatchClock = field(init=False)
    start_at: float | None = None
    paused_since: float | None = None
    interruptions: list[Interruption] = field(default_factory=list)
    last_signal: Signal | None = None
    _plan: tuple[PlannedSignal, ...] = ()
    _next: int = 0

    def __post_init__(self) -> None:
        self._enter_period(1)

    # -- queries ---------------------------------------------------------------------------

    def next_deadline(self) -> float | None:
        """The monotonic instant at which `poll` has something to fire, if any."""
        if self.phase is Phase.SCHEDULED and self.start_at is not None:
            return self.start_at - self.profile.pre_signal_lead_s
        if self.phase is Phase.PRE_SIGNAL:
            return self.start_at
        if self.phase is Phase.RUNNING and self._next < len(self._plan):
            return self.clock.when_elapsed(self._plan[self._next].at_elapsed_s)
        return None

    def status(self, now: float) -> Status:
        paused_total = sum(i.length_s for i in self.interruptions)
        current = None
        if self.paused_since is not None:
            current = now - self.paused_since
            paused_total += current
        last = self.last_signal
        return Status(
            profile=self.profile.name,
            phase=self.phase,
            period=self.period,
            periods=self.profile.periods,
            clock_running=self.clock.running,
            period_s=self.profile.period_s,
            remaining_s=self.clock.remaining(now),
            elapsed_s=self.clock.elapsed(now),
            start_in_s=None if self.start_at is None else self.start_at - now,
            interruption_s=current,
            interruptions=len(self.interruptions) + (current is not None),
            paused_total_s=paused_total,
            last_signal=None if last is None else last.kind.value,
            last_signal_remaining_s=None if last is None else last.remaining_s,
        )

    # -- commands --------------------------------------------------------------------------

    def handle(self, command: str, now: float, *args: str) -> list[Effect]:
        """Apply an operator command at `now`; raise CommandRefused with the reason if not allowed.

        Signals already due fire first: a pause pressed just after a signal's instant does not
        swallow that signal.
        """
        commands = self.commands()
        if command not in commands:
            raise CommandRefused(f"unknown command {command!r}; known: "
                                 + ", ".join(sorted(commands)))
        action, usage = commands[command]
        if len(args) != len(usage):
            wanted = " ".join(f"<{u}>" for u in usage) or "no arguments"
            raise CommandRefused(f"{command} takes {wanted}, got {len(args)}")
        effects = self.poll(now)
        effects.extend(action(now, *args))
        return effects

    def commands(self) -> dict[str, tuple[Callable[..., list[Effect]], tuple[str, ...]]]:
        """Every command this match takes, with the names of its arguments."""
        return {
            "start": (self.start, ()),
            "pause": (self.pause, ()),
            "stop": (self.pause, ()),
            "resume": (self.resume, ()),
            "toggle": (self.toggle, ()),
            "reset": (self.reset, ()),
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
        effects.append(self._sound(SignalKind.PRE_SIGNAL, now, remaining_s=self.profile.period_s))
        effects.extend(self.poll(now))  # a zero lead starts at once
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
        effects.extend(self.poll(now))  # a zero lead starts at once
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
        """ITHF 10.1: stop the clock at once; the time lost is added back (10.2)."""
        if self.phase is not Phase.RUNNING:
            raise CommandRefused(self._why_not("pause"))
        self.clock = self.clock.stopped(now)
        self.paused_since = now
        effects = self._goto(Phase.PAUSED)
        effects.append(self._sound(SignalKind.PAUSE, now, remaining_s=self.clock.remaining(now)))
        return effects

    def resume(self, now: float) -> list[Effect]:
        if self.phase is not Phase.PAUSED:
            raise CommandRefused(self._why_not("resume"))
        if self.paused_since is not None:
            self.interruptions.append(Interruption(
                self.period, self.clock.elapsed(now), now - self.paused_since))
        self.paused_since = None
        self.clock = self.clock.started(now)
        effects = self._goto(Phase.RUNNING)
        effects.append(self._sound(SignalKind.RESUME, now, remaining_s=self.clock.remaining(now)))
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
        self.start_at = None
        self.paused_since = None
        self.interruptions.clear()
        self.last_signal = None
        self._enter_period(1)
        self.phase = Phase.IDLE
        if previous is Phase.IDLE:
            return [Notice("reset: already idle")]
        return [PhaseChanged(Phase.IDLE, previous)]

    def _why_not(self, command: str) -> str:
        hints = {
            Phase.IDLE: "no match is running; press START to begin",
            Phase.SCHEDULED: "a start is scheduled and the pre-signal follows by itself; "
                             "long-press RESET to cancel",
            Phase.PRE_SIGNAL: "the pre-signal is sounding and the start follows by itself; "
                              "long-press RESET to cancel",
            Phase.RUNNING: "the clock is running; pause first",
            Phase.PAUSED: "the match is paused; resume it, or long-press RESET to end it",
            Phase.FINISHED: "the match has finished; long-press RESET for a new match",
        }
        return f"{command} refused: {hints[self.phase]}"

    # -- time ------------------------------------------------------------------------------

    def poll(self, now: float) -> list[Effect]:
        """Fire, once each and in order, every planned signal due by `now`."""
        effects: list[Effect] = []
        if self.phase is Phase.SCHEDULED and self.start_at is not None:
            pre_signal_at = self.start_at - self.profile.pre_signal_lead_s
            if now >= pre_signal_at:
                effects.extend(self._goto(Phase.PRE_SIGNAL))
                effects.append(self._sound(SignalKind.PRE_SIGNAL, pre_signal_at,
                                           remaining_s=self.profile.period_s))
        if self.phase is Phase.PRE_SIGNAL and self.start_at is not None and now >= self.start_at:
            # Anchor at the planned instant, not at `now`: a late wake-up does not shift the match.
            self.clock = self.clock.started(self.start_at)
            self.start_at = None
            effects.extend(self._goto(Phase.RUNNING))
            effects.append(self._sound(SignalKind.START, self.clock.anchor or now,
                                       remaining_s=self.profile.period_s))
        while self.phase is Phase.RUNNING and self._next < len(self._plan):
            planned = self._plan[self._next]
            due = self.clock.when_elapsed(planned.at_elapsed_s)
            if due is None or due > now:
                break
            self._next += 1
            effects.append(self._sound(planned.kind, due, planned.beeps, planned.remaining_s))
            if planned.kind in (SignalKind.FINAL, SignalKind.PERIOD_END):
                effects.extend(self._end_period(planned.at_elapsed_s))
        return effects

    def _end_period(self, at_elapsed_s: float) -> list[Effect]:
        self.clock = self.clock.stopped_at_elapsed(at_elapsed_s)
        if self.period >= self.profile.periods:
            return self._goto(Phase.FINISHED)
        self._enter_period(self.period + 1)
        # The next period waits for its faceoff: the operator starts it (ISBHF 401).
        return self._goto(Phase.PAUSED)

    def _enter_period(self, period: int) -> None:
        self.period = period
        self.clock = MatchClock(self.profile.period_s)
        self._plan = signal_plan(self.profile, period)
        self._next = 0

    def _goto(self, phase: Phase) -> list[Effect]:
        previous, self.phase = self.phase, phase
        return [PhaseChanged(phase, previous)] if phase is not previous else []

    def _sound(self, kind: SignalKind, due: float, beeps: int = 1,
               remaining_s: float = 0.0) -> Signal:
        signal = Signal(kind, due, beeps, remaining_s, self.period)
        if kind not in (SignalKind.PAUSE, SignalKind.RESUME):
            self.last_signal = signal
        return signal
