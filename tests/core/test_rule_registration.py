"""A rule module owns its settings, its status and its record (issue 32 item 4): registering a
module is all it takes for its profile keys (with their defaults and checks), its status keys
and its result keys to appear. The module here exists only in this test."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from timerd.adapters.results.file import ResultsFile
from timerd.config import profiles
from timerd.config.schema import SchemaError
from timerd.core import rules
from timerd.core.commands import Command
from timerd.core.effects import Effect
from timerd.core.match import Match
from timerd.core.offered import offered_commands
from timerd.core.profile import compose_profile
from timerd.core.rule import CommandTable, MatchView, RuleModule
from timerd.core.settings import ProfileBase, Settings
from timerd.core.status import compose_status


@dataclasses.dataclass(frozen=True)
class LapSettings(Settings):
    #: How long a lap is.
    lap_s: float = 10.0

    def problems(self, profile: ProfileBase) -> list[str]:
        return [f"lap_s = {self.lap_s:g}: must be longer than 0 s"] if self.lap_s <= 0 else []


@dataclasses.dataclass(frozen=True)
class Lap(Command):
    name = "lap"


class Laps(RuleModule):
    """A lap counter: a profile key, a command, a status key, a result key, a period key."""

    name = "laps"
    declares = (Lap,)
    settings = LapSettings
    shows = MappingProxyType({"laps": None})
    records = MappingProxyType({"laps_taken": 0})
    period_records = MappingProxyType({"laps_in_period": None})

    def __init__(self, match: MatchView) -> None:
        super().__init__(match)
        self.lap_s = LapSettings.of(match.profile).lap_s
        self.taken = 0

    def commands(self) -> CommandTable:
        return {Lap: self.lap}

    def lap(self, command: Lap, now: float) -> list[Effect]:
        self.taken += 1
        return []

    def status(self, now: float) -> Mapping[str, Any]:
        return {"laps": {"taken": self.taken, "lap_s": self.lap_s}}

    def record(self) -> Mapping[str, Any]:
        return {"laps_taken": self.taken}

    def period_record(self) -> Mapping[str, Any]:
        return {"laps_in_period": self.taken}


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Laps` registered, as `timerd/core/rules/__init__.py` registers a module."""
    monkeypatch.setitem(rules.MODULES, Laps.name, Laps)
    monkeypatch.setattr(rules, "REGISTERED", (*rules.REGISTERED, Laps))


def profile_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "laps.toml"
    path.write_text('extends = "ithf"\nname = "laps"\n' + text, encoding="utf-8")
    return str(path)


def finished(match: Match, laps: int = 0) -> dict[str, Any]:
    match.handle(match.parse("start"), 0.0)
    for _ in range(laps):
        match.handle(match.parse("lap"), 30.0)
    match.poll(400.0)  # past the final signal of a 5:00 ITHF match
    result = match.status(400.0).result
    assert result is not None
    return result


@pytest.mark.usefixtures("registered")
def test_a_registered_modules_settings_load_from_a_profile_file_with_their_checks(
        tmp_path: Path) -> None:
    listed = profiles.load(profile_file(tmp_path, 'rules = ["laps"]\nlap_s = 12\n'))
    assert LapSettings.of(listed).lap_s == 12.0
    assert LapSettings.of(profiles.load("ithf")).lap_s == 10.0  # the module's default
    with pytest.raises(SchemaError) as bad:
        profiles.load(profile_file(tmp_path, "lap_s = -1\n"))
    assert bad.value.problems == [
        f"profile file {tmp_path / 'laps.toml'}: lap_s = -1: must be longer than 0 s"]
    assert "lap" in offered_commands(listed)
    assert "lap" not in offered_commands(profiles.load("ithf"))


@pytest.mark.usefixtures("registered")
def test_a_registered_modules_status_and_result_keys_appear(tmp_path: Path) -> None:
    match = Match(profiles.load(profile_file(tmp_path, 'rules = ["laps"]\nlap_s = 12\n')))
    assert match.status(0.0).to_dict()["laps"] == {"taken": 0, "lap_s": 12.0}
    result = finished(match, laps=1)
    assert result["laps_taken"] == 1
    assert result["periods"][0]["laps_in_period"] == 1
    without = Match(profiles.load("ithf"))  # a profile that does not list it
    assert without.status(0.0).to_dict()["laps"] is None
    result = finished(Match(profiles.load("ithf")))
    assert result["laps_taken"] == 0
    assert result["periods"][0]["laps_in_period"] is None


