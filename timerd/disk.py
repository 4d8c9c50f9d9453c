"""The disk writer: one thread for every file write that can wait on the storage device.

An fsync on an SD card takes tens to hundreds of milliseconds, and a full, read-only or dying
card can make a write fail or hang. None of that may reach the event loop, which times every
buzzer edge: the match journal, the results file and the hall outbox hand their writes to this
thread as jobs (`submit`) and go on at once (issue 16). Each job's outcome comes back to the
loop as futures, so a command that must be durable before it is acknowledged awaits its line:
the reply waits, the loop does not.

Jobs run one at a time in the order they were submitted, whatever file they touch. That order
is the durability contract of docs/service.md: the journal line of the command that ended a
match is on disk before the match's results line, and that before the journal is compacted.

`inline=True` runs each job at once in the caller instead (a test, or a tool with nothing to
time): the same outcomes and faults, without the threads.

A job that is not done `slow_s` after it was submitted is answered "not on disk yet" (a second
thread watches, since the writer itself may be stuck in the kernel), so a reply waits at most
that long on a hanging card. A job that fails is a storage fault: kept by kind (`journal`,
`results`, `outbox`) until a job of the same kind succeeds, logged once when it begins and once
when it ends, and shown in `status["storage"]`, on the LEDs and in the replies (docs/service.md,
"Limits and failure modes").
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import logging
import os
import stat
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from timerd.core.frozen import ReadOnlyDict

log = logging.getLogger("timerd.storage")

#: Real seconds a job may take before its waiters are told it is not on disk yet.
SLOW_S = 1.0
#: Real seconds a stop waits for the queued jobs before it gives up on a hanging device.
STOP_WAIT_S = 5.0

#: A fault's listener: called on the loop thread with every kind's fault text, on each change.
FaultListener = Callable[[dict[str, str]], object]


@dataclass(eq=False)
class Write:
    """One submitted job. `done` resolves on the loop when it has run: None when it is on
    disk, else why not; `reply` the same, or earlier with "not on disk yet" when it is slow."""

    what: str
    work: Callable[[], None]
    submitted: float  # time.monotonic()
    done: asyncio.Future[str | None]
    reply: asyncio.Future[str | None]
    told_slow: bool = False


@dataclass
class DiskWriter:
    """The writer thread and its watch, started with the first job; `stop()` drains both."""

    loop: asyncio.AbstractEventLoop | None = None  # None: the running loop, at the first job
    slow_s: float = SLOW_S
    inline: bool = False
    #: What is wrong now, by kind (`journal`, `results`, `outbox`): the last error's text.
    faults: dict[str, str] = field(default_factory=dict)
    listeners: list[FaultListener] = field(default_factory=list)
    #: Results kept in memory (and as copies) until the results file takes them.
    pending_results: int = 0
    _queue: deque[Write] = field(default_factory=deque)
    _current: Write | None = None
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _threads: list[threading.Thread] = field(default_factory=list)
    _closing: bool = False

    async def __aenter__(self) -> DiskWriter:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await asyncio.to_thread(self.stop)  # the last lines (a `stopped` mark) still go out

    def submit(self, what: str, work: Callable[[], None]) -> Write:
        """Queue `work` (file operations; an OSError is a fault of kind `what`)."""
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        write = Write(what, work, time.monotonic(), self.loop.create_future(),
                      self.loop.create_future())
        if self.inline:
            self._settled(write, self._attempt(write))
            return write
        with self._cond:
            self._queue.append(write)
            self._cond.notify_all()
            if not self._threads:
                self._closing = False
                self._threads = [threading.Thread(target=self._run, name="disk-writer",
                                                  daemon=True),
                                 threading.Thread(target=self._watch, name="disk-watch",
                                                  daemon=True)]
                for thread in self._threads:
                    thread.start()
        return write

    def stop(self, timeout_s: float = STOP_WAIT_S) -> None:
        """Run what is queued, then end the threads (a later `submit` starts them again)."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
            threads, self._threads = self._threads, []
        deadline = time.monotonic() + timeout_s
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                log.error("the storage did not finish its writes in %g s; stopping without "
                          "them", timeout_s)

    def status_extra(self) -> dict[str, Any]:
        """`status["storage"]`: whether every write works, what fails, and the results not
        yet in the results file (one is, for the moment of its write, at every match end)."""
        # Read-only as made: a dispatch's document keeps it as it is (issue 44 item 8).
        return {"storage": ReadOnlyDict({"ok": not self.faults,
                                         "faults": ReadOnlyDict(self.faults),
                                         "pending_results": self.pending_results})}

    def fault(self, what: str, text: str | None) -> None:
        """Set (or with None clear) a fault found outside a job, e.g. no journal at start."""
        self._record(what, text)

    # -- the writer thread and its watch ---------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue:
                    return
                write = self._current = self._queue.popleft()
            error = self._attempt(write)
            with self._cond:
                self._current = None
                self._cond.notify_all()
            self._to_loop(self._settled, write, error)

    @staticmethod
    def _attempt(write: Write) -> str | None:
        try:
            write.work()
            error = None
        except OSError as exc:
            error = describe(exc)
        except Exception as exc:  # a bug in a job must not end the writer
            log.exception("storage job %s failed", write.what)
            error = f"internal error: {exc!r}"
        return error

    def _watch(self) -> None:
        """Tell a job's waiters when it is `slow_s` old and still not done."""
        with self._cond:
            while self._queue or self._current is not None or not self._closing:
                waiting = [w for w in (self._current, *self._queue)
                           if w is not None and not w.told_slow]
                if not waiting:
                    self._cond.wait()
                    continue
                left = waiting[0].submitted + self.slow_s - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                waiting[0].told_slow = True
                self._to_loop(self._slow, waiting[0])

    def _to_loop(self, callback: Callable[..., None], *args: Any) -> None:
        assert self.loop is not None  # set by the first submit, before any thread runs
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            self.loop.call_soon_threadsafe(callback, *args)

    # -- back on the loop ------------------------------------------------------------------

    def _slow(self, write: Write) -> None:
        if not write.reply.done():
            write.reply.set_result(f"not on disk after {self.slow_s:g} s: the storage is slow "
                                   "or hangs; the write goes on")

    def _settled(self, write: Write, error: str | None) -> None:
        for future in (write.done, write.reply):
            if not future.done():
                future.set_result(error)
        self._record(write.what, error)

    def _record(self, what: str, error: str | None) -> None:
        before = self.faults.get(what)
        if error == before:
            return
        if error is None:
            del self.faults[what]
            log.warning("storage: %s is written again", what)
        elif before is None:
            log.error("storage: %s cannot be written (%s); the match goes on", what, error)
            self.faults[what] = error
        else:
            self.faults[what] = error
        for listener in self.listeners:
            try:
                listener(dict(self.faults))
            except Exception:
                log.exception("storage fault listener %r failed", listener)


