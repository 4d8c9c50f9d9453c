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
from tests.syntax import parse_file
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


#: What names a rule module, or a value of one, from the phase machine: the registries.
REGISTRIES = frozenset({"MODULES", "BUILT_IN", "REGISTERED"})


def _takes_from_a_module(node: ast.expr, taken: set[str]) -> bool:
    """`node` is a value taken from a module by name: it names a module or a key of one (a
    string: `self.records().get("shootout")`), reads a registry (`MODULES["penalties"]`),
    picks one of `self.rules` by index, or is a name assigned one of those (`taken`)."""
    for part in ast.walk(node):
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            return True
        if isinstance(part, ast.Name) and (part.id in REGISTRIES or part.id in taken):
            return True
        if isinstance(part, ast.Subscript) and ast.unparse(part.value) == "self.rules":
            return True
    return False


def module_guards(root: Path) -> list[str]:
    """Where `core/match.py` tests a value taken from a module with `is None` / `is not
    None` (a guard for a module: the phase machine asking whether a feature is there, or
    what one of them holds), each with its line. A hook's answer, asked of every module in
    turn (`rule.next_step()`), is the modules' protocol, not a guard for one of them."""
    tree = parse_file(root / "core" / "match.py")
    found: list[tuple[int, str]] = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        taken: set[str] = set()
        for node in ast.walk(function):
            if isinstance(node, ast.Assign | ast.NamedExpr) and _takes_from_a_module(
                    node.value, taken):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                taken |= {t.id for t in targets if isinstance(t, ast.Name)}
        for node in ast.walk(function):
            if isinstance(node, ast.Compare) and any(
                    isinstance(op, ast.Is | ast.IsNot) for op in node.ops) and any(
                    isinstance(c, ast.Constant) and c.value is None for c in node.comparators) \
                    and _takes_from_a_module(node.left, taken):
                found.append((node.lineno, ast.unparse(node)))
    return [f"core/match.py:{line}: {text}" for line, text in sorted(found)]


def match_reached_past_its_view(root: Path) -> list[str]:
    """Where a rule module reaches the match past `MatchView` by name: `getattr`, `setattr`,
    `hasattr` or `delattr` on the match (`getattr(self.match, "penalty_box")`)."""
    found = []
    for path in sorted((root / "core" / "rules").glob("*.py")):
        for node in ast.walk(parse_file(path)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("getattr", "setattr", "hasattr", "delattr") \
                    and node.args and ast.unparse(node.args[0]) in ("match", "self.match"):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_phase_machine_holds_no_feature_and_no_guard_for_a_module() -> None:
    """match.py keeps no feature's state (`self.penalty_box`, `self.timeouts`, ...) and no
    command of the score desk or the scheduled start (built-in modules), imports no rule
    module but the registry, and tests no value taken from a module with `is None`
    (`module_guards`); no rule module reaches the match by `getattr` (issue 44 item 7)."""
    tree = next(n for n in parse_file(MATCH_PY).body
                if isinstance(n, ast.ClassDef) and n.name == "Match")
    features = {"penalty_box", "timeouts", "passive", "line_change", "goalie_change",
                "shootout", "penalties", "_early_break_left_s", "_half_switches"}
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name) and n.value.id == "self"}
    assert used & features == set()
    imported = {n.module for n in ast.walk(parse_file(MATCH_PY))
                if isinstance(n, ast.ImportFrom)}
    assert {m for m in imported if m and m.startswith("timerd.core.rules")} == {
        "timerd.core.rules"}
    methods = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert methods & {"goal", "undo", "set_teams", "faceoff", "start_in"} == set()  # modules'
    assert match_lines(MATCH_PY.parents[1]) <= MATCH_CAP
    assert module_guards(MATCH_PY.parents[1]) == []
    assert match_reached_past_its_view(MATCH_PY.parents[1]) == []


def test_the_guard_checks_can_fail(tmp_path: Path) -> None:
    """What each check reports, on a planted phase machine and a planted rule module; a
    hook's answer asked of every module passes."""
    (tmp_path / "core" / "rules").mkdir(parents=True)
    (tmp_path / "core" / "match.py").write_text(
        "class Match:\n"
        "    def f(self):\n"
        "        if self.records().get('shootout') is None:\n"
        "            return MODULES.get('penalties') is not None\n"
        "        box = self.rules[2].box\n"
        "        return box is None\n"
        "    def g(self):\n"
        "        return [s for rule in self.rules if (s := rule.next_step()) is not None]\n")
    (tmp_path / "core" / "rules" / "x.py").write_text(
        "def f(self, match):\n"
        "    return getattr(self.match, 'penalty_box'), hasattr(match, 'x'), "
        "getattr(match.profile, 'y')\n")
    assert module_guards(tmp_path) == [
        "core/match.py:3: self.records().get('shootout') is None",
        "core/match.py:4: MODULES.get('penalties') is not None",
        "core/match.py:6: box is None"]
    assert match_reached_past_its_view(tmp_path) == [
        "core/rules/x.py:2: getattr(self.match, 'penalty_box')",
        "core/rules/x.py:2: hasattr(match, 'x')"]


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
