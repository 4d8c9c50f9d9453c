"""Pairing a phone with the score desk by a one-time code (issue 43 item 2).

The table's `web.token` never travels in a link: a browser keeps every address it opened in
its history (Chromium's `History` database, its session files), fragment and all, and
whoever picks up the phone later could read the secret there. Instead:

- `timerctl desk` asks the running daemon over the control socket for a pairing code: 22
  random URL-safe characters (128 bits), good once and for `CODE_TTL_S`. Its link,
  `http://HOST:PORT/control#code=...`, is what the phone opens.
- The page exchanges the code once (`POST /api/pair`) for a device credential of its own,
  `d1.ID.SECRET`, which it keeps in the browser's storage (never in an address) and sends
  as `Authorization: Bearer ...`, as the token is. The code is dead from then on; the one
  left in the phone's history opens nothing.
- The paired devices are kept in `web-devices.json` in the state directory (mode 0600): each
  device's id, when it was paired, from which address, the browser it said it was, and the
  SHA-256 of its secret (never the secret: the file lets nobody in). They survive a restart,
  are listed by `timerctl desk --list` and revoked by `timerctl desk --revoke ID`, after
  which the credential is refused.

Bounds: at most `MAX_CODES` codes are open at once (a new one takes the place of the oldest)
and `MAX_DEVICES` devices are paired (pairing one more forgets the one paired longest ago,
logged); the file is read at most `MAX_FILE_BYTES`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("timerd.web")

#: Seconds a pairing code can be exchanged after `timerctl desk` made it.
CODE_TTL_S = 300.0
#: Pairing codes open at once; a new one takes the place of the oldest.
MAX_CODES = 8
#: Devices paired at once; pairing one more forgets the one paired longest ago.
MAX_DEVICES = 32
#: The paired devices' file, in the state directory.
DEVICES_NAME = "web-devices.json"
#: Its shape's version.
DEVICES_FORMAT = 1
#: The largest devices file read (32 devices are some 8 kB).
MAX_FILE_BYTES = 256 * 1024
#: A device credential: this prefix, its id, a dot, its secret.
CREDENTIAL_PREFIX = "d1."
#: The longest code or credential looked at (longer is wrong without a look).
MAX_SECRET_CHARS = 128
#: The most of a browser's User-Agent kept to tell devices apart in the list.
LABEL_CHARS = 60


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def label_of(user_agent: str) -> str:
    """What a browser says it is, short: the first parenthesis of its User-Agent ("Linux;
    Android 14; Pixel 7"), else its start; printable characters only."""
    inside = user_agent.partition("(")[2].partition(")")[0] or user_agent
    return "".join(c for c in inside if c.isprintable())[:LABEL_CHARS].strip()


@dataclass(frozen=True)
class Device:
    """A paired browser: its id (shown, not secret), the digest of its secret, when (wall
    time) and from which address it was paired, and what browser it said it was."""

    id: str
    digest: str
    paired: float
    address: str
    label: str


class Pairing:
    """The open pairing codes (in memory only) and the paired devices (kept in `path`).

    `clock` is the loop's clock (codes expire on it), `wall` the wall clock (when a device was
    paired, for the list). `path` None keeps devices in memory only (a test).
    """

    def __init__(self, path: Path | None, clock: Callable[[], float],
                 wall: Callable[[], float]) -> None:
        self.path = path
        self.clock = clock
        self.wall = wall
        #: The digest of each open code -> when it expires (loop time), oldest first.
        self.codes: dict[str, float] = {}
        self.devices: dict[str, Device] = load(path) if path is not None else {}
        #: When each device last sent a command (wall time), since the daemon started.
        self.last_used: dict[str, float] = {}

    def new_code(self) -> str:
        """A new pairing code, good once within CODE_TTL_S."""
        self._expire()
        while len(self.codes) >= MAX_CODES:
            del self.codes[next(iter(self.codes))]
        code = secrets.token_urlsafe(16)
        self.codes[_digest(code)] = self.clock() + CODE_TTL_S
        return code

    def redeem(self, code: str, address: str, label: str) -> tuple[Device, str] | None:
        """The new device and its credential for an open `code`, which dies; None for a code
        that is unknown, used or expired."""
        self._expire()
        if len(code) > MAX_SECRET_CHARS or self.codes.pop(_digest(code), None) is None:
            return None
        while len(self.devices) >= MAX_DEVICES:
            oldest = min(self.devices.values(), key=lambda d: d.paired)
            log.warning("web: %d devices are paired, the most kept; forgot device %s "
                        "(paired longest ago)", MAX_DEVICES, oldest.id)
            self.forget(oldest.id)
        device_id = secrets.token_hex(4)
        while device_id in self.devices:
            device_id = secrets.token_hex(4)
        secret = secrets.token_urlsafe(32)
        device = Device(device_id, _digest(secret), round(self.wall(), 3), address, label)
        self.devices[device_id] = device
        return device, f"{CREDENTIAL_PREFIX}{device_id}.{secret}"

    def device_of(self, credential: str) -> Device | None:
        """The paired device whose credential this is (compared in constant time), or None."""
        if not credential.startswith(CREDENTIAL_PREFIX) or len(credential) > MAX_SECRET_CHARS:
            return None
        device_id, _, secret = credential.removeprefix(CREDENTIAL_PREFIX).partition(".")
        device = self.devices.get(device_id)
        if device is None or not hmac.compare_digest(_digest(secret), device.digest):
            return None
        self.last_used[device_id] = self.wall()
        return device

    def forget(self, device_id: str) -> Device | None:
        """Revoke a device: its credential is refused from now on. None if none has that id."""
        self.last_used.pop(device_id, None)
        return self.devices.pop(device_id, None)

    def listing(self) -> list[dict[str, Any]]:
        """The paired devices, paired longest ago first, for `timerctl desk --list`: id,
        paired (wall time), address, label, last_used (wall time, since the start, or
        None); never a digest."""
        return [{"id": d.id, "paired": d.paired, "address": d.address, "label": d.label,
                 "last_used": self.last_used.get(d.id)}
                for d in sorted(self.devices.values(), key=lambda d: d.paired)]

    def file_bytes(self) -> bytes:
        """The devices file's contents now (written whole, mode 0600)."""
        return json.dumps({"format": DEVICES_FORMAT,
                           "devices": [asdict(d) for d in self.devices.values()]},
                          indent=1).encode() + b"\n"

    def _expire(self) -> None:
        now = self.clock()
        for digest in [d for d, until in self.codes.items() if until <= now]:
            del self.codes[digest]


def load(path: Path) -> dict[str, Device]:
    """The paired devices kept in `path`; none when there is no file. A file that cannot be
    read or is malformed is logged and its devices are not paired (they pair again); one
    that others may read is made private (0600) first."""
    try:
        with path.open("rb") as file:
            mode = os.fstat(file.fileno()).st_mode
            if stat.S_IMODE(mode) & 0o077:
                log.warning("web: %s may be read by other users (mode %04o); made 0600", path,
                            stat.S_IMODE(mode))
                os.fchmod(file.fileno(), 0o600)
            data = file.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        log.error("web: cannot read the paired devices (%s): %s; pair them again", path, exc)
        return {}
    try:
        if len(data) > MAX_FILE_BYTES:
            raise ValueError(f"over {MAX_FILE_BYTES} bytes")
        document = json.loads(data)
        if document.get("format") != DEVICES_FORMAT:
            raise ValueError(f"format {document.get('format')!r}, not {DEVICES_FORMAT}")
        devices = [Device(id=str(d["id"]), digest=str(d["digest"]), paired=float(d["paired"]),
                          address=str(d["address"]), label=str(d["label"]))
                   for d in document["devices"]]
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        log.error("web: the paired devices' file %s is malformed (%s); pair them again",
                  path, exc)
        return {}
    newest = sorted(devices, key=lambda d: d.paired)[-MAX_DEVICES:]
    return {d.id: d for d in newest}
