"""Issue 18 item 5: `timerd run --simulate` on an 80-column terminal (a pty, as over SSH).

No line the terminal shows is wider than 80 columns (the status line is redrawn in place with
`\\r`; the log shares the terminal), the key help is printed at the start, each signal shows
as it sounds, and a refused command and a goal that did not count show with their reasons.
Waits are on the output, with generous timeouts.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = 80
TIMEOUT_S = 30.0
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal:
    """A daemon on a pty of COLUMNS x 24; `screen_lines` is everything shown, line by line."""

    def __init__(self, tmp: Path) -> None:
        config = tmp / "timerd.toml"
        # No speaker: ALSA's own complaints about a missing card go to the terminal unasked.
        config.write_text('[web]\nenabled = false\n[speaker]\nenabled = false\n'
                          f'[state]\ndirectory = "{tmp / "state"}"\n'
                          f'runtime_directory = "{tmp / "run"}"\n[ui]\nlanguage = "en"\n')
        self.fd, child = pty.openpty()
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
        # Speed 1: the pre-signal's 20 s lead (ITHF 4.4) leaves time to enter a goal in it.
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "timerd", "run", "--simulate", "--config", str(config),
             "--control", str(tmp / "control.sock")],
            cwd=ROOT, stdin=child, stdout=child, stderr=child, close_fds=True,
            env={**os.environ, "COLUMNS": str(COLUMNS), "TERM": "xterm"})
        os.close(child)
        self.raw = ""

    def read_until(self, text: str, count: int = 1, timeout_s: float = TIMEOUT_S) -> None:
        """Read until `text` has been shown `count` times."""
        deadline = time.monotonic() + timeout_s
        while ANSI.sub("", self.raw).count(text) < count:
            left = deadline - time.monotonic()
            assert left > 0, f"never shown: {text!r}\n{self.raw[-3000:]}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    self.raw += os.read(self.fd, 65536).decode(errors="replace")
                except OSError:  # the daemon exited
                    raise AssertionError(f"exited before {text!r}:\n{self.raw}") from None

    def key(self, key: str) -> None:
        os.write(self.fd, key.encode())

    def screen_lines(self) -> list[str]:
        """Each line as the terminal shows it: a `\\r` starts the line over."""
        return [part for line in ANSI.sub("", self.raw).split("\n") for part in line.split("\r")]

    def close(self) -> None:
        self.key("q")
        try:
            self.proc.wait(timeout=15)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            os.close(self.fd)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(tmp_path)
    yield term
    term.close()


def test_80_columns_signals_refusals_and_a_goal_that_did_not_count(terminal: Terminal) -> None:
    terminal.read_until("[q] quit")  # the keys, once at the start
    terminal.read_until("5:00")  # the status line
    terminal.key("h")  # no match yet: refused, with the reason
    terminal.read_until("goal refused: no match is running")
    terminal.key(" ")  # START: the pre-signal sounds (ITHF 4.4)
    terminal.read_until("PRE-SIGNAL")
    terminal.read_until("start in 0:1")  # the countdown to the start, on the status line
    terminal.key("a")  # before the start signal: entered, not counted (ITHF 5.1)
    terminal.read_until("goal Away NOT counted: before the start (ITHF 5.1)")
    terminal.key("?")  # the keys again
    terminal.read_until("[q] quit", count=2)
    # The status and event lines fit; log lines (INFO ...) wrap like any log on a terminal:
    # only the line redrawn in place must never wrap, or each redraw would scroll.
    shown = [line for line in terminal.screen_lines()
             if not re.match(r"(DEBUG|INFO|WARNING|ERROR|CRITICAL) ", line)]
    assert [line for line in shown if len(line) > COLUMNS] == []
    assert any(line.startswith(" 5:00  0:0  start in") for line in shown)
