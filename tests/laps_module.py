"""A rule module that exists only in the tests (issue 44 item 5): a lap counter that declares
how its status keys are shown (`RuleModule.display`) and its LAP button (`RuleModule.buttons`)
and nothing else about any view or control surface. The tests register it as
`core/rules/__init__.py` registers a module, and find its rows in `timerctl status`, the
terminal and the scoreboard, and its button's `[gpio] lap_pin` and `[keypad] lap` keys, on
the GPIO header and the keypad, without a line of any view, the config or an adapter naming
it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from timerd.config import profiles
from timerd.core import rules
from timerd.core.buttons import Button
from timerd.core.commands import Command
from timerd.core.effects import Effect
from timerd.core.match import Match
from timerd.core.profile import Profile
from timerd.core.rule import CommandTable, MatchView, RuleModule, Shown
from timerd.wire import status_document


@dataclass(frozen=True)
class Lap(Command):
    """A lap taken by hand (the LAP button)."""

    name = "lap"


#: The LAP button's default pin and key: free in the default `[gpio]` and `[keypad]`.
LAP_PIN, LAP_KEY = 21, "KEY_KP1"


class Laps(RuleModule):
    """Laps, here the faceoffs of the match (the start signal's and each marked one: the
    `faceoff` hook) and those taken with the LAP button, and the seconds since the last
    (shown as the clock face shows time)."""

    name = "laps"
    declares = (Lap,)
    buttons = (Button("lap", "The LAP button: a lap is taken.", press=Lap(), pin=LAP_PIN,
                      keys=(LAP_KEY,)),)
    shows = MappingProxyType({"laps": None, "lap_s": None})
    display = MappingProxyType({
        "laps": Shown({"en": "Laps", "sl": "Krogi", "sk": "Kolá"}),
        "lap_s": Shown({"en": "Since the lap", "sl": "Od kroga"}, "clock"),
    })

    def __init__(self, match: MatchView) -> None:
        super().__init__(match)
        self.taken: list[float] = []

    def commands(self) -> CommandTable:
        return {Lap: self.lap}

    def lap(self, _: Lap, now: float) -> list[Effect]:
        self.taken.append(now)
        return []

    def faceoff(self, at: float) -> None:
        self.taken.append(at)

    def status(self, now: float) -> Mapping[str, Any]:
        return {"laps": len(self.taken),
                "lap_s": now - self.taken[-1] if self.taken else None}


def register(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Laps` registered, as one line of `core/rules/__init__.py` registers a module."""
    monkeypatch.setitem(rules.MODULES, Laps.name, Laps)
    monkeypatch.setattr(rules, "REGISTERED", (*rules.REGISTERED, Laps))


def laps_document(tmp_path: Path, extras: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The status document of an ITHF match with `Laps` listed, two laps taken (the start
    signal's faceoff 20 s after the start, ITHF 4.4, and one marked at 40 s) and read at
    105 s: 2 laps, 65 s since the last."""
    match = Match(laps_profile(tmp_path))
    match.handle(match.parse("start"), 0.0)
    match.poll(20.0)
    match.handle(match.parse("faceoff"), 40.0)
    return status_document(match.status(105.0), [dict(extras or {})])


def laps_profile(tmp_path: Path) -> Profile:
    """The ITHF profile with `Laps` listed (registered first: `register`)."""
    path = tmp_path / "laps.toml"
    path.write_text('extends = "ithf"\nname = "laps"\nrules = ["laps"]\n', encoding="utf-8")
    return profiles.load(str(path))
