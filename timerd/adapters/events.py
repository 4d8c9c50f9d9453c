"""The event stream: one JSON object per line for every state change and every signal.

`t` is seconds on the daemon's clock since it started (virtual time under `--speed` and in
tests), so tools and tests can check when each signal sounded.

The stream (`--events PATH`, or `-` for stdout) never holds up the match: the loop only puts
a line in a buffer of at most `MAX_BUFFER_BYTES`, and a thread of its own writes it out. A
reader that stalls (a paused `less`, a hung `jq`) fills its pipe and then the buffer; events
after that are dropped and counted, with one log line when dropping starts and one with the
count when the stream is written again (docs/service.md, "Limits and failure modes").
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import threading
from collections import deque
from types import TracebackType
from typing import Any

from timerd.ports import Dispatch
from timerd.wire import event_record

log = logging.getLogger("timerd.events")

#: Event lines waiting for a slow reader, beyond what its pipe holds (a match has a few
#: hundred lines of about 120 bytes); more are dropped and counted.
MAX_BUFFER_BYTES = 256 * 1024
#: After dropping, lines are kept again once the buffer is down to this share of its size, so
#: a reader at the edge does not make a log line per event.
RESUME_AT = 0.5
#: How long a stop waits for the writer to hand the last lines to the reader, in real seconds.
DRAIN_S = 2.0


class EventStream:
    """Writes records as JSON lines to a file descriptor it owns, from a thread of its own.

    An output of the service (`notify`, which never blocks) and an async context manager:
    leaving it gives the writer up to `DRAIN_S` to write what is buffered. A reader that goes
    away (EPIPE) or a write that fails ends the stream with one log line; the match goes on.
    """

    def __init__(self, fd: int, clock: Any, t0: float,
                 max_buffer_bytes: int = MAX_BUFFER_BYTES) -> None:
        self.fd = fd
        self.clock = clock  # anything with .time(): the running loop
        self.t0 = t0
        self.max_buffer_bytes = max_buffer_bytes
        self.dropped = 0  # events dropped since the stream was last written to
        self._lines: deque[bytes] = deque()
        self._buffered = 0  # bytes queued or being written
        self._failed = False
        self._closing = False
        self._wake = threading.Condition()
        self._writer = threading.Thread(target=self._write_out, name="event-stream",
                                        daemon=True)

    @property
    def buffered_bytes(self) -> int:
        """Bytes queued for the reader or being written to it now."""
        with self._wake:
            return self._buffered

    @classmethod
    def open(cls, target: str, clock: Any, t0: float) -> EventStream:
        """A stream to `target`: a path (appended to, created if need be) or "-" (stdout)."""
        if target == "-":
            sys.stdout.flush()
            return cls(os.dup(sys.stdout.fileno()), clock, t0)
        return cls(os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644), clock, t0)

    async def __aenter__(self) -> EventStream:
        self._writer.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        with self._wake:
            self._closing = True
            self._wake.notify()
        await asyncio.to_thread(self._writer.join, DRAIN_S)
        if self._writer.is_alive():  # blocked on a reader that reads nothing: let it be
            log.warning("event stream: %d bytes not written at the stop (the reader is "
                        "stalled)", self._buffered)
            return
        os.close(self.fd)

    def notify(self, dispatch: Dispatch) -> None:
        t = None  # read once a record is due: most dispatches (a tick) stream none
        for effect in dispatch.effects:
            record = event_record(effect, dispatch.status)
            if record is not None:
                if t is None:
                    t = round(self.clock.time() - self.t0, 6)
                self._queue((json.dumps({"t": t, **record}) + "\n").encode())

    def _queue(self, data: bytes) -> None:
        """One line for the writer thread, unless the reader is too far behind."""
        recovered_after = 0
        with self._wake:
            if self._failed:
                return
            limit = self.max_buffer_bytes * (RESUME_AT if self.dropped else 1.0)
            if self._buffered + len(data) > limit:
                self.dropped += 1
                waiting = self._buffered
            else:
                recovered_after, self.dropped = self.dropped, 0
                self._lines.append(data)
                self._buffered += len(data)
                self._wake.notify()
        if self.dropped == 1:
            log.warning("event stream: the reader is not keeping up (%d bytes waiting); "
                        "events are dropped until it does", waiting)
        elif recovered_after:
            log.warning("event stream: written again; %d events were dropped",
                        recovered_after)

    def _write_out(self) -> None:
        """The writer thread: blocking writes of whatever is queued, until the stop."""
        while True:
            with self._wake:
                while not self._lines and not self._closing:
                    self._wake.wait()
                if not self._lines:
                    return
                data = b"".join(self._lines)
                self._lines.clear()
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self.fd, view):]
            except OSError as exc:
                with self._wake:
                    self._failed = True
                    self._lines.clear()
                    self._buffered = 0
                log.warning("event stream: %s; no more events are written", exc)
                return
            with self._wake:
                self._buffered -= len(data)
