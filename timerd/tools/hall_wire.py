"""What the tournament desk takes from the broker, checked before it is used (issue 36, 34).

Anything on the hall's broker may be there: a table of another version, a buggy client, a
forged message kept retained for days. The desk reads a table's `state`, `results` and
command replies only through `problem`, which checks the type of every field the desk (and
the hall board) reads against the shapes below: a message that fails is not used, and the
table's row says "state unreadable" and why, instead of a traceback on every run. Fields the
desk does not read are not checked; a field that is absent is taken as absent (an older
table), never as a wrong type. Every value is bounded too (issue 41 item 3): a number within
`MAX_NUMBER` (no 1e308, no integer of 400 digits), a text within `TEXT_LIMIT` characters (a
name or a round within the match's own `NAME_MAX`), a score and a revision whole numbers in
their range; what is out of bounds sets the message aside with its reason, said in the desk's
language (`hall_text`; a field's name is the wire's, the same in every language).

`clean` is the other half: text that came over the wire is shown on a terminal (`hall
status`, `hall results`) only without control and bidi characters (no escape sequences, no
right-to-left override that reorders a line) and cut to a bounded length.
"""

from __future__ import annotations

import math
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from timerd.adapters.hall.protocol import MAX_REVISION
from timerd.core.record import NAME_MAX
from timerd.tools.hall_text import text as said

#: The longest text from the wire the desk's terminal output shows (names are at most 40).
TEXT_MAX = 64
#: The longest text the desk takes from the wire at all (a reply's detail, a clock's).
TEXT_LIMIT = 1000
#: The largest number the desk takes: a wall time before the year 2286, any duration.
MAX_NUMBER = 1e10
#: The most goals a side's score may have (a forfeit is 5:0; 9999 is no match).
MAX_GOALS = 9999


@dataclass(frozen=True)
class Obj:
    """A JSON object whose named fields have the given shapes (`"*"`: every member);
    `null`: the object itself may be null; `required`: fields that must be there."""

    fields: Mapping[str, Shape]
    null: bool = False
    required: tuple[str, ...] = ()


#: A field's shape: "number", "text", "name" (a side's or a round's), "flag" (a JSON
#: boolean), "goals" (a score), "revision", "proof" (`protocol.proof_follows`'s hex), with
#: "?" when null is allowed too; or an `Obj`.
Shape = str | Obj

_CLOCK = Obj({"synced": "flag?", "offset_ms": "number?", "detail": "text?", "source": "text?"},
             null=True)
#: The fields of a table's `state` (wire.status_document plus the link's `hall` and `wall`)
#: that the desk and the board read.
STATE = Obj({
    "phase": "text", "wall": "number", "start_in_s": "number?", "remaining_s": "number",
    "clock_face": Obj({"kind": "text", "value_s": "number", "text": "text"}, null=True),
    "score": Obj({"*": "goals"}, null=True), "teams": Obj({"*": "name?"}, null=True),
    "version": "text?", "round": "name?",
    "hall": Obj({"round": "name?", "clock": _CLOCK,
                 "result": Obj({"id": "text", "round": "name?", "acked": "flag"}, null=True)},
                null=True)})
#: A result message on `tables/<table>/results` (timerd.adapters.hall.protocol) and the
#: results line inside it that the export reads (docs/scoring.md).
#: A withdrawal (`withdrawn`, issue 41 item 2) has `result` null.
RESULT = Obj({
    "id": "text", "table": "text", "round": "name?", "wall": "number?",
    "revision": "revision?", "proof": "proof?", "withdrawn": "text?",
    "result": Obj({
        "teams": Obj({"*": "name?"}, null=True), "score": Obj({"*": "goals"}, null=True),
        "round": "name?", "how": "text?", "winner": "text?", "overtime_s": "number?",
        "played_s": "number?", "started": "text?", "finished": "text?", "profile": "text?",
        "match_id": "text?", "revision": "revision?"}, null=True)}, required=("id", "table"))
#: A table's answer to a desk command on its `events` topic (protocol.reply_record).
REPLY = Obj({"id": "text", "ok": "flag?", "detail": "text?", "error": "text?",
             "code": "text?"})


#: The bounds of each kind of text (characters) and number.
_TEXT_LIMITS = {"text": TEXT_LIMIT, "name": NAME_MAX, "proof": 64}
_RANGES = {"number": (-MAX_NUMBER, MAX_NUMBER), "goals": (0, MAX_GOALS),
           "revision": (0, MAX_REVISION)}


def _fault(value: Any, kind: str) -> str | None:
    """What is wrong with `value` as a `kind` ("a text expected", "out of bounds: ..."),
    or None when nothing is."""
    if kind == "flag":
        return None if isinstance(value, bool) else said("hall.wire.flag")
    if kind in _TEXT_LIMITS:  # and one that can be written out: no lone surrogate ("\ud800")
        if not (isinstance(value, str) and (value.isascii() or _encodable(value))):
            return said("hall.wire.text")
        if kind == "proof" and not all(c in string.hexdigits for c in value):
            return said("hall.wire.hex")
        return None if len(value) <= _TEXT_LIMITS[kind] else \
            said("hall.wire.too_long", n=_TEXT_LIMITS[kind])
    whole = kind != "number"
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            whole and isinstance(value, float) and not value.is_integer()):
        return said("hall.wire.whole" if whole else "hall.wire.finite")
    low, high = _RANGES[kind]
    # Compared, never converted: 10**400 is no float, and NaN is within no range.
    if low <= value <= high:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return said("hall.wire.finite")
    return said("hall.wire.range", low=f"{low:g}", high=f"{high:g}")


def _encodable(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def problem(value: Any, shape: Obj, where: str = "") -> str | None:
    """What is wrong with `value` as `shape` ("wall: a finite number expected, got
    'yesterday'", "revision: out of bounds: 0 to 100, got 1e+308"), or None when every
    field the desk reads has its type and is within its bounds."""
    if value is None and shape.null:
        return None
    if not isinstance(value, Mapping):
        return said("hall.wire.object", path=where or said("hall.wire.the_message"),
                    value=_short(value))
    for name, field in shape.fields.items():
        members = value.items() if name == "*" else [(name, value.get(name, ...))]
        for key, member in members:
            path = f"{where}.{key}" if where else str(key)
            if member is ... and name in shape.required:
                return said("hall.wire.missing", path=path)
            if member is ...:
                continue  # absent: an older table does not send it
            if isinstance(field, Obj):
                found = problem(member, field, path)
                if found:
                    return found
            elif not (member is None and field.endswith("?")) \
                    and (fault := _fault(member, field.rstrip("?"))):
                return said("hall.wire.got", path=path, fault=fault, value=_short(member))
    return None


def _short(value: Any) -> str:
    return clean(repr(value), 24)


def clean(text: Any, limit: int = TEXT_MAX) -> str:
    """`text` as a terminal may show it: every character that is not printable (control
    characters such as ESC, bidi overrides, line separators, lone surrogates) left out, and
    at most `limit` characters ("…" marks a cut)."""
    shown = "".join(c for c in str(text) if c.isprintable())
    return shown if len(shown) <= limit else shown[:limit - 1] + "…"
