"""What the core asks the outside world to do: plain frozen values, no behaviour."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Phase(StrEnum):
    """Where a match stands."""

    IDLE = "idle"
    SCHEDULED = "scheduled"  # a start instant is set (hall mode); the pre-signal is still to come
    PRE_SIGNAL = "pre_signal"  # ITHF 4.4: the pre-signal has sounded, the start is due
    RUNNING = "running"
    PAUSED = "paused"  # ITHF 10.1 interruption; the clock stands still
    FINISHED = "finished"


class SignalKind(StrEnum):
    """Every sound timerd makes. Profiles place the timed ones; config says how each sounds."""

    PRE_SIGNAL = "pre_signal"  # ITHF 4.4, 15 to 30 s before the start
    START = "start"  # ITHF 5.1, the first faceoff
    INTERVAL = "interval"  # ITHF 4.4, minutes (N beeps for N minutes left) or thirds
    LAST_30 = "last_30"  # ITHF 4.4, the last 30 seconds
    PERIOD_END = "period_end"  # end of a period that is not the last
    FINAL = "final"  # ITHF 4.4, the clear final signal
    PAUSE = "pause"  # acknowledgement: the clock stopped (ITHF 10.1)
    RESUME = "resume"  # acknowledgement: the clock runs again


@dataclass(frozen=True)
class Signal:
    """Sound `kind` now, `beeps` times; `due` is the instant it was planned for."""

    kind: SignalKind
    due: float
    beeps: int = 1
    remaining_s: float = 0.0
    period: int = 1


@dataclass(frozen=True)
class PhaseChanged:
    phase: Phase
    previous: Phase


@dataclass(frozen=True)
class Notice:
    """Something to tell the operator (a refused press, a hint); not an error of the daemon."""

    message: str


@dataclass(frozen=True)
class Tick:
    """The shown clock changed (a second, or a tenth in the last 10 s); made by the service."""


@dataclass(frozen=True)
class Applied:
    """An operator command the match accepted, as given; made by the service.

    For outputs that keep or forward the match's history (the journal, hall mode).
    """

    command: str
    args: tuple[str, ...] = ()


Effect = Signal | PhaseChanged | Notice | Tick | Applied


class CommandRefused(Exception):
    """A command that the rules or the current phase do not allow; the message says why."""
