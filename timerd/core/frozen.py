"""Values no reader can change (issue 44 item 2): a dispatch's one status document
(`wire.read_only`), handed to every output, so that what one output writes cannot change
what a later one sends; and what every status shares, made once (the rule modules'
`display`, `core.status.displayed`). They encode as JSON and compare as the dicts and lists
they are; a copy (`{**document, "wall": ...}`, `dict(document)`, `copy.deepcopy`) is the
reader's own.
"""

from __future__ import annotations

import copy
from itertools import compress, repeat
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


#: What `read_only` copies: every other value of a JSON-able document is immutable.
_CONTAINERS = (dict, list)


def read_only(document: dict[str, Any]) -> ReadOnlyDict:
    """`document` (JSON-able) with every dict and list in it read-only, a part read-only
    already kept as it is: one pass over it.

    Made per dispatch, so the pass is C's: a container is copied whole (`dict`'s own copy),
    its containers found by `isinstance` mapped over its values, and only they are replaced,
    by their own read-only copies; no Python code runs per value (issue 44 item 8: the
    bytecode per dispatch, `bench/run --ab`)."""
    frozen = ReadOnlyDict(document)
    for key in compress(document, map(isinstance, document.values(), repeat(_CONTAINERS))):
        dict.__setitem__(frozen, key, _read_only(document[key]))
    return frozen


def _read_only(value: dict[str, Any] | list[Any]) -> ReadOnlyDict | ReadOnlyList:
    if isinstance(value, ReadOnlyDict | ReadOnlyList):
        return value
    if isinstance(value, dict):
        return read_only(value)
    frozen = ReadOnlyList(value)
    for index in compress(range(len(value)), map(isinstance, value, repeat(_CONTAINERS))):
        list.__setitem__(frozen, index, _read_only(value[index]))
    return frozen
