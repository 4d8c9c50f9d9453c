"""Built-in rule profiles (TOML data beside this file) and loading a user's own profile file."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from timerd.core.profile import Profile
from timerd.schema import SchemaError, build, parse_toml, read_toml


def builtin_names() -> list[str]:
    files = resources.files(__package__)
    return sorted(p.name.removesuffix(".toml") for p in files.iterdir()
                  if p.name.endswith(".toml"))


def load(name_or_path: str) -> Profile:
    """A built-in profile by name, or a profile file by path; SchemaError lists every problem."""
    if name_or_path in builtin_names():
        where = f"profile {name_or_path}"
        data = parse_toml(
            resources.files(__package__).joinpath(f"{name_or_path}.toml").read_bytes(), where)
    else:
        path = Path(name_or_path)
        if not path.is_file():
            raise SchemaError([f"profile {name_or_path!r}: not a built-in profile "
                               f"({', '.join(builtin_names())}) and no such file"])
        where = f"profile file {path}"
        data = read_toml(path, "profile file")
    try:
        return build(Profile, data)
    except SchemaError as exc:
        raise SchemaError([f"{where}: {p}" for p in exc.problems]) from exc
