"""Limits for input from outside: bounded JSON, rate-limited log lines, a wrong-token lockout.

Every surface that takes bytes from someone else (the control socket, HTTP, the WebSocket,
the serial display, MQTT) uses these, so that no input, of any size or at any rate, can stall
the match loop or flood the journal (docs/service.md, "Limits and failure modes").

- `loads_bounded` parses JSON with a size and a nesting limit: a payload over the size is
  refused before it is parsed, and `[` x 100,000 is an error, never a RecursionError.
- `RateLimitedLog` writes at most one line per kind of event per interval and says how many
  were left out, at the interval's end if no later line carries the count. It is for lines
  about untrusted input and about faults that repeat (a serial display replugged, a sound
  device or a broker that comes and goes, issue 36): a line that must never be lost (a result
  that could not be written) goes to its logger directly.
- `TokenGuard` counts wrong tokens per peer and locks a peer out for a while after too many,
  and all of them together: too many from anywhere lock out every peer not known to hold the
  token.
- `TokenBucket` lets a burst of input through, then a steady rate (serial display commands).
- `CommandRate` bounds the commands a client may have applied a second (a `PeerBuckets`).
- `LoopFaults` is the loop's exception handler: what asyncio reports again and again while
  its cause lasts (an accept refused for want of file descriptors) goes through a
  `RateLimitedLog`, one line per 30 s with a count and no traceback.
- `idle_longest` picks the connection a surface at its connection cap hangs up on to take a
  new one (the control socket, HTTP).
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from types import MappingProxyType
from typing import Any, TypeVar

from timerd.i18n import LOG_TEXT

#: Lines about untrusted input are written at most this often per kind, with a count.
LOG_EVERY_S = 30.0
#: JSON nested deeper than this is refused (a command is 2 levels deep).
MAX_DEPTH = 32

Clock = Callable[[], float]
T = TypeVar("T")


class InputRefused(ValueError):
    """Input over a limit or malformed; the message says which, in English for the reply
    and the log, and `key` and `params` (the catalogue's `limit.*`) for a reader in another
    language (the hall desk's terminal, issue 46)."""

    def __init__(self, key: str, **params: Any) -> None:
        super().__init__(LOG_TEXT(key, **params))
        self.key, self.params = key, params


def loads_bounded(data: bytes | str, max_bytes: int, max_depth: int = MAX_DEPTH) -> Any:
    """`data` parsed as JSON, or InputRefused: over `max_bytes`, malformed or too deep.

    The size is checked before anything is parsed. The parse itself is json's C scanner,
    fast and linear; it stops on its own at the interpreter's recursion limit, which is
    caught here. A payload with more brackets than `max_depth` (rare: commands are flat) is
    then walked without recursion to check its depth.
    """
    if len(data) > max_bytes:
        raise InputRefused("limit.bytes", max_bytes=max_bytes)
    try:
        text = data.decode() if isinstance(data, bytes) else data
        value = json.loads(text)
    except RecursionError:
        raise InputRefused("limit.depth", max_depth=max_depth) from None
    except ValueError as exc:  # also UnicodeDecodeError: bytes that are not UTF-8
        raise InputRefused("limit.malformed", error=str(exc)) from None
    if text.count("[") + text.count("{") > max_depth and _depth_over(value, max_depth):
        raise InputRefused("limit.depth", max_depth=max_depth)
    return value


def idle_longest(connections: Iterable[T], idle_since: Callable[[T], float | None]) -> T | None:
    """The connection that has waited longest for its next request (`idle_since`: since when
    it waits, None while it is busy with one), or None when every one is busy.

    A surface at its connection cap hangs up on this one to take a new connection, and
    refuses the newcomer when there is none: a tool in the middle of a request is never cut
    off, and a flood of idle connections cannot lock out the operator's next one.
    """
    waiting = [(since, c) for c in connections if (since := idle_since(c)) is not None]
    return min(waiting, key=lambda w: w[0])[1] if waiting else None


def _depth_over(value: Any, max_depth: int) -> bool:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node \
            if isinstance(node, list) else ()
        for child in children:
            if isinstance(child, dict | list):
                if depth + 1 > max_depth:
                    return True
                stack.append((child, depth + 1))
    return False


class Throttle:
    """Counts occurrences and says when one may be logged: the first, then once per interval."""

    def __init__(self, interval_s: float = LOG_EVERY_S) -> None:
        self.interval_s = interval_s
        self.total = 0
        self.unlogged = 0
        self._next_log = float("-inf")

    def count(self, now: float) -> int:
        """Count one; returns how many to report in a log line now, or 0 to stay quiet."""
        self.total += 1
        self.unlogged += 1
        return self.due(now)

    def wait(self, now: float) -> float:
        """How long until a line may be written again."""
        return max(0.0, self._next_log - now)

    def due(self, now: float) -> int:
        """How many left out to report in a line now (0: none, or not yet)."""
        if now < self._next_log or not self.unlogged:
            return 0
        self._next_log = now + self.interval_s
        reported, self.unlogged = self.unlogged, 0
        return reported


def _suffix(reported: int) -> str:
    return f" [{reported - 1} more like this since the last such line]" if reported > 1 else ""


class RateLimitedLog:
    """A logger's lines about untrusted input: one per kind per interval, with a count.

    `kind` is a constant chosen by the caller ("refused", "401"), never text from the input,
    so the table of kinds stays small. The first line of a kind is written at once; the next
    one after the interval carries the count of those left out in between.
    """

    def __init__(self, logger: logging.Logger, interval_s: float = LOG_EVERY_S,
                 clock: Clock = time.monotonic) -> None:
        self.logger = logger
        self.interval_s = interval_s
        self.clock = clock
        self.kinds: dict[str, Throttle] = {}
        #: The last line left out of each kind, and the timer that writes it with the count
        #: at the interval's end (a storm that stops is still counted in the log).
        self._left: dict[str, tuple[int, str, tuple[Any, ...]]] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def log(self, level: int, kind: str, message: str, *args: Any,
            exc_info: bool | BaseException = False) -> None:
        """`exc_info`: True inside an `except` block, or the exception itself (a task's)."""
        throttle = self.kinds.setdefault(kind, Throttle(self.interval_s))
        if reported := throttle.count(self.clock()):
            self.logger.log(level, message + _suffix(reported), *args,
                            exc_info=exc_info or None)
            self._left.pop(kind, None)
            return
        self._left[kind] = (level, message, args)
        if kind not in self._timers:
            self._summary_later(kind, throttle)

    def _summary_later(self, kind: str, throttle: Throttle) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # another thread: the count goes with the kind's next line
            return
        self._timers[kind] = loop.call_later(throttle.wait(self.clock()), self._summary, kind)

    def _summary(self, kind: str) -> None:
        """The interval is over: the last line left out, with how many were."""
        del self._timers[kind]
        throttle = self.kinds[kind]
        if throttle.wait(self.clock()) > 0:  # the clock is not the loop's: not yet
            self._summary_later(kind, throttle)
        elif (reported := throttle.due(self.clock())) and kind in self._left:
            level, message, args = self._left.pop(kind)
            self.logger.log(level, message + _suffix(reported), *args)

    def info(self, kind: str, message: str, *args: Any) -> None:
        self.log(logging.INFO, kind, message, *args)

    def warning(self, kind: str, message: str, *args: Any) -> None:
        self.log(logging.WARNING, kind, message, *args)


class TokenGuard:
    """Wrong tokens per peer: after `max_failures` within `window_s`, refused for `lockout_s`.

    And from all peers together (`max_total` within `window_s`, None: no such limit): a
    guesser with many addresses (a NATed guest Wi-Fi, a scan) then locks out every peer for
    `lockout_s`, except those that gave the right token within `trusted_s` (`succeeded`):
    the scorekeeper's phone keeps control, and a new address learns nothing, not even
    whether its token is right. At most `max_peers` peers of each kind are remembered (the
    oldest forgotten first), so a scan from many addresses costs bounded memory.
    """

    def __init__(self, clock: Clock, max_failures: int = 5, window_s: float = 60.0,
                 lockout_s: float = 60.0, max_peers: int = 1024, *,
                 max_total: int | None = None, trusted_s: float = 3600.0) -> None:
        self.clock = clock
        self.max_failures = max_failures
        self.window_s = window_s
        self.lockout_s = lockout_s
        self.max_peers = max_peers
        self.max_total = max_total
        self.trusted_s = trusted_s
        #: peer -> (failures in the window, the window's start, locked until)
        self._peers: OrderedDict[str, tuple[int, float, float]] = OrderedDict()
        #: the same, for every peer together (the key "")
        self._all: OrderedDict[str, tuple[int, float, float]] = OrderedDict()
        #: peer -> when it last gave the right token
        self._trusted: OrderedDict[str, float] = OrderedDict()

    def locked_for(self, peer: str) -> float:
        """Seconds `peer` is still locked out; 0 when it may try."""
        now = self.clock()
        entry = self._peers.get(peer)
        alone = max(0.0, entry[2] - now) if entry is not None else 0.0
        known = self._trusted.get(peer)
        if known is not None and now - known <= self.trusted_s:
            return alone
        total = self._all.get("")
        return max(alone, total[2] - now if total is not None else 0.0)

    def failed(self, peer: str) -> None:
        now = self.clock()
        self._count(self._peers, peer, self.max_failures, now)
        if self.max_total is not None:
            self._count(self._all, "", self.max_total, now)

    def succeeded(self, peer: str) -> None:
        """`peer` gave the right token: the lock of all peers spares it for `trusted_s`."""
        self._trusted.pop(peer, None)
        self._trusted[peer] = self.clock()
        while len(self._trusted) > self.max_peers:
            self._trusted.popitem(last=False)

    def _count(self, table: OrderedDict[str, tuple[int, float, float]], key: str,
               most: int, now: float) -> None:
        failures, since, until = table.pop(key, (0, now, 0.0))
        if now - since > self.window_s:
            failures, since = 0, now
        failures += 1
        if failures >= most:
            failures, since, until = 0, now, now + self.lockout_s
        table[key] = (failures, since, until)
        while len(table) > self.max_peers:
            table.popitem(last=False)


class TokenBucket:
    """At most `burst` at once, then `rate_per_s` a second: `take(now)` says if one may pass."""

    def __init__(self, rate_per_s: float, burst: int) -> None:
        self.rate_per_s = rate_per_s
        self.burst = burst
        self._tokens = float(burst)
        self._since: float | None = None

    def take(self, now: float) -> bool:
        if self._since is not None:
            self._tokens = min(self.burst, self._tokens + (now - self._since) * self.rate_per_s)
        self._since = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True


class PeerBuckets:
    """A `TokenBucket` per peer, made at its first `take`: at most `max_peers` remembered,
    the one seen longest ago forgotten first, so a scan from many addresses costs bounded
    memory (as `TokenGuard`'s peers)."""

    def __init__(self, rate_per_s: float, burst: int, max_peers: int = 1024) -> None:
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.max_peers = max_peers
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def take(self, peer: str, now: float) -> bool:
        bucket = self._buckets.pop(peer, None) or TokenBucket(self.rate_per_s, self.burst)
        self._buckets[peer] = bucket
        while len(self._buckets) > self.max_peers:
            self._buckets.popitem(last=False)
        return bucket.take(now)


class CommandRate:
    """The commands each client (an address on the web, a user on the control socket) may
    have applied: `burst` at once, then `per_s` a second (issue 42: one client pushed 42,342
    pauses and resumes into a match in 169 s), per client (`PeerBuckets`: bounded memory).
    Asking (`status`, `commands`) is not counted: it changes nothing and is not journalled."""

    ASKS = frozenset({"status", "commands"})

    def __init__(self, per_s: float, burst: int) -> None:
        self.per_s = per_s
        self.burst = burst
        self._buckets = PeerBuckets(per_s, burst)

    def refused(self, client: str, request: Any, now: float) -> InputRefused | None:
        """None when `request` may go to the match; else why not, for the reply."""
        if isinstance(request, dict) and request.get("command") in self.ASKS:
            return None
        if self._buckets.take(client, now):
            return None
        return InputRefused("limit.rate", per_s=f"{self.per_s:g}", burst=self.burst)


class LoopFaults:
    """The loop's exception handler (`loop.set_exception_handler`). A fault asyncio reports
    each time it meets it while its cause lasts is a repeated fault like any other: at
    64 file descriptors (`ulimit -n 64`) a flood of connections had asyncio log a traceback
    per refused accept, 1355 in 10 s (issue 43 item 4); now one line per 30 s, with a count
    and what to do. Anything else goes to asyncio's own handler, as before."""

    #: asyncio's message for each such fault, and the line it becomes.
    REPEATED = MappingProxyType({
        "socket.accept() out of system resource": (
            "cannot accept connections: %s; they wait until file descriptors are free (the "
            "process's limit: systemd's LimitNOFILE=, `ulimit -n`)"),
    })

    def __init__(self, logger: logging.Logger, clock: Clock = time.monotonic) -> None:
        self._log = RateLimitedLog(logger, clock=clock)

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        line = self.REPEATED.get(context.get("message", ""))
        if line is None:
            loop.default_exception_handler(context)
            return
        self._log.log(logging.ERROR, context["message"], line,
                      context.get("exception") or "no detail")


def fd_share(wanted: int, fraction: float, what: str) -> int:
    """`wanted` connections, or fewer if they would take over `fraction` of the process's
    file descriptors (RLIMIT_NOFILE), so connections can never starve the journal, the
    results file or the sound device of one."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or wanted <= soft * fraction:
        return wanted
    most = max(1, int(soft * fraction))
    logging.getLogger("timerd").warning(
        "%s: %d connections would take too many of the %d file descriptors; %d allowed",
        what, wanted, soft, most)
    return most
