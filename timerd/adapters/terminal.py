"""Simulate mode's front panel: keys act as the buttons, one line shows the clock.

Keys drive gpiozero's mock pins, so a key press takes the same path as a real button
(pin edge, debounce, long press): space is START/PAUSE; `r` holds RESET down for the long press;
`q` quits. The status line is redrawn in place on every shown change.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import termios
import tty
from collections.abc import Callable
from types import TracebackType
from typing import Any, TextIO

from timerd.core.display import shown_clock
from timerd.core.effects import Effect, Notice, Phase
from timerd.core.match import Status

KEYS_HELP = ("[space] start/pause  [r] reset (held)  [h/a] goal home/away  [f] faceoff  "
             "[u] undo (held)  [1/2] passive home/away  [l] line change  [q] quit")
#: Keys that tap the scoring buttons (the undo key holds its button, like reset).
SCORING_KEYS = {"h": "goal_home", "a": "goal_away", "f": "faceoff",
                "1": "passive_home", "2": "passive_away", "l": "line_change"}
TAP_S = 0.1  # how long a key "holds" a button down


def status_line(status: Status) -> str:
    """The clock, phase and last signal, as one line."""
    if status.phase is Phase.PRE_SIGNAL and status.start_in_s is not None:
        what = f"start in {shown_clock(status.start_in_s)}"
    elif status.phase is Phase.PAUSED and status.interruption_s is not None:
        what = f"paused {int(status.interruption_s)} s"
    else:
        what = status.phase.value
    period = f" P{status.period}/{status.periods}" if status.periods > 1 else ""
    last = f"  last: {status.last_signal}" if status.last_signal else ""
    clock = f"OT +{shown_clock(status.overtime_s or 0.0)}" if status.count_up else \
        shown_clock(status.remaining_s)
    score = f"  {status.score['home']}:{status.score['away']}"
    return f"{clock:>5}{period}{score}  {what}{last}"


class TerminalDisplay:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def notify(self, effect: Effect, status: Status) -> None:
        if isinstance(effect, Notice):
            self.out.write(f"\r\x1b[K{effect.message}\n")
        self.out.write(f"\r\x1b[K{status_line(status)}   {KEYS_HELP}")
        self.out.flush()


class Keyboard:
    """Reads single keys from a terminal and presses the simulated buttons' mock pins."""

    def __init__(self, buttons: dict[str, Any], hold_s: float, quit: Callable[[], None],
                 stdin: TextIO = sys.stdin) -> None:
        self.buttons = buttons  # name -> gpiozero input device on a mock pin
        self.hold_s = hold_s
        self.quit = quit
        self.stdin = stdin
        self._saved: list[Any] | None = None

    async def __aenter__(self) -> Keyboard:
        fd = self.stdin.fileno()
        self._saved = termios.tcgetattr(fd)
        tty.setcbreak(fd)
        asyncio.get_running_loop().add_reader(fd, self._key)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        fd = self.stdin.fileno()
        asyncio.get_running_loop().remove_reader(fd)
        if self._saved is not None:
            termios.tcsetattr(fd, termios.TCSADRAIN, self._saved)
        sys.stdout.write("\n")

    def _key(self) -> None:
        key = self.stdin.read(1)
        if key == "q":
            self.quit()
        elif key == " ":
            self.press("start_pause", TAP_S)
        elif key == "r":
            self.press("reset", self.hold_s + TAP_S)
        elif key == "u":
            self.press("undo", self.hold_s + TAP_S)
        elif key in SCORING_KEYS:
            self.press(SCORING_KEYS[key], TAP_S)

    def press(self, name: str, hold_s: float) -> None:
        button = self.buttons.get(name)
        if button is None:
            return
        button.pin.drive_low()
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop().call_later(hold_s, button.pin.drive_high)
