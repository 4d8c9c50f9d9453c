"""The status document (issue 14, invariant 5): built once per dispatch by the service, the
core's keys as the core gave them, the adapters' keys beside, and a `format` version."""

import logging

import pytest

from timerd.config import profiles
from timerd.core.effects import Notice
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


def test_an_adapter_may_fill_in_what_the_core_left_unknown() -> None:
    # The core knows no wall time: the results file gives each goal the one it had.
    _, status = _status()
    goals = [g | {"wall_time": "2026-12-03T20:00:00Z"} for g in status.to_dict()["goals"]]
    assert status_document(status, [{"goals": goals}])["goals"] == goals
    changed = [g | {"counted": False} for g in goals]
    assert status_document(status, [{"goals": changed}])["goals"] == status.to_dict()["goals"]


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
               refused_reply(Notice("refused.in_idle", {"command": "goal"}))]
    assert [r["format"] for r in replies] == [REPLY_FORMAT] * 3
    assert replies[2]["code"] == "refused.in_idle"
    pages = [commands_document([], control=False), i18n_document(None, {}, {}, {})]
    assert [p["format"] for p in pages] == [PAGE_FORMAT] * 2
