"""A crowd cannot take the scoreboard or the desk (issue 43 item 4), on real loopback sockets
from many addresses (127.0.0.2, ...): 40 addresses held 224 WebSockets and a new scoreboard
got 503. At the cap a newcomer takes the place of a stream of the address that holds the
most, so the streams are shared evenly among addresses, and the desk (its token offered as
the stream's subprotocol, as web/timerd.js does) is never refused or closed for a crowd."""

from __future__ import annotations

import asyncio
import base64
import os
from collections import Counter
from typing import Any

from tests.adapters.test_web_flood import TOKEN, command_status, frames_from
from tests.adapters.test_web_limits import host_port, serve
from timerd.adapters.web.adapter import BEARER_PROTOCOL, WebServer
from timerd.adapters.web.server import MAKE_ROOM
from timerd.config import WebConfig

OK, BUSY = b"HTTP/1.1 101 Switching Protocols", b"HTTP/1.1 503 Service Unavailable"
#: 256 connections a listener (the default): 224 WebSockets, the eighth left kept for requests.
CONFIG = WebConfig(host="127.0.0.1", port=0, token=TOKEN)
Stream = tuple[asyncio.StreamReader, asyncio.StreamWriter]


def desk_protocols(token: str) -> str:
    encoded = base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")
    return f"timerd, {BEARER_PROTOCOL}{encoded}"


async def stream(url: str | None, host: str, protocols: str | None = None) -> tuple[
        bytes, bytes, Stream]:
    """A WebSocket handshake from `host`: the answer's status line, its head, the stream."""
    reader, writer = await asyncio.open_connection(*host_port(url), local_addr=(host, 0))
    key = base64.b64encode(os.urandom(16)).decode()
    offered = "" if protocols is None else f"Sec-WebSocket-Protocol: {protocols}\r\n"
    writer.write(f"GET /api/stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                 f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n{offered}"
                 "Sec-WebSocket-Version: 13\r\n\r\n".encode())
    head = await reader.readuntil(b"\r\n\r\n")
    return head.split(b"\r\n", 1)[0], head, (reader, writer)


async def crowd(server: WebServer, addresses: int = 40) -> list[tuple[str, Stream]]:
    """Every address opens WebSockets, a round at a time, until each has been refused; the
    streams it got, by address."""
    held = []
    for _ in range(8):
        for n in range(addresses):
            address = f"127.0.1.{n + 1}"
            status, _, opened = await stream(server.url, address)
            if status == OK:
                held.append((address, opened))
            else:
                opened[1].close()
    return held


async def closed_for_room(streams: list[Stream]) -> list[bool]:
    """Which of `streams` the server closed to make room (a close frame, 1013)."""
    async def closed(reader: asyncio.StreamReader) -> bool:
        try:
            data = await asyncio.wait_for(reader.read(), 0.5)
        except TimeoutError:
            return False
        return any(opcode == 0x8 and int.from_bytes(payload[:2], "big") == MAKE_ROOM
                   for opcode, payload in frames_from(data))

    return list(await asyncio.gather(*(closed(reader) for reader, _ in streams)))


def test_a_crowd_of_addresses_shares_the_streams_and_a_new_scoreboard_gets_one() -> None:
    """Fails on the old code: 40 addresses held the 224 streams and a new scoreboard got
    503. Now each holds 5 or 6, and the newcomer takes the place of one of a six's."""
    async def body(server: WebServer) -> dict[str, Any]:
        held = await crowd(server)
        gone = await closed_for_room([opened for _, opened in held])
        kept = [(address, opened) for (address, opened), out in zip(held, gone, strict=True)
                if not out]
        status, _, scoreboard = await stream(server.url, "127.0.2.1")  # a new one
        made_room = await closed_for_room([opened for _, opened in kept])
        out = {"new": status, "before": Counter(address for address, _ in kept),
               "made_room_by": [address for (address, _), out in zip(kept, made_room,
                                                                      strict=True) if out],
               "command": await command_status(server.url)}
        for _, (_, writer) in [*held, ("", scoreboard)]:
            writer.close()
        return out

    out = serve(CONFIG, body, run=lambda main: asyncio.run(main()))
    assert out["new"] == OK
    before = out["before"]
    assert sum(before.values()) == 224
    assert sorted(set(before.values())) == [5, 6]  # 224 among 40, evenly
    assert len(out["made_room_by"]) == 1
    assert before[out["made_room_by"][0]] == 6
    assert out["command"] == 200  # the eighth kept for requests: the desk's commands


def test_the_desk_is_never_refused_or_closed_for_a_crowd() -> None:
    """Fails on the old code: with the crowd at the cap the desk's stream got 503. Now it
    takes a crowd stream's place (closed with 1013, Try Again Later), the crowd that comes
    after never takes it back, and a wrong token is just a spectator."""
    async def body(server: WebServer) -> dict[str, Any]:
        held = await crowd(server)
        status, head, desk = await stream(server.url, "127.0.1.1", desk_protocols(TOKEN))
        made_room = await closed_for_room([opened for _, opened in held])
        held += await crowd(server)  # the crowd again: the desk stays
        guess, _, opened = await stream(server.url, "127.0.1.2", desk_protocols("x" * 20))
        desk_closed = await closed_for_room([desk])
        for _, writer in [opened, desk, *(s for _, s in held)]:
            writer.close()
        return {"desk": status, "head": head, "made_room": made_room.count(True),
                "desk_closed": desk_closed, "guess": guess}

    out = serve(CONFIG, body, run=lambda main: asyncio.run(main()))
    assert out["desk"] == OK
    assert b"sec-websocket-protocol: timerd\r\n" in out["head"].lower()
    assert out["made_room"] == 1
    assert out["desk_closed"] == [False]
    assert out["guess"] == BUSY  # a wrong token: a spectator, and the spectators share evenly
