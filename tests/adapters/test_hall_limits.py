"""Hall mode's limits on what comes from the broker (issue 13 item 7, docs/service.md "Limits
and failure modes"): a command payload has a size and a depth limit checked before it is
parsed, a retained command is ignored, and each kind of bad message is logged at most once per
30 s, so no message, however big, deep or often repeated, drops the link or floods the log."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from tests.adapters.test_hall import hall_config, service
from tests.conftest import wired
from tests.hall_rig import Broker, Observer
from timerd.adapters.hall.link import MAX_COMMAND_BYTES, HallLink, Outbox

#: A real mosquitto on loopback and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e

DEEP = b"[" * 100_000
#: Under the size limit, but deeper than the interpreter's recursion limit (1000).
DEEP_UNDER_THE_SIZE = b"[" * 3000
TABLE_CMD = "timerd/hall/tables/t1/cmd"


def test_a_payload_over_the_size_or_depth_limit_is_refused_without_raising(
        caplog: pytest.LogCaptureFixture) -> None:
    """Fails on main: `[` x 3000 raised RecursionError out of on_message (and so out of the
    link's receive loop, which dropped the session)."""
    caplog.set_level(logging.INFO, "timerd.hall")

    big = b'{"command": "pause", "pad": "' + b" " * MAX_COMMAND_BYTES + b'"}'  # valid JSON
    payloads = (big, DEEP, DEEP_UNDER_THE_SIZE, b"[" * 40 + b"]" * 40)  # the last: 40 deep

    async def main() -> None:
        for payload in payloads:  # a link each, so each line is logged, none counted
            svc = service()
            link = HallLink(hall_config(), svc, Outbox(Path("/nonexistent")))
            link.on_message(TABLE_CMD, payload)
            assert svc.match.phase.value == "idle"
            assert list(link._events) == []

    asyncio.run(main())
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4
    assert f"over the limit of {MAX_COMMAND_BYTES} bytes" in lines[0]
    assert f"over the limit of {MAX_COMMAND_BYTES} bytes" in lines[1]
    assert "nested deeper than 32 levels" in lines[2]
    assert "nested deeper than 32 levels" in lines[3]


def test_a_flood_of_bad_messages_is_one_log_line_per_kind(
        caplog: pytest.LogCaptureFixture) -> None:
    """Fails on main: a line per message (issue 13 item 10, for MQTT)."""
    caplog.set_level(logging.INFO, "timerd.hall")

    async def main() -> None:
        link = HallLink(hall_config(), service(), Outbox(Path("/nonexistent")))
        for _ in range(500):
            link.on_message(TABLE_CMD, b"{not json")
            link.on_message(TABLE_CMD, b'{"command": "self_destruct"}')
            link.on_message(TABLE_CMD, b'{"command": "pause"}')  # refused: nothing running
        assert len(link._events) == 500  # every command is still answered

    asyncio.run(main())
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3, lines
    assert "malformed JSON" in lines[0]
    assert "unknown command 'self_destruct'" in lines[1]
    assert lines[2].startswith("pause refused: ")


def test_a_retained_poison_message_does_not_make_the_link_flap(
        mosquitto: Broker, caplog: pytest.LogCaptureFixture) -> None:
    """A retained `[` x 100,000 and a deep one under the size limit, on a real broker: the link
    stays on its first session, says so once per kind, and still takes the next command.

    Fails on main: the RecursionError dropped the session, and the retained message, delivered
    again on every reconnect, dropped each one after it (the link flapped)."""
    caplog.set_level(logging.INFO, "timerd.hall")
    observer = Observer(mosquitto.port)
    observer.client.publish(TABLE_CMD, DEEP, qos=1, retain=True).wait_for_publish(5)

    def replied(n: int) -> list[dict[str, object]] | None:
        replies = [e for e in observer.events("t1") if e["type"] == "reply"]
        return replies if len(replies) >= n else None

    async def main() -> bool:
        svc = service()
        async with wired(HallLink(hall_config(mosquitto), svc,
                            Outbox(mosquitto.directory / "ob"))) as link:
            await asyncio.to_thread(observer.wait_for, lambda ms: any(
                m.topic.endswith("t1/status") and m.payload == b"online" for m in ms),
                10, "online")
            # Live (not flagged retained to a subscriber already there), so it is parsed.
            observer.publish(TABLE_CMD, DEEP_UNDER_THE_SIZE)
            observer.publish(TABLE_CMD, {"command": "pause", "id": "after-the-poison"})
            await asyncio.to_thread(observer.wait_for, lambda _: replied(1), 10, "a reply")
            observer.publish(TABLE_CMD, {"command": "pause", "id": "second"})
            replies = await asyncio.to_thread(observer.wait_for, lambda _: replied(2), 10,
                                              "the second reply")
            assert [r["id"] for r in replies] == ["after-the-poison", "second"]
            return link.connected

    try:
        connected = asyncio.run(main())
    finally:
        observer.client.publish(TABLE_CMD, b"", qos=1, retain=True).wait_for_publish(5)
        observer.close()
    assert connected
    lines = [r.getMessage() for r in caplog.records]
    assert sum(line.startswith("connected to ") for line in lines) == 1, lines
    assert sum("ignored a retained message" in line for line in lines) == 1, lines
    assert sum("nested deeper than 32 levels" in line for line in lines) == 1, lines
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
