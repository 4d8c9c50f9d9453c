"""The web scoreboard and the HTTP/WebSocket API, served by the daemon itself (aiohttp).

A hall watches the clock on a TV (the Pi's HDMI port, a browser in kiosk mode), on phones and
on tournament screens; tools read the state and send commands. Everything is served from the
package (`timerd/web/`), nothing from the network. docs/api.md describes every endpoint.

- `GET /`, `/control`, `/static/...`: the scoreboard page, the control page, their assets.
- `GET /api/state`: `service.status_dict()`, the state `timerctl status --json` prints.
- `GET /api/results`, `GET /api/commands`: finished matches; the commands the profile takes.
- `POST /api/command`: `{"command": ..., "args": [...]}` with `Authorization: Bearer TOKEN`,
  through `service.command()` like every control surface. Without a configured token HTTP
  control is off (403); a missing or wrong token is a 401; a body that is not JSON, an unknown
  command, bad arguments or a command the phase refuses are a 400 with the reason, and never
  reach the match.
- `GET /api/stream`: a WebSocket that pushes the full state on connect and after every change,
  and the event records of the event stream (`timerd.adapters.events`).

The server is a service output. `notify` only queues: each browser has its own sender task with
a bounded backlog, where a newer state replaces an unsent one and the oldest events are dropped,
so a slow or dead browser costs memory for a few messages and never stalls the match loop. A
browser that cannot take a message within `SEND_TIMEOUT_S` is disconnected (it reconnects).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import inspect
import json
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any

from aiohttp import WSCloseCode, web

from timerd.adapters.events import event_record
from timerd.config import WebConfig
from timerd.core.effects import Effect
from timerd.core.match import Status
from timerd.service import Service

log = logging.getLogger("timerd.web")

#: The page files (scoreboard, control page, script, style), shipped as package data.
ASSETS = Path(str(resources.files("timerd") / "web"))
#: Largest request body taken (like the control socket's longest line); larger gets a 413.
MAX_BODY = 64 * 1024
#: Events kept for a browser that is behind; older ones are dropped (the state never is).
EVENT_BACKLOG = 64
#: Real seconds a browser may take to accept one message before it is disconnected.
SEND_TIMEOUT_S = 10.0
#: Real seconds between WebSocket pings: finds browsers that vanished without closing.
HEARTBEAT_S = 20.0
#: Commands that end or throw away a match: the control page asks before sending them.
CONFIRM = frozenset({"reset"})


def read_results(path: Path | None) -> list[dict[str, Any]]:
    """The finished matches in the results file (JSON lines, one object per match), in order.

    No path or no file yet is an empty list. A line that is not a JSON object is logged and
    skipped, so one damaged line (a power cut mid-write) does not hide the other results.
    """
    if path is None:
        return []
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict):
            out.append(record)
        else:
            log.warning("results file %s line %d is not a JSON object; skipped", path, number)
    return out


def command_table(service: Service) -> list[dict[str, Any]]:
    """Every command the control surfaces take now, with its argument names, for the page."""
    table: list[dict[str, Any]] = [{"command": name, "args": list(usage)}
             for name, (_, usage) in service.match.commands().items()]
    table += [{"command": name, "args": _arg_names(fn)}
              for name, fn in service.extra_commands.items()]
    for row in table:
        row["confirm"] = row["command"] in CONFIRM
    return table


def _arg_names(fn: Callable[..., Any]) -> list[str]:
    """An adapter command's arguments as the page shows them: `x`, optional `x?`, `x...`."""
    names = []
    for param in inspect.signature(fn).parameters.values():
        if param.kind is param.VAR_POSITIONAL:
            names.append(f"{param.name}...")
        elif param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            names.append(param.name + ("?" if param.default is not param.empty else ""))
    return names


def bearer_ok(header: str, token: str) -> bool:
    """Does an `Authorization` header carry `token` (compared in constant time)?"""
    scheme, _, given = header.strip().partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode(), token.encode())


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"ok": False, "error": message}, status=status, headers=headers)


@dataclass(eq=False)
class StreamClient:
    """One browser on the stream: the newest unsent state and a bounded backlog of events."""

    ws: web.WebSocketResponse
    state: str | None = None
    events: deque[str] = field(default_factory=lambda: deque(maxlen=EVENT_BACKLOG))
    dropped: int = 0
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    sender: asyncio.Task[None] | None = None

    def push_state(self, message: str) -> None:
        self.state = message  # an unsent older state is stale: replaced, never queued
        self.ready.set()

    def push_event(self, message: str) -> None:
        if len(self.events) == self.events.maxlen:
            self.dropped += 1
            if self.dropped == 1:
                log.warning("a stream client is behind; dropping its oldest events")
        self.events.append(message)
        self.ready.set()

    def next_message(self) -> str | None:
        """Events first, in order, then the state they led to."""
        if self.events:
            return self.events.popleft()
        message, self.state = self.state, None
        return message


