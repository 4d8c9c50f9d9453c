"""The event stream (`--events`) into a reader that stalls (issue 13 item 8): the match loop
never waits for it; what does not fit in the bounded buffer is dropped and counted, with one
log line when dropping starts and one when the stream is written again. Real pipes, shrunk to
one page so that they fill after a few dozen lines."""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import dispatch
from tests.daemon_process import REPO, WAIT_S
from tests.hall_rig import wait_until
from timerd.adapters.events import EventStream
from timerd.config import profiles
from timerd.core.effects import Told
from timerd.core.match import Match

PAGE = 4096


def small_pipe() -> tuple[int, int]:
    """A pipe (read end, write end) that holds one page."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PAGE)
    return read_end, write_end


class Drain:
    """Reads a pipe to its end in a thread, keeping the bytes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.data = bytearray()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while chunk := os.read(self.fd, 65536):
            self.data += chunk

    def lines(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in bytes(self.data).splitlines()]

    def join(self) -> None:
        self._thread.join(WAIT_S)
        os.close(self.fd)


def test_a_stalled_reader_costs_dropped_events_never_a_blocked_loop(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "timerd.events")
    read_end, write_end = small_pipe()
    status = Match(profiles.load("ithf")).status(0.0)

    async def main() -> tuple[int, Drain]:
        loop = asyncio.get_running_loop()
        async with EventStream(write_end, loop, loop.time(), max_buffer_bytes=8192) as stream:
            for n in range(1000):  # ~50 kB: the pipe and the buffer hold a quarter of it
                stream.notify(dispatch(status, Told(f"event {n}")))
            dropped = stream.dropped
            assert dropped > 500
            drain = Drain(read_end)  # the reader wakes up
            await asyncio.to_thread(wait_until, lambda: stream.buffered_bytes == 0, WAIT_S,
                                    "the buffer written out")
            stream.notify(dispatch(status, Told("after")))
        return dropped, drain

    dropped, drain = asyncio.run(main())
    drain.join()
    got = [line["message"] for line in drain.lines()]  # every line whole
    assert len(got) == 1000 - dropped + 1
    assert got[:-1] == [f"event {n}" for n in range(1000 - dropped)]  # the first ones, in order
    assert got[-1] == "after"
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert "the reader is not keeping up" in lines[0]
    assert f"written again; {dropped} events were dropped" in lines[1]


def test_a_reader_that_goes_away_ends_the_stream_with_one_line(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "timerd.events")
    read_end, write_end = os.pipe()
    os.close(read_end)
    status = Match(profiles.load("ithf")).status(0.0)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        async with EventStream(write_end, loop, loop.time()) as stream:
            stream.notify(dispatch(status, Told("nobody listens")))
            await asyncio.to_thread(wait_until, lambda: stream.buffered_bytes == 0, WAIT_S,
                                    "the failed write")
            for _ in range(100):
                stream.notify(dispatch(status, Told("still nobody")))

    asyncio.run(main())
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1, lines
    assert "Broken pipe; no more events are written" in lines[0]


def test_a_stop_with_a_stalled_reader_does_not_hang(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "timerd.events")
    read_end, write_end = small_pipe()
    status = Match(profiles.load("ithf")).status(0.0)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        async with EventStream(write_end, loop, loop.time()) as stream:
            for n in range(200):
                stream.notify(dispatch(status, Told(f"event {n}")))

    asyncio.run(main())  # returns after the drain time, with the writer still blocked
    assert "bytes not written at the stop (the reader is stalled)" in caplog.text
    os.close(write_end)  # the blocked write still holds the pipe: reading lets it finish
    drain = Drain(read_end)
    drain.join()
    assert drain.lines()[0]["message"] == "event 0"


def pipelined(path: Path, lines: list[str], batch: int = 50) -> list[dict[str, object]]:
    """Send the request lines on one connection, `batch` at a time, and read every reply."""
    replies: list[dict[str, object]] = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(WAIT_S)
        sock.connect(str(path))
        reader = sock.makefile("rb")
        for first in range(0, len(lines), batch):
            chunk = lines[first:first + batch]
            sock.sendall("".join(line + "\n" for line in chunk).encode())
            replies += [json.loads(reader.readline()) for _ in chunk]
    return replies


def test_the_daemon_answers_while_nobody_reads_its_event_stream(tmp_path: Path) -> None:
    """`timerd run --events -` into a one-page pipe nobody reads: 100 matches begun and reset
    (~30 kB of events, eight times what the pipe holds) are all answered; once the reader
    reads, it gets every event, in order. (Dropping past the buffer is the test above.)

    Fails on main: the loop blocked in write() once the pipe was full, and the control socket
    stopped answering (a signal due then would have waited as long)."""
    read_end, write_end = small_pipe()
    control = tmp_path / "control.sock"
    # 201 commands at once: more than one user's burst (test_control.py checks the bound).
    (tmp_path / "timerd.toml").write_text('[web]\nhost = "127.0.0.1"\nport = 0\n'
                                          "[control]\ncommand_burst = 1000\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")}
    env.update(STATE_DIRECTORY=str(tmp_path / "state"), RUNTIME_DIRECTORY=str(tmp_path / "run"))
    stderr_path = tmp_path / "stderr.log"
    with open(stderr_path, "wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "timerd", "run", "--simulate", "--config",
             str(tmp_path / "timerd.toml"), "--events", "-", "--control", str(control)],
            cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=write_end, stderr=stderr)
    os.close(write_end)
    drain: Drain | None = None
    try:
        wait_until(lambda: "timerd ready" in stderr_path.read_text(errors="replace"),
                   WAIT_S, "timerd ready")
        replies = pipelined(control, ["start", "reset"] * 100 + ["status"])
        assert all(reply["ok"] for reply in replies), [r for r in replies if not r["ok"]][:3]
        drain = Drain(read_end)
        proc.terminate()
        assert proc.wait(WAIT_S) == 0
        drain.join()
        states = [e["state"] for e in drain.lines() if e["type"] == "state"]
        assert states == ["pre_signal", "idle"] * 100
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if drain is None:
            os.close(read_end)
