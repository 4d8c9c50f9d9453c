"""Debounce and long-press detection for one push button, as pure logic on timestamped edges.

Real contacts bounce: one press can give a burst of edges within a few milliseconds, and the
pin factories treat bounce differently (lgpio delays every edge by the debounce time, RPi.GPIO
drops later edges, the mock factory does not bounce at all). So gpiozero is asked for raw
edges and this class decides what a press is, the same way on every factory.

A press acts on its first edge, at once (a START press must not wait out the bounce), and then
the button is deaf for `debounce_s`. When that window ends, the last raw level seen is taken
as the truth, so a burst that ends released reads as released. A button with `long_press_s`
acts only once it has been held that long (destructive actions: an accidental tap does
nothing), and a shorter press reports SHORT so the operator can be told to hold it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from timerd.core.commands import Command

#: Every button a control surface can have, by the name the config gives it (`[gpio]
#: NAME_pin`, `[keypad] NAME`); what each does is `timerd.ports.button_bindings`.
BUTTONS = ("start_pause", "reset", "goal_home", "goal_away", "faceoff", "undo", "passive_home",
           "passive_away", "line_change")


class Gesture(StrEnum):
    PRESS = "press"  # the button went down (buttons without a long press act on this)
    LONG_PRESS = "long_press"  # held for long_press_s
    SHORT = "short"  # a long-press button released too early


@dataclass
class ButtonLogic:
    debounce_s: float = 0.03
    long_press_s: float | None = None
    pressed: bool = False  # the debounced level
    _raw: bool = False
    _deaf_until: float = float("-inf")
    _down_at: float | None = None
    _long_done: bool = False

    def edge(self, pressed: bool, now: float) -> list[Gesture]:
        """Feed one raw edge (True: contact closed) seen at `now`."""
        out = self.poll(now)
        self._raw = pressed
        if now < self._deaf_until or pressed == self.pressed:
            return out
        return out + self._accept(pressed, now)

    def poll(self, now: float) -> list[Gesture]:
        """Act on what time alone decides: the end of a bounce window, a long press held."""
        out: list[Gesture] = []
        if now >= self._deaf_until and self._raw != self.pressed:
            out += self._accept(self._raw, now)
        if (self.pressed and self.long_press_s is not None and not self._long_done
                and self._down_at is not None and now >= self._down_at + self.long_press_s):
            self._long_done = True
            out.append(Gesture.LONG_PRESS)
        return out

    def next_deadline(self) -> float | None:
        deadlines = []
        if self._raw != self.pressed:
            deadlines.append(self._deaf_until)
        if self.pressed and self.long_press_s is not None and not self._long_done \
                and self._down_at is not None:
            deadlines.append(self._down_at + self.long_press_s)
        return min(deadlines, default=None)

    def _accept(self, pressed: bool, now: float) -> list[Gesture]:
        self.pressed = pressed
        self._deaf_until = now + self.debounce_s
        if pressed:
            self._down_at = now
            self._long_done = False
            return [] if self.long_press_s is not None else [Gesture.PRESS]
        short = self.long_press_s is not None and not self._long_done
        self._down_at = None
        return [Gesture.SHORT] if short else []


@dataclass
class Chord:
    """Two buttons held down together for `hold_s`: a gesture of their own, `command`.

    The ITHF 4.6 forfeit without a keyboard is such a chord: RESET with the GOAL button of the
    side that is present (docs/scoring.md). Once both buttons are down together, neither one's
    own gestures act until both are up again: RESET's long press does not reset, the GOAL press
    scores nothing, a release gives no "hold longer" hint. The chord acts once per hold, when
    both have been down together for `hold_s`; letting go of either earlier does nothing.
    """

    buttons: tuple[str, str]
    hold_s: float
    command: Command  # what the chord does: Forfeit(Side.AWAY)
    engaged: bool = False  # both were down together since the buttons were last all up
    _since: float | None = None  # both down together since
    _done: bool = False
    _all_up: bool = True

    def update(self, pressed: Mapping[str, bool], now: float) -> bool:
        """Feed the buttons' debounced levels at `now`; True when the chord acts now."""
        down = [pressed.get(name, False) for name in self.buttons]
        if any(down) and self._all_up:  # a new hold: forget the last chord
            self.engaged = False
        self._all_up = not any(down)
        if not all(down):
            self._since = None
        elif self._since is None:
            self._since, self._done, self.engaged = now, False, True
        if self._since is not None and not self._done and now >= self._since + self.hold_s:
            self._done = True
            return True
        return False

    def next_deadline(self) -> float | None:
        return None if self._since is None or self._done else self._since + self.hold_s

    def swallows(self, button: str) -> bool:
        """Whether `button`'s own gestures are part of this chord now, not acts of their own."""
        return self.engaged and button in self.buttons