@pytest.mark.usefixtures("registered")
def test_a_registered_modules_result_keys_reach_the_results_line(tmp_path: Path) -> None:
    """The results file writes every key of the core's result: the adapter names no rule
    module's key (it named penalties, timeouts, points and shootout, and dropped a new one)."""
    match = Match(profiles.load(profile_file(tmp_path, 'rules = ["laps"]\n')))
    finished(match, laps=2)
    line = ResultsFile(None, wall=lambda: 1_800_000_000.0).record(match.status(400.0))
    assert (line["laps_taken"], line["periods"][0]["laps_in_period"]) == (2, 2)
    assert list(line)[:2] == ["format", "match_id"]
    assert list(line)[-1] == "goals"


def test_without_registration_nothing_of_it_appears(tmp_path: Path) -> None:
    assert "laps" not in Match(profiles.load("ithf")).status(0.0).to_dict()
    with pytest.raises(SchemaError, match="unknown key `lap_s`"):
        profiles.load(profile_file(tmp_path, "lap_s = 12\n"))
    with pytest.raises(SchemaError, match="'laps' is not a rule module"):
        profiles.load(profile_file(tmp_path, 'rules = ["laps"]\n'))


def test_a_key_belongs_to_one_owner() -> None:
    class Thief(Laps):
        name = "thief"

    with pytest.raises(TypeError, match="profile key 'lap_s' of rule module 'thief'"):
        compose_profile((*rules.REGISTERED, Laps, Thief))
    with pytest.raises(TypeError, match="status key 'laps' of rule module 'thief'"):
        compose_status((*rules.REGISTERED, Laps, Thief))

    class Clash(RuleModule):
        name = "clash"
        shows = MappingProxyType({"penalties": []})

    with pytest.raises(TypeError, match="status key 'penalties' of rule module 'clash' is "
                                        "already penalties's"):
        compose_status((*rules.REGISTERED, Clash))


class Usurper(Laps):
    """A module that declares its own keys but returns another's: the phase machine's
    `score` in its status, the penalties' `penalties` in its result, the intermission's
    `early_intermission_left_s` in a period's entry."""

    name = "usurper"
    shows = MappingProxyType({"usurped": None})
    records = MappingProxyType({"usurped_taken": 0})
    period_records = MappingProxyType({"usurped_in_period": None})

    def status(self, now: float) -> Mapping[str, Any]:
        return {"usurped": 1, "score": {"home": 9, "away": 0}}

    def record(self) -> Mapping[str, Any]:
        return {"usurped_taken": 1, "penalties": []}

    def period_record(self) -> Mapping[str, Any]:
        return {"usurped_in_period": 1, "early_intermission_left_s": 0.0}


def test_a_module_returning_another_modules_key_is_refused(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 44 item 3: a key a module returns is one it declares, or the status, the result
    or the period's entry is refused (a defect: ValueError) where they are composed. Fails on
    the old code: the usurper's `score` overwrote the phase machine's (last writer wins)."""
    monkeypatch.setitem(rules.MODULES, Usurper.name, Usurper)
    monkeypatch.setattr(rules, "REGISTERED", (*rules.REGISTERED, Usurper))
    match = Match(profiles.load(profile_file(tmp_path, 'rules = ["usurper"]\n')))
    with pytest.raises(ValueError, match="status keys 'score' of rule module 'usurper' are "
                                         "not its own"):
        match.status(0.0)
    with pytest.raises(ValueError, match="result keys 'penalties' of rule module 'usurper'"):
        match.records()
    match.handle(match.parse("start"), 0.0)
    with pytest.raises(ValueError, match="period keys 'early_intermission_left_s' of rule "
                                         "module 'usurper'"):
        match.poll(400.0)  # the period ends: its entry is composed
