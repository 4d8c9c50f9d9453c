"""A small HTTP/1.1 and WebSocket server on asyncio streams, for the web adapter.

The parsing is done by two pure-Python libraries of python-hyper: h11 (HTTP/1.1: requests,
bodies, keep-alive, pipelining; a malformed or ambiguous request is an error there, not a
guess) and wsproto (the WebSocket handshake and frames). This module does the I/O, the
routing by method and path, and the limits every input surface has (docs/service.md):

- at most `max_connections` connections per listener; a new one over the cap takes the place
  of the connection idle longest (between requests), or gets a 503 when all are busy;
- a whole request (its headers and its body) within `idle_timeout_s` of connecting or of the
  previous response, else the connection is closed without an answer (slowloris);
- request headers at most `MAX_HEADERS` bytes (431), a body at most `max_body` (413), no
  request with both Content-Length and Transfer-Encoding (400: request smuggling); every
  error answer closes the connection;
- a response must be taken within `idle_timeout_s`; WebSocket messages from the peer at most
  `max_ws_message` bytes (closed with 1009), pings every `heartbeat_s` (a peer that answers
  nothing for two of them is gone);
- one host cannot take the server (issue 36): WebSockets at most WS_PER_PEER per address and
  `max_connections` less a reserve in all (the rest is kept for requests: the control API,
  a page), else a 503; and a crowd cannot take it either (issue 43): at that cap a new
  WebSocket takes the place of an unauthenticated one of the address that holds the most,
  when that address holds at least two more than the newcomer's (so the streams are shared
  evenly among addresses), and always when the newcomer is authenticated (`trusted`: the
  desk): an authenticated one is never closed or refused for unauthenticated ones. The stream
  is one-way, so a peer's frames (pings included) are taken at FRAMES_PER_S with a burst of
  FRAME_BURST, pings answered at most PONGS_PER_S: a peer over that is closed (1008) and
  refused WebSockets for FLOOD_LOCKOUT_S. Its frames are parsed lazily, one read at a time,
  so a flood costs the loop at most FRAME_BURST frames' parsing before the close;
  `bench/run`'s stream-flood phase measures what it costs the signals.

Why not aiohttp (until issue 16): importing it cost the daemon 12.6 MB of its 46 MB peak RSS
and 0.2-0.28 s of its start (it loads its HTTP client and builds SSL contexts), measured with
every adapter on; h11 and wsproto cost some 1 MB and 25 ms (docs/BENCHMARKS.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import h11
from wsproto import ConnectionType, WSConnection
from wsproto.connection import ConnectionState
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Ping,
    TextMessage,
)
from wsproto.frame_protocol import CloseReason
from wsproto.utilities import RemoteProtocolError as WebSocketRefused

from timerd.limits import PeerBuckets, RateLimitedLog, TokenBucket, TokenGuard, idle_longest

#: Largest request line and headers taken (h11 answers more with 431).
MAX_HEADERS = 16 * 1024
#: Bytes read from a socket at a time.
CHUNK = 16 * 1024
#: Bytes waiting to be sent to a WebSocket peer above which its pings go unanswered.
PONGS_BUFFERED = 64 * 1024
#: The answer to a connection over the cap when every connection is busy.
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 5\r\n"
        b"Connection: close\r\n\r\n")
#: The reason phrases of the statuses this server and its handlers answer.
REASONS = {101: b"Switching Protocols", 200: b"OK", 304: b"Not Modified",
           400: b"Bad Request", 401: b"Unauthorized", 403: b"Forbidden", 404: b"Not Found",
           405: b"Method Not Allowed", 413: b"Request Entity Too Large",
           429: b"Too Many Requests", 431: b"Request Header Fields Too Large",
           500: b"Internal Server Error", 501: b"Not Implemented",
           503: b"Service Unavailable"}
#: WebSockets at once from one address (a hall's TV, a few phones of one household), each of
#: unauthenticated and authenticated ones.
WS_PER_PEER = 8
#: The WebSocket close code for a stream closed to make room for another (RFC 6455 registry:
#: Try Again Later); the page reconnects by itself.
MAKE_ROOM = 1013
#: The subprotocol the stream is served under, when the page offers it (a page that offers
#: any must be answered one); beside it the desk offers its credentials (adapter.py).
STREAM_PROTOCOL = "timerd"
#: The share of each listener's connections never taken by WebSockets (at least one): room
#: for requests (the control API, a page), whatever the streams hold.
WS_RESERVE = 1 / 8
#: Frames a second a WebSocket peer may send (the stream is one-way: a browser sends only
#: pongs and a close), after a burst of FRAME_BURST; more, and it is closed.
FRAMES_PER_S = 4.0
FRAME_BURST = 16
#: Pings a second answered (a burst of PONG_BURST); the rest go unanswered.
PONGS_PER_S = 1.0
PONG_BURST = 4
#: Seconds a peer closed for a flood of frames is refused WebSockets (503).
FLOOD_LOCKOUT_S = 30.0
#: The WebSocket close code for a peer that broke the frame rate (RFC 6455: policy).
POLICY_VIOLATION = 1008
#: New connections a second an address may open while it is refused WebSockets for a flood
#: (FLOOD_LOCKOUT_S), after a burst of CONNECT_BURST: room for a page and the control API
#: from a household behind the same address. More are closed as they are accepted, before
#: anything is read: a flooder reconnecting in a loop costs the match loop an accept, not a
#: parse and an answer. Other addresses are not limited here (WS_PER_PEER, the cap).
CONNECTS_PER_S = 10.0
CONNECT_BURST = 40
#: Connections taken off the listening socket in one turn of the loop (asyncio's accept
#: batch is its `backlog`): a storm of connects is served in short turns, between which the
#: match's timers and presses run.
ACCEPT_BATCH = 8
_PATH = re.compile(r"^(?:https?://[^/?#]*)?(/[^?#]*)(?:\?([^#]*))?")


class BodyTooLarge(Exception):
    """The request's body is over the server's `max_body`: a 413, then the connection closes."""


class _TooSlow(Exception):
    """The request did not arrive within the idle timeout: the connection is closed."""


@dataclass
class Response:
    """An answer: a status, its body and its headers (Content-Length is added)."""

    status: int
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Upgrade:
    """A handler's answer that takes the request as a WebSocket: `handler(ws)` runs while it
    is open. A request that is not a valid WebSocket handshake gets a 400 instead."""

    handler: Callable[[WebSocket], Awaitable[None]]


Answer = Response | Upgrade
Handler = Callable[["Request"], Awaitable[Answer]]
#: Makes an error answer from a status and a sentence (the adapter's JSON error reply).
ErrorPage = Callable[[int, str], Response]


@dataclass(eq=False)
class Request:
    """One request: its method, path (without the query), query and headers (names in lower
    case, repeated ones joined by ", "), the peer's address, and its body on `read()`."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    peer: str
    _connection: _Connection
    _h11: h11.Request
    _deadline: float

    async def read(self) -> bytes:
        """The body, at most the server's `max_body` bytes (else BodyTooLarge)."""
        limit = self._connection.server.max_body
        if int(self.headers.get("content-length", "0") or 0) > limit:
            raise BodyTooLarge
        chunks, size = [], 0
        while True:
            event = await self._connection.next_event(self._deadline)
            if isinstance(event, h11.Data):
                size += len(event.data)
                if size > limit:
                    raise BodyTooLarge
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                return b"".join(chunks)
            else:  # the peer closed in the middle of the body
                raise ConnectionResetError("closed before the whole body")


