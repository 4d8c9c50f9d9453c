"""Build frozen dataclasses from TOML tables, collecting every error with its key path.

Config files and rule profiles are both plain TOML. Rather than failing on the first bad key,
`build` walks the whole table and reports every problem at once, each with its dotted key path
and, for an unknown key, the closest known key ("unknown key `buzer`; did you mean `buzzer`?"),
so that a volunteer fixes a config in one pass. A bad file never yields a half-built object.

A dataclass may define `problems(self) -> list[str]` for checks across fields; each message
starts with the key it is about ("reset_pin = 17: ...") and is reported under the dataclass's
own key path ("gpio.reset_pin = 17: ...").

A mapping field made with `keyed` is written as one key per entry beside the others (`[gpio]
goal_home_pin = 23`): its entries are declared elsewhere (each button by the part of the core
that owns its command) and read at each build, so a newly declared entry has its key.

A problem is a `Problem`: its English line (a str, as logs, scripts and tests read it) that
keeps its catalogue key and values (`config.*`), so the terminal says it in the user's
language (`said`, issue 46). A check that gives a plain str (a rule module's, in the core)
is shown as it is.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import math
import tomllib
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from timerd.core.checks import Line
from timerd.i18n import LOG_TEXT, Messages, catalogue

T = TypeVar("T")

#: A config or profile file is a few KiB; a larger one is the wrong file (a log, an image).
MAX_FILE_BYTES = 1024 * 1024
#: Problems reported at most, then a count of the others.
MAX_PROBLEMS = 50

#: In TOML there is no null: an optional value (a pin that is not fitted) is written "none".
NONE_WORDS = ("none", "off", "")


class Problem(Line):
    """One problem, in English from the catalogue, with its code and values: `head` is the
    data it is about ("gpio.reset_pin = 17", a key path), shown before the text in every
    language; a value may be a Problem itself (a file's problem inside "config file X: ...")."""

    def __new__(cls, head: str, code: str, /, **values: Any) -> Problem:
        return Line.__new__(cls, head, code, LOG_TEXT(code, **values), **values)


@cache
def _reasons() -> Mapping[str, str]:
    """The reasons the core's checks give (`checks.at_most`'s `why`), in English, and their
    catalogue keys (`check.why.*`)."""
    english = catalogue("en")
    return {english[key]: key for key in english if key.startswith("check.why.")}


def said(problem: Any, msg: Messages) -> Any:
    """`problem` (a `Line`: a Problem, or a line of the core's checks) in `msg`'s language; a
    reason of the core's checks by its catalogue key; anything else as it is."""
    if isinstance(problem, str) and problem in _reasons():
        return msg(_reasons()[problem])
    if not isinstance(problem, Line):
        return problem
    text = msg(problem.code, **{name: said(value, msg) for name, value in problem.values.items()})
    return f"{problem.head}: {text}" if problem.head else text


def _under(path: str, problem: str) -> str:
    return problem.under(path) if isinstance(problem, Line) else f"{path}.{problem}"


class SchemaError(ValueError):
    """Every problem found in one table, one per line."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class Keyed:
    """How TOML writes a `keyed` mapping field: entry NAME as the key `key.format(NAME)`,
    each entry's default and meaning as `entries()` declares them now."""

    key: str  # "{}_pin"
    entries: Callable[[], Mapping[str, tuple[Any, str]]]  # name: (default, meaning)


def keyed(key: str, entries: Callable[[], Mapping[str, tuple[Any, str]]]) -> Any:
    """A mapping field of a section written as one TOML key per entry (`Keyed`), by default
    each entry's declared default."""
    return dataclasses.field(
        default_factory=lambda: types.MappingProxyType(
            {name: default for name, (default, _) in entries().items()}),
        metadata={"keyed": Keyed(key, entries)})


def toml_keys(cls: type) -> list[tuple[str, str, str | None]]:
    """Each key TOML writes for dataclass `cls`, in order, with the field it fills and, for
    a `keyed` field's, the entry's name (else None)."""
    out: list[tuple[str, str, str | None]] = []
    for f in dataclasses.fields(cls):
        spec = f.metadata.get("keyed")
        out += [(f.name, f.name, None)] if spec is None else [
            (spec.key.format(name), f.name, name) for name in spec.entries()]
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _suggest(key: str, known: typing.Iterable[str]) -> str | Problem:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return Problem("", "config.did_you_mean", name=close[0]) if close else ""


def _shown(value: Any) -> str:
    """`value` as it is written in TOML (`true`, not Python's `True`), cut to 60 characters."""
    text = str(value).lower() if isinstance(value, bool) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _convert(tp: Any, value: Any, path: str, errors: list[str]) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if type(None) in args and isinstance(value, str) and value.lower() in NONE_WORDS:
            return None
        # `int | str` (a chip by number or label): the member the TOML value already is.
        fits = [a for a in inner if isinstance(a, type) and type(value) is a]
        return _convert(fits[0] if fits else inner[0], value, path, errors)
    if origin is typing.Literal:
        # Strictly by type: in Python `true == 1`, so `stop_bits = true` would pass as 1.
        if not any(type(value) is type(a) and value == a for a in args):
            errors.append(Problem(path, "config.not_one_of", value=_shown(value),
                                  choices=", ".join(map(repr, args)), suggest=""))
        return value
    if origin is tuple:
        if not isinstance(value, list):
            errors.append(Problem(path, "config.expected_list", got=type(value).__name__))
            return ()
        item = args[0]
        return tuple(_convert(item, v, f"{path}[{i}]", errors) for i, v in enumerate(value))
    if origin in (dict, Mapping):
        if not isinstance(value, Mapping):
            errors.append(Problem(path, "config.expected_table", got=type(value).__name__))
            return {}
        key_tp, val_tp = args
        out = {}
        for k, v in value.items():
            key = _convert(key_tp, k, _join(path, k), errors)
            out[key] = _convert(val_tp, v, _join(path, k), errors)
        return types.MappingProxyType(out)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, Mapping):
            errors.append(Problem(path, "config.expected_table", got=type(value).__name__))
            return None
        return _build(tp, value, path, errors)  # type: ignore[arg-type]
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            names = [str(m.value) for m in tp]
            errors.append(Problem(path, "config.not_one_of", value=_shown(value),
                                  choices=", ".join(names), suggest=_suggest(str(value), names)))
            return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            errors.append(Problem(path, "config.expected_number", value=_shown(value)))
            return 0.0
        if not math.isfinite(value):  # TOML has nan and inf; no duration or level may be one
            errors.append(Problem(path, "config.expected_finite", value=_shown(value)))
            return 0.0
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            errors.append(Problem(path, "config.expected_whole", value=_shown(value)))
            return 0
        return value
    if tp in (bool, str):
        if not isinstance(value, tp):
            errors.append(Problem(path, f"config.expected_{tp.__name__}", value=_shown(value)))
        return value
    raise TypeError(f"schema cannot convert to {tp!r}")  # a bug in a dataclass, not in the TOML


