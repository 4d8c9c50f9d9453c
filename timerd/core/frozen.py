"""Values no reader can change (issue 44 item 2): the parts of a dispatch's one status
document (`ports.Dispatch.document`), handed to every output, so that what one output writes
cannot change what a later one sends; and what every status shares, made once (the rule
modules' `display`, `core.status.displayed`). They encode as JSON and compare as the dicts and lists
they are; a copy (`{**document, "wall": ...}`, `dict(document)`, `copy.deepcopy`) is the
reader's own.
"""

from __future__ import annotations

import copy
from typing import Any, NoReturn


class ReadOnlyDict(dict[str, Any]):
    """A dict no reader can change: a dispatch's one status document, handed to every output
    (`ports.Dispatch.document`), so that what one output writes cannot change what a later
    one sends (issue 44 item 2). It encodes as JSON and compares as the dict it is; a copy
    (`{**document, "wall": ...}`, `dict(document)`, `copy.deepcopy`) is the reader's own."""

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("a dispatch's status document is read-only: add to a copy of it")

    __setitem__ = __delitem__ = __ior__ = _refuse
    setdefault = update = pop = popitem = clear = _refuse

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {key: copy.deepcopy(value, memo) for key, value in self.items()}


class ReadOnlyList(list[Any]):
    """A list no reader can change: a list inside a read-only status document (its goals,
    its penalties), as `ReadOnlyDict`."""

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("a dispatch's status document is read-only: add to a copy of it")

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = remove = pop = clear = sort = reverse = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(value, memo) for value in self]


#: The types of the values `read_only` keeps as they are: JSON's scalars and the parts that
#: are read-only already. A value of another type is frozen (a dict, a list) or, being neither
#: (a StrEnum's member, a tuple), its type joins these: one set lookup per value, in C.
_KEPT: set[type] = {str, int, float, bool, type(None), ReadOnlyDict, ReadOnlyList}


def read_only(document: dict[str, Any]) -> ReadOnlyDict:
    """`document` (JSON-able) with every dict and list in it read-only, a part read-only
    already kept as it is: a copy, its values frozen (`freeze_values`)."""
    frozen = ReadOnlyDict(document)
    freeze_values(frozen)
    return frozen


def freeze_values(values: dict[str, Any]) -> dict[str, Any]:
    """`values`, each dict and list among them (to its depth) replaced by its read-only copy,
    in place; a part read-only already is kept as it is.

    Made per status and per dispatch (a rule module's and an adapter's parts), so the pass is
    C's where every value is read-only as made: the values' types are looked up in `_KEPT`
    (`issuperset` over `map(type, ...)`); only where one is not kept does Python code look at
    each value. `isinstance` would look up `__class__` on every value that is not a
    container: a third of the instructions of a dispatch's freeze (issue 44 item 8,
    `bench/run --ab --instructions`)."""
    if not _KEPT.issuperset(map(type, values.values())):
        for key, value in list(values.items()):
            if type(value) not in _KEPT:
                dict.__setitem__(values, key, _read_only(value))
    return values


def _read_only(value: Any) -> Any:
    """`value` (of a type not in `_KEPT`) read-only: a dict's or a list's read-only copy,
    else `value` itself, its type kept from now on."""
    if isinstance(value, dict):
        return read_only(value)
    if isinstance(value, list):
        frozen = ReadOnlyList(value)
        for index, item in enumerate(value):
            if type(item) not in _KEPT:
                list.__setitem__(frozen, index, _read_only(item))
        return frozen
    _KEPT.add(type(value))
    return value
