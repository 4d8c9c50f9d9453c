"""A new sport touches no view (issue 44 item 5): a rule module that declares how its status is
shown (`RuleModule.display`: its labels as catalogue entries, its values' kinds) is shown by
`timerctl status` and the terminal with no line of theirs naming it. The module is
tests/laps_module.py's, registered by the test alone; the scoreboard and the desk show it
too (tests/adapters/test_module_rows_browser.py, in chromium)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.laps_module import laps_document, laps_profile, register
from timerd.adapters.terminal import status_line
from timerd.cli import format_status
from timerd.config import profiles
from timerd.core.match import Match
from timerd.i18n import Messages


def test_timerctl_status_shows_a_modules_rows_in_the_readers_language(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fails on the old code: `timerctl status` named every row it showed, and showed none
    of a module it did not know."""
    register(monkeypatch)
    document = laps_document(tmp_path)
    assert document["display"] == [
        {"key": "laps", "kind": "text", "label": {"en": "Laps", "sl": "Krogi", "sk": "Kolá"}},
        {"key": "lap_s", "kind": "clock", "label": {"en": "Since the lap", "sl": "Od kroga"}}]
    english = format_status(document, Messages("en")).splitlines()
    assert "Laps      2" in english
    assert "Since the lap 1:05" in english  # the clock face's m:ss, wider than the column
    slovenian = format_status(document, Messages("sl")).splitlines()
    assert any(line.split() == ["Krogi", "2"] for line in slovenian)
    slovak = format_status(document, Messages("sk")).splitlines()
    assert any(line.split() == ["Kolá", "2"] for line in slovak)
    assert any(line.split() == ["Since", "the", "lap", "1:05"] for line in slovak)  # English


def test_a_profile_without_the_module_shows_no_row(monkeypatch: pytest.MonkeyPatch) -> None:
    register(monkeypatch)
    status = Match(profiles.load("ithf")).status(0.0)
    assert status.display == []
    assert "Laps" not in format_status(status.to_dict() | {"format": 2}, Messages("en"))


def test_the_terminal_shows_a_modules_rows(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    register(monkeypatch)
    match = Match(laps_profile(tmp_path))
    match.handle(match.parse("start"), 0.0)
    match.poll(30.0)  # the start signal's faceoff at 20 s (ITHF 4.4)
    line = status_line(match.status(35.0), Messages("en"), width=120)
    assert "Laps 1" in line
    assert "Since the lap 0:15" in line
