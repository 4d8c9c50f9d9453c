"""The web scoreboard and the HTTP/WebSocket API, served by the daemon itself.

A hall watches the clock on a TV (the Pi's HDMI port, a browser in kiosk mode), on phones and
on tournament screens; tools read the state and send commands. Everything is served from the
package (`timerd/web/`), nothing from the network. docs/api.md describes every endpoint.

- `GET /`, `/overlay`, `/control`, `/static/...`: the scoreboard page, the stream overlay
  (public like the scoreboard: no token, no control), the control page, their assets.
- `GET /api/state`: `service.status_dict()`, the state `timerctl status --json` prints.
- `GET /api/results`, `GET /api/commands`: finished matches; the commands the profile has
  (`timerd.core.offered`: a table hockey match lists no penalties, ball hockey no faceoff).
- `GET /api/i18n`: the message catalogues (`timerd.i18n`) and the language the browser's
  Accept-Language asks for; the pages choose as `[ui] language` (in the state) says.
- `POST /api/command`: `{"command": ..., "args": [...]}` with `Authorization: Bearer TOKEN`
  (the table's `web.token`, or a paired device's credential: `authenticated`), through
  `service.command()` like every control surface. Without a configured token HTTP control is
  off (403); a missing or wrong token is a 401; a body that is not JSON, an unknown command,
  bad arguments or a command the phase refuses are a 400 with the reason, and never reach the
  match.
- `POST /api/pair`: `{"code": ...}`, a one-time code of `timerctl desk`, exchanged for a
  device credential (`pairing.py`, issue 43); a code unknown, used or expired is a 401 and
  counts as a wrong token.
- `GET /api/stream`: a WebSocket that pushes the full state on connect and after every change,
  and the event records of the event stream (`timerd.adapters.events`).

The server is a service output. `notify` never waits: a browser whose socket has taken all it
was sent gets the messages written at once; any other has its own sender task with a bounded
backlog, where a newer state replaces an unsent one and the oldest events are dropped, so a slow
or dead browser costs memory for a few messages and never stalls the match loop. A browser that
cannot take a message within `SEND_TIMEOUT_S` is disconnected (it reconnects).
Each message is encoded once (UTF-8 JSON), whatever the number of browsers.

Limits (docs/service.md, "Limits and failure modes"), kept by `server`: each listener takes at
most `web.max_connections` connections; a new one over the cap takes the place of the
connection idle longest, or gets a 503 when all are busy. A connection must send a whole
request within `web.idle_timeout_s` of connecting or of its previous response. Bodies are at
most 64 KiB and 32 levels of JSON deep, WebSocket messages from a browser 4 KiB. After 5 wrong
tokens within a minute a peer gets 429 for a minute. Log lines about bad requests, refusals
and wrong tokens are written at most once per 30 s each, with a count.

With `web.control = "HOST:PORT"` the control page, `POST /api/command` and `POST /api/pair`
are served only there; `host:port` then serves the scoreboard and the read-only API.

On the control socket (the machine's own users: `requests`), `desk` makes a pairing code,
`desk list` lists the paired devices and `desk revoke ID` revokes one (`timerctl desk`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import errno
import hmac
import json
import logging
import os
import re
import stat
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from timerd import i18n
from timerd.adapters.web.pairing import CODE_TTL_S, DEVICES_NAME, Pairing, label_of
from timerd.adapters.web.server import (
    Answer,
    Handler,
    HttpServer,
    Request,
    Response,
    Router,
    Upgrade,
    WebSocket,
    forwarded_client,
)
from timerd.config import INSTANCE_HINT, InUse, WebConfig
from timerd.config.sections import MIN_TOKEN
from timerd.core.effects import Tick
from timerd.disk import DiskWriter, replace_file
from timerd.limits import (
    CommandRate,
    InputRefused,
    RateLimitedLog,
    TokenGuard,
    fd_share,
    loads_bounded,
)
from timerd.ports import Control, Dispatch
from timerd.wire import (
    coded_error_reply,
    commands_document,
    devices_reply,
    error_reply,
    event_record,
    i18n_document,
    paired_reply,
    pairing_code_reply,
)

try:  # a dependency (pyproject.toml); where it is missing the standard library writes JSON
    import orjson
except ImportError:  # pragma: no cover - where orjson is not installed
    orjson = None  # type: ignore[assignment]

#: How many finished matches `GET /api/results` gives at most: the last ones.
RESULTS_SHOWN = 1000

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
#: Commands that end or throw away a match or a goal: the control page asks before sending.
CONFIRM = frozenset({"reset", "undo", "forfeit", "walkout", "replay"})
#: Wrong tokens within a minute, from all addresses together, that lock out every address
#: not known to hold the token for a minute (issue 36: a guesser with many addresses).
WRONG_TOKENS_TOTAL = 20
#: Every answer but the scoreboard's: no page may show the desk in a frame (clickjacking).
NOT_FRAMABLE = [("X-Frame-Options", "DENY"),
                ("Content-Security-Policy", "frame-ancestors 'none'")]
#: The pages a spectator or a stream may show: the scoreboard and the stream overlay.
PUBLIC_PAGES = frozenset({"/", "/overlay"})
#: Largest WebSocket message taken from a browser (the stream is one-way; it sends none).
MAX_WS_MESSAGE = 4096
#: The share of the process's file descriptors each listener's connections may take.
FD_SHARE = 1 / 4
#: WebSocket close code when the daemon stops: browsers reconnect to the next one at once.
GOING_AWAY = 1001
#: The asset names served under /static/: plain file names of timerd/web/.
ASSET_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8", ".json": "application/json",
                 ".png": "image/png", ".svg": "image/svg+xml", ".ico": "image/x-icon",
                 ".woff2": "font/woff2"}
JSON = ("Content-Type", "application/json; charset=utf-8")
LOOPBACK = ("127.0.0.1", "::1", "localhost")
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def command_table(service: Control) -> list[dict[str, Any]]:
    """The commands the match's profile has and the adapters' commands, with their argument
    names, for the page. Commands the profile lacks are left out: the match would refuse
    them anyway, and a score desk must not offer them."""
    return [{"command": name, "args": list(usage), "confirm": name in CONFIRM}
            for name, usage in service.offered().items()]


def bearer(header: str) -> str | None:
    """What an `Authorization: Bearer ...` header carries, or None for another scheme."""
    scheme, _, given = header.strip().partition(" ")
    return given.strip() if scheme.lower() == "bearer" else None


def bearer_ok(header: str, token: str) -> bool:
    """Does an `Authorization` header carry `token` (compared in constant time)?"""
    given = bearer(header)
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


#: The stream's subprotocol that carries the desk's token (a page cannot set a WebSocket's
#: headers): this prefix and the token in unpadded base64url (`web/timerd.js`).
BEARER_PROTOCOL = "timerd.bearer."


def offered_token(headers: dict[str, str]) -> bytes | None:
    """The token a WebSocket handshake offers as its subprotocol, if any."""
    for offered in headers.get("sec-websocket-protocol", "").split(","):
        encoded = offered.strip().removeprefix(BEARER_PROTOCOL)
        if encoded != offered.strip():
            try:
                return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
            except (binascii.Error, ValueError):
                return None
    return None


def json_response(value: Any, status: int = 200,
                  headers: list[tuple[str, str]] | None = None) -> Response:
    return Response(status, json_bytes(value), [JSON, *(headers or [])])


def same_origin(origin: str, host: str) -> bool:
    """Is `origin` (a browser's `Origin` header: scheme://host[:port]) the page's own host,
    the `Host` the request was sent to? Ports as the browser writes them (80 and 443 left
    out); names compared without case."""
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return False  # "null": a file or sandboxed page
    default = {"http": ":80", "https": ":443"}[parts.scheme]
    return parts.netloc.lower().removesuffix(default) == host.strip().lower().removesuffix(
        default)


def _error(status: int, message: str, headers: list[tuple[str, str]] | None = None) -> Response:
    return json_response(error_reply(message), status, headers)


@dataclass(eq=False)
class StreamClient:
    """One browser on the stream: the newest unsent state and a bounded backlog of events,
    each a message already encoded (UTF-8 JSON), the same bytes for every browser."""

    ws: WebSocket
    state: bytes | None = None
    events: deque[bytes] = field(default_factory=lambda: deque(maxlen=EVENT_BACKLOG))
    dropped: int = 0
    ready: asyncio.Event = field(default_factory=asyncio.Event)  # for the sender task
    sender: asyncio.Task[None] | None = None
    sending: bool = False  # the sender task has messages in hand (a slow browser)
    closed: asyncio.Event = field(default_factory=asyncio.Event)  # off the stream

    def push_state(self, message: bytes) -> None:
        self.state = message  # an unsent older state is stale: replaced, never queued

    def push_event(self, message: bytes) -> None:
        if len(self.events) == self.events.maxlen:
            self.dropped += 1
            if self.dropped == 1:
                log.warning("a stream client is behind; dropping its oldest events")
        self.events.append(message)

    def next_message(self) -> bytes | None:
        """Events first, in order, then the state they led to."""
        if self.events:
            return self.events.popleft()
        message, self.state = self.state, None
        return message

    def flush(self) -> None:
        """Send what was pushed: written at once while the sender task is idle and the socket
        has taken everything before it (a tick then costs no task switch: issue 16, CPU per
        match minute); else handed to the sender task, which waits for a slow browser."""
        while (self.events or self.state is not None) and not self.sending \
                and not self.ready.is_set() and self.ws.takes_now():
            message = self.next_message()
            if message is not None:  # one is pending (the loop's test): for the type
                self.ws.write_text(message)
        if self.events or self.state is not None:
            self.ready.set()


class WebServer:
    """The web server as an async context manager, and a service output for the stream.

    `rate` is how many daemon seconds pass per real second (the `--speed` factor): the page
    uses it to run its clock between pushes, and real-time limits are scaled by it. `t0` is
    the daemon's start on the loop clock, so stream events carry the event stream's `t`.
    If the port cannot be bound the error is logged and the daemon runs on without the web
    (the buzzer matters more than the scoreboard). The paired devices are kept in
    `state_directory` (none given: in memory only), written through `writer` (none: inline).
    """

    def __init__(self, config: WebConfig, service: Control, *, rate: float = 1.0,
                 t0: float = 0.0,
                 results: Callable[[int], list[dict[str, Any]]] | None = None,
                 state_directory: Path | None = None, writer: DiskWriter | None = None
                 ) -> None:
        self.config = config
        self.service = service
        self.rate = rate
        self.t0 = t0
        #: The last n finished matches, oldest first (the results feature's reader), if on.
        self.results = results
        self.url: str | None = None  # where it listens, once started
        #: where the control page and POST /api/command are, once started (maybe `url`)
        self.control_url: str | None = None
        self.clients: set[StreamClient] = set()  # the browsers on the stream now
        self.max_connections = fd_share(config.max_connections, FD_SHARE, "web")
        self._servers: list[HttpServer] = []
        self._log = RateLimitedLog(log)
        self._command_rate = CommandRate(config.commands_per_s, config.command_burst)
        self._tokens = TokenGuard(lambda: self.service.loop.time() / self.rate,
                                  max_total=WRONG_TOKENS_TOTAL)
        #: The pairing codes and the paired devices, kept in the state directory (if given)
        #: through `writer`, off the loop.
        self.pairing = Pairing(None if state_directory is None else
                               state_directory / DEVICES_NAME,
                               lambda: self.service.loop.time() / self.rate, time.time)
        self._writer = writer or DiskWriter(inline=True)
        #: Where the control page listens once started: (host as bound, port).
        self.control_bound: tuple[str, int] | None = None
        #: What only the control socket serves (the machine's own users): the pairing.
        self.requests = {"desk": self.desk}

    def app(self, *, control: bool = True) -> Router:
        """The routes: all of them, or (`control=False`) the scoreboard and the read-only
        API, where the control routes say where control is served instead."""
        router = Router(_error)
        router.add("GET", "/", self._page("index.html"))
        router.add("GET", "/overlay", self._page("overlay.html"))
        router.add("GET", "/control", self._page("control.html") if control
                   else self._control_elsewhere)
        router.add_prefix("/static/", self._static)
        router.add("GET", "/api/state", self._state)
        router.add("GET", "/api/results", self._results)
        router.add("GET", "/api/commands", self._commands if control
                   else self._commands_read_only)
        router.add("POST", "/api/command", self._command if control
                   else self._control_elsewhere)
        router.add("POST", "/api/pair", self._pair if control else self._control_elsewhere)
        router.add("GET", "/api/i18n", self._i18n)
        router.add("GET", "/api/stream", self._stream)
        return router

    def open_connections(self) -> int:
        """The connections open now, on every listener."""
        return sum(len(server.connections) for server in self._servers)

    async def __aenter__(self) -> WebServer:
        control = self.config.control_address()
        self.url, bound = await self._listen(self.app(control=control is None),
                                             self.config.host, self.config.port,
                                             "web scoreboard")
        self.control_url, self.control_bound = self.url, bound
        if control is not None:
            self.control_url, self.control_bound = await self._listen(
                self.app(), *control, "web control")
        if self.url is not None:
            log.info("web scoreboard at %s (control %s)", self.url,
                     "off: no web.token" if not self.config.token else
                     f"at {self.control_url}control" if self.control_url else "off")
            if orjson is None:
                log.warning("web: orjson is not installed (pip install orjson): each state "
                            "push is encoded by the standard library, in about ten times "
                            "orjson's time")
        return self

    async def _listen(self, app: Router, host: str, port: int,
                      what: str) -> tuple[str | None, tuple[str, int] | None]:
        """Serve `app` on host:port with the connection cap; its URL and (host, port) as
        bound, or None if the port cannot be bound (logged: the daemon runs on, the buzzer
        matters more). A port in use raises InUse instead: a second daemon on one port
        refuses to start (issue 30)."""
        server = HttpServer(self._framing(app), error=_error, log=self._log,
                            max_connections=self.max_connections,
                            idle_timeout_s=self.config.idle_timeout_s * self.rate,
                            max_body=MAX_BODY, max_ws_message=MAX_WS_MESSAGE,
                            heartbeat_s=HEARTBEAT_S * self.rate, rate=self.rate,
                            client=partial(forwarded_client,
                                           proxies=frozenset(self.config.trusted_proxies)),
                            trusted=lambda request: self.authenticated(
                                request.headers) is not None)
        try:
            bound_host, bound_port = await server.listen(host, port)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:  # another timerd's, most likely: never share
                raise InUse(f"{host} port {port} is in use (another timerd?): {INSTANCE_HINT}"
                            f" with its own web.port, or -o web.port=N") from None
            log.error("%s off: cannot listen on %s port %d: %s", what, host, port,
                      exc.strerror or exc)
            return None, None
        self._servers.append(server)
        return f"http://{bound_host}:{bound_port}/", (bound_host, bound_port)

    def _framing(self, app: Router) -> Handler:
        """`app` with the headers that keep its answers out of other sites' frames: none may
        frame the control page or the API; the scoreboard (`/`) only as
        `web.scoreboard_frame_ancestors` allows (a stream's page), and the overlay alike."""
        ancestors = self.config.scoreboard_frame_ancestors

        async def framed(request: Request) -> Answer:
            answer = await app(request)
            if isinstance(answer, Response):
                answer.headers += [("Content-Security-Policy", f"frame-ancestors {ancestors}")] \
                    if ancestors and request.path in PUBLIC_PAGES else NOT_FRAMABLE
            return answer
        return framed

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        for client in list(self.clients):
            if client.sender is not None:
                client.sender.cancel()
        # Browsers see "going away" and reconnect to the next daemon at once.
        closing = [c.ws.close(GOING_AWAY, "timerd stopping") for c in self.clients]
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(1.0 * self.rate):
                await asyncio.gather(*closing, return_exceptions=True)
                await asyncio.gather(*(c.closed.wait() for c in self.clients))
        for server in self._servers:
            await server.close(timeout_s=2.0 * self.rate)

    # -- service output --------------------------------------------------------------------

    def notify(self, dispatch: Dispatch) -> None:
        """Send the dispatch's event records, then its state, to every browser, in this loop
        turn (issue 16: a later turn costs the loop a wake-up's work every second).

        Each message is encoded once and the same bytes go to every browser; the state is
        the dispatch's one document (issue 14). A dispatch of tenths alone sends nothing:
        the page runs the tenths itself, and each whole second re-syncs it.
        """
        if not self.clients or all(isinstance(e, Tick) and e.tenth for e in dispatch.effects):
            return
        for effect in dispatch.effects:
            record = event_record(effect, dispatch.status)
            if record is not None:
                t = round(dispatch.now - self.t0, 6)
                message = json_bytes({"type": "event", "event": {"t": t, **record}})
                for client in self.clients:
                    client.push_event(message)
        message = self._state_message(dispatch.document)
        for client in self.clients:
            client.push_state(message)
            client.flush()

    def _state_message(self, state: Mapping[str, Any] | None = None) -> bytes:
        """A state push: `state` (a dispatch's document), or the status now."""
        return json_bytes({"type": "state", "state": state or self.service.status_dict(),
                        "rate": self.rate})

    # -- handlers --------------------------------------------------------------------------

    @staticmethod
    def _page(name: str) -> Callable[[Request], Any]:
        async def handler(request: Request) -> Response:
            return await _file(request, ASSETS / name, [("Cache-Control", "no-cache")])
        return handler

    async def _static(self, request: Request) -> Response:
        name = request.path.removeprefix("/static/")
        if not ASSET_NAME.fullmatch(name):
            return _error(404, "not found")
        return await _file(request, ASSETS / name)

    async def _state(self, request: Request) -> Response:
        return json_response(self.service.status_dict())

    async def _results(self, request: Request) -> Response:
        if self.results is None:
            return json_response([])
        # A file on an SD card: read off the loop, at most the last RESULTS_SHOWN.
        return json_response(await asyncio.to_thread(self.results, RESULTS_SHOWN))

    async def _commands(self, request: Request) -> Response:
        return json_response(commands_document(command_table(self.service),
                                               bool(self.config.token)))

    async def _i18n(self, request: Request) -> Response:
        return json_response(i18n_document(
            i18n.from_accept(request.headers.get("accept-language", "")), i18n.NAMES,
            i18n.WORDS, {language: dict(i18n.catalogue(language)) for language in i18n.LANGUAGES},
        ), headers=[("Cache-Control", "no-cache")])

    async def _commands_read_only(self, request: Request) -> Response:
        return json_response(commands_document(command_table(self.service), False))

    async def _control_elsewhere(self, request: Request) -> Response:
        return _error(403, "control is not served on this port (see web.control)")

    def authenticated(self, headers: Mapping[str, str]) -> str | None:
        """Who a request says it is, by `Authorization: Bearer ...` (a tool, the desk's
        commands) or by the credential its WebSocket handshake offers as the stream's
        subprotocol (`offered_token`: a page cannot set a WebSocket's headers): "token" for the
        table's `web.token`, "device ID" for a paired device's credential (not revoked); None
        for neither, or when HTTP control is off (no token). The one test of authentication:
        every route that asks whether a client may control asks this, and the limits on a
        crowd (server.py) never close or refuse such a client's stream for others."""
        token, header = self.config.token, headers.get("authorization", "")
        if not token:
            return None
        if bearer_ok(header, token):
            return "token"
        given = bearer(header)
        if given is None and (offered := offered_token(dict(headers))) is not None:
            if hmac.compare_digest(offered, token.encode()):
                return "token"
            given = offered.decode("utf-8", "replace")
        device = None if given is None else self.pairing.device_of(given)
        return None if device is None else f"device {device.id}"

    def _locked(self, request: Request) -> Response | None:
        """A 429 for a peer locked out after wrong tokens or codes, else None."""
        if locked_s := self._tokens.locked_for(request.peer):
            self._log.warning("429", "web %s refused: %s is locked out after wrong tokens",
                              request.path, request.peer)
            return _error(429, "too many wrong tokens; try again later",
                          [("Retry-After", str(max(1, round(locked_s))))])
        return None

    async def _command(self, request: Request) -> Response:
        if not self.config.token:
            return _error(403, "HTTP control is off: set web.token in the config")
        peer = request.peer
        if locked := self._locked(request):
            return locked
        if self.authenticated(request.headers) is None:
            if "authorization" in request.headers:  # a guess (none: a page not paired yet)
                self._tokens.failed(peer)
            self._log.info("401", "web command refused: missing or wrong token from %s", peer)
            return _error(401, "missing or wrong token (Authorization: Bearer TOKEN)",
                          [("WWW-Authenticate", 'Bearer realm="timerd"')])
        self._tokens.succeeded(peer)
        try:
            payload = loads_bounded(await request.read(), MAX_BODY)
        except InputRefused as exc:  # the page says it in its language by its code
            return json_response(coded_error_reply(exc.key, **exc.params), 400)
        if over := self._command_rate.refused(peer, payload, self.service.loop.time() / self.rate):
            self._log.warning("rate", "web command refused: %s is over the command rate", peer)
            return json_response(coded_error_reply(over.key, **over.params), 429,
                                 [("Retry-After", "1")])
        reply = await self.service.acknowledge(payload)  # once on disk, or says why not
        return json_response(reply, 200 if reply["ok"] else 400)

    async def _pair(self, request: Request) -> Response:
        """A one-time code exchanged for a device credential (issue 43): the code dies, the
        device is kept on disk before the page is told its credential."""
        if not self.config.token:
            return _error(403, "HTTP control is off: set web.token in the config")
        if locked := self._locked(request):
            return locked
        try:
            payload = loads_bounded(await request.read(), MAX_BODY)
        except InputRefused as exc:
            return _error(400, str(exc))
        code = payload.get("code") if isinstance(payload, dict) else None
        if not isinstance(code, str):
            return _error(400, 'expected {"code": CODE}')
        paired = self.pairing.redeem(code, request.peer,
                                     label_of(request.headers.get("user-agent", "")))
        if paired is None:
            self._tokens.failed(request.peer)
            self._log.info("pair-401", "web pairing refused: an unknown, used or expired "
                           "code from %s", request.peer)
            return _error(401, "this pairing code is unknown, used or expired: run "
                               "`timerctl desk` for a new one")
        device, credential = paired
        if problem := await self._keep_devices():
            self.pairing.forget(device.id)
            return _error(503, f"the paired device cannot be kept: {problem}")
        log.info("web: paired device %s (%s) from %s", device.id, device.label or "?",
                 device.address)
        return json_response(paired_reply(device.id, credential))

    async def _keep_devices(self) -> str | None:
        """Write the paired devices' file (0600) on the disk writer; None once it is on
        disk, else why not."""
        path = self.pairing.path
        if path is None:
            return None
        data = self.pairing.file_bytes()
        return await self._writer.submit("devices", lambda: replace_file(path, data, 0o600)
                                         ).reply

    async def desk(self, *args: str) -> dict[str, Any]:
        """The control socket's `desk` (`timerctl desk`): a new pairing code and where the
        control page listens; `desk list`: the paired devices; `desk revoke ID`: one
        revoked, and the devices left."""
        if args[:1] == ("list",) and len(args) == 1:
            return devices_reply(self.pairing.listing())
        if args[:1] == ("revoke",) and len(args) == 2:
            if self.pairing.forget(args[1]) is None:
                return coded_error_reply("cli.desk.no_device", device=repr(args[1]))
            if problem := await self._keep_devices():
                log.error("web: device %s is revoked until the daemon stops, but the file "
                          "cannot be written: %s", args[1], problem)
                return coded_error_reply("cli.desk.revoked_not_kept", problem=problem)
            log.info("web: revoked device %s", args[1])
            return devices_reply(self.pairing.listing())
        if args:
            return coded_error_reply("cli.desk.usage")
        if not self.config.token:
            return coded_error_reply("cli.desk.no_token", least=MIN_TOKEN)
        if self.control_bound is None:
            return coded_error_reply("cli.desk.not_listening")
        host, port = self.control_bound
        if self.config.control and host in LOOPBACK:
            return coded_error_reply("cli.desk.pi_only", control=self.config.control)
        return pairing_code_reply(self.pairing.new_code(), CODE_TTL_S, host, port)

    async def _stream(self, request: Request) -> Response | Upgrade:
        """The stream, for the page's own origin: a browser says which page opens a WebSocket
        (`Origin`), and one from another site's page (a page on the hall's Wi-Fi reading the
        table on the visitor's behalf) is refused (403). A tool sends no Origin and is served;
        the state is what a spectator sees anyway (issue 34 item 5)."""
        origin = request.headers.get("origin")
        if origin is not None and not same_origin(origin, request.headers.get("host", "")):
            self._log.warning("origin", "refused a stream from the page of %.80r on host "
                              "%.80r (403)", origin, request.headers.get("host"))
            return _error(403, "the stream serves this table's own pages (Origin is another "
                               "site)")
        return Upgrade(self._serve_stream)

    async def _serve_stream(self, ws: WebSocket) -> None:
        client = StreamClient(ws)
        client.push_state(self._state_message())
        client.flush()
        client.sender = asyncio.create_task(self._send(client), name="web-stream")
        self.clients.add(client)
        try:
            await ws.serve()  # one-way stream: reading only serves pings and the close
        finally:
            self.clients.discard(client)
            client.sender.cancel()
            client.closed.set()

    async def _send(self, client: StreamClient) -> None:
        try:
            while True:
                await client.ready.wait()
                client.ready.clear()
                client.sending = True
                while (message := client.next_message()) is not None:
                    async with asyncio.timeout(SEND_TIMEOUT_S * self.rate):
                        await client.ws.send_text(message)
                client.sending = False
        except TimeoutError:
            self._log.warning("stalled", "stream client %s took no data for %.0f s; "
                              "disconnected", client.ws.peer, SEND_TIMEOUT_S)
            client.ws.abort()
        except ConnectionError:
            pass  # the browser went away; its connection cleans up


async def _file(request: Request, path: Path,
                headers: list[tuple[str, str]] | None = None) -> Response:
    """A file of timerd/web/, read off the loop, with its type, ETag and Last-Modified (a
    304 when the browser has it already)."""
    found = await asyncio.to_thread(_read_file, path)
    if found is None:
        return _error(404, "not found")
    data, mtime_ns = found
    etag = f'"{mtime_ns:x}-{len(data):x}"'
    modified = _http_date(mtime_ns // 1_000_000_000)
    headers = [("Content-Type", CONTENT_TYPES.get(path.suffix, "application/octet-stream")),
               ("ETag", etag), ("Last-Modified", modified), *(headers or [])]
    seen = request.headers.get("if-none-match")
    if (seen is not None and etag in (t.strip() for t in seen.split(","))) or \
            (seen is None and request.headers.get("if-modified-since") == modified):
        return Response(304, b"", headers)
    return Response(200, data, headers)


def _read_file(path: Path) -> tuple[bytes, int] | None:
    try:
        with path.open("rb") as file:
            found = os.fstat(file.fileno())
            return (file.read(), found.st_mtime_ns) if stat.S_ISREG(found.st_mode) else None
    except OSError:
        return None


def _http_date(seconds: int) -> str:
    t = time.gmtime(seconds)
    return (f"{_DAYS[t.tm_wday]}, {t.tm_mday:02d} {_MONTHS[t.tm_mon - 1]} {t.tm_year} "
            f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} GMT")


#: Status values are JSON types and StrEnums; `str` covers an adapter's odd extra value. One
#: encoder for every message, no check for circles (a status document is a tree: read-only as
#: made, issue 44 item 2), the separators orjson writes: the standard library's, for a value
#: orjson refuses and where it is not installed.
_stdlib_dumps = json.JSONEncoder(default=str, check_circular=False, separators=(",", ":")).encode

#: What `str` gives under the standard library, orjson gives too: a dataclass or a datetime in
#: a value is passed to `default` rather than written out as orjson would.
_ORJSON_OPTIONS = 0 if orjson is None else (orjson.OPT_PASSTHROUGH_DATACLASS
                                            | orjson.OPT_PASSTHROUGH_DATETIME)


def json_bytes(value: Any) -> bytes:
    """`value` as compact UTF-8 JSON: every state push, event and JSON reply of the web.

    orjson encodes a state push in about a ninth of the standard library's instructions and a
    tenth of its time (1.6 against 16.4 µs, bench/push_encoding.py; issue 44 item 8,
    docs/BENCHMARKS.md). What orjson refuses (an int past 64 bits, a lone surrogate, a key
    that is not a string, nesting past 254) the standard library writes, as it wrote all
    before (non-ASCII escaped); where orjson is not installed, it writes every message, said
    once at the start (`WebServer.__aenter__`)."""
    if orjson is not None:
        try:
            return orjson.dumps(value, default=str, option=_ORJSON_OPTIONS)
        except orjson.JSONEncodeError:
            pass
    return _stdlib_dumps(value).encode()


