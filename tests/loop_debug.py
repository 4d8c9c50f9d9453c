"""The service and adapter tests once in asyncio's debug mode (issue 44 item 4): with
`TIMERD_LOOP_DEBUG=1` (`.ci/run` sets it for one run of tests/service and tests/adapters)
every event loop a test makes runs in debug mode, and a test fails when one of its loop's
callbacks ran longer than SLOW_S: a blocked loop (a blocking read, a sleep, a write that
waits on the card), which would delay every buzzer edge behind it. Debug mode also reports a
coroutine never awaited and a loop method called from another thread.

A pytest plugin (`pytest_plugins` in tests/conftest.py): off unless asked for, as debug mode
costs every callback its timing and every task its creation traceback.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterator
from typing import Any

import pytest

#: A callback that runs longer blocks the loop: asyncio logs it, and its test fails. Far above
#: what any callback of ours takes (well under a millisecond), so a loaded 2-core machine
#: never trips it; a blocking call of seconds, or of half a second, does.
SLOW_S = 0.5
ACTIVE = os.environ.get("TIMERD_LOOP_DEBUG") == "1"


class SlowCallbacks(logging.Handler):
    """asyncio's "Executing <Handle ...> took 0.600 seconds" lines, as they are logged."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Executing ") and " took " in message:
            self.seen.append(message)


def debug_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every loop made from now on runs in debug mode and calls a callback slow at SLOW_S."""
    made = asyncio.BaseEventLoop.__init__

    def init(self: asyncio.BaseEventLoop, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        self.set_debug(True)
        self.slow_callback_duration = SLOW_S

    monkeypatch.setattr(asyncio.BaseEventLoop, "__init__", init)


@pytest.fixture(autouse=ACTIVE)
def no_slow_callback(monkeypatch: pytest.MonkeyPatch) -> Iterator[SlowCallbacks]:
    """Fails the test after it ran if a callback of one of its loops blocked it."""
    debug_loops(monkeypatch)
    handler = SlowCallbacks()
    logger = logging.getLogger("asyncio")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
    if handler.seen and ACTIVE:
        pytest.fail("the loop was blocked: " + "; ".join(handler.seen), pytrace=False)