def describe(exc: OSError) -> str:
    """An OSError as the operator reads it: what failed, where, and the errno's name."""
    name = errno.errorcode.get(exc.errno or 0, "")
    where = f" {exc.filename}" if exc.filename else ""
    return f"{exc.strerror or exc}{where}" + (f" ({name})" if name else "")


# -- file operations, run on the writer thread -------------------------------------------------


class LineFile:
    """A file of lines (JSON lines) that grows by whole, durable lines, or is replaced whole.

    Used on the writer thread only. An append that finds the file ending without a newline (a
    line torn by an earlier crash, or written by hand) starts on a fresh line, so the new
    record is never glued onto the fragment and lost with it; an append that fails cuts the
    file back to where it was, so a half-written line never stays behind.
    """

    def __init__(self, path: Path, keep_open: bool = False) -> None:
        self.path = path
        self.keep_open = keep_open  # the journal, which nobody else touches; not results.jsonl
        self.behind = False  # a write failed: the file lacks lines until it is written whole
        self._fd: int | None = None

    def append(self, data: bytes, whole: Callable[[], bytes] | None = None) -> None:
        """Add `data` at the end. If an earlier write failed, the file lacks what it took:
        given `whole` (what makes all the file should hold now), it is written whole
        instead."""
        if self.behind and whole is not None:
            self.replace(whole())
            return
        try:
            self._append(data)
        except OSError as exc:
            self.behind = True
            exc.filename = exc.filename or str(self.path)  # os.write names no file
            raise

    def _append(self, data: bytes) -> None:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                               0o644)
        fd = self._fd
        try:
            size = os.fstat(fd).st_size
            if size and _last_byte(self.path, size) != b"\n":
                data = b"\n" + data
            try:
                _write_all(fd, data)
                os.fsync(fd)
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                raise
        finally:
            if not self.keep_open:
                self.close()

    def replace(self, data: bytes) -> None:
        """Make `data` the whole file, atomically: a crash leaves the old or the new one."""
        self.close()  # an open descriptor would go on writing to the replaced file
        self.behind = True  # until it is done
        if data:
            replace_file(self.path, data)
        else:
            # Emptying needs no new block, so it works on a full card: cut it in place.
            with contextlib.suppress(FileNotFoundError):
                fd = os.open(self.path, os.O_WRONLY | os.O_CLOEXEC)
                try:
                    os.ftruncate(fd, 0)
                    os.fsync(fd)
                finally:
                    os.close(fd)
        self.behind = False

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def hold_lock(path: Path) -> int | None:
    """Lock `path` (made if missing) for as long as this process keeps the returned
    descriptor open; None when another process holds it. A directory one daemon writes
    (its journal's, its hall outbox) is never shared by a second (issue 30 item 3, 41 item 4)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def replace_file(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write `path` whole through a temporary file (of `mode`: 0600 for a secret's), fsynced,
    renamed, the directory fsynced."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW,
                     mode)
        try:
            # A temporary file left by a crash keeps its old mode: never more than `mode`.
            os.fchmod(fd, stat.S_IMODE(os.fstat(fd).st_mode) & mode)
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_directory(path.parent)


def fsync_directory(directory: Path) -> None:
    """Make a rename or an unlink in `directory` survive a power loss."""
    fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _last_byte(path: Path, size: int) -> bytes:
    # An O_APPEND descriptor is write-only: read the end through a second one.
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.pread(fd, 1, size - 1)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def on_ram(path: Path) -> bool | None:
    """Whether `path` lies on a RAM file system (tmpfs), from /proc/mounts; None if unknown."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return None
    target = os.path.realpath(path)
    best, fstype = "", ""
    for line in mounts:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, fstype = point, fields[2]
    return fstype in ("tmpfs", "ramfs") if best else None
