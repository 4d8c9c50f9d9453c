"""A systemd unit as systemd itself reads it, for `timerd doctor --service` (issue 43 item 3).

What systemd.syntax(7) and systemd.unit(5) say, as far as the doctor's checks need it: the
unit is looked for in the unit directories, /etc first; its drop-ins (`NAME.service.d/*.conf`,
for an instance also the template's `timerd@.service.d/`, and `service.d/` for every service)
are applied after it, sorted by file name across those directories, a file in /etc hiding one
of the same name further down; a unit or drop-in linked to /dev/null is masked. Lines: `#`
and `;` start comments, a line ending in a backslash goes on on the next one, a key given
again adds to a list or replaces a value, and an empty assignment (`User=`) resets it. A line
that is not valid UTF-8 is skipped, as systemd skips it, and said. Specifiers: `%i` (the
instance), `%n`, `%p`, `%%`. Every file is reached under the root as the system there would
reach it (`install.inside`). systemd's own parser is not a library we can call: `systemd-analyze
verify` needs the system's systemd, and a card prepared on a laptop has no running one.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from timerd.tools.install import inside

#: System units' directories, the one that wins first (systemd.unit(5), "Unit File Load Path").
UNIT_DIRS = (Path("/etc/systemd/system"), Path("/run/systemd/system"),
             Path("/usr/local/lib/systemd/system"), Path("/usr/lib/systemd/system"),
             Path("/lib/systemd/system"))
MASKED = "/dev/null"


@dataclass
class Unit:
    """A unit's [Service] settings with its drop-ins applied; `path` None: not installed."""

    name: str
    path: Path | None = None
    masked: bool = False
    #: Each key with its values in order since its last empty assignment.
    settings: dict[str, list[str]] = field(default_factory=dict)
    drop_ins: list[Path] = field(default_factory=list)
    #: Lines systemd skips, each with its file and line number.
    skipped: list[str] = field(default_factory=list)

    def last(self, key: str) -> str:
        """A single-valued setting: its last value, '' when unset (or reset)."""
        return (self.settings.get(key) or [""])[-1]

    def words(self, key: str) -> list[str]:
        """A list setting's words, every assignment's (`SupplementaryGroups=`)."""
        return [word for value in self.settings.get(key, []) for word in value.split()]


def _specifiers(value: str, unit: str, instance: str) -> str:
    known = {"i": instance, "I": instance, "n": unit, "N": unit.rsplit(".", 1)[0],
             "p": unit.split("@", 1)[0].rsplit(".", 1)[0], "%": "%"}
    return re.sub(r"%(.)", lambda m: known.get(m.group(1), m.group(0)), value)


def _apply(unit: Unit, path: Path, data: bytes, instance: str) -> None:
    """Read one file (the unit or a drop-in) into `unit`: its [Service] section."""
    section, pending = "", ""
    for number, raw in enumerate(data.split(b"\n"), 1):
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            unit.skipped.append(f"{path}:{number}: not valid UTF-8, skipped by systemd")
            continue
        if not pending and (not line or line[0] in "#;"):
            continue
        if pending and line[:1] in ("#", ";"):  # a comment within a continued line
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if line.startswith("["):
            section = line
        elif section == "[Service]":
            key, sep, value = line.partition("=")
            if not sep:
                unit.skipped.append(f"{path}:{number}: no '=', skipped by systemd")
                continue
            key, value = key.strip(), _specifiers(value.strip(), unit.name, instance)
            if value:
                unit.settings.setdefault(key, []).append(value)
            else:  # `Key=`: back to the default, the list emptied
                unit.settings.pop(key, None)


def _masked(path: Path) -> bool:
    return path.is_symlink() and os.readlink(path) == MASKED


def _read(unit: Unit, root: Path, path: Path, instance: str) -> None:
    try:
        data = inside(root, path).read_bytes()
    except OSError as exc:
        unit.skipped.append(f"{path}: cannot be read ({exc.strerror or exc})")
        return
    _apply(unit, path, data, instance)


def load(root: Path, name: str) -> Unit:
    """The unit `name` (timerd.service, or an instance's timerd@NAME.service, read from its
    template timerd@.service unless it has a file of its own) under `root`, with its
    drop-ins."""
    unit = Unit(name)
    prefix, at, rest = name.partition("@")
    instance = rest.rsplit(".", 1)[0] if at else ""
    template = f"{prefix}@.{rest.rsplit('.', 1)[-1]}" if at else name
    for file_name in dict.fromkeys((name, template)):
        for directory in UNIT_DIRS:
            here = inside(root, directory / file_name, follow_last=False)
            if unit.path is None and (here.is_symlink() or here.exists()):
                unit.path = directory / file_name
                unit.masked = _masked(here)
    if unit.path is None or unit.masked:
        return unit
    _read(unit, root, unit.path, instance)
    found: dict[str, Path] = {}
    for directory in UNIT_DIRS:
        for drop_ins in dict.fromkeys(("service.d", f"{template}.d", f"{name}.d")):
            real = inside(root, directory / drop_ins)
            for conf in sorted(real.glob("*.conf")) if real.is_dir() else ():
                found.setdefault(conf.name, directory / drop_ins / conf.name)
    for conf_name in sorted(found):
        if not _masked(inside(root, found[conf_name], follow_last=False)):
            unit.drop_ins.append(found[conf_name])
            _read(unit, root, found[conf_name], instance)
    return unit
