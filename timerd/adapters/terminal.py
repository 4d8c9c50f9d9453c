"""Simulate mode's front panel: keys act as the buttons, one line shows the clock.

Keys drive gpiozero's mock pins, so a key press takes the same path as a real button
(pin edge, debounce, long press): space is START/PAUSE; `r` holds RESET down for the long press;
`?` prints the keys again; `q` quits. The status line is redrawn in place on every shown change
and is never wider than the terminal (an 80-column SSH session must not scroll): what does not
fit is left out whole, least needed first (the last signal, which its own line already told;
then the teams' names, shortened, then dropped for the bare score; then a countdown), so a
running timeout or line change is not cut mid-time; the clock, score and phase come first and
are cut last. A stopped clock reads as the profile means it: an interruption (`PAUSED`, ITHF
10.1) under a running clock, `TIME STOPPED` under net time (ISBHF 407: the whistle stops it).
Above it, one line per thing that happened: each signal as it sounds (`BEEP x3`, `FINAL`), a
goal and whether it counted (with the rule when not: `goal home NOT counted: faceoff guard
(ITHF 5.6)`), every refusal with its reason; log lines are wrapped to the width too
(`LogLines`). Texts come from the message catalogue (`timerd.i18n`, `[ui] language`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import termios
import textwrap
import tty
from collections.abc import Callable
from types import TracebackType
from typing import Any, TextIO

from timerd.core import rules
from timerd.core.display import ClockFace, FaceKind, shown_clock
from timerd.core.effects import Effect, Notice, Phase, Signal
from timerd.core.offered import offered_commands
from timerd.core.score import Goal
from timerd.core.status import Status
from timerd.i18n import Messages
from timerd.ports import Control, Dispatch

#: The key help's own entries (`key.*` in the catalogue), after the buttons'.
KEY_HELP = ("key.help", "key.quit")
TAP_S = 0.1  # how long a key "holds" a button down
#: The width when the output is not a terminal (or says nothing): the common SSH size.
DEFAULT_WIDTH = 80
#: A name on the status line is cut to the first of these widths at which the line's
#: countdowns fit (0: the score alone, without names).
NAME_WIDTHS = (12, 6, 0)


def fit(text: str, width: int) -> str:
    """`text` cut to `width` characters, an ellipsis marking the cut."""
    return text if len(text) <= width else text[:max(width - 1, 0)] + "…"


def phase_words(status: Status, msg: Messages, stop_clock: bool = False) -> str:
    """Where the match stands, with the countdown that runs: the scheduled start and the
    pre-signal's lead (ITHF 4.4), a break before overtime (4.8), an intermission (ISBHF 410),
    an interruption's length (10.2), or under a `stop_clock` (net time, ISBHF 407) how long
    the clock has stood since the whistle."""
    if status.phase in (Phase.PRE_SIGNAL, Phase.SCHEDULED) and status.start_in_s is not None:
        return msg("term.start_in", time=shown_clock(status.start_in_s))
    if status.phase is Phase.BREAK and status.start_in_s is not None:
        key = "term.intermission" if status.break_kind == "intermission" else "term.break"
        return msg(key, time=shown_clock(status.start_in_s))
    stopped = stop_clock and status.phase is Phase.PAUSED
    if status.phase is Phase.PAUSED and status.interruption_s is not None:
        return msg("term.stopped" if stopped else "term.paused", s=int(status.interruption_s))
    if status.phase is Phase.RUNNING and not status.count_up and status.remaining_s <= 30:
        return msg("phase.last30")
    if stopped:  # a new period, its faceoff not yet played (ISBHF 401)
        return msg("term.phase.stopped")
    return msg.get(f"term.phase.{status.phase.value}", status.phase.value)


def status_line(status: Status, msg: Messages | None = None, width: int = DEFAULT_WIDTH,
                stop_clock: bool = False) -> str:
    """The clock, period, score, phase, running countdowns and last signal as one line of at
    most `width - 1` characters (the last column is left free: writing it makes some
    terminals wrap); what does not fit is left out as the module says."""
    msg = msg or Messages()
    period = f" P{status.period}/{status.periods}" if status.periods > 1 else ""
    clock = shown_face(status.clock_face, msg)
    countdowns = []
    # What the rule modules show (`Status.display`: a running timeout, a line change...): no
    # line here names one of their keys.
    countdowns += msg.brief({"display": status.display, "teams": status.teams,
                             **{e["key"]: getattr(status, e["key"]) for e in status.display}})
    last = [msg("term.last", signal=msg.signal(status.last_signal))] if status.last_signal else []
    room = width - 1
    for name_width in NAME_WIDTHS:
        head = [f"{clock:>5}{period}", score_words(status, msg, name_width),
                phase_words(status, msg, stop_clock)]
        for parts in (head + countdowns + last, head + countdowns):
            if len(line := "  ".join(parts)) <= room:
                return line
    parts = head + countdowns
    while len("  ".join(parts)) > room and len(parts) > len(head):
        parts.pop()  # the countdowns that do not fit even beside the bare score
    return fit("  ".join(parts), room)


def shown_face(face: ClockFace, msg: Messages) -> str:
    """The big clock as the terminal shows it: the core's clock face, `OT +` (sl `POD +`,
    sk `PP +`) before the time played in a sudden-death overtime (ITHF 4.8)."""
    return msg("clock.overtime", time=face.text) if face.kind is FaceKind.COUNT_UP \
        else face.text


def score_words(status: Status, msg: Messages, name_width: int) -> str:
    """The score, between the teams' names cut to `name_width` when names are set and the
    width is not 0 ("Jana Novak-… 1:0 Peter Horvat")."""
    score = f"{status.score['home']}:{status.score['away']}"
    home, away = (fit(status.teams.get(side, ""), name_width) for side in ("home", "away"))
    if name_width and (home or away):
        return f"{home or msg('side.home')} {score} {away or msg('side.away')}"
    return score


def event_line(effect: Effect, status: Status, msg: Messages,
               stop_clock: bool = False) -> str | None:
    """The line printed above the status line for `effect`, if it is one a person follows."""
    if isinstance(effect, Signal):
        name = msg.signal(effect.kind, effect.beeps, stop_clock)
        # When it sounded: the time left, or in a sudden-death overtime (no time left to
        # show) the clock face's time played, as the status line shows it.
        counts_up = status.clock_face.kind is FaceKind.COUNT_UP
        when = shown_face(status.clock_face, msg) if counts_up else shown_clock(effect.remaining_s)
        return f"{when:>5}  {name}"
    if isinstance(effect, Goal):
        side = msg.side(effect.side.value, status.teams)
        if effect.counted:
            return msg("goal.counted", side=side,
                       score=f"{status.score['home']}:{status.score['away']}")
        return msg("goal.not_counted", side=side, reason=msg.reason(effect.reason))
    if isinstance(effect, Notice):
        return msg.notice(effect.code, effect.params, status.teams)
    return None


def terminal_width(out: TextIO) -> int:
    """The columns of the terminal `out` writes to; DEFAULT_WIDTH when it is none."""
    try:
        return os.get_terminal_size(out.fileno()).columns or DEFAULT_WIDTH
    except (OSError, ValueError, AttributeError):
        return DEFAULT_WIDTH


class LogLines(logging.Formatter):
    """Log records on the simulate-mode terminal: each starts by clearing the status line it
    interrupts, and is wrapped to the terminal's width (a journal path makes a line of 180
    characters), its further lines indented, so no line on the terminal is wider than it."""

    def __init__(self, out: TextIO) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")
        self.out = out

    def format(self, record: logging.LogRecord) -> str:
        width = terminal_width(self.out) - 1
        lines = [part for line in super().format(record).splitlines()
                 for part in textwrap.wrap(line, width, subsequent_indent="  ",
                                           break_on_hyphens=False) or [""]]
        return "\r\x1b[K" + "\n".join(lines)


class TerminalDisplay:
    """The status line and the event lines on a terminal, never wider than it. `control`
    tells the match's profile at each redraw (a reset may bring another, with another
    clock)."""

    def __init__(self, out: TextIO, msg: Messages, control: Control) -> None:
        self.out = out
        self.msg = msg
        self.control = control
        self._last: Status | None = None

    def keys(self) -> str:
        """The keys, for the commands the match's profile has: no faceoff or passive-play
        key in ball hockey, no line-change key in table hockey. Each button's key is its
        declaration's (`Button.panel`, `Button.panel_help`)."""
        have = offered_commands(self.control.profile)
        return self.msg("term.keys") + " " + "  ".join(map(self.msg, [
            *(b.panel_help for b in rules.buttons() if b.panel_help and b.command.name in have),
            *KEY_HELP]))

    def help(self) -> None:
        """Print the keys, wrapped to the terminal (at start and on `?`)."""
        width = terminal_width(self.out) - 1
        self.out.write("\r\x1b[K" + "\n".join(textwrap.wrap(self.keys(), width)) + "\n")
        self._redraw()

    def notify(self, dispatch: Dispatch) -> None:
        status = self._last = dispatch.status
        width = terminal_width(self.out)
        for effect in dispatch.effects:
            line = event_line(effect, status, self.msg, status.clock_rule == "stop")
            if line is not None:
                for part in textwrap.wrap(line, width - 1) or [""]:
                    self.out.write(f"\r\x1b[K{part}\n")
        self._redraw(width)

    def _redraw(self, width: int | None = None) -> None:
        if self._last is not None:
            line = status_line(self._last, self.msg, width or terminal_width(self.out),
                               stop_clock=self._last.clock_rule == "stop")
            self.out.write(f"\r\x1b[K{line}")
        self.out.flush()