class Router:
    """Handlers by method and path, and by path prefix (static files); HEAD runs GET's
    handler without sending its body. 404 for an unknown path, 405 for a wrong method."""

    def __init__(self, error: ErrorPage) -> None:
        self.error = error
        self.routes: dict[str, dict[str, Handler]] = {}
        self.prefixes: list[tuple[str, Handler]] = []

    def add(self, method: str, path: str, handler: Handler) -> None:
        self.routes.setdefault(path, {})[method] = handler

    def add_prefix(self, prefix: str, handler: Handler) -> None:
        """GET (and HEAD) of every path under `prefix`."""
        self.prefixes.append((prefix, handler))

    async def __call__(self, request: Request) -> Answer:
        methods = self.routes.get(request.path)
        if methods is None:
            methods = next(({"GET": handler} for prefix, handler in self.prefixes
                            if request.path.startswith(prefix)), None)
        if methods is None:
            return self.error(404, "not found")
        method = "GET" if request.method == "HEAD" else request.method
        handler = methods.get(method)
        if handler is None:
            allowed = sorted({*methods, *(["HEAD"] if "GET" in methods else [])})
            answer = self.error(405, f"method {request.method} not allowed")
            answer.headers.append(("Allow", ", ".join(allowed)))
            return answer
        return await handler(request)


