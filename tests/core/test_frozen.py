"""The read-only status document (issue 44 items 2 and 8): `read_only` freezes every dict
and list to the document's depth, whatever it met before, and keeps the parts read-only as
made; every part of a playing match's status is read-only as made, so a dispatch's freeze is
a type lookup per value (`bench/run --ab A B --instructions`)."""

from __future__ import annotations

import collections
import enum
import json
from typing import Any

import pytest

from tests.conftest import play
from timerd.core.frozen import ReadOnlyDict, ReadOnlyList, read_only
from timerd.core.rules.passive import Passive
from timerd.service import Service


class Colour(enum.StrEnum):
    RED = "red"


def writes(value: dict[str, Any] | list[Any]) -> list[str]:
    """Every dict and list in `value`, to its depth, that a write does not refuse."""
    open_ = []
    try:
        value[0 if isinstance(value, list) else "x"] = 1  # type: ignore[index]
        open_.append(repr(value))
    except TypeError:
        pass
    for item in value.values() if isinstance(value, dict) else value:
        if isinstance(item, dict | list):
            open_ += writes(item)
    return open_


def test_every_dict_and_list_is_read_only_to_its_depth_whatever_came_before() -> None:
    """A scalar type `read_only` met first (a StrEnum's member, a tuple, which it keeps as
    they are from then on) never lets a dict or a list through: a dict subclass, a list in a
    list, a dict in a read-only part's copy are frozen as a plain dict is. Values keep their
    types (True, 1 and 1.0 stay themselves) and a part read-only already is kept, not copied."""
    kept = ReadOnlyDict(home=1)
    for first in (Colour.RED, (1, 2), 7):
        document = {"first": first, "flags": [True, 1, 1.0, {"n": [[{"deep": 1}]]}],
                    "ordered": collections.OrderedDict(a={"b": []}),
                    "counts": collections.Counter(a=1), "kept": kept, "none": None}
        frozen = read_only(document)
        assert writes(frozen) == []
        assert frozen["kept"] is kept
        assert frozen["first"] is first
        assert [type(v) for v in frozen["flags"][:3]] == [bool, int, float]
        assert json.dumps(frozen) == json.dumps(document)
        assert frozen == document


def test_a_frozen_copy_never_shares_a_container_with_the_document() -> None:
    """What is written to the document handed in after its freeze never reaches the frozen
    copy: a changed nested value is never served stale, nor changed under a reader."""
    document: dict[str, Any] = {"score": {"home": 0}, "goals": [{"side": "home"}]}
    frozen = read_only(document)
    document["score"]["home"] = 1
    document["goals"][0]["side"] = "away"
    assert frozen == {"score": {"home": 0}, "goals": [{"side": "home"}]}
    assert read_only(document)["score"] == {"home": 1}


KEPT_AS_MADE = (str, int, float, bool, type(None), ReadOnlyDict, ReadOnlyList, enum.Enum)


@pytest.mark.parametrize(("profile", "script"), [
    ("ithf", [(0, "start"), (30, "goal home"), (40, "pause"), (50, "resume")]),
    ("isbhf-playoff", [(0, "start"), (20, "penalty away minor 8"), (30, "stop"),
                       (31, "timeout home"), (100, "linechange"), (101, "goalie-change home"),
                       (130, "start")]),
])
def test_a_playing_match_s_status_is_read_only_as_made(profile: str,
                                                       script: list[tuple[float, str]]) -> None:
    """Every part of the status a playing match shows each second (the core's, each rule
    module's, while its penalty, timeout, line change or goalie change runs) is read-only
    where it is made, so a dispatch's document keeps it as it is: no copy per dispatch
    (issue 44 item 8). Fails when a module hands a plain dict or list."""
    parts: dict[str, set[type]] = collections.defaultdict(set)

    def setup(service: Service) -> None:
        service.outputs.append(type("Parts", (), {"notify": staticmethod(
            lambda dispatch: [parts[k].add(type(v))
                              for k, v in dispatch.status.to_dict().items()])})())

    play(profile, script, until=160, setup=setup)
    open_ = {key: types for key, types in parts.items()
             if not all(issubclass(t, KEPT_AS_MADE) for t in types)}
    assert open_ == {}
    shown = {key for key, types in parts.items() if types & {ReadOnlyDict, ReadOnlyList}}
    assert {"score", "goals", "teams", "clock_face", "display"} <= shown
    if profile == "isbhf-playoff":
        assert {"penalties", "timeouts", "line_change", "goalie_change"} <= shown


def test_a_rule_module_s_and_an_adapter_s_plain_parts_are_read_only_in_the_document(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What a rule module or an adapter hands as a plain dict or list (the core's own parts
    are read-only as made) is frozen where the status and the document are composed, so the
    document every output gets is read-only to its depth, its values as they were handed.
    Fails when `Dispatch.document` keeps a part as it came."""
    documents: list[Any] = []
    monkeypatch.setattr(Passive, "status", lambda self, now: {"passive": {"home": [now]}})

    def setup(service: Service) -> None:
        service.status_extras.append(lambda: {"mine": {"a": [1, {"b": True}]}, "n": 1.0})
        service.outputs.append(type("Documents", (), {"notify": staticmethod(
            lambda dispatch: documents.append(dispatch.document))})())

    play("ithf", [(0, "start")], until=5, setup=setup)
    document = documents[-1]
    assert writes(document) == []
    assert document["mine"] == {"a": [1, {"b": True}]}
    assert type(document["n"]) is float
    assert document["passive"]["home"][0] > 0
