"""The adapters' long-lived tasks, in one supervised group (issue 32 item 5).

An adapter that talks to the outside world all the time (the hall link and its clock watch,
the serial display's port, the keypad) runs a task for as long as the daemon runs. It starts
it through `Control.spawn`, never with `asyncio.create_task` of its own, so that every such
task is known, stopped with the daemon, and watched: a task that ends with an exception (a
defect in the adapter, a library raising what it never documented) is

- logged at once with its traceback (the log names the task);
- counted in `status["task_crashes"]` (its name and how many times), so `timerctl status`
  and the pages show that a part is not working as it should;
- started again after RESTART_S, from scratch (the adapter's task is its whole lifetime:
  open, serve, reopen), at most MAX_RESTARTS times in RESTART_WINDOW_S; past that it stays
  down, logged once.

The match loop, the outputs and every other task go on as if nothing had happened: a part
that fails must never stop the buzzer (docs/service.md, "Limits and failure modes"). A task
that returns, or is cancelled by its adapter's stop, is not a crash.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from timerd.core.frozen import ReadOnlyDict

log = logging.getLogger("timerd.tasks")

#: Loop seconds before a crashed task is started again.
RESTART_S = 5.0
#: At most this many restarts of one task within RESTART_WINDOW_S; then it stays down.
MAX_RESTARTS = 5
RESTART_WINDOW_S = 60.0

TaskFactory = Callable[[], Coroutine[Any, Any, None]]


@dataclass(eq=False)
class Supervised:
    """One long-lived task of an adapter: `task` is the run under way (a new one after each
    restart), None while it waits to be started again or stays down."""

    name: str
    factory: TaskFactory
    supervisor: Supervisor
    task: asyncio.Task[None] | None = None
    stopped: bool = False
    crashes: deque[float] = field(default_factory=deque)
    _restart: asyncio.TimerHandle | None = None

    def cancel(self) -> None:
        """Stop it for good (the adapter's stop): no restart follows."""
        self.stopped = True
        if self._restart is not None:
            self._restart.cancel()
            self._restart = None
        if self.task is not None:
            self.task.cancel()

    async def stop(self, timeout_s: float | None = None) -> bool:
        """`cancel`, then wait until the run under way has ended; False if it has not within
        `timeout_s` (a task stuck in a library's teardown: left behind)."""
        self.cancel()
        task = self.task
        if task is None or task.done():
            return True
        _, pending = await asyncio.wait([task], timeout=timeout_s)
        return not pending


@dataclass
class Supervisor:
    """The group: `spawn` starts a supervised task; `aclose` stops every one still running."""

    restart_s: float = RESTART_S
    max_restarts: int = MAX_RESTARTS
    window_s: float = RESTART_WINDOW_S
    tasks: list[Supervised] = field(default_factory=list)

    def spawn(self, name: str, factory: TaskFactory) -> Supervised:
        """Start `factory()` as the task `name`, supervised (the module's docstring)."""
        supervised = Supervised(name, factory, self)
        self.tasks.append(supervised)
        self._start(supervised)
        return supervised

    def crashed(self) -> dict[str, int]:
        """Each task that has crashed in this run, and how many times."""
        return {s.name: len(s.crashes) for s in self.tasks if s.crashes}

    def status_extra(self) -> dict[str, Any]:
        """`status["task_crashes"]`: {name: count} of the adapters' tasks that crashed."""
        # Read-only as made: a dispatch's document keeps it as it is (issue 44 item 8).
        return {"task_crashes": ReadOnlyDict(self.crashed())}

    async def aclose(self) -> None:
        """Stop every task still running (the daemon's end, after the adapters' own stops)."""
        running = [s for s in self.tasks if not s.stopped]
        for supervised in running:
            supervised.cancel()
        tasks = [s.task for s in running if s.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=1.0)

    def _start(self, supervised: Supervised) -> None:
        supervised._restart = None
        if supervised.stopped:
            return
        loop = asyncio.get_running_loop()
        task = loop.create_task(supervised.factory(), name=supervised.name)
        supervised.task = task
        task.add_done_callback(lambda done: self._ended(supervised, done))

    def _ended(self, supervised: Supervised, task: asyncio.Task[None]) -> None:
        if task is not supervised.task or supervised.stopped or task.cancelled():
            return
        exc = task.exception()
        supervised.task = None
        if exc is None:
            log.info("task %s ended", supervised.name)
            return
        loop = task.get_loop()
        now = loop.time()
        crashes = supervised.crashes
        crashes.append(now)
        recent = sum(1 for at in crashes if now - at <= self.window_s)
        if recent > self.max_restarts:
            log.error("task %s crashed %d times within %g s; it stays down (the match goes "
                      "on without it)", supervised.name, recent, self.window_s, exc_info=exc)
            return
        log.error("task %s crashed; the match goes on, and it starts again in %g s",
                  supervised.name, self.restart_s, exc_info=exc)
        supervised._restart = loop.call_later(self.restart_s, self._start, supervised)
