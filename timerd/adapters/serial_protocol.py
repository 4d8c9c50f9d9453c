"""The serial display line protocol (docs/serial-protocol.md): frames in and out, no I/O.

Every frame is one ASCII line, NMEA-style, so a small microcontroller can parse it with
`strtok` and a person can read it on a serial terminal:

    $TDS,1,running,4:59,R----,1,1,0,0,*8C0B

`$`, the fields separated by commas (the message type first, then the protocol version), `*`,
then the CRC-16/CCITT-FALSE of every byte between `$` and `*` as four upper-case hex digits,
then a line feed. A state frame (`TDS`) always carries the whole display state, so a display
that missed frames, or was just plugged in, is right again with the next one.

The display may send command lines back (`TDC`, e.g. from buttons on the display board);
they are checked here and answered with a reply line (`TDR`).

A documented format: tools may import this module, and only this one, of the serial display.
"""

from __future__ import annotations

import binascii
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from timerd.core.display import elapsed_clock, shown_clock

PROTOCOL_VERSION = 1

#: Longest line either side sends, line feed included. A state frame with four penalty clocks
#: is under 100 bytes; the bound keeps a display's line buffer small and fixed.
MAX_LINE = 128

#: Clocks read at most 99:59, what four digits can show (a longer one is clamped).
MAX_CLOCK_S = 99 * 60 + 59

#: The last 30 seconds (ITHF 4.4) are flagged from this much time left.
LAST_30_S = 30.0

#: A scoreboard shows at most this many penalty clocks per team (ISBHF: two players at most
#: serve at once); further ones are not sent.
PENALTIES_PER_SIDE = 2

STATE = "TDS"
COMMAND = "TDC"
REPLY = "TDR"

_SIDES = {"home": "H", "away": "A"}
_WORD = re.compile(r"[a-z][a-z0-9_]{0,23}")
_ARG = re.compile(r"[A-Za-z0-9_.:+-]{1,24}")


class BadLine(ValueError):
    """A line from the display that is not a valid frame; the message says why."""


@dataclass(frozen=True)
class DisplayCommand:
    """A command line from the display, as the service's `{"command", "args"}` request."""

    command: str
    args: tuple[str, ...] = ()

    def request(self) -> dict[str, Any]:
        return {"command": self.command, "args": list(self.args)}


