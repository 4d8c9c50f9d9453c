"""The web adapter in-process: results file, token check, command table, config, and how the
stream treats a browser that stops reading (it must never hold up the match loop)."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, cast

import aiohttp
import pytest

from tests.conftest import dispatch, play, wired
from timerd import config as config_mod
from timerd.adapters.results.format import recent_results
from timerd.adapters.web import adapter as web_module
from timerd.adapters.web.adapter import (
    EVENT_BACKLOG,
    StreamClient,
    WebServer,
    bearer_ok,
    command_table,
)
from timerd.adapters.web.server import WebSocket
from timerd.config import InUse, WebConfig, profiles
from timerd.config.schema import SchemaError
from timerd.core.effects import Told
from timerd.core.match import Match
from timerd.ports import ExtraCommand
from timerd.service import Service
from timerd.wire import EVENT_FORMAT, status_document


def test_results_file_lines_are_read_and_damaged_lines_skipped(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text('{"match": 1, "score": [5, 3]}\n\n[1, 2]\n{"match": 2\n{"match": 3}\n')
    with caplog.at_level(logging.WARNING):
        assert recent_results(path) == [{"match": 1, "score": [5, 3]}, {"match": 3}]
    assert "line 3" in caplog.text
    assert "line 4" in caplog.text
    assert recent_results(tmp_path / "none-yet.jsonl") == []



def test_results_api_gives_the_last_finished_matches_from_the_results_reader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`GET /api/results` reads through the results feature's reader (app.py wires
    `recent_results`), off the loop, at most the last RESULTS_SHOWN (a season's file stays
    one bounded reply)."""
    path = tmp_path / "results.jsonl"
    path.write_text("".join(f'{{"match_id": "{n}"}}\n' for n in range(5)))
    monkeypatch.setattr(web_module, "RESULTS_SHOWN", 3)

    async def results(**reader: Any) -> Any:
        service = Service(Match(profiles.load("ithf")))
        async with WebServer(WebConfig(host="127.0.0.1", port=0), service, **reader) as server, \
                aiohttp.ClientSession() as session, \
                session.get(f"{server.url}api/results") as reply:
            return await reply.json()

    async def main() -> tuple[Any, Any]:
        return await results(results=partial(recent_results, path)), await results()

    shown, off = asyncio.run(main())
    assert [r["match_id"] for r in shown] == ["2", "3", "4"]
    assert off == []  # results switched off


@pytest.mark.parametrize(("header", "ok"), [
    ("Bearer s3cret", True),
    ("bearer s3cret", True),
    (" Bearer s3cret ", True),
    ("Bearer s3cre", False),
    ("Bearer s3cret2", False),
    ("Bearer", False),
    ("", False),
    ("Basic s3cret", False),
    ("Bearer sécret", False),  # not ASCII: refused, not an error
])
def test_bearer_token_check(header: str, ok: bool) -> None:
    assert bearer_ok(header, "s3cret") is ok


def test_command_table_lists_match_and_adapter_commands() -> None:
    service = Service(Match(profiles.load("ithf")))
    service.extra_commands["mute"] = ExtraCommand(print, ("state",))
    service.extra_commands["note"] = ExtraCommand(print, ("text", "more..."))
    service.extra_commands["volume"] = ExtraCommand(print, ("level?",))
    table = {row["command"]: row for row in command_table(service)}
    assert table["pause"] == {"command": "pause", "args": [], "confirm": False}
    assert table["reset"]["confirm"] is True
    assert "penalty" not in table  # ITHF has no penalties (ISBHF's penalty box)
    assert table["mute"]["args"] == ["state"]
    assert table["note"]["args"] == ["text", "more..."]
    assert table["volume"]["args"] == ["level?"]


def test_web_config_defaults_and_errors() -> None:
    web = config_mod.load(None, []).web
    assert (web.enabled, web.host, web.port, web.token) == (True, "0.0.0.0", 8080, "")
    with pytest.raises(SchemaError) as err:
        config_mod.load(None, ["web.port=70000", 'web.token="two words"', "web.prot=1"])
    problems = "\n".join(err.value.problems)
    assert "web.prot: unknown key `prot`; did you mean `port`?" in problems
    with pytest.raises(SchemaError) as err:
        config_mod.load(None, ["web.port=70000", 'web.token="two words"'])
    problems = "\n".join(err.value.problems)
    assert "web.port = 70000" in problems
    assert "web.token: use printable ASCII" in problems


# -- a browser that stops reading -----------------------------------------------------------

HANDSHAKE = (b"GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
             b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
             b"Sec-WebSocket-Version: 13\r\n\r\n")


