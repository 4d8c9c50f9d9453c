"""The effective config: the defaults (`sections.py`), then `/etc/timerd/timerd.toml` (or
`--config PATH`), then its drop-ins (`*.toml` in the directory beside it named as the file
with `.d` for `.toml`, /etc/timerd/timerd.d/, in name order), then `-o section.key=value`
options, later wins. Every problem of the merged result is reported at once with its key
path, and with the name of the file that wrote the key; a bad config never starts a
half-working daemon.

A drop-in adds to the file's sections key by key: `timerd hall secure`'s login file
(`[hall]` with the broker, the hall, the table and its login) goes into timerd.d/ beside a
timerd.toml that has a `[hall]` section of its own (issue 41 item 5).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from timerd.config import profiles
from timerd.config.paths import system_config
from timerd.config.schema import Problem, SchemaError, build, merge, read_toml, to_plain
from timerd.config.sections import Config


def parse_override(option: str) -> dict[str, Any]:
    """`section.key=value` as a nested table; the value is read as TOML, else as a string."""
    key, sep, raw = option.partition("=")
    if not sep or not key.strip():
        raise SchemaError([Problem(f"-o {option!r}", "config.override")])
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


def _named(problem: str, layers: list[tuple[Path, dict[str, Any]]],
           optioned: Mapping[str, Any]) -> str:
    """`problem` with the name of the last file that wrote its key (an `-o` option: none)."""
    if _written_in(problem, optioned):
        return problem
    file = next((f for f, written in reversed(layers) if _written_in(problem, written)), None)
    return problem if file is None else Problem("", "config.in_file", file=file, problem=problem)


def drop_ins(file: Path) -> list[Path]:
    """The drop-ins of config `file`: `*.toml` in `<stem>.d/` beside it, in name order."""
    directory = file.with_name(file.stem + ".d")
    try:
        return sorted(p for p in directory.iterdir() if p.suffix == ".toml")
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise SchemaError([Problem("", "config.drop_ins", directory=directory,
                                   error=exc.strerror or exc)]) from exc


def load(path: Path | None = None, overrides: Iterable[str] = ()) -> Config:
    """The effective config; SchemaError lists every problem, with key paths, and the name
    of the file (or drop-in) that wrote the key before a problem with it (not in an `-o`
    option)."""
    data: dict[str, Any] = to_plain(Config())
    problems: list[str] = []
    default = system_config()
    file = path if path is not None else (default if default.is_file() else None)
    layers: list[tuple[Path, dict[str, Any]]] = []
    if file is not None:
        try:
            files = [file, *drop_ins(file)]
        except SchemaError as exc:
            files = [file]
            problems.extend(exc.problems)
        for layer in files:
            try:
                layers.append((layer, read_toml(layer, "config file")))
            except SchemaError as exc:
                problems.extend(exc.problems)
    for _, written in layers:
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
        problems.extend(_named(p, layers, optioned) for p in exc.problems)
    profile = data.get("match", {}).get("profile")
    if isinstance(profile, str):
        try:
            profiles.load(profile)
        except SchemaError as exc:
            problems.extend(f"match.profile: {p}" for p in exc.problems)
    if problems:
        raise SchemaError(problems)
    return config
