"""Event loops whose clock is warped: virtual time for tests, faster time for demos.

The daemon measures everything with `loop.time()`. These loops change what that reads and how
long the loop really blocks, and nothing else, so the very same service code runs:

- `virtual_loop()`: time jumps straight to the next timer whenever nothing is ready, so a
  5-minute match runs in milliseconds and every instant is exact (tests).
- `scaled_loop(factor)`: time runs `factor` times faster than the monotonic clock
  (`timerd run --speed`, for demos and acceptance runs).

Both wrap the real selector, so sockets, pipes and thread wake-ups
(`call_soon_threadsafe`) still work.
"""

from __future__ import annotations

import asyncio
import math
import selectors
import time
from typing import Any


class _WarpSelector(selectors.BaseSelector):
    """The real selector, with the select timeout translated into the loop's time."""

    def __init__(self, clock: WarpClock) -> None:
        self._inner = selectors.DefaultSelector()
        self._clock = clock

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._inner.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._inner.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._inner.modify(fileobj, events, data)

    def get_map(self) -> Any:
        return self._inner.get_map()

    def close(self) -> None:
        self._inner.close()

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        return self._clock.select(self._inner, timeout)


class WarpClock:
    """Maps the loop's time onto the monotonic clock; `factor=None` means fully virtual."""

    def __init__(self, factor: float | None) -> None:
        self.factor = factor
        self._virtual = 0.0
        self._real0 = time.monotonic()

    def time(self) -> float:
        if self.factor is None:
            return self._virtual
        return (time.monotonic() - self._real0) * self.factor

    def advance(self, seconds: float) -> None:
        """Move virtual time forward (fully virtual loops only), by at least the smallest step
        the clock can take: a wait shorter than half of it (1e-13 s at 4000 s) would leave
        the time where it was, and a timer that finds itself still early sets itself again
        for the same instant, for ever (`Service` re-arms when woken before its deadline)."""
        if seconds > 0:
            self._virtual = max(self._virtual + seconds, math.nextafter(self._virtual, math.inf))

    def select(self, inner: selectors.BaseSelector,
               timeout: float | None) -> list[tuple[selectors.SelectorKey, int]]:
        if self.factor is not None:
            return inner.select(None if timeout is None else timeout / self.factor)
        ready = inner.select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:
            # Nothing is scheduled: only another thread or a file can wake us. Wait for real.
            return inner.select(None)
        self.advance(timeout)
        return []


class WarpLoop(asyncio.SelectorEventLoop):
    def __init__(self, clock: WarpClock) -> None:
        self.warp = clock
        super().__init__(_WarpSelector(clock))

    def time(self) -> float:
        return self.warp.time()


def virtual_loop() -> WarpLoop:
    return WarpLoop(WarpClock(None))


def scaled_loop(factor: float) -> WarpLoop:
    if factor <= 0:
        raise ValueError("speed factor must be positive")
    return WarpLoop(WarpClock(factor))