def _build(cls: type[T], data: Mapping[str, Any], path: str, errors: list[str]) -> T:
    already = len(errors)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    keys = toml_keys(cls)
    known = [key for key, _, _ in keys]
    for key in data:
        if key not in known:
            errors.append(Problem(_join(path, key), "config.unknown_key", name=key,
                                  suggest=_suggest(key, known)))
    kwargs: dict[str, Any] = {}
    for name, field in fields.items():
        if "keyed" in field.metadata:
            entries = field.metadata["keyed"].entries()
            value_tp = typing.get_args(hints[name])[1]
            kwargs[name] = types.MappingProxyType({
                entry: _convert(value_tp, data[key], _join(path, key), errors)
                if key in data else entries[entry][0]
                for key, owner, entry in keys if owner == name and entry is not None})
        elif name in data:
            kwargs[name] = _convert(hints[name], data[name], _join(path, name), errors)
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            errors.append(Problem(_join(path, name), "config.missing"))
    try:
        obj = cls(**kwargs)
    except (TypeError, ValueError) as exc:  # only reachable after errors were already listed
        errors.append(f"{path or 'top level'}: {exc}")
        return None  # type: ignore[return-value]
    check = getattr(obj, "problems", None)
    if check is not None and len(errors) == already:
        errors.extend(_under(path, p) if path else p for p in check())
    return obj


def build(cls: type[T], data: Mapping[str, Any], path: str = "") -> T:
    """Return `cls` built from `data`, or raise SchemaError listing every problem (the first
    `MAX_PROBLEMS`: a list of 100,000 bad entries is one mistake, not a screenful each)."""
    errors: list[str] = []
    obj = _build(cls, data, path, errors)
    if len(errors) > MAX_PROBLEMS:
        errors[MAX_PROBLEMS:] = [Problem("", "config.more", n=len(errors) - MAX_PROBLEMS)]
    if errors:
        raise SchemaError(errors)
    return obj


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """The table in the TOML file at `path`, read as `what` ("config file"), or SchemaError
    with one line naming the file: unreadable, over `MAX_FILE_BYTES`, not UTF-8 (TOML is
    UTF-8 by definition), nested too deeply for the parser, or not valid TOML."""
    where = Problem("", f"config.what.{what.replace(' ', '_')}", path=path)
    try:
        with path.open("rb") as file:  # read at most the limit: /dev/zero is a "file" too
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise SchemaError([Problem("", "config.cannot_read", where=where,
                                   error=exc.strerror or exc)]) from exc
    if len(raw) > MAX_FILE_BYTES:
        raise SchemaError([Problem("", "config.too_large", where=where,
                                   kib=MAX_FILE_BYTES // 1024)])
    return parse_toml(raw, where)


def parse_toml(raw: bytes, where: str) -> dict[str, Any]:  # `where` may be a Problem
    """`raw` parsed as TOML, or SchemaError with one line starting with `where`."""
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise SchemaError([Problem("", "config.not_utf8", where=where,
                                   byte=f"{raw[exc.start]:#04x}", line=line)]) from exc
    except RecursionError as exc:
        raise SchemaError([Problem("", "config.too_deep", where=where)]) from exc
    except tomllib.TOMLDecodeError as exc:
        raise SchemaError([Problem("", "config.not_toml", where=where, error=exc)]) from exc


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Layer `over` onto `base`: tables merge key by key, anything else is replaced."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def to_plain(obj: Any) -> Any:
    """A dataclass tree as plain TOML values (tuples as lists, enums as values, None as "none")."""
    if obj is None:
        return NONE_WORDS[0]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {key: to_plain(getattr(obj, name) if entry is None else getattr(obj, name)[entry])
                for key, name, entry in toml_keys(type(obj))}
    if isinstance(obj, Mapping):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, tuple | list):
        return [to_plain(v) for v in obj]
    if isinstance(obj, enum.Enum):
        return obj.value
    return obj
