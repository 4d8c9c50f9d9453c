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

What a button is for is declared where its command is (issue 44 item 5): `Button` and
`ButtonChord`, the phase machine's own here (`PHASE_BUTTONS`), a rule module's beside its
commands (`RuleModule.buttons`, `RuleModule.chords`); `timerd.core.rules.buttons()` reads them
from the registry, and the config's keys (`[gpio] NAME_pin`, `[keypad] NAME`), the GPIO
header and the keypad (`timerd.ports.button_bindings`) follow from it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from timerd.core.commands import Command, Reset, Toggle

#: A button's name: its config keys are `[gpio] NAME_pin` and `[keypad] NAME`.
BUTTON_NAME = re.compile(r"[a-z][a-z0-9_]*")


class Gesture(StrEnum):
    PRESS = "press"  # the button went down (buttons without a long press act on this)
    LONG_PRESS = "long_press"  # held for long_press_s
    SHORT = "short"  # a long-press button released too early


@dataclass(frozen=True)
class Button:
    """A push button as the part of the core that owns its command declares it: the command
    its press makes, or (`long_press`) the one it makes once held `[gpio] long_press_s`, for
    a destructive action a stray touch must not take, with the notice (`hint`, a catalogue
    key given the seconds as `s`) told on a shorter press. Its default wiring is its config
    keys' defaults, and `meaning` their line in docs/config.md (`[gpio]`'s pin key adds
    `wiring`)."""

    name: str  # "goal_home": `[gpio] goal_home_pin`, `[keypad] goal_home`
    meaning: str  # "The home side's GOAL button (ITHF 5.6)."
    press: Command | None = None
    long_press: Command | None = None
    hint: str | None = None  # "notice.hold_reset"
    pin: int | None = None  # the default BCM pin (hw/README.md); None: not fitted
    keys: tuple[str, ...] = ()  # the default keypad keys (KEY_KP7)
    wiring: str = ""  # said of its pin only ("Pin 7 is SPI CE1 when SPI is on: ...")
    panel: str = ""  # its key on simulate mode's keyboard ("h"); empty: none
    panel_help: str = ""  # the catalogue key of that key's help ("key.goal"); empty: none

    def __post_init__(self) -> None:
        if not BUTTON_NAME.fullmatch(self.name):
            raise ValueError(f"button name {self.name!r} is not a config key")
        if not self.meaning:
            raise ValueError(f"button {self.name!r}: its config keys need a meaning")
        if (self.press is None) == (self.long_press is None):
            raise ValueError(f"button {self.name!r} makes a command on a press or a long "
                             "press, one of the two")
        if self.hint is not None and self.long_press is None:
            raise ValueError(f"button {self.name!r}: a hint is for a long press held too "
                             "briefly")

    @property
    def command(self) -> Command:
        """The command it makes."""
        made = self.press if self.long_press is None else self.long_press
        assert made is not None  # __post_init__: one of the two
        return made

    @property
    def gestures(self) -> Mapping[Gesture, Command]:
        """The command of the gesture it acts on."""
        return {Gesture.PRESS if self.long_press is None else Gesture.LONG_PRESS: self.command}


@dataclass(frozen=True)
class ButtonChord:
    """Two declared buttons held together `[gpio] long_press_s` make `command` (a `Chord` on
    each control surface that has both)."""

    buttons: tuple[str, str]
    command: Command


#: The phase machine's own buttons (its commands are `timerd.core.commands`'); the score
#: desk's (GOAL, FACEOFF, UNDO) and a rulebook's are their rule modules' (`RuleModule.buttons`).
PHASE_BUTTONS = (
    Button("start_pause", "The START/PAUSE button: starts, pauses and resumes the match.",
           press=Toggle(), pin=17, keys=("KEY_KPENTER",), panel=" ", panel_help="key.start"),
    Button("reset", "The RESET button: held `[gpio] long_press_s`, it resets the match (a "
           "stray touch never ends one).", long_press=Reset(), hint="notice.hold_reset",
           pin=27, keys=("KEY_KPMINUS",), panel="r", panel_help="key.reset"),
)


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
