"""The effective config: the defaults (`sections.py`), then `/etc/timerd/timerd.toml` (or
`--config PATH`), then `-o section.key=value` options, later wins. Every problem of the
merged result is reported at once with its key path, and with the file's name when the key
was written there; a bad config never starts a half-working daemon.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from timerd.config import profiles
from timerd.config.paths import system_config
from timerd.config.schema import SchemaError, build, merge, read_toml, to_plain
from timerd.config.sections import Config


def parse_override(option: str) -> dict[str, Any]:
    """`section.key=value` as a nested table; the value is read as TOML, else as a string."""
    key, sep, raw = option.partition("=")
    if not sep or not key.strip():
        raise SchemaError([f"-o {option!r}: write section.key=value"])
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        value = raw
    table: dict[str, Any] = {}
    node = table
    parts = key.strip().split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
    return table


def _written_in(problem: str, table: Mapping[str, Any]) -> bool:
    """Whether the key path that `problem` starts with ("gpio.buzzer_pins[0] = 99: ...") is
    written in `table`."""
    node: Any = table
    for part in re.sub(r"\[\d+\]", "", re.split(r":| = ", problem, maxsplit=1)[0]).split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def load(path: Path | None = None, overrides: Iterable[str] = ()) -> Config:
    """The effective config; SchemaError lists every problem, with key paths, and the file's
    name before a problem with a key written there (not in an `-o` option)."""
    data: dict[str, Any] = to_plain(Config())
    problems: list[str] = []
    default = system_config()
    file = path if path is not None else (default if default.is_file() else None)
    written: dict[str, Any] = {}
    if file is not None:
        try:
            written = read_toml(file, "config file")
        except SchemaError as exc:
            problems.extend(exc.problems)
        data = merge(data, written)
    optioned: dict[str, Any] = {}
    for option in overrides:
        try:
            optioned = merge(optioned, parse_override(option))
        except SchemaError as exc:
            problems.extend(exc.problems)
    data = merge(data, optioned)
    try:
        config = build(Config, data)
    except SchemaError as exc:
        problems.extend(f"config file {file}: {p}"
                        if _written_in(p, written) and not _written_in(p, optioned) else p
                        for p in exc.problems)
    profile = data.get("match", {}).get("profile")
    if isinstance(profile, str):
        try:
            profiles.load(profile)
        except SchemaError as exc:
            problems.extend(f"match.profile: {p}" for p in exc.problems)
    if problems:
        raise SchemaError(problems)
    return config