def checksum(body: bytes) -> str:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) of `body`, as four upper-case hex digits.

    A CRC rather than NMEA's XOR byte: it also catches two flipped bits in one column and
    swapped characters, which a long cable beside a rink does produce.
    """
    return f"{binascii.crc_hqx(body, 0xFFFF):04X}"


def frame(fields: Iterable[str]) -> bytes:
    """One line: `$`, the comma-separated fields, `*`, the checksum, a line feed."""
    body = ",".join(fields).encode("ascii")
    return b"$" + body + b"*" + checksum(body).encode("ascii") + b"\n"


def flags(status: Mapping[str, Any]) -> str:
    """The phase flags as five fixed positions, each its letter or `-`.

    R: the clock runs; P: paused (an interruption, ITHF 10.1); L: the last 30 s of a period
    (ITHF 4.4; not in a sudden-death overtime, which has no end); O: overtime (ITHF 4.8,
    ISBHF 411); I: a break between periods, an intermission (ISBHF 410) or the break before
    overtime (ITHF 4.8).
    """
    phase = str(status.get("phase", ""))
    running = status.get("clock_running") is True
    live = running or phase == "paused"
    remaining = _number(status.get("remaining_s"))
    marks = (
        ("R", running),
        ("P", phase == "paused"),
        ("L", live and remaining <= LAST_30_S and status.get("count_up") is not True),
        ("O", status.get("overtime") is True),
        ("I", phase == "break"),
    )
    return "".join(letter if on else "-" for letter, on in marks)


def state_frame(status: Mapping[str, Any]) -> bytes:
    """The state frame for a status dict (`Service.status_dict()`).

    Keys of profiles and features are read when present and defaulted otherwise: `score`
    ({"home", "away"}, else 0:0), `overtime` and `count_up` (bool), `clock_face` (the clock
    field), `penalties` (a list of {"side", "player",
    "remaining_s", "running"}). Values out of shape are defaulted rather than refused: the
    display must keep showing the clock whatever else is wrong.
    """
    phase = str(status.get("phase", "idle"))
    score = status.get("score")
    score = score if isinstance(score, Mapping) else {}
    return frame([
        STATE,
        str(PROTOCOL_VERSION),
        phase if _WORD.fullmatch(phase) else "unknown",
        _main_clock(status),
        flags(status),
        str(_count(status.get("period"), 1)),
        str(_count(status.get("periods"), 1)),
        str(_count(score.get("home"), 0)),
        str(_count(score.get("away"), 0)),
        _penalties(status.get("penalties")),
    ])


def reply_frame(ok: bool, command: str) -> bytes:
    """The answer to a display's command: `ok` or `no` (refused), and the command's name."""
    return frame([REPLY, str(PROTOCOL_VERSION), "ok" if ok else "no", command])


def parse_line(line: bytes) -> DisplayCommand:
    """A line from the display (without its line feed) as a command; BadLine says why not.

    Bytes before the last `$` are ignored (noise while the display boots), so a frame is
    found even on a line that started with garbage; the checksum guards what follows.
    """
    try:
        text = line.decode("ascii").rstrip("\r")
    except UnicodeDecodeError:
        raise BadLine("not ASCII") from None
    start = text.rfind("$")
    if start < 0:
        raise BadLine("no frame start `$`")
    body, star, got = text[start + 1:].partition("*")
    if not star:
        raise BadLine("no checksum")
    want = checksum(body.encode("ascii"))
    if got.upper() != want:
        raise BadLine(f"bad checksum {got!r} (computed {want})")
    fields = body.split(",")
    if fields[0] != COMMAND:
        raise BadLine(f"unknown message type {fields[0]!r}")
    if len(fields) < 2 or fields[1] != str(PROTOCOL_VERSION):
        raise BadLine(f"unsupported protocol version {','.join(fields[1:2])!r}")
    if len(fields) < 3 or not _WORD.fullmatch(fields[2]):
        raise BadLine("no command name")
    if not all(_ARG.fullmatch(arg) for arg in fields[3:]):
        raise BadLine("malformed argument")
    return DisplayCommand(fields[2], tuple(fields[3:]))


class LineSplitter:
    """Cuts a byte stream into lines, and an overlong line into one `None` for the whole of it.

    An overlong line is thrown away up to its line feed, so a display that babbles cannot grow
    the daemon's buffer.
    """

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self._buffer = bytearray()
        self._overlong = False

    def feed(self, data: bytes) -> list[bytes | None]:
        out: list[bytes | None] = []
        self._buffer += data
        while (end := self._buffer.find(b"\n")) >= 0:
            line = bytes(self._buffer[:end])
            del self._buffer[:end + 1]
            if self._overlong:  # the end of a line already reported
                self._overlong = False
                continue
            out.append(None if end >= self.max_line else line)
        if len(self._buffer) >= self.max_line:
            if not self._overlong:
                out.append(None)
            self._overlong = True
            self._buffer.clear()
        return out


def _penalties(value: Any) -> str:
    """Running penalty clocks as `H7=1:45;A=0:30`: side, player (may be empty), time left as
    shown. A waiting penalty (its team is already two players short) is left out: its clock
    does not run, and it takes a running one's place when that ends."""
    if not isinstance(value, list):
        return ""
    items = []
    shown = dict.fromkeys(_SIDES.values(), 0)
    for penalty in value:
        if not isinstance(penalty, Mapping) or penalty.get("running") is not True:
            continue
        side = _SIDES.get(str(penalty.get("side")))
        if side is None or shown[side] >= PENALTIES_PER_SIDE:
            continue
        shown[side] += 1
        player = re.sub(r"[^A-Za-z0-9]", "", str(penalty.get("player") or ""))[:3]
        items.append(f"{side}{player}={_clock(penalty.get('remaining_s'))}")
    return ";".join(items)


def _main_clock(status: Mapping[str, Any]) -> str:
    """The clock field: the core's clock face (`clock_face`: the period's time left, a break's
    time left, or a sudden-death overtime's time played, counting up), clamped to 99:59; the
    time left where the face is missing or out of shape (and in a shootout, which has none)."""
    face = status.get("clock_face")
    face = face if isinstance(face, Mapping) else {}
    value = min(_number(face.get("value_s")), MAX_CLOCK_S)
    if face.get("kind") == "count_up":
        return elapsed_clock(value)
    if face.get("kind") in ("countdown", "break"):
        return shown_clock(value)
    return _clock(status.get("remaining_s"))


def _clock(remaining_s: Any) -> str:
    return shown_clock(min(_number(remaining_s), MAX_CLOCK_S))


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0.0
    return float(value)


def _count(value: Any, default: int) -> int:
    """A small whole number for a display (period, goals), clamped to 0..999."""
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return min(max(value, 0), 999)
