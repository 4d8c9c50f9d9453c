"""A new sport touches no view (issue 44 item 5): a rule module that declares how its status is
shown (`RuleModule.display`: its labels as catalogue entries, its values' kinds) is shown by
`timerctl status` and the terminal with no line of theirs naming it. The module is
tests/laps_module.py's, registered by the test alone; the scoreboard and the desk show it
too (tests/adapters/test_module_rows_browser.py, in chromium)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.laps_module import laps_document, laps_profile, register
from tests.reviews_module import register as register_reviews
from tests.reviews_module import reviews_match
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
    assert [entry["key"] for entry in status.display] == ["passive"]  # ITHF 8.3's own
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


def test_the_built_in_modules_are_shown_from_their_declarations_alone() -> None:
    """The built-in modules declare how the text views show them (`Shown` with parts:
    `sides`, `entries`, `entry`): their entries in the status say which catalogue texts
    and which of a part's fields, and nothing in the views names their keys
    (tests/test_walls_views.py::test_the_text_views_name_no_rule_modules_status_key)."""
    status = Match(profiles.load("isbhf")).status(0.0)
    timeouts = next(entry for entry in status.display if entry["key"] == "timeouts")
    assert timeouts == {
        "key": "timeouts", "kind": "sides", "label": "st.timeouts",
        "texts": {"st.timeout_running": "remaining_s", "st.timeout_left": ""},
        "brief": {"term.timeout": "remaining_s"},
        "fields": {"side": ["side", "side"], "n": ["left", "text"],
                   "time": ["remaining_s", "countdown"]},
        "runs": {"remaining_s": ["real", ""]}}
    assert [entry["key"] for entry in status.display] == [
        "penalties", "timeouts", "line_change", "goalie_change"]


def test_passive_play_reads_from_its_declaration_with_the_teams_names() -> None:
    """ITHF 8.1-8.2 in `timerctl status`: a side's count to the warning, then WARNED, named
    as every other line names a side (its player's name when set). Fails on the old code,
    whose passive line said "Home" where the names were set."""
    match = Match(profiles.load("ithf"))
    match.handle(match.parse("teams", "Jana", "Peter"), 0.0)
    match.handle(match.parse("start"), 0.0)
    match.poll(25.0)  # the start signal at 20 s (ITHF 4.4)
    match.handle(match.parse("passive", "home"), 30.0)
    counting = format_status(match.status(32.0).to_dict(), Messages("en")).splitlines()
    assert counting[-1] == "passive Jana 3.0 s"
    assert not any("Peter" in line and "passive" in line for line in counting)
    match.poll(36.0)  # the warning at 35 s (ITHF 8.2)
    warned = format_status(match.status(36.0).to_dict(), Messages("sk")).splitlines()
    assert warned[-1] == "pasívna hra Jana UPOZORNENÝ"
    # The terminal's status line shows no passive count (the module declares no brief).
    assert status_line(match.status(36.0), Messages("en")) == \
        " 4:44  Jana 0:0 Peter  running  last: PASSIVE PLAY"


def test_the_display_every_status_shares_is_made_once_and_read_only() -> None:
    """The entries are made once per set of modules (a status per dispatch costs no new
    ones) and shared, so none can be written: a reader's write would change what every
    later status shows (issue 44 item 2)."""
    match = Match(profiles.load("isbhf"))
    first, later = match.status(0.0), match.status(1.0)
    assert first.display is later.display
    with pytest.raises(TypeError):
        first.display[0]["kind"] = "text"
    with pytest.raises(TypeError):
        first.display[1]["fields"]["time"].append("clock")
    with pytest.raises(TypeError):
        first.display.append({"key": "planted"})


def test_an_entry_whose_texts_the_catalogue_lacks_shows_their_keys() -> None:
    """A newer daemon's module read by an older `timerctl`: its catalogue keys, not a crash."""
    status = {"display": [{"key": "review", "kind": "entry", "label": "st.review",
                           "texts": {"st.review_left": ""}, "fields": {}}],
              "review": {"remaining_s": 5.0}}
    assert Messages("en").shown(status) == ([("st.review", "st.review_left")], [])


def test_a_new_modules_value_of_parts_is_shown_without_a_view_edit(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A new sport's value of parts (a list of reviews, the challenges each team has left) in
    `timerctl status` and on the terminal's status line from its declaration and its
    catalogue texts alone (tests/reviews_module.py; on the pages:
    tests/adapters/test_module_rows_browser.py)."""
    register_reviews(monkeypatch)
    status = reviews_match(tmp_path).status(40.0)
    assert format_status(status.to_dict(), Messages("en")).splitlines()[-3:] == [
        "Challenges Peter 2 left", "video review Peter 1:00", "video review Jana 2:00"]
    assert status_line(status, Messages("en"), width=120).endswith(
        "  review 1:00  review 2:00")
