"""Issue 18 item 5: `timerd run --simulate` on an 80-column terminal (a pty, as over SSH).

No line the terminal shows is wider than 80 columns (the status line is redrawn in place with
`\\r`; the log shares the terminal and is wrapped to it), the key help is printed at the
start, each signal shows as it sounds, and a refused command and a goal that did not count
show with their reasons; for table hockey in English and Slovenian, for ball hockey (a stop
clock, the intermission) in Slovak and Slovenian. Waits are on the output, with generous
timeouts.
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
from pathlib import Path

import pytest

from timerd.cli import request
from timerd.i18n import Messages

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = 80
TIMEOUT_S = 30.0
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal:
    """A daemon on a pty of COLUMNS x 24; `screen_lines` is everything shown, line by line."""

    def __init__(self, tmp: Path, language: str = "en", profile: str = "ithf",
                 speed: float = 1.0) -> None:
        config = tmp / "timerd.toml"
        self.socket = tmp / "control.sock"
        # No speaker: ALSA's own complaints about a missing card go to the terminal unasked.
        config.write_text('[web]\nenabled = false\n[speaker]\nenabled = false\n'
                          f'[state]\ndirectory = "{tmp / "state"}"\n'
                          f'runtime_directory = "{tmp / "run"}"\n'
                          f'[ui]\nlanguage = "{language}"\n')
        self.fd, child = pty.openpty()
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "timerd", "run", "--simulate", "--config", str(config),
             "--control", str(self.socket), "--profile", profile, "--speed", str(speed)],
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


def wide_lines(terminal: Terminal) -> list[str]:
    """The lines shown wider than the terminal: the status and event lines, the key help and
    the log lines alike (a log line that wrapped would scroll the status line away)."""
    return [line for line in terminal.screen_lines() if len(line) > COLUMNS]


@pytest.mark.parametrize("language", ["en", "sl"])
def test_80_columns_signals_refusals_and_a_goal_that_did_not_count(
        tmp_path: Path, language: str) -> None:
    msg = Messages(language)
    # Speed 1: the pre-signal's 20 s lead (ITHF 4.4) leaves time to enter a goal in it.
    terminal = Terminal(tmp_path, language)
    try:
        terminal.read_until("[q]")  # the keys, once at the start
        terminal.read_until("5:00")  # the status line
        terminal.key("h")  # no match yet: refused, with the reason
        # In the terminal's language (the log beside it stays English).
        terminal.read_until(msg.notice("refused.in_idle", {"command": "goal"}))
        terminal.key(" ")  # START: the pre-signal sounds (ITHF 4.4)
        terminal.read_until(msg.signal("pre_signal"))
        # The countdown to the start, on the status line.
        terminal.read_until(msg("term.start_in", time="0:1"))
        terminal.key("a")  # before the start signal: entered, not counted (ITHF 5.1)
        terminal.read_until(msg("goal.not_counted", side=msg.side("away"),
                                reason=msg.reason("before_start")))
        terminal.key("?")  # the keys again
        terminal.read_until("[q]", count=2)
    finally:
        terminal.close()
    assert wide_lines(terminal) == []
    start_in = msg("term.start_in", time="0:")
    assert any(line.startswith(f" 5:00  0:0  {start_in}") for line in terminal.screen_lines())


@pytest.mark.parametrize("language", ["sk", "sl"])
def test_ball_hockey_at_80_columns_stop_intermission_and_a_goal_in_it(
        tmp_path: Path, language: str) -> None:
    """ISBHF in the rulebooks' languages, with long names: the whistle's stop reads as net
    time (407), not as an interruption; the period's end, the intermission's countdown
    (410) and a goal entered in it, not counted, with its rule; no line wider than 80."""
    msg = Messages(language)
    teams = {"home": "Jana Novak-Kovač", "away": "Peter Horvat"}
    # Speed 60: a 15:00 period in 15 s, the 10:00 intermission in 10 s.
    terminal = Terminal(tmp_path, language, "isbhf", speed=60)
    try:
        terminal.read_until("[q]")
        terminal.read_until("15:00")
        assert request(terminal.socket, "teams", [teams["home"], teams["away"]])["ok"]
        terminal.key(" ")  # the faceoff: the clock runs
        terminal.read_until(msg.signal("start"))
        # The whistle: the clock stops, on the event line and the status line. By command,
        # and the faceoff after it: a key tapped this soon after the last one may fall in
        # the button's debounce at this speed.
        assert request(terminal.socket, "toggle", [])["ok"]
        terminal.read_until(msg("signal.stop"), count=2)
        assert request(terminal.socket, "toggle", [])["ok"]
        terminal.read_until(msg.signal("period_end"), timeout_s=60)
        terminal.read_until(msg("term.intermission", time="9:"))
        terminal.key("h")  # ISBHF 410: no goal in an intermission
        terminal.read_until(msg("goal.not_counted", side=msg.side("home", teams),
                                reason=msg.reason("intermission")))
    finally:
        terminal.close()
    assert wide_lines(terminal) == []
    shown = "\n".join(terminal.screen_lines())
    assert msg("signal.pause") not in shown  # ITHF 10.1's word is not ball hockey's
    assert msg("term.paused", s=0).split()[0] not in shown
