"""The serial display adapter against real pyserial on a pty pair, on virtual time.

The test holds the pty's master end, as the display's microcontroller would hold the far end of
the cable, and reads it with the loop's reader (a pty is a real file descriptor). The adapter
opens the slave by path, as it would open /dev/serial/by-id/...: a symlink that the test removes
("USB unplugged") and points at a new pty ("plugged back in").

pyserial-asyncio-fast closes a lost port in the loop's default executor (a close can block on a
stuck adapter). Virtual time would race on while that thread runs, so these tests run the
executor's work inline: the port is still really closed, just on the loop thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import faulthandler
import logging
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from conftest import Recorder, run_virtual

from tests.conftest import wired
from timerd.adapters.serial_display import SerialDisplay
from timerd.adapters.serial_protocol import LineSplitter, checksum, frame
from timerd.config import SerialConfig, load, profiles
from timerd.config.schema import SchemaError
from timerd.core.effects import Signal
from timerd.core.match import Match
from timerd.ports import Dispatch
from timerd.service import Service

REPO = Path(__file__).resolve().parents[2]
#: The longest real wait for the kernel to hand over pty data (normally microseconds).
REAL_TIMEOUT_S = 10.0
TOGGLE = b"$TDC,1,toggle*C15C\n"


class InlineExecutor(concurrent.futures.ThreadPoolExecutor):
    """Runs submitted work at once on the calling thread (see the module docstring)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any,
               **kwargs: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 (handed to the future's reader)
            future.set_exception(exc)
        return future


class DisplayEnd:
    """The display's end of the cable: a pty master, read into lines.

    Reads never let virtual time run: `catch_up` blocks in real time until the frames the
    adapter wrote are here (the kernel hands pty data over with a small real delay), and
    `line` polls with `asyncio.sleep(0)`, which keeps the virtual loop from jumping ahead.
    """

    def __init__(self, link: Path) -> None:
        self.master, self.slave = os.openpty()  # the slave stays open: no hang-up until unplug
        self.link = link
        self.lines: list[bytes] = []
        self.plugged = True
        self._splitter = LineSplitter(max_line=1 << 20)
        self._cursor = 0
        link.symlink_to(os.ttyname(self.slave))

    def receive(self, timeout_s: float = 0.0) -> bool:
        """Read what has arrived, waiting up to `timeout_s` for something; False if nothing."""
        ready, _, _ = select.select([self.master], [], [], timeout_s)
        if ready:
            for line in self._splitter.feed(os.read(self.master, 65536)):
                assert line is not None
                self.lines.append(line)
        return bool(ready)

    def frames(self) -> int:
        return sum(line.startswith(b"$TDS") for line in self.lines)

    def catch_up(self, frames: int) -> None:
        """Block until `frames` state frames have arrived in all."""
        while self.frames() < frames:
            assert self.receive(REAL_TIMEOUT_S), f"frame {frames} did not arrive"

    async def line(self, wanted: Callable[[bytes], bool]) -> bytes:
        """The next line, after those already returned, that `wanted` accepts."""
        deadline = time.monotonic() + REAL_TIMEOUT_S
        while True:
            for index in range(self._cursor, len(self.lines)):
                if wanted(self.lines[index]):
                    self._cursor = index + 1
                    return self.lines[index]
            assert time.monotonic() < deadline, "the line did not arrive"
            self.receive()
            await asyncio.sleep(0)

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def unplug(self) -> None:
        """Pull the cable: the pty is gone, and so is its name."""
        os.close(self.master)
        os.close(self.slave)
        self.link.unlink()
        self.plugged = False

    def close(self) -> None:
        if self.plugged:
            self.unplug()

    def states(self) -> list[list[str]]:
        """The state frames received whole (checksum right), as their fields after the version.

        A display drops the others, as the reference sketch does.
        """
        return [fields_of(line)[2:] for line in self.lines
                if line.startswith(b"$TDS") and line not in self.broken()]

    def broken(self) -> list[bytes]:
        """Lines whose checksum is wrong: what is left of frames cut off by a full port."""
        return [line for line in self.lines if not intact(line)]


class KeepUp:
    """An output after the display: waits until its frames are at the display end.

    So virtual time never runs ahead of the pty, and no frame is dropped as stale.
    """

    def __init__(self, display: SerialDisplay, end: DisplayEnd) -> None:
        self.display = display
        self.end = end
        self.base = display.frames_sent  # frames sent before this end was plugged in

    def notify(self, dispatch: Dispatch) -> None:
        if self.end.plugged:
            self.end.catch_up(self.display.frames_sent - self.base)


def intact(line: bytes) -> bool:
    body, _, crc = line.decode("ascii").removeprefix("$").partition("*")
    return crc == checksum(body.encode())


def fields_of(line: bytes) -> list[str]:
    """A frame's fields, after checking its checksum the way a display does."""
    body, _, crc = line.decode("ascii").removeprefix("$").partition("*")
    assert crc == checksum(body.encode()), line
    return body.split(",")


def collapse(states: list[list[str]]) -> list[tuple[str, str, str]]:
    """(phase, clock, flags) of each frame, consecutive repeats (keep-alives) folded."""
    out: list[tuple[str, str, str]] = []
    for phase, clock, flags, *_ in states:
        if not out or out[-1] != (phase, clock, flags):
            out.append((phase, clock, flags))
    return out


def running(from_s: int, to_s: int, flags: str = "R----") -> list[tuple[str, str, str]]:
    """The clock while running, second by second from `from_s` down to `to_s` (mm:ss)."""
    return [("running", f"{s // 60}:{s % 60:02d}", flags) for s in range(from_s, to_s - 1, -1)]


def tenths() -> list[tuple[str, str, str]]:
    """The last 10 s in tenths (9.9 to 0.1), in the last 30 s."""
    return [("running", f"{t // 10}.{t % 10}", "R-L--") for t in range(99, 0, -1)]


def with_display(port: Path, body: Callable[[Service, SerialDisplay, Recorder],
                                            Coroutine[Any, Any, None]],
                 profile: str = "ithf", **config: Any) -> None:
    """Run `body` with the service, a serial display on `port` and a recorder, on virtual time."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(InlineExecutor())
        service = Service(Match(profiles.load(profile)))
        recorder = Recorder(loop, loop.time())
        service.outputs.append(recorder)
        settings = SerialConfig(port=str(port), **config)
        async with wired(SerialDisplay(settings, service)) as display:
            task = asyncio.create_task(service.run())
            try:
                await body(service, display, recorder)
            finally:
                task.cancel()

    run_virtual(main)


def at(t: float, action: Callable[[], Any]) -> None:
    """Run `action` at virtual time `t` (the virtual loop starts at 0)."""
    asyncio.get_running_loop().call_at(t, action)


def signal_times(recorder: Recorder) -> list[tuple[float, str]]:
    return [(round(t, 6), e.kind.value) for t, e, _ in recorder.seen if isinstance(e, Signal)]


# A match pressed at literal times: start at 1 s (the start signal 20 s later, ITHF 4.4),
# pause at 100.5 s with 220.5 s left (ITHF 10.1), resume at 110.25 s: every later signal
# moves by the 9.75 s lost (ITHF 10.2), and the final sounds at 330.75 s.
EXPECTED_SIGNALS = [
    (1.0, "pre_signal"), (21.0, "start"), (81.0, "interval"), (100.5, "pause"),
    (110.25, "resume"), (150.75, "interval"), (210.75, "interval"), (270.75, "interval"),
    (300.75, "last_30"), (330.75, "final"),
]


def test_frames_follow_a_scripted_match_in_order(tmp_path: Path) -> None:
    end = DisplayEnd(tmp_path / "display")

    async def body(service: Service, display: SerialDisplay, recorder: Recorder) -> None:
        service.outputs.append(KeepUp(display, end))
        at(1.0, lambda: service.execute(service.parse("start")))
        at(100.5, lambda: service.execute(service.parse("pause")))
        at(110.25, lambda: service.execute(service.parse("resume")))
        await asyncio.sleep(335)
        end.catch_up(display.frames_sent)
        assert display.jams.total == 0
        assert signal_times(recorder) == EXPECTED_SIGNALS

    try:
        with_display(end.link, body)
    finally:
        end.close()
    assert end.broken() == []
    states = end.states()
    assert collapse(states) == [
        ("idle", "5:00", "-----"),
        ("pre_signal", "5:00", "-----"),
        *running(300, 221),
        ("paused", "3:41", "-P---"),
        *running(221, 31),
        *running(30, 10, "R-L--"),
        *tenths(),
        ("finished", "0:00", "-----"),
    ]
    # Every frame carries the rest of the state, here the defaults: period 1 of 1, score 0:0.
    assert {tuple(s[3:]) for s in states} == {("1", "1", "0", "0", "")}
    # Keep-alive: the paused frame at 100.5 s, then again every second until the resume.
    paused = [s for s in states if s[0] == "paused"]
    assert len(paused) == 10


def test_a_ball_hockey_period_its_penalties_and_the_intermission(tmp_path: Path) -> None:
    """ISBHF on the display: the running penalties, standing still in a stoppage (407 !1) and
    a waiting third one not sent; then the intermission counted down with the I flag (410);
    then the next period waiting for its faceoff on the full clock."""
    end = DisplayEnd(tmp_path / "display")

    async def body(service: Service, display: SerialDisplay, recorder: Recorder) -> None:
        service.outputs.append(KeepUp(display, end))
        at(1.0, lambda: service.execute(service.parse("start")))
        at(11.0, lambda: service.execute(service.parse("stop")))  # the whistle: 10 s played
        for t, player in ((12.0, "17"), (13.0, "4"), (14.0, "9")):
            at(t, lambda player=player: service.execute(
                service.parse("penalty", "home", "minor", player)))
        # the faceoff; the period ends at 911 s
        at(21.0, lambda: service.execute(service.parse("start")))
        await asyncio.sleep(911 + 600 + 5)
        end.catch_up(display.frames_sent)

    try:
        with_display(end.link, body, profile="isbhf")
    finally:
        end.close()
    assert end.broken() == []
    states = end.states()
    # The third penalty waits (two players off at most) and is never sent while it waits.
    stopped = [s[7] for s in states if s[0] == "paused" and s[1] == "14:50"]
    assert list(dict.fromkeys(stopped)) == ["", "H17=2:00", "H17=2:00;H4=2:00"]

    def penalties_at(clock: str) -> list[str]:
        return [s[7] for s in states if s[0] == "running" and s[1] == clock]

    assert penalties_at("14:30")[:1] == ["H17=1:40;H4=1:40"]  # 20 s served
    # #17 and #4 are served at 130 s played (12:50 on the clock); #9 takes their place.
    assert penalties_at("12:49")[:1] == ["H9=1:59"]

    breaks = [s for s in states if s[0] == "break"]
    assert {tuple(s[2:5]) for s in breaks} == {("----I", "2", "3")}  # ISBHF 410, period 2 next
    shown = [s[1] for s in breaks]
    countdown = [f"{t // 60}:{t % 60:02d}" for t in range(600, 9, -1)]
    countdown += [f"{t // 10}.{t % 10}" for t in range(99, 0, -1)]
    assert list(dict.fromkeys(shown)) == countdown
    after = states[states.index(breaks[-1]) + 1:]
    assert after  # the intermission is over: period 2 waits for its faceoff (ISBHF 401)
    assert {tuple(s[:5]) for s in after} == {("paused", "15:00", "-P---", "2", "3")}


def test_the_port_vanishes_and_comes_back(tmp_path: Path,
                                          caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "timerd.serial")
    first = DisplayEnd(tmp_path / "display")
    second: list[DisplayEnd] = []
    connected: list[bool] = []

    async def body(service: Service, display: SerialDisplay, recorder: Recorder) -> None:
        def plug_in() -> None:
            second.append(DisplayEnd(tmp_path / "display"))
            keep_up.append(KeepUp(display, second[0]))
            service.outputs.append(keep_up[0])

        keep_up: list[KeepUp] = []

        service.outputs.append(KeepUp(display, first))
        at(1.0, lambda: service.execute(service.parse("start")))
        at(50.5, first.unplug)  # 270.5 s left: the display last showed 4:31
        at(60.25, plug_in)
        at(60.5, lambda: connected.append(display.status_extra()["serial_display"]["connected"]))
        at(63.5, lambda: connected.append(display.status_extra()["serial_display"]["connected"]))
        await asyncio.sleep(335)
        second[0].catch_up(display.frames_sent - keep_up[0].base)
        assert signal_times(recorder)[-1] == (321.0, "final")

    try:
        with_display(first.link, body, retry_max_s=5.0)
    finally:
        first.close()
        for end in second:
            end.close()

    assert first.broken() == second[0].broken() == []
    assert collapse(first.states())[-1] == ("running", "4:31", "R----")
    # Lost at 50.5 s and tried at once, then after 0.5, 1, 2, 4 and 5 s: the retry at 63 s
    # finds the new port (plugged in at 60.25 s) with 258 s left, and the full state goes out
    # at once; then every second as before.
    assert collapse(second[0].states()) == [
        *running(258, 31), *running(30, 10, "R-L--"), *tenths(), ("finished", "0:00", "-----")]
    assert connected == [False, True]
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1  # the loss, once; not one per retry
    assert "lost" in warnings[0]
    opened = [r for r in caplog.records if "open at" in r.getMessage()]
    assert len(opened) == 2


def test_a_display_replugged_100_times_in_5_s_writes_a_few_lines_with_counts(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Fails on main: every replug wrote two lines (lost, open), 200 for 100 replugs in 5 s.
    Now each kind is written once per 30 s (timerd.limits.RateLimitedLog), and the rest is
    counted in a line at the interval's end (issue 36 item 6)."""
    caplog.set_level(logging.INFO, "timerd.serial")
    link = tmp_path / "display"
    ends = [DisplayEnd(link)]
    replugged: list[float] = []

    def replug() -> None:
        ends[-1].unplug()
        ends.append(DisplayEnd(link))  # back before the adapter's retry: it opens at once
        replugged.append(asyncio.get_running_loop().time())

    async def body(service: Service, display: SerialDisplay, recorder: Recorder) -> None:
        for n in range(100):
            at(1.0 + n * 0.05, replug)
        await asyncio.sleep(40)  # virtual: past every kind's interval
        assert display.connected

    try:
        with_display(link, body)
    finally:
        for end in ends:
            end.close()
    assert [r.getMessage() for r in caplog.records if r.name != "timerd.serial"] == []
    lines = [r.getMessage() for r in caplog.records if r.name == "timerd.serial"]
    assert replugged[-1] - replugged[0] == pytest.approx(4.95)
    assert len(lines) == 4, lines
    more = " more like this since the last such line]"
    assert ["open at" in line for line in lines] == [True, False, True, False]
    assert ["lost" in line for line in lines] == [False, True, False, True]
    assert [more in line for line in lines[:2]] == [False, False]  # the first open, loss
    assert lines[2].endswith(f"[99{more}")  # the last of 100 opens, at 30 s
    assert lines[3].endswith(f"[98{more}")  # the last of 99 more losses, at 31 s


def test_missing_at_start_is_logged_once_and_opened_when_it_appears(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "timerd.serial")
    link = tmp_path / "by-id" / "usb-timerd-display"
    ends: list[DisplayEnd] = []

    def plug_in() -> None:
        link.parent.mkdir()
        ends.append(DisplayEnd(link))

    async def body(service: Service, display: SerialDisplay, recorder: Recorder) -> None:
        connected = {}
        for t in (0.25, 10.5, 12.4, 12.6):
            at(t, lambda t=t: connected.setdefault(t, display.connected))
        at(10.25, plug_in)
        await asyncio.sleep(13)
        first = await ends[0].line(lambda line: line.startswith(b"$TDS"))
        assert fields_of(first)[2:5] == ["idle", "5:00", "-----"]
        # Tried at 0 s, then after 0.5, 1, 2, 4 and 5 s: the try at 12.5 s finds it.
        assert connected == {0.25: False, 10.5: False, 12.4: False, 12.6: True}

    try:
        with_display(link, body)
    finally:
        for end in ends:
            end.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "cannot open" in warnings[0]


def test_garbage_from_the_display_is_counted_and_the_match_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "timerd.serial")
    end = DisplayEnd(tmp_path / "display")
    bad = [
        b"\x00\xff\xfe\x80 line noise\n",
        b"Arduino says hello\n",
        b"x" * 300 + b"\n",  # overlong
        b"$TDC,1,toggle*0000\n",  # bad checksum
        frame(["TDC", "2", "toggle"]),  # a protocol version this daemon does not speak
        frame(["TDS", "1", "idle"]),  # our own frame echoed back
    ]

    async def body(service: Service, display: SerialDisplay, recorder: Recorder) -> None:
        await end.line(lambda line: line.startswith(b"$TDS"))  # open (input before is flushed)
        for line in bad:
            end.send(line)
        end.send(frame(["TDC", "1", "fly"]))  # well formed, but no such command
        end.send(bytes(range(11, 256)) * 8)  # a burst of binary junk: one overlong "line"
        end.send(b"\n" + TOGGLE)
        reply = await end.line(lambda line: line.startswith(b"$TDR"))
        assert fields_of(reply) == ["TDR", "1", "no", "fly"]
        reply = await end.line(lambda line: line.startswith(b"$TDR"))
        assert fields_of(reply) == ["TDR", "1", "ok", "toggle"]
        assert service.status().phase == "pre_signal"
        assert display.bad_lines.total == len(bad) + 1

    try:
        with_display(end.link, body)
    finally:
        end.close()
    bad_logs = [r for r in caplog.records if "bad line" in r.getMessage()]
    assert len(bad_logs) == 1  # the first; the rest within 30 s are only counted


