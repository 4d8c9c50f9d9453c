"""The web's JSON (`timerd.adapters.web.adapter.json_bytes`): orjson writes every state push,
event and reply (issue 44 item 8: a push in a ninth of the standard library's instructions),
and what it writes is the JSON the standard library wrote, compact; a value orjson refuses,
and every value where orjson is not installed, the standard library writes."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from timerd.adapters.web import adapter as web_module
from timerd.adapters.web.adapter import WebServer, json_bytes
from timerd.config import WebConfig, profiles
from timerd.core.match import Match
from timerd.service import Service
from timerd.wire import status_document


def _stdlib(value: Any) -> bytes:
    """What the web wrote before orjson, compact: the standard library's encoder."""
    return json.dumps(value, default=str, separators=(",", ":")).encode()


def busy_document() -> dict[str, Any]:
    """A ball hockey match's status document with most of its parts in use: names with
    letters outside ASCII, goals with scorers, penalties, a timeout, the rule modules'
    `display`, the floats of a running clock."""
    match = Match(profiles.load("isbhf"))
    for at, command in [(0.0, ("teams", "Žiga Kovač", "Ľubomír Ďurovič")), (0.5, ("start",)),
                        (61.3, ("goal", "home", "17")), (125.9, ("penalty", "away", "minor", "8")),
                        (130.0, ("stop",)), (131.0, ("timeout", "home")),
                        (190.7, ("goal", "away", "4"))]:
        match.handle(match.parse(*command), at)
    return {"type": "state", "state": status_document(match.status(201.123456789), []),
            "rate": 1.0}


def test_a_state_push_says_what_the_standard_library_said() -> None:
    document = busy_document()
    state = document["state"]
    assert state["teams"]["home"] == "Žiga Kovač"
    assert len(state["goals"]) == 2
    assert state["penalties"]
    assert state["timeouts"]
    assert state["display"]
    written = json_bytes(document)
    assert json.loads(written) == json.loads(_stdlib(document))
    # Compact, as the standard library is told to write it where orjson is not installed.
    assert written.startswith(b'{"type":"state","state":{"profile":"isbhf",')
    assert "Žiga Kovač".encode() in written  # UTF-8, as the frame and the reply say


@pytest.mark.parametrize("value", [
    {"big": 10**30},  # past 64 bits
    {"name": "\ud800"},  # a lone surrogate, which UTF-8 cannot carry
    {1: "a key that is not a string"},
    {"deep": json.loads("[" * 300 + "]" * 300)},  # nested past orjson's 254
])
def test_a_value_orjson_refuses_is_written_by_the_standard_library(value: Any) -> None:
    written = json_bytes(value)
    assert written == _stdlib(value)
    assert json.loads(written) == json.loads(_stdlib(value))


@dataclasses.dataclass
class Odd:
    """An adapter's value that is no JSON type."""

    n: int


def test_a_value_of_no_json_type_is_written_as_its_text() -> None:
    moment = datetime.datetime(2026, 12, 7, 14, 0, 5)
    value = {"path": Path("/run/timerd"), "odd": Odd(3), "when": moment, "set": {1}}
    assert json.loads(json_bytes(value)) == {"path": "/run/timerd", "odd": "Odd(n=3)",
                                             "when": "2026-12-07 14:00:05", "set": "{1}"}
    assert json_bytes(value) == _stdlib(value)


def test_without_orjson_the_standard_library_writes_and_the_start_says_so(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(web_module, "orjson", None)
    document = busy_document()
    assert json_bytes(document) == _stdlib(document)

    async def start() -> None:
        service = Service(Match(profiles.load("ithf")))
        async with WebServer(WebConfig(host="127.0.0.1", port=0), service):
            pass

    with caplog.at_level(logging.WARNING):
        asyncio.run(start())
    assert "orjson is not installed" in caplog.text
