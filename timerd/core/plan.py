"""Where the timed signals of a period fall (ITHF 4.4; ISBHF 407 !3, 411): the profile's placed
signals, the period end or the final, in net time into the period. The match fires them in
order; an interruption moves them all with the clock (ITHF 10.2)."""

from __future__ import annotations

from dataclasses import dataclass

from timerd.core.effects import SignalKind
from timerd.core.profile import Overtime, Profile


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
