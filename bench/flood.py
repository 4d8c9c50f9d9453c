"""One client flooding timerd's event stream (issue 36): `python -m bench.flood PORT`.

What a hostile or broken host on the hall's network does: it opens a WebSocket on
`/api/stream` and sends masked pings as fast as the socket takes them; when the server closes
it (or refuses it, 503), it connects again at once, until it is killed. `bench/run`'s
stream-flood phase runs it against the timerd player while the signals are measured. On exit
(SIGTERM) it prints what it did as JSON: connections, refusals, bytes of pings written.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import sys
import time
from typing import Any

#: Pings written per send call: 1,000 six-byte frames.
BATCH = 1000


def _ping() -> bytes:
    mask = os.urandom(4)
    return bytes((0x89, 0x80)) + mask


def _handshake(port: int) -> socket.socket | None:
    """A WebSocket on 127.0.0.1:`port`, or None when refused (503) or not listening yet."""
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
        time.sleep(0.05)  # the player is still starting
        return None
    try:
        return _upgrade(sock)
    except OSError:
        sock.close()
        return None


def _upgrade(sock: socket.socket) -> socket.socket | None:
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(f"GET /api/stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                 f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                 "Sec-WebSocket-Version: 13\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    if not head.startswith(b"HTTP/1.1 101"):
        sock.close()
        return None
    return sock


def flood(port: int, stats: dict[str, Any]) -> None:
    batch = _ping() * BATCH
    while True:
        sock = _handshake(port)
        if sock is None:
            stats["refused"] += 1
            continue
        stats["connections"] += 1
        try:
            while True:  # until the server closes it: then the send fails
                sock.sendall(batch)
                stats["bytes"] += len(batch)
        except OSError:
            pass
        finally:
            sock.close()


def main(argv: list[str] | None = None) -> int:
    port = int((argv if argv is not None else sys.argv[1:])[0])
    stats = {"connections": 0, "refused": 0, "bytes": 0}

    def done(*_: object) -> None:
        json.dump(stats, sys.stdout)
        sys.stdout.flush()
        os._exit(0)

    signal.signal(signal.SIGTERM, done)
    flood(port, stats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