class WebServer:
    """The aiohttp server as an async context manager, and a service output for the stream.

    `rate` is how many daemon seconds pass per real second (the `--speed` factor): the page
    uses it to run its clock between pushes, and real-time limits are scaled by it. `t0` is
    the daemon's start on the loop clock, so stream events carry the event stream's `t`.
    If the port cannot be bound the error is logged and the daemon runs on without the web
    (the buzzer matters more than the scoreboard).
    """

    def __init__(self, config: WebConfig, service: Service, *, rate: float = 1.0,
                 t0: float = 0.0, results_path: Path | None = None) -> None:
        self.config = config
        self.service = service
        self.rate = rate
        self.t0 = t0
        self.results_path = results_path
        self.url: str | None = None  # where it listens, once started
        self.clients: set[StreamClient] = set()  # the browsers on the stream now
        self._state_pending = False
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_get("/", self._page("index.html"))
        app.router.add_get("/control", self._page("control.html"))
        app.router.add_static("/static/", ASSETS)
        app.router.add_get("/api/state", self._state)
        app.router.add_get("/api/results", self._results)
        app.router.add_get("/api/commands", self._commands)
        app.router.add_post("/api/command", self._command)
        app.router.add_get("/api/stream", self._stream)
        return app

    async def __aenter__(self) -> WebServer:
        runner = web.AppRunner(self.app(), access_log=None,
                               shutdown_timeout=2.0 * self.rate)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.config.host, self.config.port).start()
        except OSError as exc:
            log.error("web scoreboard off: cannot listen on %s port %d: %s",
                      self.config.host, self.config.port, exc.strerror or exc)
            await runner.cleanup()
            return self
        self._runner = runner
        host, port = runner.addresses[0][:2]
        self.url = f"http://{host}:{port}/"
        log.info("web scoreboard at %s (control %s)", self.url,
                 "on" if self.config.token else "off: no web.token")
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        for client in list(self.clients):
            if client.sender is not None:
                client.sender.cancel()
        # Browsers see "going away" and reconnect to the next daemon at once.
        closing = [c.ws.close(code=WSCloseCode.GOING_AWAY, message=b"timerd stopping")
                   for c in self.clients]
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(1.0 * self.rate):
                await asyncio.gather(*closing, return_exceptions=True)
        if self._runner is not None:
            await self._runner.cleanup()

    # -- service output --------------------------------------------------------------------

    def notify(self, effect: Effect, status: Status) -> None:
        """Queue the effect's event record now, and one state push after this dispatch."""
        if not self.clients:
            return
        record = event_record(effect, status)
        if record is not None:
            t = round(self.service.now() - self.t0, 6)
            message = json.dumps({"type": "event", "event": {"t": t, **record}})
            for client in self.clients:
                client.push_event(message)
        if not self._state_pending:
            # Several effects of one command (phase change, signal) make one state push.
            self._state_pending = True
            self.service.loop.call_soon(self._push_state)

    def _push_state(self) -> None:
        self._state_pending = False
        message = self._state_message()
        for client in self.clients:
            client.push_state(message)

    def _state_message(self) -> str:
        return _dumps({"type": "state", "state": self.service.status_dict(), "rate": self.rate})

    # -- handlers --------------------------------------------------------------------------

    @staticmethod
    def _page(name: str) -> Callable[[web.Request], Any]:
        async def handler(request: web.Request) -> web.FileResponse:
            return web.FileResponse(ASSETS / name, headers={"Cache-Control": "no-cache"})
        return handler

    async def _state(self, request: web.Request) -> web.Response:
        return web.json_response(self.service.status_dict(), dumps=_dumps)

    async def _results(self, request: web.Request) -> web.Response:
        results = await asyncio.to_thread(read_results, self.results_path)  # a file on an SD card
        return web.json_response(results)

    async def _commands(self, request: web.Request) -> web.Response:
        return web.json_response({"commands": command_table(self.service),
                                  "control": bool(self.config.token)})

    async def _command(self, request: web.Request) -> web.Response:
        if not self.config.token:
            return _error(403, "HTTP control is off: set web.token in the config")
        if not bearer_ok(request.headers.get("Authorization", ""), self.config.token):
            log.info("web command refused: missing or wrong token from %s", request.remote)
            return _error(401, "missing or wrong token (Authorization: Bearer TOKEN)",
                          {"WWW-Authenticate": 'Bearer realm="timerd"'})
        body = await request.read()
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError) as exc:  # RecursionError: "[[[[..." nested deep
            return _error(400, f"malformed JSON: {exc}")
        reply = self.service.command(payload)
        return web.json_response(reply, status=200 if reply["ok"] else 400, dumps=_dumps)

    async def _stream(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(heartbeat=HEARTBEAT_S * self.rate, max_msg_size=4096)
        await ws.prepare(request)
        client = StreamClient(ws)
        client.push_state(self._state_message())
        client.sender = asyncio.create_task(self._send(client, request), name="web-stream")
        self.clients.add(client)
        try:
            async for _ in ws:  # one-way stream: reading only serves pings and the close
                pass
        finally:
            self.clients.discard(client)
            client.sender.cancel()
        return ws

    async def _send(self, client: StreamClient, request: web.Request) -> None:
        try:
            while True:
                await client.ready.wait()
                client.ready.clear()
                while (message := client.next_message()) is not None:
                    async with asyncio.timeout(SEND_TIMEOUT_S * self.rate):
                        await client.ws.send_str(message)
        except TimeoutError:
            log.warning("stream client %s took no data for %.0f s; disconnected",
                        request.remote, SEND_TIMEOUT_S)
            if request.transport is not None:
                request.transport.abort()
        except ConnectionError:
            pass  # the browser went away; the handler cleans up


def _dumps(value: Any) -> str:
    # Status values are JSON types and StrEnums; `str` covers an adapter's odd extra value.
    return json.dumps(value, default=str)
