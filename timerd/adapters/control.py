"""The control socket: a Unix stream socket that `timerctl` (and any tool) talks to.

One request per line, one reply per line. A request is JSON, `{"command": "pause", "args": []}`,
or plain words, `pause` or `goal home`, for a person with `socat`. The reply is JSON:
`{"format": 1, "ok": true, "status": {...}}` or `{"format": 1, "ok": false, "error": "why"}`
(built in `timerd.wire`). A malformed or unknown request gets an error reply; the connection
and the daemon carry on. Beside the commands every control surface has, the socket serves
`requests` of its own, for the machine's users alone (`desk`: the score desk's pairing),
which `timerd.app` fills from the adapters that offer them.

Limits (docs/service.md, "Limits and failure modes"): a request line is at most `MAX_LINE`
bytes (a longer one gets an error reply, is skipped to its newline, and the requests after it
are answered), its JSON at most `MAX_DEPTH` levels deep; a tool that sends no complete line for
`control.idle_timeout_s` is hung up on; at most `control.max_connections` tools are connected
at once. A new one over the cap takes the place of the tool that has waited longest for its
next request (so `timerctl` gets through a flood of idle connections), and is refused only
when every connection is busy. Refusals and hang-ups are logged at most once per 30 s each.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import struct
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from timerd.config import INSTANCE_HINT, ControlConfig, InUse
from timerd.limits import (
    MAX_DEPTH,
    CommandRate,
    InputRefused,
    RateLimitedLog,
    fd_share,
    idle_longest,
    loads_bounded,
)
from timerd.ports import Control, LocalRequest
from timerd.wire import coded_error_reply, error_reply

log = logging.getLogger("timerd.control")

#: Longest request line accepted; a longer one gets an error reply and is skipped.
MAX_LINE = 64 * 1024
#: The share of the process's file descriptors the control socket's connections may take.
FD_SHARE = 1 / 16


def parse_request(line: str) -> Any:
    """A request line as the `{"command", "args"}` mapping, or an error string."""
    line = line.strip()
    if not line:
        return "empty request"
    if line.startswith("{"):
        try:
            return loads_bounded(line, MAX_LINE, MAX_DEPTH)
        except InputRefused as exc:
            return str(exc)
    words = line.split()
    return {"command": words[0], "args": words[1:]}


async def read_line(reader: asyncio.StreamReader) -> bytes | None:
    """The next line (b"" at the end of the stream); None for one over the reader's limit,
    whose bytes are read and dropped up to its newline so the next line is read whole."""
    too_long = False
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # the end: a last line without a newline
            line = exc.partial
        except asyncio.LimitOverrunError as exc:
            too_long = True
            await reader.readexactly(exc.consumed)  # what is buffered, up to the newline
            continue
        return None if too_long and line else line


async def answers(path: Path, timeout_s: float = 2.0) -> bool:
    """Whether a process listens on the socket `path`. False only when nothing is there or
    the connection is refused (a stale socket left by a crash); a full backlog, a timeout or
    a socket this user may not use count as taken, so a live daemon's socket is never
    replaced on a guess."""
    try:
        _, writer = await asyncio.wait_for(asyncio.open_unix_connection(path), timeout_s)
    except (FileNotFoundError, ConnectionRefusedError):
        return False
    except (OSError, TimeoutError):
        return True
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


@dataclass(eq=False)
class _Client:
    writer: asyncio.StreamWriter
    #: Since when it waits for its next request line (it may be hung up on to make room);
    #: None while its request is handled.
    idle_since: float | None = None
    evicted: bool = False
    #: Who the tool runs as (`peer_user`): one user's tools share one command rate.
    user: str = "a tool"


def peer_user(writer: asyncio.StreamWriter) -> str:
    """The uid of the process on the other end of a Unix socket (SO_PEERCRED)."""
    sock = writer.get_extra_info("socket")
    try:
        _, uid, _ = struct.unpack("3i", sock.getsockopt(
            socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    except (AttributeError, OSError):
        return "a tool"
    return f"uid {uid}"


class ControlSocket:
    def __init__(self, path: Path, service: Control,
                 config: ControlConfig = ControlConfig()) -> None:  # noqa: B008 (frozen)
        self.path = path
        self.service = service
        self.idle_timeout_s = config.idle_timeout_s
        self.max_connections = fd_share(config.max_connections, FD_SHARE, "control socket")
        self._server: asyncio.AbstractServer | None = None
        #: Connected tools, oldest first, so a stop can hang up on them and let their handlers
        #: end cleanly, and a new tool over the cap can take an idle one's place.
        self._clients: dict[asyncio.Task[Any], _Client] = {}
        self._log = RateLimitedLog(log)
        self._rate = CommandRate(config.commands_per_s, config.command_burst)
        self._identity: tuple[int, int] | None = None  # (device, inode) of the bound socket
        #: Requests only this socket serves, by name (`desk`), filled by `timerd.app`.
        self.requests: dict[str, LocalRequest] = {}

    async def __aenter__(self) -> ControlSocket:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if await answers(self.path):
            raise InUse(f"another timerd answers on {self.path}: {INSTANCE_HINT}")
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a stale socket from a crashed run: nobody answers on it
        self._server = await asyncio.start_unix_server(self._client, self.path, limit=MAX_LINE)
        os.chmod(self.path, 0o660)
        bound = os.stat(self.path)
        self._identity = (bound.st_dev, bound.st_ino)
        log.info("control socket at %s", self.path)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        # Hang up on tools still connected (a monitor, a desk script): their handlers see the
        # end of the stream and return, rather than being cancelled mid-read at shutdown.
        for client in self._clients.values():
            client.writer.close()
        await asyncio.gather(*self._clients, return_exceptions=True)
        # Only the socket this daemon bound: one put in its place since (a daemon started
        # after its socket was removed) is that daemon's, and stays.
        with contextlib.suppress(FileNotFoundError):
            now = os.stat(self.path)
            if (now.st_dev, now.st_ino) == self._identity:
                self.path.unlink()

    def _make_room(self) -> bool:
        """At the cap: hang up on the tool that has waited longest for its next request.
        False when every connection is busy with a request."""
        idlest = idle_longest(self._clients.items(), lambda item: item[1].idle_since)
        if idlest is None:
            return False
        victim = self._clients.pop(idlest[0])  # its fd is closed now, not when its handler ends
        victim.evicted = True
        victim.writer.close()
        self._log.warning("evicted", "control socket at its cap of %d connections: hung up "
                          "on the one idle longest", self.max_connections)
        return True

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        if len(self._clients) >= self.max_connections and not self._make_room():
            self._log.warning("refused", "control socket: refused a connection, all %d are "
                              "busy", self.max_connections)
            with contextlib.suppress(ConnectionError):
                writer.write(json.dumps(coded_error_reply("limit.connections")).encode()
                             + b"\n")
            writer.close()
            return
        loop = asyncio.get_running_loop()
        client = self._clients[task] = _Client(writer, user=peer_user(writer))
        try:
            while True:
                client.idle_since = loop.time()
                try:
                    async with asyncio.timeout(self.idle_timeout_s):
                        line = await read_line(reader)
                except TimeoutError:
                    self._log.info("idle", "control socket: hung up on a tool that sent no "
                                   "request for %g s", self.idle_timeout_s)
                    break
                client.idle_since = None
                if line == b"" or client.evicted:
                    break
                writer.write(json.dumps(await self._reply(line, client)).encode() + b"\n")
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            self._clients.pop(task, None)
            with contextlib.suppress(ConnectionError):
                writer.close()
                await writer.wait_closed()

    async def _reply(self, line: bytes | None, client: _Client) -> dict[str, Any]:
        if line is None:
            self._log.info("too_long", "control socket: refused a request line over %d bytes",
                           MAX_LINE)
            return error_reply(f"request line over {MAX_LINE} bytes")
        request = parse_request(line.decode("utf-8", "replace"))
        if isinstance(request, str):
            return error_reply(request)
        name = request.get("command") if isinstance(request, dict) else None
        local = self.requests.get(name) if isinstance(name, str) else None
        if local is not None:
            args = request.get("args", [])
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                return error_reply("args must be a list of strings")
            return await local(*args)
        if over := self._rate.refused(client.user, request, self.service.now()):
            self._log.warning("rate", "control socket: refused commands of %s over the rate",
                              client.user)
            return coded_error_reply(over.key, **over.params)
        return await self.service.acknowledge(request)  # once on disk, or says why not