class HttpServer:
    """One listener: its connections (at most `max_connections`) and their requests, each
    answered by `app`. `rate` is daemon seconds per real second: real-time limits scale by it.
    Errors the peer caused are logged once per 30 s each through `log`, with a count.
    `client` names the peer of a request (its address, or the one a trusted proxy gives);
    `trusted` says whether a request is authenticated (the adapter's one test of it)."""

    def __init__(self, app: Handler, *, error: ErrorPage, log: RateLimitedLog,
                 max_connections: int, idle_timeout_s: float, max_body: int,
                 max_ws_message: int, heartbeat_s: float, rate: float = 1.0,
                 client: Callable[[str, dict[str, str]], str] | None = None,
                 trusted: Callable[[Request], bool] = lambda request: False) -> None:
        self.app = app
        self.error = error
        self.report = log
        self.max_connections = max_connections
        self.idle_timeout_s = idle_timeout_s
        self.max_body = max_body
        self.max_ws_message = max_ws_message
        self.heartbeat_s = heartbeat_s
        self.rate = rate
        self.client = client or (lambda peer, headers: peer)
        self.trusted = trusted
        self.max_websockets = max(1, max_connections - max(1, int(max_connections * WS_RESERVE)))
        #: The open WebSockets, oldest first: each one's client and whether it is trusted.
        self.streams: dict[_Connection, tuple[str, bool]] = {}
        self.flooders = TokenGuard(self.real_time, max_failures=1, lockout_s=FLOOD_LOCKOUT_S)
        #: The open connections, oldest first.
        self.connections: dict[_Connection, None] = {}
        self._tasks: set[asyncio.Task[None]] = set()  # every connection's, also a dropped one's
        #: Each address's new connections (CONNECTS_PER_S).
        self._connects = PeerBuckets(CONNECTS_PER_S, CONNECT_BURST)
        self._listener: asyncio.Server | None = None

    def real_time(self) -> float:
        """Real seconds, on the loop's clock (which runs `rate` times faster in a test)."""
        return asyncio.get_running_loop().time() / self.rate

    def take_websocket(self, connection: _Connection, client: str, trusted: bool) -> str | None:
        """Count a new WebSocket of `client` (`trusted`: authenticated) on `connection`,
        making room for it at the cap (`_room_for`); None, or why it is refused (a 503)."""
        if self.flooders.locked_for(client):
            return "refused for a while after a flood of frames"
        mine = sum(held == (client, trusted) for held in self.streams.values())
        if mine >= WS_PER_PEER:
            return f"at most {WS_PER_PEER} WebSockets from one address"
        if len(self.streams) >= self.max_websockets:
            victim = self._room_for(trusted, mine)
            if victim is None:
                return f"at most {self.max_websockets} WebSockets"
            self.report.warning("ws-room", "web: at the cap of %d WebSockets; closed one of "
                                "%s to make room for %s", self.max_websockets,
                                self.streams[victim][0],
                                "an authenticated client" if trusted else "another address")
            self.release_websocket(victim)
            victim.make_room()
        self.streams[connection] = (client, trusted)
        return None

    def _room_for(self, trusted: bool, mine: int) -> _Connection | None:
        """The stream a newcomer that holds `mine` takes the place of: the newest
        unauthenticated one of the address that holds the most of them, if that address
        holds at least two more than the newcomer (an authenticated newcomer: any more);
        never an authenticated one. None: the newcomer is refused."""
        held: dict[str, list[_Connection]] = {}
        for connection, (client, authenticated) in self.streams.items():
            if not authenticated:
                held.setdefault(client, []).append(connection)
        most = max(held.values(), key=len, default=[])
        if not most or (not trusted and len(most) < mine + 2):
            return None
        return most[-1]

    def release_websocket(self, connection: _Connection) -> None:
        self.streams.pop(connection, None)

    async def listen(self, host: str, port: int) -> tuple[str, int]:
        """Start listening (OSError if the port cannot be bound); the bound host and port."""
        self._listener = await asyncio.start_server(self._accept, host, port,
                                                    reuse_address=True, limit=CHUNK,
                                                    backlog=ACCEPT_BATCH)
        bound_host, bound_port = self._listener.sockets[0].getsockname()[:2]
        return bound_host, bound_port

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A new connection (called as it is made, before any other runs): served, or in
        place of the idlest one at the cap, or answered 503 when every one is busy. One from
        an address over its connection rate is closed at once, unread and unanswered."""
        if not self._may_connect(writer):
            writer.transport.abort()
            return
        if len(self.connections) >= self.max_connections and not self._make_room():
            self.report.warning("busy", "web: refused a connection (503), all %d are busy",
                             self.max_connections)
            writer.write(BUSY)
            writer.close()
            return
        connection = _Connection(self, reader, writer)
        self.connections[connection] = None
        connection.task = asyncio.get_running_loop().create_task(
            connection.serve(), name="web-connection")
        self._tasks.add(connection.task)
        connection.task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        """A connection's task ended. One that raised is a defect of ours in serving it (a
        route's defect is a 500 already): logged with its traceback, its connection closed
        by `serve`, the server and the match go on. A connection's task is not restarted: it
        lives as long as its peer, so it is tracked here and awaited by `close`, not handed
        to the service's supervised tasks (timerd/tasks.py), which restart what must run."""
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            self.report.log(logging.ERROR, "defect", "web: serving a connection failed (a "
                            "defect); it is closed, the server goes on", exc_info=exc)

    def _may_connect(self, writer: asyncio.StreamWriter) -> bool:
        """Whether the peer of a new connection may be served: any peer not refused for a
        flood, and one that is within CONNECTS_PER_S (by its own address: behind a proxy,
        the proxy's)."""
        peer = writer.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) else "?"
        if not self.flooders.locked_for(address):
            return True
        if self._connects.take(address, self.real_time()):
            return True
        self.report.warning("connect-rate", "web: closed connections from %s: refused for a "
                            "flood, and over %g new connections a second", address,
                            CONNECTS_PER_S)
        return False

    def _make_room(self) -> bool:
        """At the cap: close the connection idle longest (between requests). False when
        every one is busy (a request in progress, a WebSocket)."""
        idlest = idle_longest(self.connections, lambda c: None if c.busy else c.idle_since)
        if idlest is None:
            return False
        idlest.drop()
        self.report.warning("evicted", "web: at the cap of %d connections; closed the one idle "
                         "longest", self.max_connections)
        return True

    async def close(self, timeout_s: float) -> None:
        """Stop listening, close the idle connections, give the busy ones `timeout_s` to
        finish, then end them."""
        if self._listener is not None:
            self._listener.close()
        for connection in list(self.connections):
            if not connection.busy:
                connection.drop()
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=timeout_s)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        if self._listener is not None:
            await self._listener.wait_closed()


