"""The status document (issue 14, invariant 5): built once per dispatch by the service, the
core's keys as the core gave them, the adapters' keys beside, and a `format` version."""

import logging

import pytest

from timerd.config import profiles
from timerd.core.effects import Refused
from timerd.core.match import Match
from timerd.wire import (
    EVENT_FORMAT,
    PAGE_FORMAT,
    REPLY_FORMAT,
    STATUS_FORMAT,
    commands_document,
    error_reply,
    event_record,
    i18n_document,
    ok_reply,
    refused_reply,
    status_document,
)


def _status():
    match = Match(profiles.load("ithf"))
    match.handle(match.parse("start"), 0.0)
    match.poll(20.0)
    match.handle(match.parse("goal", "home"), 30.0)
    return match, match.status(40.0)


def test_the_document_has_the_core_keys_the_extras_and_its_format() -> None:
    _, status = _status()
    doc = status_document(status, [{"muted": True}])
    assert doc["format"] == STATUS_FORMAT
    assert doc["muted"] is True
    assert doc["score"] == {"home": 1, "away": 0}
    assert doc["clock_face"]["text"] == "4:40"


def test_an_adapter_cannot_change_a_core_key(caplog: pytest.LogCaptureFixture) -> None:
    _, status = _status()
    with caplog.at_level(logging.ERROR, "timerd.wire"):
        doc = status_document(status, [{"score": {"home": 9, "away": 0}, "phase": "finished",
                                        "format": 7, "extra": 1}])
    assert (doc["score"], doc["phase"], doc["format"], doc["extra"]) == (
        {"home": 1, "away": 0}, "running", STATUS_FORMAT, 1)
    assert "format, phase, score" in caplog.text


def test_an_adapter_cannot_fill_in_what_the_core_left_unknown(
        caplog: pytest.LogCaptureFixture) -> None:
    """Issue 32: a key the core has is the core's, also where it is null (no match id yet,
    no result, no scheduled start) or where an adapter only adds to it (wall times in the
    goal entries: they have their own key). Fails on the old code, which let an adapter fill
    in whatever the core left None, and rewrite the goals."""
    _, status = _status()
    core = status.to_dict()
    assert core["match_id"] is None
    assert core["result"] is None
    assert core["start_in_s"] is None
    goals = [g | {"wall_time": "2026-12-03T20:00:00Z"} for g in core["goals"]]
    with caplog.at_level(logging.ERROR, "timerd.wire"):
        doc = status_document(status, [{"match_id": "20261203T200000Z-abcdef"},
                                       {"result": {"how": "regular"}, "start_in_s": 5.0},
                                       {"goals": goals, "goal_wall_times": ["x"]}])
    assert (doc["match_id"], doc["result"], doc["start_in_s"]) == (None, None, None)
    assert doc["goals"] == core["goals"]
    assert doc["goal_wall_times"] == ["x"]  # an adapter's own key beside them
    assert "match_id" in caplog.text
    assert "result, start_in_s" in caplog.text
    assert "status keys goals of an adapter" in caplog.text


def test_every_event_record_carries_its_format() -> None:
    match = Match(profiles.load("ithf"))
    effects = match.handle(match.parse("start"), 0.0)
    status = match.status(0.0)
    records = [event_record(e, status) for e in effects]
    assert records
    assert [r and r["format"] for r in records] == [EVENT_FORMAT] * len(records)


def test_every_reply_and_page_document_carries_its_format() -> None:
    """Invariant 6: the replies (socket, POST /api/command) and the page's documents are
    built here, each with its version (they were dicts written where they were sent)."""
    replies = [ok_reply({"phase": "idle"}), error_reply("args must be a list of strings"),
               refused_reply(Refused("in_idle", "goal"))]
    assert [r["format"] for r in replies] == [REPLY_FORMAT] * 3
    assert replies[2]["code"] == "refused.in_idle"
    pages = [commands_document([], control=False), i18n_document(None, {}, {}, {})]
    assert [p["format"] for p in pages] == [PAGE_FORMAT] * 2
