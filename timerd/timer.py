"""The timer: the service's one loop timer, and what it does at each deadline.

`Timer` sleeps until the next deadline (the next signal, the next shown second, a button's
bounce window or long press, an output's exact call), asks the match what is due
(`Timer.step`) and has the service hand it out as one dispatch. It sleeps in epoll until just
before the deadline and the last stretch in `time.sleep` (FINE_WAIT_S, `slack_margin`), since
an epoll timeout fires up to a millisecond late. Outputs' edges that must be met as exactly
(a buzzer pulse's end: a 50 ms chirp must last 50 ms, issue 16) are `ExactCalls` the timer
takes in with the match's own deadlines (`Control.call_exactly_at`). Nothing is counted per
tick: a late wake-up fires what is due exactly once. Moved out of the service (issue 44
item 6), which keeps the request/reply surface and the match.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol

from timerd.core.buttons import Chord, Gesture
from timerd.core.effects import Effect, Signal, Tick
from timerd.core.match import Match
from timerd.dispatch import Dispatcher
from timerd.ports import ButtonBinding, Cancellable

log = logging.getLogger("timerd.service")

#: The last stretch before a deadline is slept with `time.sleep`, on the loop thread: the kernel
#: times a nanosleep to its 50 us timer slack, while an epoll timeout (how asyncio sleeps) is
#: rounded up to whole milliseconds. An input arriving in this stretch waits at most this long.
FINE_WAIT_S = 0.003


def slack_margin(wait_s: float) -> float:
    """How early to wake from the event loop's sleep before a deadline `wait_s` away.

    Linux lets a poll timeout fire late by 0.1% of its length, up to 100 ms (timer slack), and
    epoll rounds the timeout up to whole milliseconds (DESIGN.md). Waking that much early plus
    2 ms leaves the deadline inside the FINE_WAIT_S stretch, slept precisely (for a wait
    longer than FINE_WAIT_S, the margin is always shorter than the wait). Measured with
    `bench/run`: sleeping the last milliseconds in epoll sounded signals 1.4 to 2.5 ms late.
    """
    return min(0.1, 0.001 * wait_s) + 0.002


@dataclass(eq=False)
class ExactCall:
    """A callback due at loop time `when`, run by the service's loop as exactly as a signal
    (`Service.call_exactly_at`)."""

    when: float
    callback: Callable[[], None]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


@dataclass
class ExactCalls:
    """The exact calls still to run, soonest first (when, order given, call)."""

    _heap: list[tuple[float, int, ExactCall]] = field(default_factory=list)
    _order: Iterator[int] = field(default_factory=itertools.count)

    def add(self, when: float, callback: Callable[[], None]) -> ExactCall:
        call = ExactCall(when, callback)
        heapq.heappush(self._heap, (when, next(self._order), call))
        return call

    def next_due(self) -> float | None:
        """When the next call not called off is due (None: none is)."""
        heap = self._heap
        while heap and heap[0][2].cancelled:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def run_due(self, now: float) -> None:
        """Run every call due by `now`, in time order; one that raises is logged."""
        heap = self._heap
        while heap and heap[0][0] <= now:
            call = heapq.heappop(heap)[2]
            if call.cancelled:
                continue
            try:
                call.callback()
            except Exception:
                log.exception("a timed call of an output failed; the match goes on")


class Driven(Protocol):
    """What the timer drives (`timerd.service.Service`): the match, the buttons and chords,
    the hand-out, and what acts on a button's gestures."""

    match: Match
    buttons: dict[str, ButtonBinding]
    chords: list[Chord]
    dispatcher: Dispatcher

    @property
    def loop(self) -> asyncio.AbstractEventLoop: ...
    def now(self) -> float: ...
    def act_on_buttons(self, gestures: Mapping[str, Iterable[Gesture]], at: float) -> None: ...
    def hand_out(self, effects: list[Effect], now: float, sounded: int = 0) -> None: ...