class Keyboard:
    """Reads single keys from a terminal and presses the simulated buttons' mock pins."""

    def __init__(self, buttons: dict[str, Any], hold_s: float, quit: Callable[[], None],
                 stdin: TextIO = sys.stdin, help: Callable[[], None] = lambda: None) -> None:
        self.buttons = buttons  # name -> gpiozero input device on a mock pin
        self.hold_s = hold_s
        self.quit = quit
        self.help = help
        self.stdin = stdin
        #: Each key that presses a button (`Button.panel`), with the button: a tap, or held
        #: for the long press of one that acts on it.
        self.panel = {b.panel: b for b in rules.buttons() if b.panel}
        self._saved: list[Any] | None = None

    async def __aenter__(self) -> Keyboard:
        fd = self.stdin.fileno()
        self._saved = termios.tcgetattr(fd)
        tty.setcbreak(fd)
        asyncio.get_running_loop().add_reader(fd, self._key)
        self.help()
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
        elif key == "?":
            self.help()
        elif button := self.panel.get(key):
            self.press(button.name, (0 if button.long_press is None else self.hold_s) + TAP_S)

    def press(self, name: str, hold_s: float) -> None:
        button = self.buttons.get(name)
        if button is None:
            return
        button.pin.drive_low()
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop().call_later(hold_s, button.pin.drive_high)
