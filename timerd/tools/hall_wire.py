"""What the tournament desk takes from the broker, checked before it is used (issue 36, 34).

Anything on the hall's broker may be there: a table of another version, a buggy client, a
forged message kept retained for days. The desk reads a table's `state`, `results` and
command replies only through `problem`, which checks the type of every field the desk (and
the hall board) reads against the shapes below: a message that fails is not used, and the
table's row says "state unreadable" and why, instead of a traceback on every run. Fields the
desk does not read are not checked; a field that is absent is taken as absent (an older
table), never as a wrong type.

`clean` is the other half: text that came over the wire is shown on a terminal (`hall
status`, `hall results`) only without control and bidi characters (no escape sequences, no
right-to-left override that reorders a line) and cut to a bounded length.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: The longest text from the wire the desk's terminal output shows (names are at most 40).
TEXT_MAX = 64


@dataclass(frozen=True)
class Obj:
    """A JSON object whose named fields have the given shapes (`"*"`: every member);
    `null`: the object itself may be null; `required`: fields that must be there."""

    fields: Mapping[str, Shape]
    null: bool = False
    required: tuple[str, ...] = ()


#: A field's shape: "number", "integer", "text", "flag" (a JSON boolean), with "?" when null
#: is allowed too; or an `Obj`.
Shape = str | Obj

_CLOCK = Obj({"synced": "flag?", "offset_ms": "number?", "detail": "text?", "source": "text?"},
             null=True)
#: The fields of a table's `state` (wire.status_document plus the link's `hall` and `wall`)
#: that the desk and the board read.
STATE = Obj({
    "phase": "text", "wall": "number", "start_in_s": "number?", "remaining_s": "number",
    "clock_face": Obj({"kind": "text", "value_s": "number", "text": "text"}, null=True),
    "score": Obj({"*": "number"}, null=True), "teams": Obj({"*": "text?"}, null=True),
    "version": "text?", "round": "text?",
    "hall": Obj({"round": "text?", "clock": _CLOCK,
                 "result": Obj({"id": "text", "round": "text?", "acked": "flag"}, null=True)},
                null=True)})
#: A result message on `tables/<table>/results` (timerd.adapters.hall.protocol) and the
#: results line inside it that the export reads (docs/scoring.md).
RESULT = Obj({
    "id": "text", "table": "text", "round": "text?", "wall": "number?", "revision": "integer?",
    "result": Obj({
        "teams": Obj({"*": "text?"}, null=True), "score": Obj({"*": "number"}, null=True),
        "round": "text?", "how": "text?", "winner": "text?", "overtime_s": "number?",
        "played_s": "number?", "started": "text?", "finished": "text?", "profile": "text?",
        "match_id": "text?", "revision": "integer?"})}, required=("id", "table"))
#: A table's answer to a desk command on its `events` topic (protocol.reply_record).
REPLY = Obj({"id": "text", "ok": "flag?", "detail": "text?", "error": "text?",
             "code": "text?"})


def _fits(value: Any, kind: str) -> bool:
    if kind == "text":  # and one that can be written out: no lone surrogate ("\ud800")
        return (isinstance(value, str) and value.isascii()) or _encodable(value)
    if kind == "flag":
        return isinstance(value, bool)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if kind == "integer":
        return isinstance(value, int) or (math.isfinite(value) and value.is_integer())
    return math.isfinite(value)


def _encodable(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def problem(value: Any, shape: Obj, where: str = "") -> str | None:
    """What is wrong with `value` as `shape` ("wall: a number expected, got 'yesterday'"),
    or None when every field the desk reads has its type."""
    if value is None and shape.null:
        return None
    if not isinstance(value, Mapping):
        return f"{where or 'the message'}: an object expected, got {_short(value)}"
    for name, field in shape.fields.items():
        members = value.items() if name == "*" else [(name, value.get(name, ...))]
        for key, member in members:
            path = f"{where}.{key}" if where else str(key)
            if member is ... and name in shape.required:
                return f"{path}: missing"
            if member is ...:
                continue  # absent: an older table does not send it
            if isinstance(field, Obj):
                found = problem(member, field, path)
                if found:
                    return found
            elif not (member is None and field.endswith("?")) \
                    and not _fits(member, field.rstrip("?")):
                return f"{path}: {_A[field.rstrip('?')]} expected, got {_short(member)}"
    return None


_A = {"text": "a text", "number": "a finite number", "integer": "a whole number",
      "flag": "true or false"}


def _short(value: Any) -> str:
    return clean(repr(value), 24)


def clean(text: Any, limit: int = TEXT_MAX) -> str:
    """`text` as a terminal may show it: every character that is not printable (control
    characters such as ESC, bidi overrides, line separators, lone surrogates) left out, and
    at most `limit` characters ("…" marks a cut)."""
    shown = "".join(c for c in str(text) if c.isprintable())
    return shown if len(shown) <= limit else shown[:limit - 1] + "…"
