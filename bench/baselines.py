"""The two common ways hobby match timers keep time, as small stand-ins to measure timerd against.

Both run on an asyncio loop like timerd, drive the same buzzer pin, take the same START/PAUSE
button (start, pause, resume) and play the same rule profile, so the comparison is of the
timekeeping design alone:

- `Countdown`: sleep one second, decrement the count, beep when the count reaches a signal's
  second (`setInterval(1000)`, `after(1000)`, `sleep(1)` loops). Every tick's late wake-up is
  added to the match, and a pause throws away the part of the second already run.
- `CatchUp`: wake every 200 ms, read the wall clock, and sound every signal whose instant has
  passed. It does not drift, but a signal sounds up to one tick late, and the wall clock it
  trusts jumps when NTP syncs (not exercised here: the benchmark's wall clock is steady).

Each keeps `signals`, one record per signal sounded: its kind, the match time left it stands
for, and the instant its buzzer pin went high (`rises`, filled by the hooked pin).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Protocol

from timerd.core.profile import Profile

#: How long a baseline's beep lasts; only its onset is measured.
BEEP_S = 0.2
#: CatchUp's tick.
TICK_S = 0.2


class Timer(Protocol):
    signals: list[dict[str, Any]]

    def press(self) -> None: ...

    def stop(self) -> None: ...


class _Naive:
    """What both designs share: the profile's signal table, a buzzer, and a record of each beep.

    `plan` maps seconds left to the signal that sounds then; the final signal is at 0.
    """

    def __init__(self, profile: Profile, buzzer: Any, rises: list[int]) -> None:
        if profile.periods != 1:
            raise ValueError("the baselines play one-period profiles only")
        self.profile = profile
        self.plan = {s.remaining_s: s.signal.value for s in profile.signals}
        self.plan[0.0] = "final"
        self.buzzer = buzzer
        self.rises = rises
        self.signals: list[dict[str, Any]] = []
        self.phase = "idle"
        self._off: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None  # the ticking coroutine

    def beep(self, kind: str, remaining_s: float) -> None:
        self.buzzer.off()  # so that every signal makes a rising edge, even over the last one
        self.buzzer.on()
        self.signals.append({"signal": kind, "remaining_s": remaining_s,
                             "onset_ns": self.rises[-1]})
        if self._off is not None:
            self._off.cancel()
        self._off = asyncio.get_running_loop().call_later(BEEP_S, self.buzzer.off)

    def stop(self) -> None:
        if self._off is not None:
            self._off.cancel()
        self._halt()

    def _halt(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None


class Countdown(_Naive):
    """Sleep 1 s, decrement, compare: the count is the clock."""

    def __init__(self, profile: Profile, buzzer: Any, rises: list[int]) -> None:
        super().__init__(profile, buzzer, rises)
        for seconds in (profile.period_s, profile.pre_signal_lead_s, *self.plan):
            if seconds != int(seconds):
                raise ValueError(f"a per-second countdown cannot play {seconds} s")
        self.count = 0

    def press(self) -> None:
        if self.phase == "idle":
            self.beep("pre_signal", self.profile.period_s)
            self.phase, self.count = "lead", int(self.profile.pre_signal_lead_s)
            self._run()
        elif self.phase == "running":  # pause: stop ticking, keep the count
            self.phase = "paused"
            self._halt()
        elif self.phase == "paused":  # resume: a fresh one-second sleep from now
            self.phase = "running"
            self._run()

    def _run(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(1)
            self.count -= 1
            if self.phase == "lead" and self.count <= 0:
                self.phase, self.count = "running", int(self.profile.period_s)
                self.beep("start", self.profile.period_s)
            elif self.phase == "running" and self.count in self.plan:
                self.beep(self.plan[self.count], float(self.count))
                if self.count == 0:
                    self.phase = "finished"
                    return


class CatchUp(_Naive):
    """Tick every 200 ms; elapsed = wall clock now - wall clock at start, minus the pauses.

    Made on a running loop: the ticker starts with the program, as a hobby timer's does.
    """

    def __init__(self, profile: Profile, buzzer: Any, rises: list[int]) -> None:
        super().__init__(profile, buzzer, rises)
        self.start_wall = 0.0
        self.anchor_wall: float | None = None  # wall clock when the clock last started
        self.elapsed_before_s = 0.0  # play before the last pause
        self.pending = sorted(self.plan, reverse=True)  # seconds left, next first
        # The ticker runs from program start, so its phase has nothing to do with the press.
        self._task = asyncio.get_running_loop().create_task(self._ticker())

    def press(self) -> None:
        now = time.time()
        if self.phase == "idle":
            self.beep("pre_signal", self.profile.period_s)
            self.phase = "lead"
            self.start_wall = now + self.profile.pre_signal_lead_s
        elif self.phase == "running" and self.anchor_wall is not None:
            self.phase = "paused"
            self.elapsed_before_s += now - self.anchor_wall
            self.anchor_wall = None
        elif self.phase == "paused":
            self.phase = "running"
            self.anchor_wall = now

    async def _ticker(self) -> None:
        while self.phase != "finished":
            await asyncio.sleep(TICK_S)
            self.catch_up(time.time())

    def catch_up(self, now: float) -> None:
        if self.phase == "lead" and now >= self.start_wall:
            self.phase, self.anchor_wall = "running", self.start_wall
            self.beep("start", self.profile.period_s)
        if self.phase != "running" or self.anchor_wall is None:
            return
        remaining = self.profile.period_s - (self.elapsed_before_s + now - self.anchor_wall)
        while self.pending and self.pending[0] >= remaining:
            seconds = self.pending.pop(0)
            self.beep(self.plan[seconds], seconds)
        if not self.pending:
            self.phase = "finished"


DESIGNS: dict[str, type[Countdown] | type[CatchUp]] = {
    "countdown": Countdown,
    "catchup": CatchUp,
}
