"""sd_notify against a fake systemd: a bound AF_UNIX datagram socket as $NOTIFY_SOCKET.

In-process, the watchdog pings are shown to come from the event loop: blocking the loop on
purpose stops them. As a daemon subprocess: READY=1 once it is set up, WATCHDOG=1 at half of
WATCHDOG_USEC, STATUS= on phase changes, STOPPING=1 on SIGTERM.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import queue
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import dispatch
from daemon_process import Daemon

from timerd.adapters.systemd import SystemdNotifier, status_text
from timerd.config.profiles import load
from timerd.core.effects import Phase, PhaseChanged
from timerd.core.match import Match

WAIT_S = 10.0


class FakeSystemd:
    """Receives notify datagrams on a thread and stamps each with the monotonic clock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.received: queue.Queue[tuple[float, str]] = queue.Queue()
        self.log: list[tuple[float, str]] = []  # everything, also what `next` consumed
        self._thread = threading.Thread(target=self._receive, daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        while True:
            try:
                data = self.sock.recv(4096)
            except OSError:  # closed
                return
            entry = (time.monotonic(), data.decode())
            self.log.append(entry)
            self.received.put(entry)

    def next(self, contains: str, timeout_s: float = WAIT_S) -> tuple[float, str]:
        """The next message holding `contains` (others are dropped)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                stamp, message = self.received.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {contains!r} from the daemon in {timeout_s} s") from None
            if contains in message:
                return stamp, message

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def fake_systemd(tmp_path: Path) -> Iterator[FakeSystemd]:
    fake = FakeSystemd(tmp_path / "notify.sock")
    yield fake
    fake.close()


def test_without_notify_socket_nothing_is_sent() -> None:
    async def main() -> bool:
        async with SystemdNotifier(asyncio.get_running_loop(), environ={}) as notifier:
            return notifier.send("READY=1")

    assert asyncio.run(main()) is False


def test_watchdog_usec_for_another_process_is_ignored(fake_systemd: FakeSystemd) -> None:
    loop = asyncio.new_event_loop()
    try:
        mine = SystemdNotifier(loop, environ={"NOTIFY_SOCKET": str(fake_systemd.path),
                                              "WATCHDOG_USEC": "4000000",
                                              "WATCHDOG_PID": str(os.getpid())})
        other = SystemdNotifier(loop, environ={"NOTIFY_SOCKET": str(fake_systemd.path),
                                               "WATCHDOG_USEC": "4000000",
                                               "WATCHDOG_PID": str(os.getpid() + 1)})
        scaled = SystemdNotifier(loop, speed=10, environ={"WATCHDOG_USEC": "4000000"})
    finally:
        loop.close()
    assert mine.ping_interval_s == 2.0
    assert other.ping_interval_s is None
    assert scaled.ping_interval_s == 20.0  # loop seconds: 2 real seconds at x10


def test_pings_stop_while_the_loop_is_blocked(fake_systemd: FakeSystemd) -> None:
    interval_s = 0.02  # WATCHDOG_USEC=40000
    block_s = 0.3
    environ = {"NOTIFY_SOCKET": str(fake_systemd.path), "WATCHDOG_USEC": "40000"}

    async def main() -> tuple[float, float]:
        async with SystemdNotifier(asyncio.get_running_loop(), environ=environ):
            for _ in range(3):  # pings arrive while the loop runs...
                await asyncio.to_thread(fake_systemd.next, "WATCHDOG=1")
            blocked_at = time.monotonic()
            threading.Event().wait(block_s)  # ...the loop is blocked on purpose...
            released_at = time.monotonic()
            for _ in range(3):  # ...and they come again once it runs
                await asyncio.to_thread(fake_systemd.next, "WATCHDOG=1")
        return blocked_at, released_at

    blocked_at, released_at = asyncio.run(main())
    assert released_at - blocked_at >= block_s
    stamps = [stamp for stamp, message in fake_systemd.log if message == "WATCHDOG=1"]
    assert len(stamps) >= 6
    # Nothing came from the blocked loop: no ping is stamped inside the blocked window
    # (a datagram sent just before the block may be received a moment into it).
    inside = [s for s in stamps if blocked_at + interval_s < s < released_at]
    assert inside == []


def test_status_line_names_phase_and_clock() -> None:
    match = Match(load("ithf"))
    match.handle(match.parse("start"), 0.0)
    match.poll(20.0)
    assert status_text(match.status(95.5)) == "ithf: running, 3:45 left"


def test_status_is_sent_on_phase_changes(fake_systemd: FakeSystemd) -> None:
    match = Match(load("ithf"))

    async def main() -> None:
        async with SystemdNotifier(asyncio.get_running_loop(),
                                   environ={"NOTIFY_SOCKET": str(fake_systemd.path)}) as notifier:
            notifier.notify(dispatch(match.status(0.0),
                                     PhaseChanged(Phase.PRE_SIGNAL, Phase.IDLE)))

    asyncio.run(main())
    assert fake_systemd.next("STATUS=")[1] == "STATUS=ithf: idle, 5:00 left"


def test_abstract_socket_names_are_understood() -> None:
    loop = asyncio.new_event_loop()
    try:
        notifier = SystemdNotifier(loop, environ={"NOTIFY_SOCKET": "@/org/systemd/notify"})
    finally:
        loop.close()
    assert notifier.address == "\0/org/systemd/notify"


def test_the_daemon_tells_systemd_ready_watchdog_status_and_stopping(
        tmp_path: Path, fake_systemd: FakeSystemd) -> None:
    env = {"NOTIFY_SOCKET": str(fake_systemd.path), "WATCHDOG_USEC": "200000"}
    with Daemon(tmp_path, speed=1.0, env=env) as daemon:
        _, ready = fake_systemd.next("READY=1")
        assert "STATUS=ithf: idle, 5:00 left" in ready
        assert f"MAINPID={daemon.proc.pid}" in ready
        assert daemon.socket.exists()  # READY comes once the control socket listens
        stamps = [fake_systemd.next("WATCHDOG=1")[0] for _ in range(5)]
        gaps = [b - a for a, b in itertools.pairwise(stamps)]
        assert all(0.05 < gap < 0.5 for gap in gaps), gaps  # every 0.1 s, half of 0.2 s
        daemon.command("start")
        assert fake_systemd.next("STATUS=")[1] == "STATUS=ithf: pre_signal, 5:00 left"
        assert daemon.stop() == 0
        assert "STOPPING=1" in fake_systemd.next("STOPPING=1")[1]
