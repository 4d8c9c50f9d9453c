"""How a clock reads on every display (terminal, web page, LED digits, `timerctl status`, the
desk, `systemctl status`): one rule, one place.

`clock_face` says what the big clock shows at an instant and how it reads; every view takes
its `text` (or, where a view runs the clock on between pushes, its `kind` and `value_s`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class FaceKind(StrEnum):
    """What the big clock counts."""

    COUNTDOWN = "countdown"  # the period's time left (ITHF 4.1, ISBHF 410), or 5:00 before it
    COUNT_UP = "count_up"  # sudden-death overtime played so far (ITHF 4.8, ISBHF 411)
    BREAK = "break"  # a break's time left: before overtime, an intermission (ISBHF 410)
    SHOOTOUT = "shootout"  # no clock: the shootout's goals (ISBHF 414b)


@dataclass(frozen=True)
class ClockFace:
    """The big clock at one instant: what it counts, the seconds it counts (goals in a
    shootout: 0), and the text every display shows."""

    kind: FaceKind
    value_s: float
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "value_s": self.value_s, "text": self.text}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClockFace:
        """The face as a status document carries it (`to_dict`); KeyError, TypeError or
        ValueError when `data` is not one."""
        return cls(FaceKind(data["kind"]), float(data["value_s"]), str(data["text"]))

    def said(self) -> str:
        """The face in a line of English (`systemctl status`, the installer's warning):
        "2:32 left", "overtime 1:11 played", "0:15 of the break left", "shootout 2-1"."""
        return {FaceKind.COUNT_UP: f"overtime {self.text} played",
                FaceKind.BREAK: f"{self.text} of the break left",
                FaceKind.SHOOTOUT: f"shootout {self.text}"}.get(self.kind, f"{self.text} left")


def clock_face(*, remaining_s: float, count_up: bool, overtime_s: float | None,
               break_left_s: float | None, shootout_goals: tuple[int, int] | None) -> ClockFace:
    """The clock a scoreboard shows: the period's time left; in a break the break's time left
    (a rink's clock counts the intermission down, ISBHF 410); in a sudden-death overtime the
    time played, counting up in whole seconds (ITHF 4.8); in a shootout its goals (414b)."""
    if shootout_goals is not None:
        home, away = shootout_goals
        return ClockFace(FaceKind.SHOOTOUT, 0.0, f"{home}-{away}")
    if break_left_s is not None:
        return ClockFace(FaceKind.BREAK, max(0.0, break_left_s), shown_clock(break_left_s))
    if count_up:
        played = max(0.0, overtime_s or 0.0)
        return ClockFace(FaceKind.COUNT_UP, played, elapsed_clock(played))
    return ClockFace(FaceKind.COUNTDOWN, max(0.0, remaining_s), shown_clock(remaining_s))


def shown_clock(remaining_s: float) -> str:
    """Time left as a scoreboard shows it.

    Whole seconds are rounded up, as every scoreboard does (the clock reads 0:00 only when time
    is up, and 5:00 at the start); in the last 10 s tenths are shown, also rounded up ("9.9").
    """
    remaining_s = max(0.0, remaining_s)
    tenths = _tenths_up(remaining_s)
    if 0 < tenths < 100:
        return f"{tenths // 10}.{tenths % 10}"
    whole = math.ceil(round(remaining_s, 6))
    return f"{whole // 60}:{whole % 60:02d}"


def elapsed_clock(played_s: float) -> str:
    """Time played as a count-up clock shows it: whole seconds, rounded down (a stopwatch
    reads 0:01 once a whole second has passed)."""
    whole = math.floor(round(max(0.0, played_s), 6))
    return f"{whole // 60}:{whole % 60:02d}"


def next_whole(played_s: float) -> float:
    """How much time until `elapsed_clock` of a count-up (overtime played, an interruption's
    length) reads differently: float noise aside, as it rounds, and never less than a
    microsecond. A time such as 1078.1 - 1017.1 (60.99999999999989) is 61 s shown, so the
    next change is a second on, not 1e-13 s on: an instant so close that it equals `now`
    would have the service's timer fire for it again and again (a virtual loop never
    passes it)."""
    return max(math.floor(round(played_s, 6)) + 1 - played_s, 1e-6)


def next_change(remaining_s: float, tenths: bool = True) -> float:
    """How much time (seconds of match time) until `shown_clock` would read differently;
    without `tenths`, until its whole seconds would (a view that runs the tenths itself)."""
    if remaining_s <= 0:
        return math.inf
    step = 0.1 if tenths and remaining_s <= 10 else 1.0
    units = round(remaining_s / step, 6)
    below = math.ceil(units) - 1  # the next shown value is reached at this many steps
    return max(remaining_s - below * step, 1e-6)


def tenth_only(remaining_s: float) -> bool:
    """Is `remaining_s`, a countdown's time left when its shown clock changed, between whole
    seconds (the last 10 s: "9.9" to "9.1"), so that only the tenths changed?"""
    tenths = _tenths_up(max(0.0, remaining_s))
    return 0 < tenths < 100 and tenths % 10 != 0


def _tenths_up(remaining_s: float) -> int:
    """Tenths of a second left, rounded up as the clock shows them (float noise aside)."""
    return math.ceil(round(remaining_s * 10, 6))
