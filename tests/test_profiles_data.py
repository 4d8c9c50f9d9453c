"""The built-in profiles are data, and their loader lives beside the config (issue 32 item 5):
`timerd/profiles/` holds TOML and no code, so config and profiles cannot import each other."""

from __future__ import annotations

import ast
from pathlib import Path

import timerd
from tests.syntax import parse_file
from timerd.config import profiles

PACKAGE = Path(timerd.__file__).parent


def test_the_profiles_directory_holds_only_toml() -> None:
    shipped = sorted(p.name for p in (PACKAGE / "profiles").iterdir()
                     if p.name != "__pycache__")
    assert shipped
    assert [name for name in shipped if not name.endswith(".toml")] == []
    assert sorted(f"{n}.toml" for n in profiles.builtin_names()) == shipped


def test_no_module_imports_the_profiles_directory() -> None:
    importers = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(parse_file(path)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [f"{node.module}.{a.name}" for a in node.names] \
                if isinstance(node, ast.ImportFrom) and node.module else []
            importers += [f"{path.relative_to(PACKAGE)}: {n}" for n in names
                          if n == "timerd.profiles" or n.startswith("timerd.profiles.")]
    assert importers == []


def test_every_built_in_profile_loads_through_the_config_loader() -> None:
    for name in profiles.builtin_names():
        assert profiles.load(name).name == name