def test_start_in_1e308_from_the_display_is_refused_and_the_match_goes_on(
        tmp_path: Path) -> None:
    """Issue 34 item 0: the serial display's `$TDC,1,start_in,1e308` is answered `no`, the
    loop runs on, and the next command is taken (fails on the old code: the dispatch raised
    OverflowError and the line went unanswered)."""
    end = DisplayEnd(tmp_path / "display")

    async def body(service: Service, display: SerialDisplay, recorder: Recorder) -> None:
        await end.line(lambda line: line.startswith(b"$TDS"))
        end.send(frame(["TDC", "1", "start_in", "1e308"]))
        reply = await end.line(lambda line: line.startswith(b"$TDR"))
        assert fields_of(reply) == ["TDR", "1", "no", "start_in"]
        assert service.status().phase == "idle"
        end.send(TOGGLE)
        reply = await end.line(lambda line: line.startswith(b"$TDR"))
        assert fields_of(reply) == ["TDR", "1", "ok", "toggle"]
        assert service.status().phase == "pre_signal"

    try:
        with_display(end.link, body)
    finally:
        end.close()


def test_a_display_that_stops_reading_gets_the_newest_frames(tmp_path: Path) -> None:
    # Were a full port to block the loop (pyserial's spinning write), this test would hang:
    # end the process with a traceback instead of hanging CI.
    faulthandler.dump_traceback_later(60, exit=True)
    end = DisplayEnd(tmp_path / "display")

    async def body(service: Service, display: SerialDisplay, recorder: Recorder) -> None:
        service.execute(service.parse("start"))
        await asyncio.sleep(330)  # the final signal sounds at 320 s; nobody read the port
        assert display.jams.total >= 1
        await end.line(lambda line: b",finished," in line)

    try:
        with_display(end.link, body, keepalive_s=0.05)  # 20 frames a second: the port fills
    finally:
        faulthandler.cancel_dump_traceback_later()
        end.close()
    states = end.states()
    # The display missed the old frames and got the newest: it ends with the final state,
    # and what it got first is from late in the match, not the idle frame from the start.
    assert states[-1][:3] == ["finished", "0:00", "-----"]
    assert states[0][0] != "idle"
    assert len(states) < 330 / 0.05