async def stalled_client(port: int) -> socket.socket:
    """A WebSocket client that opens the stream and then never reads (a frozen browser)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # fills after a few messages
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, ("127.0.0.1", port))
    await loop.sock_sendall(sock, HANDSHAKE)
    return sock


async def until(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """Wait for a condition on the server's side (its client set), which has no event to await."""
    async with asyncio.timeout(timeout_s):
        while not condition():  # noqa: ASYNC110
            await asyncio.sleep(0.01)


def port_of(server: WebServer) -> int:
    assert server.url is not None
    return int(server.url.rstrip("/").rsplit(":", 1)[1])


def test_a_stalled_browser_keeps_a_bounded_backlog_while_others_get_everything() -> None:
    big = "x" * 32_000  # 400 of these are far more than the socket buffers take

    async def main() -> None:
        service = Service(Match(profiles.load("ithf")))
        async with WebServer(WebConfig(host="127.0.0.1", port=0), service) as server:
            wired(server, service)
            stalled_sock = await stalled_client(port_of(server))
            await until(lambda: len(server.clients) == 1)
            (stalled,) = server.clients
            async with aiohttp.ClientSession() as session, \
                    session.ws_connect(f"{server.url}api/stream") as ws:
                await until(lambda: len(server.clients) == 2)
                status = service.status()
                for i in range(400):
                    # Returns at once, never awaits.
                    server.notify(dispatch(status, Told(f"{i} {big}")))
                    assert len(stalled.events) <= EVENT_BACKLOG
                    await asyncio.sleep(0)  # let the senders run, as the match loop does
                while True:  # the reading browser gets every event, in order, to the last
                    message = await ws.receive_json(timeout=10)
                    if message["type"] == "event" and message["event"]["message"] == f"399 {big}":
                        break
                assert stalled.dropped > 0
                assert len(stalled.events) <= EVENT_BACKLOG
                assert stalled.state is not None  # the newest state waits, older ones are gone
            stalled_sock.close()

    asyncio.run(main())


