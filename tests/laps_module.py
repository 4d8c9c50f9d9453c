"""A rule module that exists only in the tests (issue 44 item 5): a lap counter that declares
how its status keys are shown (`RuleModule.display`) and nothing else about any view. The
tests register it as `core/rules/__init__.py` registers a module, and find its rows in
`timerctl status`, the terminal and the scoreboard without a line of any view naming it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from timerd.config import profiles
from timerd.core import rules
from timerd.core.match import Match
from timerd.core.rule import MatchView, RuleModule, Shown
from timerd.wire import status_document


class Laps(RuleModule):
    """Laps, here the faceoffs of the match (the start signal's and each marked one: the
    `faceoff` hook), and the seconds since the last (shown as the clock face shows time)."""

    name = "laps"
    shows = MappingProxyType({"laps": None, "lap_s": None})
    display = MappingProxyType({
        "laps": Shown({"en": "Laps", "sl": "Krogi", "sk": "Kolá"}),
        "lap_s": Shown({"en": "Since the lap", "sl": "Od kroga"}, "clock"),
    })

    def __init__(self, match: MatchView) -> None:
        super().__init__(match)
        self.taken: list[float] = []

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
    path = tmp_path / "laps.toml"
    path.write_text('extends = "ithf"\nname = "laps"\nrules = ["laps"]\n', encoding="utf-8")
    match = Match(profiles.load(str(path)))
    match.handle(match.parse("start"), 0.0)
    match.poll(20.0)
    match.handle(match.parse("faceoff"), 40.0)
    return status_document(match.status(105.0), [dict(extras or {})])