def test_the_clock_does_not_wait_for_a_stuck_display(tmp_path: Path) -> None:
    """Same match with a working display and with one that never reads: same signal instants."""
    instants = []
    for reading in (True, False):
        end = DisplayEnd(tmp_path / f"display-{reading}")

        async def body(service: Service, display: SerialDisplay, recorder: Recorder,
                       end: DisplayEnd = end, reading: bool = reading) -> None:
            if reading:
                service.outputs.append(KeepUp(display, end))
            at(1.0, lambda: service.execute(service.parse("start")))
            at(100.5, lambda: service.execute(service.parse("pause")))
            at(110.25, lambda: service.execute(service.parse("resume")))
            await asyncio.sleep(335)
            instants.append(signal_times(recorder))

        try:
            with_display(end.link, body, keepalive_s=0.05)
        finally:
            end.close()
    assert instants[0] == instants[1] == EXPECTED_SIGNALS


def test_serial_config_is_off_by_default_and_checked() -> None:
    assert load(Path("/dev/null")).serial.port == ""
    config = load(Path("/dev/null"), ["serial.port=/dev/ttyACM0", "serial.parity=even",
                                      "serial.data_bits=7"])
    assert (config.serial.port, config.serial.data_bits, config.serial.parity) == (
        "/dev/ttyACM0", 7, "even")
    with pytest.raises(SchemaError) as info:
        load(Path("/dev/null"), ["serial.parity=mark", "serial.stop_bits=3"])
    assert [p.split(":")[0] for p in info.value.problems] == [
        "serial.parity", "serial.stop_bits"]
    with pytest.raises(SchemaError) as info:
        load(Path("/dev/null"), ["serial.baud=0", "serial.keepalive_s=0"])
    assert [p.split(" = ")[0] for p in info.value.problems] == [
        "serial.baud", "serial.keepalive_s"]


