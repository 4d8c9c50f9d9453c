"""systemd integration: the sd_notify protocol, spoken directly (no libsystemd needed).

Under `Type=notify` systemd passes `$NOTIFY_SOCKET`, a Unix datagram socket (a path, or an
abstract name written with a leading `@`). Each message is one datagram of `KEY=value` lines:

- `READY=1` once the hardware is set up and the control socket listens: only then does
  `systemctl start` return and do units ordered after timerd start.
- `WATCHDOG=1` every half of `$WATCHDOG_USEC` (`WatchdogSec=` in the unit), sent by a timer on
  the event loop itself: if the loop stalls, the pings stop and systemd restarts the daemon,
  which then restores the match from its journal (see `timerd.adapters.journal.writer`).
- `STATUS=...` a line for `systemctl status`: the phase and the clock, on every phase change.
- `STOPPING=1` when a SIGTERM begins the clean stop.

Without `$NOTIFY_SOCKET` (run by hand, in tests) every call does nothing. A send that fails
is logged once and never raised: the match goes on.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Mapping
from types import TracebackType

from timerd.core.effects import PhaseChanged
from timerd.core.status import Status
from timerd.ports import Dispatch

log = logging.getLogger("timerd.systemd")


def status_text(status: Status) -> str:
    """The one line `systemctl status` shows: profile, phase, clock."""
    period = f" (period {status.period}/{status.periods})" if status.periods > 1 else ""
    return f"{status.profile}: {status.phase.value}, {status.clock_face.said()}{period}"


class SystemdNotifier:
    """Talks to systemd over `$NOTIFY_SOCKET`; an output (STATUS) and an async context manager.

    `speed` is how many loop seconds pass per real second (`timerd run --speed`): systemd's
    watchdog counts real time, so the loop interval between pings is scaled by it.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, speed: float = 1.0,
                 environ: Mapping[str, str] = os.environ) -> None:
        self.loop = loop
        address = environ.get("NOTIFY_SOCKET", "")
        # An abstract socket name is written with "@" and sent with a leading NUL byte.
        self.address = "\0" + address[1:] if address.startswith("@") else address
        self.watchdog_s = _watchdog_s(environ)
        self.ping_interval_s = None if self.watchdog_s is None else self.watchdog_s / 2 * speed
        self._sock: socket.socket | None = None
        self._ping: asyncio.TimerHandle | None = None
        self._failing = False

    @property
    def enabled(self) -> bool:
        return bool(self.address)

    async def __aenter__(self) -> SystemdNotifier:
        if self.enabled:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._sock.setblocking(False)
            log.info("systemd notify socket %s%s", self.address.replace("\0", "@"),
                     f", watchdog every {self.watchdog_s:g} s" if self.watchdog_s else "")
        if self.ping_interval_s is not None and self._sock is not None:
            self._watchdog(self.ping_interval_s)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._ping is not None:
            self._ping.cancel()
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def send(self, *fields: str) -> bool:
        """Send `KEY=value` fields as one datagram; False if there is no socket or it failed."""
        if self._sock is None:
            return False
        try:
            self._sock.sendto("\n".join(fields).encode(), self.address)
        except OSError as exc:
            if not self._failing:
                log.error("systemd notify socket %s: %s", self.address, exc)
            self._failing = True
            return False
        self._failing = False
        return True

    def ready(self, status: Status) -> None:
        self.send("READY=1", f"STATUS={status_text(status)}", f"MAINPID={os.getpid()}")

    def stopping(self) -> None:
        self.send("STOPPING=1", "STATUS=stopping")

    def notify(self, dispatch: Dispatch) -> None:
        if any(isinstance(effect, PhaseChanged) for effect in dispatch.effects):
            self.send(f"STATUS={status_text(dispatch.status)}")

    def _watchdog(self, interval_s: float) -> None:
        """Ping, and schedule the next ping on the loop: a stalled loop stops the pings."""
        self.send("WATCHDOG=1")
        self._ping = self.loop.call_later(interval_s, self._watchdog, interval_s)


def _watchdog_s(environ: Mapping[str, str]) -> float | None:
    """`$WATCHDOG_USEC` in seconds, if the watchdog is on and meant for this process."""
    usec = environ.get("WATCHDOG_USEC")
    if not usec:
        return None
    pid = environ.get("WATCHDOG_PID")
    if pid and pid != str(os.getpid()):
        return None  # meant for another process (we were started by a wrapper)
    try:
        value = int(usec)
    except ValueError:
        log.warning("WATCHDOG_USEC=%r is not a number; no watchdog pings", usec)
        return None
    return value / 1e6 if value > 0 else None