def forwarded_client(peer: str, headers: dict[str, str], proxies: frozenset[str]) -> str:
    """The address a request comes from: its peer's, or, when the peer is a trusted proxy
    (`web.trusted_proxies`), the last address in X-Forwarded-For that is not one (each proxy
    appends the address it was reached from; anything left of that the client may have
    written itself). A header that is malformed there leaves the proxy's own address."""
    if peer not in proxies:
        return peer
    for hop in (h.strip() for h in reversed(headers.get("x-forwarded-for", "").split(","))):
        try:
            ipaddress.ip_address(hop)
        except ValueError:
            return peer
        if hop not in proxies:
            return hop
    return peer


def _websocket_request(request: h11.Request) -> bool:
    return any(name == b"upgrade" for name, _ in request.headers)


class _Connection:
    """One TCP connection: HTTP requests in turn on h11 until it closes or becomes a
    WebSocket."""

    def __init__(self, server: HttpServer, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        self.loop = asyncio.get_running_loop()
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEADERS)
        self.busy = False  # handling a request, or a WebSocket
        self.idle_since = self.loop.time()
        self.task: asyncio.Task[None] | None = None
        self.websocket: WebSocket | None = None  # once it is one
        self.ended = False  # the peer's side is closed
        peer = writer.get_extra_info("peername")
        self.peer = str(peer[0]) if isinstance(peer, tuple) else "?"

    def drop(self) -> None:
        """Close now (at the cap, or when the server stops); the task ends on its own."""
        self.server.connections.pop(self, None)
        self.writer.close()

    def make_room(self) -> None:
        """Close this WebSocket for another (MAKE_ROOM: the page comes back later)."""
        if self.websocket is not None:
            self.websocket.close_now(MAKE_ROOM, "making room for another client")
        self.drop()

    async def serve(self) -> None:
        try:
            while True:
                self.busy = False
                self.idle_since = self.loop.time()
                deadline = self.idle_since + self.server.idle_timeout_s
                event = await self.next_event(deadline)
                if not isinstance(event, h11.Request):
                    return  # closed by the peer between requests
                self.busy = True
                if not await self._answer(event, deadline):
                    return
                self.h11.start_next_cycle()
        except h11.RemoteProtocolError as exc:
            if self.ended:
                return  # the peer hung up (or was dropped) in the middle of a request
            self.server.report.warning("malformed", "web: malformed request from %s: %s (%d)",
                                       self.peer, str(exc)[:200], exc.error_status_hint)
            await self._refuse(exc.error_status_hint, "malformed request")
        except (_TooSlow, ConnectionError):
            self.writer.transport.abort()  # too slow or gone: closed without an answer
        finally:
            self.server.connections.pop(self, None)
            self.writer.close()

    async def next_event(self, deadline: float) -> object:
        """The next h11 event, reading from the socket until the deadline as it needs."""
        while (event := self.h11.next_event()) is h11.NEED_DATA:
            try:
                async with asyncio.timeout_at(deadline):
                    data = await self.reader.read(CHUNK)
            except TimeoutError:
                raise _TooSlow from None
            self.ended = not data
            self.h11.receive_data(data)
        return event

    async def _answer(self, event: h11.Request, deadline: float) -> bool:
        """Answer one request; whether the connection stays open for another."""
        if len(event.target) + sum(len(n) + len(v) + 4 for n, v in event.headers) \
                > MAX_HEADERS:  # h11 lets a little more through when it comes in one read
            await self._refuse(431, "request headers too large")
            return False
        headers: dict[str, str] = {}
        for name, value in event.headers:
            key = name.decode("latin-1")
            text = value.decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        if "content-length" in headers and "transfer-encoding" in headers:
            self.server.report.warning(
                "smuggling", "web: refused a request from %s with both Content-Length and "
                "Transfer-Encoding (400)", self.peer)
            await self._refuse(400, "both Content-Length and Transfer-Encoding")
            return False
        match = _PATH.match(event.target.decode("latin-1"))
        if match is None:
            await self._refuse(400, "malformed request target")
            return False
        request = Request(event.method.decode("latin-1"), match[1], match[2] or "", headers,
                          self.server.client(self.peer, headers), self, event, deadline)
        close = False
        try:
            answer = await self.server.app(request)
        except BodyTooLarge:
            answer = self.server.error(413, f"the body is over {self.server.max_body} bytes")
            close = True
        except (_TooSlow, ConnectionError):
            raise
        except Exception:  # noqa: BLE001 (a bug of ours: a 500, logged; the daemon runs on)
            self.server.report.log(logging.ERROR, "500", "web: %s %s failed (500)",
                                   request.method, request.path, exc_info=True)
            answer = self.server.error(500, "internal error")
            close = True
        if isinstance(answer, Upgrade):
            if _websocket_request(event):
                await self._websocket(event, answer, request.peer, self.server.trusted(request))
                return False
            answer = self.server.error(400, "expected a WebSocket upgrade")
        # A body the handler did not read is not read now: the connection ends after this.
        close = close or not self._request_done()
        await self._send(answer, head=request.method == "HEAD", close=close)
        return self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE

    def _request_done(self) -> bool:
        """Has the request's whole body been read (taking what is already buffered)?"""
        while self.h11.their_state is h11.SEND_BODY:
            if self.h11.next_event() is h11.NEED_DATA:
                return False
        return True

    async def _send(self, answer: Response, *, head: bool = False, close: bool = False) -> None:
        headers = [*answer.headers, ("Content-Length", str(len(answer.body)))]
        if close:
            headers.append(("Connection", "close"))
        data = self.h11.send(h11.Response(status_code=answer.status, headers=headers,
                                          reason=REASONS.get(answer.status, b"")))
        if answer.body and not head:
            data += self.h11.send(h11.Data(data=answer.body))
        data += self.h11.send(h11.EndOfMessage())
        await self._write(data)

    async def _write(self, data: bytes) -> None:
        self.writer.write(data)
        try:
            async with asyncio.timeout(self.server.idle_timeout_s):
                await self.writer.drain()
        except TimeoutError:
            raise _TooSlow from None

    async def _refuse(self, status: int, message: str) -> None:
        """An error answer to a request we cannot serve, then the connection closes."""
        if self.h11.our_state not in {h11.IDLE, h11.SEND_RESPONSE}:
            return
        with contextlib.suppress(h11.LocalProtocolError, _TooSlow, ConnectionError):
            await self._send(self.server.error(status, message), close=True)

    async def _websocket(self, event: h11.Request, upgrade: Upgrade, client: str,
                         trusted: bool) -> None:
        refused = self.server.take_websocket(self, client, trusted)
        if refused is not None:
            self.server.report.warning("ws-cap", "web: refused a WebSocket from %s (503): %s",
                                       client, refused)
            await self._refuse(503, refused)
            return
        try:
            await self._open_websocket(event, upgrade, client)
        finally:
            self.server.release_websocket(self)

    async def _open_websocket(self, event: h11.Request, upgrade: Upgrade, client: str) -> None:
        connection = WSConnection(ConnectionType.SERVER)
        try:
            connection.initiate_upgrade_connection(list(event.headers), event.target)
            list(connection.events())
        except WebSocketRefused as exc:
            self.server.report.warning(
                "handshake", "web: refused a WebSocket handshake from %s: %s (400)",
                self.peer, exc)
            await self._refuse(400, f"WebSocket handshake: {exc}")
            return
        trailing, closed = self.h11.trailing_data
        ws = self.websocket = WebSocket(self, connection, client)
        offered = {p.strip() for name, value in event.headers if name == b"sec-websocket-protocol"
                   for p in value.decode("latin-1").split(",")}
        await self._write(connection.send(AcceptConnection(
            subprotocol=STREAM_PROTOCOL if STREAM_PROTOCOL in offered else None)))
        if trailing:
            connection.receive_data(trailing)
        if closed:
            connection.receive_data(None)
        await upgrade.handler(ws)


