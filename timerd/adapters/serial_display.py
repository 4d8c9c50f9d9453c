"""A serial LED display or scoreboard, driven with the line protocol of docs/serial-protocol.md.

Wiring: the display's microcontroller (an Arduino, an ESP32; the reference sketch and its
wiring are in hw/display/) plugs into a USB port of the Pi and shows up as /dev/ttyUSB0 or
/dev/ttyACM0 (better: its stable /dev/serial/by-id/... name); a rink scoreboard with an RS-232
or RS-485 input hangs on a USB adapter the same way. `[serial]` gives port, baud and format.

What goes out: a state frame whenever what the display shows changes (each shown second, each
tenth in the last 10 s, each phase change or command), and the same state again every
`keepalive_s` when nothing changed, so the display can tell a live link from a dead one.
What comes in: command lines (buttons on the display board), run through `Service.command`
like any control surface and answered with a reply line. Input limits (docs/service.md,
"Limits and failure modes"): a line is at most 128 bytes (a longer one is skipped to its line
feed), and at most `COMMAND_BURST` commands at once, then `COMMANDS_PER_S` a second, are run;
the others are answered `no` and counted, so a babbling board neither stalls the loop nor
floods the log. Log lines about the display's input are written at most once per kind per
30 s, with a count.

The clock and the signals never wait for this port. `notify` only writes what the port takes
at once. When it takes no more (a display that stopped reading, flow control held off), the
frames already queued are stale, since every frame carries the whole state: they are
discarded, and as soon as the port drains the newest state goes out. A port that is missing
at start or vanishes (USB unplugged) is logged once and reopened with backoff; the full state
is sent as soon as it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import serial
from serial_asyncio_fast import SerialTransport

from timerd.adapters.serial_protocol import (
    BadLine,
    LineSplitter,
    parse_line,
    reply_frame,
    state_frame,
)
from timerd.config import INSTANCE_HINT, InUse, SerialConfig
from timerd.limits import LOG_EVERY_S, RateLimitedLog, Throttle, TokenBucket
from timerd.ports import Control, Dispatch, Spawned

log = logging.getLogger("timerd.serial")

#: The first retry to open a missing port; each further one waits twice as long, up to
#: `retry_max_s`.
RETRY_FIRST_S = 0.5

#: Commands from the display run at once up to this many, then at this rate (a person
#: presses a few buttons a second); the others are refused.
COMMAND_BURST = 10
COMMANDS_PER_S = 5.0

#: Replies to the display's commands wait behind a full port up to this many bytes.
MAX_QUEUED_REPLIES_BYTES = 1024

#: How long closing the port may take on shutdown (a stuck USB adapter can hang close()).
CLOSE_WAIT_S = 2.0


class NonBlockingSerial(serial.Serial):  # type: ignore[misc]  # pyserial has no type hints
    """pyserial's port, whose non-blocking write does not spin when the port is full.

    pyserial 3.5's `write()` with `write_timeout=0` retries EAGAIN in a busy loop until the
    port takes data (pyserial issue #280), which would freeze the event loop, and with it the
    match clock, while a display holds off. This one writes once and lets BlockingIOError
    through, which the asyncio transport handles by buffering and waiting for the port.
    """

    def write(self, data: bytes) -> int:
        if not self.is_open:
            raise serial.PortNotOpenError()
        try:
            return os.write(self.fd, data)
        except (BlockingIOError, InterruptedError):
            raise
        except OSError as exc:
            raise serial.SerialException(f"write failed: {exc}") from exc


class DrainingTransport(SerialTransport):
    """pyserial-asyncio-fast's transport, which stops waiting for the port once it drained.

    In 0.16, once a buffered write has gone out the writer stays registered, and every later
    wake-up fails an assertion on the empty buffer (its open pull request #36): a busy loop of
    errors after the first time the port was full. This removes the writer at that point.
    """

    def _fatal_error(self, exc: BaseException,
                     message: str = "Fatal error on serial transport") -> None:
        """A port that fails (unplugged) is lost, and the display says so in its own line
        (`lost`, once per 30 s with a count): not a traceback from the loop per replug."""
        if isinstance(exc, serial.SerialException | OSError):
            self._abort(exc)
        else:
            super()._fatal_error(exc, message)

    def _write_ready(self) -> None:
        if self._write_buffer:
            super()._write_ready()
        else:
            self._remove_writer()


class SerialDisplay(asyncio.Protocol):
    """The display link: a service output, an asyncio protocol, and an async context manager."""

    def __init__(self, config: SerialConfig, service: Control) -> None:
        self.config = config
        self.service = service
        self.frames_sent = 0
        self.frames_dropped = 0  # built while the port took no data, never sent
        self.bad_lines = Throttle(LOG_EVERY_S)
        self.jams = Throttle(LOG_EVERY_S)
        self.commands_dropped = 0  # over the rate: answered `no`, never run
        self._commands = TokenBucket(COMMANDS_PER_S, COMMAND_BURST)
        self._log = RateLimitedLog(log, clock=self.service.now)
        self._transport: DrainingTransport | None = None
        self._lost: asyncio.Future[Exception | None] | None = None
        self._jammed = False
        self._last: bytes | None = None
        self._keepalive: asyncio.TimerHandle | None = None
        self._splitter = LineSplitter()
        self._task: Spawned | None = None

    @property
    def connected(self) -> bool:
        return self._transport is not None

    async def __aenter__(self) -> SerialDisplay:
        first: NonBlockingSerial | None = None
        try:
            first = self._open()
        except serial.SerialException as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):  # its lock: another process's
                raise InUse(f"the serial port {self.config.port} is held by another process "
                            f"(another timerd?): {INSTANCE_HINT}, each with its own "
                            "serial.port") from None
        except (OSError, ValueError):
            pass  # missing or unplugged: `_keep_open` says so and retries until it is there
        opened = [first]  # a restart after a crash opens the port afresh
        self._task = self.service.spawn(
            "serial-display", lambda: self._keep_open(opened.pop() if opened else None))
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._task is not None:
            await self._task.stop()
        self._stop_keepalive()
        if self._transport is not None and self._lost is not None:
            self._transport.abort()  # closes the port in a thread: it may block on a bad adapter
            await asyncio.wait([self._lost], timeout=CLOSE_WAIT_S)

    def status_extra(self) -> dict[str, Any]:
        """For `timerctl status`: whether the display is connected and what went wrong."""
        return {"serial_display": {
            "port": self.config.port, "connected": self.connected,
            "frames_sent": self.frames_sent, "frames_dropped": self.frames_dropped,
            "bad_lines": self.bad_lines.total, "jams": self.jams.total,
            "commands_dropped": self.commands_dropped}}

    # -- the service output ------------------------------------------------------------------

    def notify(self, dispatch: Dispatch) -> None:
        """Send the dispatch's state if what the display shows changed; returns at once."""
        self._show(force=False, document=dispatch.document)

    def _show(self, force: bool, document: Mapping[str, Any] | None = None) -> None:
        """The state frame of `document`, or (a keep-alive, a port come back) of the status
        as it is now."""
        data = state_frame(self.service.status_dict() if document is None else document)
        if data == self._last and not force:
            return
        self._last = data
        if self._transport is None:
            return  # sent in full when the port is back
        if self._jammed:
            self.frames_dropped += 1  # the newest state goes out when the port drains
            return
        self._transport.write(data)
        self.frames_sent += 1
        self._stop_keepalive()
        self._keepalive = self.service.loop.call_later(
            self.config.keepalive_s, self._show, True)

    def _stop_keepalive(self) -> None:
        if self._keepalive is not None:
            self._keepalive.cancel()
            self._keepalive = None

    # -- the port ----------------------------------------------------------------------------

    async def _keep_open(self, first: NonBlockingSerial | None) -> None:
        """Open the port (`first`: opened already), and reopen it with backoff whenever it
        is missing or lost."""
        loop = asyncio.get_running_loop()
        delay = RETRY_FIRST_S
        complained = False
        while True:
            try:
                port, first = first or self._open(), None
            except (serial.SerialException, OSError, ValueError) as exc:
                if not complained:
                    log.warning("serial display %s: cannot open (%s); retrying until it is "
                                "there", self.config.port, exc)
                    complained = True
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.config.retry_max_s)
                continue
            # A replugged display (or a loose cable) writes these once per 30 s, with a count.
            self._log.info("open", "serial display %s: open at %d baud", self.config.port,
                           self.config.baud)
            delay = RETRY_FIRST_S
            self._lost = loop.create_future()
            DrainingTransport(loop, self, port)  # calls connection_made soon
            reason = await asyncio.shield(self._lost)  # shutdown waits for it to close
            self._log.warning("lost", "serial display %s: lost (%s); retrying until it is back",
                              self.config.port, reason or "closed")
            complained = True

    def _open(self) -> NonBlockingSerial:
        # Opened on the loop thread: a tty opens without waiting (O_NONBLOCK), and an executor
        # would let the service's virtual time run on in tests while the port is half open.
        config = self.config
        return NonBlockingSerial(config.port, config.baud, bytesize=config.data_bits,
                                 parity=config.parity[0].upper(), stopbits=config.stop_bits,
                                 exclusive=True)

    # -- asyncio protocol callbacks ----------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, DrainingTransport)
        self._transport = transport
        self._jammed = False
        self._splitter = LineSplitter()
        # Every byte left in the transport pauses the writer: only the kernel's queue holds
        # frames, and a frame the port could not take whole shows up here at once.
        transport.set_write_buffer_limits(high=0)
        self._show(force=True)  # the full state, at once: the display may just have restarted

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None
        self._stop_keepalive()
        if self._lost is not None and not self._lost.done():
            self._lost.set_result(exc)

    def pause_writing(self) -> None:
        """The port took only part of a frame: it is full of frames older than this one.

        They are stale (each frame is the whole state), so the kernel's queue is discarded;
        the rest of the partial frame follows when the port drains, and the display drops
        that broken line by its checksum.
        """
        self._jammed = True
        if reported := self.jams.count(self.service.loop.time()):
            log.warning("serial display %s is not taking data (%d time(s)); stale frames "
                        "dropped, the newest is sent when it drains", self.config.port, reported)
        if self._transport is not None and self._transport.serial is not None:
            with contextlib.suppress(serial.SerialException, OSError):  # lost: reported soon
                self._transport.serial.reset_output_buffer()

    def resume_writing(self) -> None:
        self._jammed = False
        self._show(force=True)

    def data_received(self, data: bytes) -> None:
        for line in self._splitter.feed(data):
            if line is None:
                self._bad("overlong line", b"")
            elif line.strip():
                try:
                    command = parse_line(line)
                except BadLine as exc:
                    self._bad(str(exc), line)
                else:
                    if self._commands.take(self.service.now()):
                        self._run(command.command, command.request())
                    else:
                        self._drop(command.command)

    def _run(self, name: str, request: dict[str, Any]) -> None:
        try:
            reply = self.service.command(request)
        except Exception:  # a bug behind one command must not end the link
            log.exception("serial display command %s failed", request)
            reply = {"ok": False}
        self._log.info("command", "serial display: %s %s -> %s", name,
                       " ".join(request["args"]),
                       "ok" if reply["ok"] else reply.get("error", "refused"))
        self._reply(reply["ok"], name)

    def _drop(self, name: str) -> None:
        self.commands_dropped += 1
        self._log.warning("flood", "serial display %s: over %d commands at once or %g a "
                          "second; %s refused", self.config.port, COMMAND_BURST,
                          COMMANDS_PER_S, name)
        self._reply(False, name)

    def _reply(self, ok: bool, name: str) -> None:
        # A reply is an event, not a state: it waits behind a full port rather than being
        # replaced, up to a bound that a babbling display cannot push further.
        if self._transport is not None and \
                self._transport.get_write_buffer_size() < MAX_QUEUED_REPLIES_BYTES:
            self._transport.write(reply_frame(ok, name))

    def _bad(self, reason: str, line: bytes) -> None:
        if reported := self.bad_lines.count(self.service.loop.time()):
            log.warning("serial display %s: ignored %d bad line(s); last: %s: %r",
                        self.config.port, reported, reason, line[:48])