@dataclass(eq=False)
class Timer:
    """The service's loop: one loop timer at a time (`arm`), each wake-up one callback, not a
    task woken through a future, which would cost the loop a second turn each time (issue 16,
    CPU per match minute)."""

    driven: Driven
    #: Set while `run` runs; fails with what a step raised.
    running: asyncio.Future[None] | None = None
    real_clock: bool = True  # the loop reads the monotonic clock (not virtual or scaled)
    #: `call_exactly_at`'s callbacks.
    exact: ExactCalls = field(default_factory=ExactCalls)
    #: When the shown clock next changes, and whether only its tenths (`Tick.tenth`): set
    #: from each dispatch's status.
    next_tick: tuple[float, bool] | None = None
    told_until: float = float("-inf")  # the latest instant the match has been handed
    #: The loop's one timer (`arm`), the deadline it is for, and the buttons' and chords'.
    _handle: asyncio.TimerHandle | None = None
    _deadline: float | None = None
    _inputs_due: float | None = None
    #: A button's edge came since the buttons and chords were last seen with nothing due:
    #: only an edge starts a bounce window, a long press or a chord (`Service.button_edge`
    #: sets it), so a match that nobody touches does not ask every button at each wake-up
    #: (issue 44 item 8: CPU per match minute).
    inputs_stirred: bool = True
    _stepping: bool = False  # in `step`: `arm` follows, so `wake` need not
    _rearm_due: bool = False  # `wake` has asked for `_rearm`

    async def run(self) -> None:
        """Run until cancelled, or until a step fails (a defect stops the daemon)."""
        loop = self.driven.loop
        self.real_clock = type(loop).time is asyncio.BaseEventLoop.time
        self.running = loop.create_future()
        self.arm()
        try:
            await self.running
        finally:
            self.running = None
            if self._handle is not None:
                self._handle.cancel()
                self._handle = None

    def fail(self, exc: Exception) -> None:
        """Stop `run` with `exc`, a defect."""
        if self.running is not None and not self.running.done():
            self.running.set_exception(exc)

    def call_exactly_at(self, when: float, callback: Callable[[], None]) -> Cancellable:
        """`Control.call_exactly_at`: `callback` at loop time `when`, taken in with the
        deadlines; while the timer does not run (`timerd sound-test` plays the buzzer without
        a match), the loop's own timer runs it: late by up to a millisecond, never lost."""
        if self.running is None:
            return self.driven.loop.call_at(when, callback)
        call = self.exact.add(when, callback)
        self.wake()
        return call

    def step(self, now: float) -> None:
        """Act on what is due at `now`: outputs' exact calls, the buttons and chords, the
        match's signals and phase changes, and the shown clock's tick."""
        driven = self.driven
        self.exact.run_due(now)
        # The buttons and chords only when one of theirs is due: an edge that came during
        # the sleep acted at once (`button_edge`), and its deadlines are later than now.
        if self._inputs_due is not None and now >= self._inputs_due:
            driven.act_on_buttons({n: b.logic.poll(now) for n, b in driven.buttons.items()},
                                  now)
        match = driven.match
        effects: list[Effect] = list(match.poll(now, to_signal=True))
        sounded = 0
        if any(isinstance(effect, Signal) for effect in effects) \
                and (due := match.next_deadline()) is not None and due <= now:
            # A signal and what it brings at the same instant (a final and the match's end,
            # its result and the state kept for a correction: 0.5 ms in `bench/run`): the
            # sound outputs have the signal first (issue 33), the outputs one dispatch of all.
            ahead = driven.dispatcher.dispatch(effects, partial(match.status, now), now)
            driven.dispatcher.sound(ahead, ahead.signals)
            sounded = len(ahead.signals)
            effects += match.poll(now)
        self.told_until = now
        if self.next_tick is not None and now >= self.next_tick[0]:
            effects.append(Tick(tenth=self.next_tick[1]))
        driven.hand_out(effects, now, sounded=sounded)

    def deadlines(self) -> tuple[float | None, float | None, float | None]:
        """The next deadline of all; the next one that must be met exactly: a signal, a
        button's bounce window or long press, a chord, an output's exact call (not the shown
        clock's next change); and the next of the buttons' and chords' alone."""
        driven = self.driven
        first_input = None
        if self.inputs_stirred:
            inputs = [b.logic.next_deadline() for b in driven.buttons.values()]
            inputs += [chord.next_deadline() for chord in driven.chords]
            first_input = min((c for c in inputs if c is not None), default=None)
            self.inputs_stirred = first_input is not None
        exact = min((d for d in (driven.match.next_deadline(), first_input,
                                 self.exact.next_due()) if d is not None), default=None)
        tick = None if self.next_tick is None else self.next_tick[0]
        if tick is None or (exact is not None and exact <= tick):
            return exact, exact, first_input
        return tick, exact, first_input

    def arm(self) -> None:
        """Set the loop's one timer for the next deadline: in epoll until just before it,
        then exactly (`_woken`).

        The early wake-up (`slack_margin`) absorbs epoll's lateness; the rest, at most
        FINE_WAIT_S, is one `time.sleep` that blocks the loop and returns on the deadline. Both
        only on a loop that reads the monotonic clock: virtual and scaled loops (tests,
        `--speed`) keep their own time, and a real sleep would not move it.

        A deadline that is only the shown clock's next change, with the next `exact` one
        further than epoll's lateness after it, is slept in epoll to the instant: a display a
        millisecond late is not seen, and the fine wait's second wake-up is saved: one a
        second, ten a second in the last 10 s (issue 16: CPU per match minute).
        """
        self._rearm_due = False
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        deadline, exact, self._inputs_due = self.deadlines()
        self._deadline = deadline
        if deadline is None:
            return  # nothing is due: an input sets the timer again (`wake`)
        early = slack_margin(deadline - self.driven.now()) if self.real_clock else 0.0
        if exact is None or exact - deadline > early:  # only the display: no hurry
            early = 0.0
        self._handle = self.driven.loop.call_at(deadline - early, self._woken)

    def _woken(self) -> None:
        """The timer fired: wait out the last stretch before the deadline, act, set it again."""
        self._handle = None
        try:
            deadline, now = self._deadline, self.driven.now()
            if deadline is not None and now < deadline:
                if not self.real_clock or deadline - now > FINE_WAIT_S:
                    self.arm()  # woken too early: sleep again
                    return
                time.sleep(deadline - now)  # deliberate, at most FINE_WAIT_S
            self._stepping = True
            try:
                self.step(self.driven.now())
            finally:
                self._stepping = False
            self.arm()
        except Exception as exc:  # noqa: BLE001 (a defect: `run` fails with it)
            self.fail(exc)

    def wake(self) -> None:
        """An input (a command, an edge, an exact call) may have moved the next deadline: set
        the timer again once, after what is under way (a signal adds several exact calls)."""
        if self.running is None or self._stepping or self._rearm_due:
            return
        self._rearm_due = True
        self.driven.loop.call_soon(self._rearm)

    def _rearm(self) -> None:
        if self._rearm_due and self.running is not None:
            self.arm()