def test_a_browser_that_takes_nothing_is_disconnected(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        service = Service(Match(profiles.load("ithf")))
        # rate 0.02: the daemon's real-time limits (10 s send, 20 s ping) become 0.2 and 0.4 s.
        server = WebServer(WebConfig(host="127.0.0.1", port=0), service, rate=0.02)
        async with server:
            sock = await stalled_client(port_of(server))
            await until(lambda: len(server.clients) == 1)
            status = service.status()
            while server.clients:
                server.notify(dispatch(status, Told("y" * 32_000)))
                await asyncio.sleep(0.001)
            sock.close()

    with caplog.at_level(logging.WARNING):
        asyncio.run(main())
    assert "took no data" in caplog.text


def test_a_port_in_use_refuses_the_start() -> None:
    """A port another process (another timerd) listens on: this daemon refuses to start
    rather than run on without its web (issue 30 item 3)."""
    async def main() -> str:
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            service = Service(Match(profiles.load("ithf")))
            with pytest.raises(InUse) as refused:
                async with WebServer(WebConfig(host="127.0.0.1", port=port), service):
                    pass
            return str(refused.value)

    assert asyncio.run(main()).startswith("127.0.0.1 port ")


def test_a_port_that_cannot_be_bound_otherwise_leaves_the_daemon_running_without_the_web(
        caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        service = Service(Match(profiles.load("ithf")))
        # An address of no interface here (TEST-NET-1): nothing is sent, bind just fails.
        async with WebServer(WebConfig(host="192.0.2.1", port=0), service) as server:
            assert server.url is None
            server.notify(dispatch(service.status(), Told("nobody listens")))

    with caplog.at_level(logging.ERROR):
        asyncio.run(main())
    assert "web scoreboard off: cannot listen" in caplog.text


def test_stream_event_records_match_the_event_stream() -> None:
    """The stream's events carry the event stream's records (timerd.adapters.events)."""
    async def main() -> list[dict[str, object]]:
        service = Service(Match(profiles.load("ithf")))
        async with WebServer(WebConfig(host="127.0.0.1", port=0), service) as server:
            wired(server, service)
            async with aiohttp.ClientSession() as session, \
                    session.ws_connect(f"{server.url}api/stream") as ws:
                assert (await ws.receive_json(timeout=5))["type"] == "state"
                service.execute(service.parse("start"))
                messages = [await ws.receive_json(timeout=5) for _ in range(3)]
        return messages

    messages = asyncio.run(main())
    assert [m["type"] for m in messages] == ["event", "event", "state"]
    first = messages[0]["event"]
    assert isinstance(first, dict)
    assert {k: v for k, v in first.items() if k != "t"} == {
        "type": "state", "state": "pre_signal", "previous": "idle", "period": 1,
        "remaining_s": 300.0, "format": EVENT_FORMAT}
    assert json.loads(json.dumps(messages[2]))["state"]["phase"] == "pre_signal"


def test_in_the_last_ten_seconds_a_browser_gets_a_state_each_whole_second() -> None:
    """The page runs the tenths itself (docs/api.md): a state push each whole second of the
    last 10 s, not each tenth, even where the service ticks them for the LED digits
    (issue 16: CPU per match minute). Fails on the old code: a push per tenth."""
    shown: list[float] = []

    def setup(service: Service) -> None:
        class Browser(StreamClient):
            def push_state(self, message: bytes) -> None:
                state = json.loads(message)["state"]
                if state["phase"] == "running":
                    shown.append(state["remaining_s"])

            def flush(self) -> None:
                pass  # no socket: only what is pushed is looked at

        server = WebServer(WebConfig(host="127.0.0.1", port=0), service)
        server.clients.add(Browser(cast(WebSocket, None)))
        wired(server, service)
        assert service.tenths  # the service ticks them

    play("ithf", [(0, "start")], until=330, setup=setup)
    last_ten = [left for left in shown if left < 10]
    assert last_ten == pytest.approx([9.0 - i for i in range(9)], abs=1e-6)
    assert len(shown) == 300  # 5:00 (the start) down to 0:01


def test_a_shown_second_with_a_browser_on_the_stream_costs_the_loop_one_turn() -> None:
    """Issue 16 (CPU per match minute): each wake-up of the loop costs a cold turn's work on a
    Pi. The service acts in its timer's callback (no task woken through a future) and the
    stream sends in the same turn (`after_dispatch`), so a minute of play with a browser on
    the stream is 60 turns (one per shown second; the 4:00 signal falls on one), not two or
    three times that (main: timer, task, then the stream's send)."""
    turns: list[float] = []
    sent: list[float] = []

    def setup(service: Service) -> None:
        class Browser(StreamClient):
            def flush(self) -> None:
                if self.state is not None:
                    sent.append(service.now())
                    self.state = None

        server = WebServer(WebConfig(host="127.0.0.1", port=0), service)
        server.clients.add(Browser(cast(WebSocket, None)))
        wired(server, service)
        selector = service.loop._selector  # type: ignore[attr-defined]
        select = selector.select

        def counted(timeout: float | None = None) -> Any:
            turns.append(service.now())
            return select(timeout)

        selector.select = counted

    play("ithf", [(0, "start")], until=90, setup=setup)
    in_play = [t for t in turns if 22 <= t < 82]  # 4:58 to 3:58 left, the 4:00 signal within
    assert len(in_play) == 60
    assert len([t for t in sent if 22 <= t < 82]) == 60  # and the browser got each second


def test_each_dispatch_encodes_its_state_once_and_every_browser_gets_those_bytes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One status document per dispatch, encoded once: the same bytes for every browser, also
    when a dispatch has several effects (the pause: its phase change and its chirp)."""
    encoded: list[bytes] = []
    encode = web_module.json_bytes

    def counting(value: object) -> bytes:
        encoded.append(encode(value))
        return encoded[-1]

    monkeypatch.setattr(web_module, "json_bytes", counting)
    pushes: list[tuple[StreamClient, bytes, dict[str, object]]] = []

    def setup(service: Service) -> None:
        class Browser(StreamClient):
            def push_state(self, message: bytes) -> None:
                # The status at the push, made of the match itself: the service refuses it
                # during a hand-out (issue 44 item 2).
                now = service.now()
                pushes.append((self, message, status_document(service.match.status(now), [])))
                super().push_state(message)

            def flush(self) -> None:
                pass  # no socket: only what is pushed is looked at

        server = WebServer(WebConfig(host="127.0.0.1", port=0), service)
        server.clients.update(Browser(cast(WebSocket, None)) for _ in range(2))
        wired(server, service)

    play("ithf", [(0, "start"), (100, "pause"), (105, "resume")], until=330, setup=setup)
    by_document: dict[int, list[tuple[StreamClient, bytes, dict[str, object]]]] = {}
    for browser, message, document in pushes:  # each message is kept: its id is its own
        by_document.setdefault(id(message), []).append((browser, message, document))
    assert len(by_document) > 300  # every shown second, and tenths in the last 10 s
    for pushed in by_document.values():
        (first, message, document), (second, same, _) = pushed  # one push to each browser
        assert first is not second
        assert same is message  # the same bytes object: encoded once for both
        assert json.loads(message) == {"type": "state", "state": json.loads(json.dumps(document)),
                                       "rate": 1.0}
    states = [m for m in encoded if json.loads(m)["type"] == "state"]
    assert len(states) == len(by_document)