def _text_header(length: int) -> bytes:
    """The head of an unmasked, final text frame of `length` bytes (RFC 6455, 5.2)."""
    if length < 126:
        return bytes((0x81, length))
    if length < 1 << 16:
        return bytes((0x81, 126)) + length.to_bytes(2, "big")
    return bytes((0x81, 127)) + length.to_bytes(8, "big")


class WebSocket:
    """An open WebSocket (wsproto): send messages with `send_text`, and `serve` to read until
    it closes (answering pings, pinging a quiet peer, closing on a message over the limit)."""

    def __init__(self, connection: _Connection, ws: WSConnection, client: str) -> None:
        self._connection = connection
        self._ws = ws
        self.peer = client
        self._message_size = 0
        self._frames = TokenBucket(FRAMES_PER_S, FRAME_BURST)
        self._pongs = TokenBucket(PONGS_PER_S, PONG_BURST)

    def takes_now(self) -> bool:
        """Open, and the kernel has taken every byte written so far: a message written now
        goes out at once, with nothing to wait for."""
        transport = self._connection.writer.transport
        return self._ws.state is ConnectionState.OPEN and not transport.is_closing() \
            and transport.get_write_buffer_size() == 0

    def write_text(self, message: bytes) -> None:
        """Write `message` (UTF-8 text, already encoded: the same bytes may go to every peer)
        as one text frame, without waiting for the socket to take it."""
        if self._ws.state is not ConnectionState.OPEN:
            raise ConnectionResetError("the WebSocket is closing")
        self._connection.writer.writelines((_text_header(len(message)), message))

    async def send_text(self, message: bytes) -> None:
        """`write_text`, then wait until the socket takes it."""
        self.write_text(message)
        await self._connection.writer.drain()

    def abort(self) -> None:
        """Drop the connection at once (a peer that takes no data)."""
        self._connection.writer.transport.abort()

    def close_now(self, code: int, reason: str) -> None:
        """Write a close frame and go: nothing waits for the peer."""
        if self._ws.state is ConnectionState.OPEN:
            self._connection.writer.write(self._ws.send(CloseConnection(code, reason)))

    async def close(self, code: int, reason: str) -> None:
        """Send a close frame; `serve` returns when the peer answers it (or goes)."""
        if self._ws.state is ConnectionState.OPEN:
            self._connection.writer.write(self._ws.send(CloseConnection(code, reason)))
            with contextlib.suppress(ConnectionError):
                await self._connection.writer.drain()

    async def serve(self) -> None:
        """Read until the WebSocket is closed, by either side or by the network."""
        server, reader = self._connection.server, self._connection.reader
        pinged = False
        try:
            while self._ws.state not in (ConnectionState.CLOSED,
                                         ConnectionState.REJECTING):
                if not self._handle_events():
                    return
                try:
                    async with asyncio.timeout(server.heartbeat_s):
                        data = await reader.read(CHUNK)
                except TimeoutError:
                    if pinged:
                        return  # two heartbeats without a word: the peer is gone
                    self._connection.writer.write(self._ws.send(Ping()))
                    pinged = True
                    continue
                pinged = False
                self._ws.receive_data(data or None)
            self._handle_events()
        except ConnectionError:
            pass

    def _handle_events(self) -> bool:
        """Answer what the peer sent; False when the connection is to be closed now.

        Frames are parsed one at a time as they are taken (wsproto's events are lazy): a
        peer over the frame rate is closed before the rest of its read is looked at."""
        server = self._connection.server
        writer = self._connection.writer
        for event in self._ws.events():
            now = server.real_time()
            if not self._frames.take(now):
                server.report.warning("ws-flood", "web: closed a WebSocket from %s: over %g "
                                      "frames a second (the stream is one-way)", self.peer,
                                      FRAMES_PER_S)
                server.flooders.failed(self.peer)
                if self._ws.state is ConnectionState.OPEN:
                    writer.write(self._ws.send(CloseConnection(POLICY_VIOLATION,
                                                               "too many frames")))
                return False
            if isinstance(event, Ping):
                # Answered at a bounded rate; a peer that never reads its pongs gets no more.
                if self._pongs.take(now) \
                        and writer.transport.get_write_buffer_size() < PONGS_BUFFERED:
                    writer.write(self._ws.send(event.response()))
            elif isinstance(event, CloseConnection):
                if self._ws.state is ConnectionState.REMOTE_CLOSING:
                    writer.write(self._ws.send(event.response()))
                return False
            elif isinstance(event, TextMessage | BytesMessage):
                # The stream is one-way: messages are counted against the limit, then dropped.
                self._message_size += len(event.data)
                if self._message_size > self._connection.server.max_ws_message:
                    self._connection.server.report.warning(
                        "ws-too-big", "web: closed a WebSocket from %s: a message over %d "
                        "bytes", self.peer, self._connection.server.max_ws_message)
                    if self._ws.state is ConnectionState.OPEN:
                        writer.write(self._ws.send(CloseConnection(
                            CloseReason.MESSAGE_TOO_BIG, "message too big")))
                    return False
                if event.message_finished:
                    self._message_size = 0
        return True