def read_until(fd: int, wanted: bytes, timeout_s: float = 20.0) -> bytes:
    """Bytes from `fd` up to and including the first line containing `wanted`."""
    data = b""
    while True:
        ready, _, _ = select.select([fd], [], [], timeout_s)
        assert ready, f"no {wanted!r} within {timeout_s} s; got {data[-300:]!r}"
        data += os.read(fd, 65536)
        index = data.find(wanted)
        if index >= 0 and b"\n" in data[index:]:
            return data[:data.index(b"\n", index) + 1]


def test_the_daemon_drives_a_display_on_a_pty(tmp_path: Path) -> None:
    master, slave = os.openpty()
    control = tmp_path / "control.sock"
    daemon = subprocess.Popen(
        [sys.executable, "-m", "timerd", "run", "--simulate", "--speed", "20",
         "--control", str(control), "-o", f"serial.port={os.ttyname(slave)}",
         "-o", "web.enabled=false"],
        cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert b"$TDS,1,idle,5:00,-----" in read_until(master, b"$TDS,1,idle")
        os.write(master, TOGGLE)  # START on the display board's own button
        seen = read_until(master, b"$TDS,1,running,")
        assert b"$TDR,1,ok,toggle*" in seen
        assert b"$TDS,1,pre_signal,5:00,-----" in seen
    finally:
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=20)
        os.close(master)
        os.close(slave)
    assert daemon.returncode == 0, err.decode()
    assert b"serial display" in err
