"""The timer's exact calls: what must happen at an instant, as exactly as a signal sounds.

The service's loop (`Service._arm`) sleeps in epoll until just before the next deadline and
the last stretch in `time.sleep` (FINE_WAIT_S, `slack_margin`), since an epoll timeout fires
up to a millisecond late. Outputs' edges that must be met as exactly (a buzzer pulse's end:
a 50 ms chirp must last 50 ms, issue 16) are `ExactCalls` the loop takes in with the match's
own deadlines (`Control.call_exactly_at`).
"""

from __future__ import annotations

import heapq
import itertools
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

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
