"""The annotated config: every key with its meaning, default and bounds, generated from the
sections themselves so that it cannot drift from them (issue 30 item 13).

- The meaning is the `#:` comment above the key in `sections.py` (a key without one fails
  tests/test_config_reference.py).
- The default is the dataclass's default; the choices are its `Literal` type's.
- The bounds are what the section's own `problems()` says about values out of range: each
  key is tried with a few values far outside any sane range, and every distinct complaint
  (after "key = value: ") is listed. So a check that changes changes the reference.

`timerd config --annotated` prints the effective config this way (a valid config file, every
key commented); docs/config.md is `markdown()`: the defaults, annotated, in one TOML block.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import textwrap
import typing
from typing import Any

import tomli_w

from timerd.config.schema import to_plain, toml_keys
from timerd.config.sections import MASK, SECRETS, Config, SignalOutput

#: Values each key is tried with to find its bounds: far below, around zero and far above
#: anything sane, and for text: empty, blank, overlong, and MQTT's special characters.
NUMBER_PROBES = (-10**9, -1, 0, 10**9)
TEXT_PROBES = ("", " ", "x" * 300, "a/b+#")
WIDTH = 96

_FIELD = re.compile(r"^    (\w+): ")


def meanings(cls: type) -> dict[str, str]:
    """Each field of dataclass `cls` and the `#:` comment just above it, as one line."""
    out: dict[str, str] = {}
    comment: list[str] = []
    for line in inspect.getsource(cls).splitlines():
        stripped = line.strip()
        if stripped.startswith("#:"):
            comment.append(stripped[2:].strip())
            continue
        if (match := _FIELD.match(line)) and comment:
            out[match.group(1)] = " ".join(comment)
        comment = []
    return out


def _choices(tp: Any) -> tuple[Any, ...]:
    return typing.get_args(tp) if typing.get_origin(tp) is typing.Literal else ()


def _probes(tp: Any) -> tuple[Any, ...]:
    args = set(typing.get_args(tp)) - {type(None)}
    if _choices(tp):
        return ()
    if typing.get_origin(tp) is tuple:  # a list: each probe as its only item
        return tuple((probe,) for probe in _probes(typing.get_args(tp)[0]))
    if tp in (int, float) or args & {int, float}:
        return NUMBER_PROBES
    if tp is str:
        return TEXT_PROBES
    return ()


def bounds(section: Any, key: str, tp: Any, field: str | None = None,
           entry: str | None = None) -> list[str]:
    """What `section.problems()` says of `key` for values out of range, each once (`key`
    fills `field`, its entry `entry` when the field is `keyed`)."""
    out: list[str] = []
    for probe in _probes(tp):
        value = probe if entry is None else {**getattr(section, field or key), entry: probe}
        try:
            tried = dataclasses.replace(section, **{field or key: value})
        except (TypeError, ValueError):
            continue
        for problem in getattr(tried, "problems", list)():
            head, sep, tail = problem.partition(": ")
            named = head == key or head.startswith((f"{key} =", f"{key}["))
            if sep and named and "already used by" not in tail and tail not in out:
                out.append(tail)
    return out


def _value(value: Any) -> str:
    """A plain value as TOML writes it after `key = `, a list on one line."""
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return tomli_w.dumps({"v": value}).partition("=")[2].strip()


def _type_name(tp: Any) -> str:
    if choices := _choices(tp):
        return "one of " + ", ".join(_value(c) for c in choices)
    args = set(typing.get_args(tp))
    if type(None) in args:
        return f"{_type_name(next(iter(args - {type(None)})))} or \"none\""
    if typing.get_origin(tp) is tuple:
        return f"a list, each {_type_name(typing.get_args(tp)[0])}"
    return {int: "a whole number", float: "a number", str: "text", bool: "true or false"}.get(
        tp, str(tp))


def _comment(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH - 2, initial_indent="# ", subsequent_indent="# ",
                         break_on_hyphens=False)


def _section(name: str, section: Any, plain: dict[str, Any]) -> list[str]:
    cls = type(section)
    hints = typing.get_type_hints(cls)
    said = meanings(cls)
    lines = [f"[{name}]"]
    if cls.__doc__ and not cls.__doc__.startswith(f"{cls.__name__}("):  # not dataclass's own
        lines += _comment(inspect.cleandoc(cls.__doc__).split("\n\n")[0].replace("\n", " "))
    default = cls()
    defaults = to_plain(default)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key, field, entry in toml_keys(cls):
        tp, meaning = hints[field], said.get(field, "")
        if entry is not None:  # a `keyed` field's entry: its own meaning and type
            tp = typing.get_args(tp)[1]
            meaning = fields[field].metadata["keyed"].entries()[entry][1]
        lines.append("")
        lines += _comment(meaning)
        facts = [_type_name(tp), f"default {_value(defaults[key])}"]
        facts += bounds(default, key, tp, field, entry)
        lines += _comment("; ".join(facts))
        lines.append(f"{key} = {_value(plain[key])}")
    return lines


def _signals(config: Config, plain: dict[str, Any]) -> list[str]:
    hints = typing.get_type_hints(SignalOutput)
    said = meanings(SignalOutput)
    lines = ["[signals]"]
    lines += _comment(inspect.cleandoc(SignalOutput.__doc__ or "").replace("\n", " "))
    lines += _comment("Each signal has its own table, [signals.<signal>], with these keys:")
    for f in dataclasses.fields(SignalOutput):
        facts = [_type_name(hints[f.name]), *bounds(SignalOutput(), f.name, hints[f.name])]
        lines += _comment(f"- {f.name}: {said.get(f.name, '')} ({'; '.join(facts)})".replace(
            ":  (", ": ("))
    for kind in config.signals:
        lines += ["", f"[signals.{kind.value}]"]
        lines += [f"{key} = {_value(value)}" for key, value in plain[kind.value].items()]
    return lines


def annotated(config: Config, *, secrets: bool = False) -> str:
    """`config` as TOML, every key with its meaning, type, default and bounds as comments;
    the secrets masked unless `secrets`."""
    plain = to_plain(config)
    if not secrets:
        for section, key in SECRETS:
            if plain[section][key]:
                plain[section][key] = MASK
    blocks = []
    for f in dataclasses.fields(Config):
        value = getattr(config, f.name)
        blocks.append(_signals(config, plain[f.name]) if f.name == "signals"
                      else _section(f.name, value, plain[f.name]))
    return "\n\n".join("\n".join(block) for block in blocks) + "\n"


def markdown() -> str:
    """docs/config.md: how to read the reference, then every key at its default."""
    return (
        "# Config reference\n\n"
        "<!-- Generated by `timerd config --annotated` from timerd/config/sections.py; "
        "tests/test_config_reference.py fails when this file differs. Do not edit. -->\n\n"
        "Every key of `/etc/timerd/timerd.toml` (or `--config PATH`, or `-o SECTION.KEY=VALUE`)"
        ", with its meaning, its type, its default and the bounds `timerd` checks, generated "
        "from the config's own sections and checks, so it cannot drift from them. "
        "`timerd config --annotated` prints the same for the config in force (its values in "
        "place of the defaults; the secrets masked unless `--show-secrets`): a valid config "
        "file to start from. A config needs only the keys it changes; `timerd config` "
        "reports every problem of a config at once. Drop-ins add to the file key by key: "
        "every `*.toml` in `/etc/timerd/timerd.d/` (beside `--config PATH`, the directory "
        "named as the file with `.d` for `.toml`), in name order, after the file and before "
        "`-o`. Examples for each use are in [examples/](examples/).\n\n"
        "```toml\n" + annotated(Config()) + "```\n")
