"""Rule profiles: what a match is, as data. The core reads a profile; it has no `if ithf:`.

A profile says how long a period is, how many there are, whether the clock runs through play
(ITHF 4.2) or only between faceoff and whistle, how long the pre-signal leads the start, and
where in each period the timed signals sound. Built-in profiles are TOML files in
`timerd/profiles/`; a user's own file has the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from timerd.core.effects import SignalKind

#: ITHF 4.4: the pre-signal sounds 15 to 30 s before the start.
ITHF_LEAD_RANGE_S = (15.0, 30.0)

#: Signals whose place a profile may choose. The start, period ends and final are implied.
PLACEABLE = frozenset({SignalKind.INTERVAL, SignalKind.LAST_30})


@dataclass(frozen=True)
class PlacedSignal:
    """A signal at a point of each period, counted as match time left (`remaining_s`)."""

    signal: SignalKind
    remaining_s: float
    beeps: int = 1


@dataclass(frozen=True)
class Profile:
    name: str
    description: str = ""
    #: False for training or house rules: lifts the ITHF-only checks below.
    ithf_conformant: bool = True
    #: "running": time runs even when the puck is not in play (ITHF 4.2); a pause is an
    #: interruption. "stop": net time, started and stopped by the referee (ISBHF 407).
    clock: Literal["running", "stop"] = "running"
    periods: int = 1
    period_s: float = 300.0  # ITHF 4.1: five minutes
    pre_signal_lead_s: float = 20.0  # ITHF 4.4
    signals: tuple[PlacedSignal, ...] = ()

    def problems(self) -> list[str]:
        out = []
        if self.periods < 1:
            out.append(f"periods = {self.periods}: a match has at least one period")
        if self.period_s <= 0:
            out.append(f"period_s = {self.period_s}: a period must last longer than 0 s")
        if self.pre_signal_lead_s < 0:
            out.append(f"pre_signal_lead_s = {self.pre_signal_lead_s}: must not be negative")
        lo, hi = ITHF_LEAD_RANGE_S
        if self.ithf_conformant and not lo <= self.pre_signal_lead_s <= hi:
            out.append(
                f"pre_signal_lead_s = {self.pre_signal_lead_s:g}: ITHF 4.4 asks for the "
                f"pre-signal {lo:g} to {hi:g} s before the start "
                "(set ithf_conformant = false for a training profile)"
            )
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
        return out
