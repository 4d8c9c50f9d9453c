"""The control socket: a Unix stream socket that `timerctl` (and any tool) talks to.

One request per line, one reply per line. A request is JSON, `{"command": "pause", "args": []}`,
or plain words, `pause` or `goal home`, for a person with `socat`. The reply is JSON:
`{"ok": true, "status": {...}}` or `{"ok": false, "error": "why"}`. A malformed or unknown
request gets an error reply; the connection and the daemon carry on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from pathlib import Path
from types import TracebackType
from typing import Any

from timerd.service import Service

log = logging.getLogger("timerd.control")

#: Longest request line accepted; a longer one is refused and the connection closed.
MAX_LINE = 64 * 1024


def parse_request(line: str) -> Any:
    """A request line as the `{"command", "args"}` mapping, or an error string."""
    line = line.strip()
    if not line:
        return "empty request"
    if line.startswith("{"):
        try:
            return json.loads(line)
        except json.JSONDecodeError as exc:
            return f"malformed JSON: {exc}"
    words = line.split()
    return {"command": words[0], "args": words[1:]}


class ControlSocket:
    def __init__(self, path: Path, service: Service) -> None:
        self.path = path
        self.service = service
        self._server: asyncio.AbstractServer | None = None
        #: Connected tools, so a stop can hang up on them and let their handlers end cleanly.
        self._clients: dict[asyncio.Task[Any], asyncio.StreamWriter] = {}

    async def __aenter__(self) -> ControlSocket:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a stale socket from a crashed run
        self._server = await asyncio.start_unix_server(self._client, self.path, limit=MAX_LINE)
        os.chmod(self.path, 0o660)
        log.info("control socket at %s", self.path)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        # Hang up on tools still connected (a monitor, a desk script): their handlers see the
        # end of the stream and return, rather than being cancelled mid-read at shutdown.
        for writer in self._clients.values():
            writer.close()
        await asyncio.gather(*self._clients, return_exceptions=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._clients[task] = writer
        try:
            while line := await reader.readline():
                request = parse_request(line.decode("utf-8", "replace"))
                if isinstance(request, str):
                    reply: dict[str, Any] = {"ok": False, "error": request}
                else:
                    reply = self.service.command(request)
                writer.write(json.dumps(reply).encode() + b"\n")
                await writer.drain()
        except (ValueError, asyncio.LimitOverrunError):
            writer.write(b'{"ok": false, "error": "request line too long"}\n')
        except ConnectionError:
            pass
        finally:
            if task is not None:
                del self._clients[task]
            with contextlib.suppress(ConnectionError):
                writer.close()
                await writer.wait_closed()
