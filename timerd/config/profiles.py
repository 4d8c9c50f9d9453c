"""Loading rule profiles: the built-in ones (TOML data in `timerd/profiles/`, no code) and a
user's own profile file, into the core's `Profile`.

A profile may start from another with `extends = "NAME"` (a built-in name, or a file's path
relative to the file that extends it): the base's keys first, the file's own over them, a
table (`[overtime]`) merged key by key. A club's file can be two lines:

    extends = "ithf"
    name = "club-training"
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from timerd.config.schema import SchemaError, build, parse_toml, read_toml
from timerd.core.profile import Profile, registered

#: How many profiles one may extend in a chain (a loop is refused long before).
MAX_EXTENDS = 8


def _shipped() -> Traversable:
    """The built-in profiles' directory: package data of `timerd`, read, never imported."""
    return resources.files("timerd").joinpath("profiles")


def builtin_names() -> list[str]:
    return sorted(p.name.removesuffix(".toml") for p in _shipped().iterdir()
                  if p.name.endswith(".toml"))


def builtin_text(name: str) -> str:
    """A built-in profile's TOML file as shipped (`timerd profiles show NAME`)."""
    if name not in builtin_names():
        raise SchemaError([f"profile {name!r}: not a built-in profile "
                           f"({', '.join(builtin_names())})"])
    return _shipped().joinpath(f"{name}.toml").read_text(encoding="utf-8")


def load(name_or_path: str) -> Profile:
    """A built-in profile by name, or a profile file by path; SchemaError lists every problem."""
    data, where = _data(name_or_path, Path.cwd(), [])
    try:
        return build(registered(), data)
    except SchemaError as exc:
        raise SchemaError([f"{where}: {p}" for p in exc.problems]) from exc


def _data(name_or_path: str, base_dir: Path, chain: list[str]) -> tuple[dict[str, Any], str]:
    """The profile's keys with what it extends merged under them, and where it came from."""
    if name_or_path in builtin_names():
        where, key = f"profile {name_or_path}", name_or_path
        data = parse_toml(builtin_text(name_or_path).encode(), where)
        here = base_dir
    else:
        path = base_dir / name_or_path
        if not path.is_file():
            raise SchemaError([f"profile {name_or_path!r}: not a built-in profile "
                               f"({', '.join(builtin_names())}) and no such file"])
        where, key = f"profile file {path}", str(path.resolve())
        data = read_toml(path, "profile file")
        here = path.parent
    chain = [*chain, key]
    parent = data.pop("extends", None)
    if parent is None:
        return data, where
    if not isinstance(parent, str):
        raise SchemaError([f"{where}: extends = {parent!r}: give a profile's name or file"])
    parent_key = parent if parent in builtin_names() else str((here / parent).resolve())
    if parent_key in chain or len(chain) > MAX_EXTENDS:
        raise SchemaError([f"{where}: extends {parent!r} again: "
                           + " -> ".join([*chain, parent_key])])
    base, _ = _data(parent, here, chain)
    return _merged(base, data), where


def _merged(base: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in own.items():
        below = out.get(key)
        out[key] = _merged(below, value) if isinstance(below, dict) and isinstance(value, dict) \
            else value
    return out
