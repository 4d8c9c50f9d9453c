"""Build frozen dataclasses from TOML tables, collecting every error with its key path.

Config files and rule profiles are both plain TOML. Rather than failing on the first bad key,
`build` walks the whole table and reports every problem at once, each with its dotted key path
and, for an unknown key, the closest known key ("unknown key `buzer`; did you mean `buzzer`?"),
so that a volunteer fixes a config in one pass. A bad file never yields a half-built object.

A dataclass may define `problems(self) -> list[str]` for checks across fields; each message
starts with the key it is about ("reset_pin = 17: ...") and is reported under the dataclass's
own key path ("gpio.reset_pin = 17: ...").
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T")

#: In TOML there is no null: an optional value (a pin that is not fitted) is written "none".
NONE_WORDS = ("none", "off", "")


class SchemaError(ValueError):
    """Every problem found in one table, one per line."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _suggest(key: str, known: typing.Iterable[str]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f"; did you mean `{close[0]}`?" if close else ""


def _convert(tp: Any, value: Any, path: str, errors: list[str]) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if type(None) in args and isinstance(value, str) and value.lower() in NONE_WORDS:
            return None
        return _convert(inner[0], value, path, errors)
    if origin is typing.Literal:
        if value not in args:
            errors.append(f"{path}: {value!r} is not one of {', '.join(map(repr, args))}")
        return value
    if origin is tuple:
        if not isinstance(value, list):
            errors.append(f"{path}: expected a list, got {type(value).__name__}")
            return ()
        item = args[0]
        return tuple(_convert(item, v, f"{path}[{i}]", errors) for i, v in enumerate(value))
    if origin in (dict, Mapping):
        if not isinstance(value, Mapping):
            errors.append(f"{path}: expected a table, got {type(value).__name__}")
            return {}
        key_tp, val_tp = args
        out = {}
        for k, v in value.items():
            key = _convert(key_tp, k, _join(path, k), errors)
            out[key] = _convert(val_tp, v, _join(path, k), errors)
        return types.MappingProxyType(out)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, Mapping):
            errors.append(f"{path}: expected a table, got {type(value).__name__}")
            return None
        return _build(tp, value, path, errors)  # type: ignore[arg-type]
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            names = [str(m.value) for m in tp]
            errors.append(f"{path}: {value!r} is not one of {', '.join(names)}"
                          + _suggest(str(value), names))
            return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            errors.append(f"{path}: expected a number, got {value!r}")
            return 0.0
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            errors.append(f"{path}: expected a whole number, got {value!r}")
            return 0
        return value
    if tp in (bool, str):
        if not isinstance(value, tp):
            errors.append(f"{path}: expected {tp.__name__}, got {value!r}")
        return value
    raise TypeError(f"schema cannot convert to {tp!r}")  # a bug in a dataclass, not in the TOML


def _build(cls: type[T], data: Mapping[str, Any], path: str, errors: list[str]) -> T:
    already = len(errors)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for key in data:
        if key not in fields:
            errors.append(f"{_join(path, key)}: unknown key `{key}`{_suggest(key, fields)}")
    kwargs: dict[str, Any] = {}
    for name, field in fields.items():
        if name in data:
            kwargs[name] = _convert(hints[name], data[name], _join(path, name), errors)
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            errors.append(f"{_join(path, name)}: missing")
    try:
        obj = cls(**kwargs)
    except (TypeError, ValueError) as exc:  # only reachable after errors were already listed
        errors.append(f"{path or 'top level'}: {exc}")
        return None  # type: ignore[return-value]
    check = getattr(obj, "problems", None)
    if check is not None and len(errors) == already:
        errors.extend(f"{path}.{p}" if path else p for p in check())
    return obj


def durations(**seconds: float) -> list[str]:
    """The `problems()` lines for durations that must be longer than 0 s, by key."""
    return [f"{key} = {value:g}: must be longer than 0 s"
            for key, value in seconds.items() if value <= 0]


def build(cls: type[T], data: Mapping[str, Any], path: str = "") -> T:
    """Return `cls` built from `data`, or raise SchemaError listing every problem."""
    errors: list[str] = []
    obj = _build(cls, data, path, errors)
    if errors:
        raise SchemaError(errors)
    return obj


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
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, tuple | list):
        return [to_plain(v) for v in obj]
    if isinstance(obj, enum.Enum):
        return obj.value
    return obj
