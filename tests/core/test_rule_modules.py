"""Sport features as rule modules (issue 14, invariant 2): a profile lists its rules, a
profile without rules is a bare clock, and the phase machine holds no feature of its own."""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tests.conftest import refused
from timerd.config import profiles
from timerd.config.schema import SchemaError
from timerd.core.match import Match
from timerd.core.offered import ALWAYS, offered_commands
from timerd.core.profile import RULE_NAMES, Profile
from timerd.core.rules import MODULES, RULE_COMMANDS

MATCH_PY = Path(__file__).resolve().parents[2] / "timerd" / "core" / "match.py"
#: The phase machine's size (issue 32): a feature that grows it belongs in a rule module.
MATCH_CAP = 500


def match_lines(root: Path) -> int:
    """The lines of `core/match.py` under `root` (the `timerd` directory)."""
    return len((root / "core" / "match.py").read_text().splitlines())


def running(profile: Profile, at: float = 60.0) -> Match:
    match = Match(profile)
    match.handle(match.parse("start"), 0.0)
    match.poll(at)
    return match


@pytest.mark.parametrize("command", ["forfeit home", "walkout away", "replay"])
def test_ball_hockey_refuses_the_ithf_rulings_as_not_part_of_its_profile(command: str) -> None:
    # Before: isbhf took a forfeit 0:5 and a walk-out +5 by accident of ITHF defaults.
    match = running(profiles.load("isbhf"))
    match.handle(match.parse("stop"), 60.0)
    word, *args = command.split()
    with refused(f"{word} refused: profile isbhf has no rulings"):
        match.handle(match.parse(word, *args), 61.0)


def test_a_profile_without_rules_is_a_bare_clock() -> None:
    bare = Profile(name="bare", pre_signal_lead_s=10)
    assert {cls.name for cls in Match(bare).commands()} == ALWAYS | {"faceoff"}
    assert offered_commands(bare) == ALWAYS
    match = running(bare)
    for command, args in (("passive", ["home"]), ("forfeit", ["home"]),
                          ("penalty", ["home", "minor"]), ("timeout", ["away"]),
                          ("early-intermission", [])):
        module = RULE_COMMANDS[command].name
        with refused(f"{command} refused: profile bare (has no|does not)", f"lacks_{module}"):
            match.handle(match.parse(command, *args), 70.0)
    assert match.status(70.0).faceoff_guard_s is None  # no ITHF 5.6 guard by default


def test_each_rule_module_brings_its_commands_and_nothing_else() -> None:
    ithf = profiles.load("ithf")
    for name in RULE_NAMES:
        only = Match(replace(ithf, rules=(name,)) if name != "shootout" else
                     profiles.load("isbhf-playoff"))
        assert set(MODULES[name].declares) <= set(only.commands())
    assert sorted(MODULES) == sorted(RULE_NAMES)


def test_the_phase_machine_holds_no_feature_and_no_guard_for_a_module() -> None:
    """match.py keeps no feature's state (`self.penalty_box`, `self.timeouts`, ...) and no
    command of the score desk or the scheduled start (built-in modules), imports no rule
    module but the registry, and tests no module with `is None`."""
    tree = next(n for n in ast.parse(MATCH_PY.read_text()).body
                if isinstance(n, ast.ClassDef) and n.name == "Match")
    features = {"penalty_box", "timeouts", "passive", "line_change", "goalie_change",
                "shootout", "penalties", "_early_break_left_s", "_half_switches"}
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name) and n.value.id == "self"}
    assert used & features == set()
    imported = {n.module for n in ast.walk(ast.parse(MATCH_PY.read_text()))
                if isinstance(n, ast.ImportFrom)}
    assert {m for m in imported if m and m.startswith("timerd.core.rules")} == {
        "timerd.core.rules"}
    methods = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert methods & {"goal", "undo", "set_teams", "faceoff", "start_in"} == set()  # modules'
    assert match_lines(MATCH_PY.parents[1]) <= MATCH_CAP


def test_an_ithf_profile_must_have_the_ithf_4_4_signals(tmp_path: Path) -> None:
    path = tmp_path / "silent.toml"
    path.write_text('extends = "ithf"\nname = "silent"\nsignals = []\n')
    with pytest.raises(SchemaError,
                       match=r"interval signals \(at none left\) are neither.*ITHF 4\.4"):
        profiles.load(str(path))
    path.write_text('extends = "ithf"\nname = "quiet"\nsignals = []\n'
                    "ithf_conformant = false\n")
    assert profiles.load(str(path)).signals == ()


def test_a_club_profile_extends_a_built_in_one_in_two_lines(tmp_path: Path) -> None:
    path = tmp_path / "club.toml"
    path.write_text('extends = "ithf-playoff"\nname = "club"\n')
    assert profiles.load(str(path)) == replace(profiles.load("ithf-playoff"), name="club")
    (tmp_path / "a.toml").write_text('extends = "b.toml"\nname = "a"\n')
    (tmp_path / "b.toml").write_text('extends = "a.toml"\nname = "b"\n')
    with pytest.raises(SchemaError,
                       match=r"extends 'a\.toml' again: .*a\.toml -> .*b\.toml -> .*a\.toml"):
        profiles.load(str(tmp_path / "a.toml"))


def test_profiles_show_prints_a_profile_that_loads_back(tmp_path: Path) -> None:
    shown = subprocess.run([sys.executable, "-m", "timerd", "profiles", "show", "isbhf"],
                           capture_output=True, text=True, check=True).stdout
    (tmp_path / "isbhf.toml").write_text(shown)
    assert profiles.load(str(tmp_path / "isbhf.toml")) == profiles.load("isbhf")
