"""Buttons without soldering: a USB numeric keypad, presenter or game controller (issue 29).

Linux sees such a device as an input device (evdev, /dev/input/eventN). `[keypad]` names it
by its path or its name and maps keys to the header's buttons; each key press and release
is a raw edge of that button, fed to the service's button logic like a GPIO line's
(`timerd.core.buttons`: the same debounce, long press and chords, `ports.button_bindings`).
The keypad's buttons are the service's `keypad_start_pause`, `keypad_reset`, ..., so a
keypad and the header never share a button's state.

- The device is read with the loop's reader (its descriptor is non-blocking): no thread, and
  one read(2) of at most 64 events per wake-up. A press is dated by the kernel's event
  stamp, asked for on CLOCK_MONOTONIC (`EVIOCSCLOCKID`), the loop's clock.
- It is grabbed (`EVIOCGRAB`): while timerd holds it, no console, X session or other reader
  sees its keys (a keypad's Enter must not type into a login prompt).
- Hot-plug: unplugged (the read fails with ENODEV), its held keys are released and it is
  looked for every `retry_s` until it is back; the match goes on meanwhile with the other
  buttons. The status (`keypad.connected`, `keypad.missing`) and `timerd doctor` say it is
  missing.
- Limits: presses beyond PRESS_BURST at once, then PRESSES_PER_S a second, are dropped and
  counted (`keypad.presses_dropped`, logged at most once per 30 s): a stuck or faulty device
  cannot flood the match with commands. Releases always pass. Reads beyond READ_BURST at
  once, then READS_PER_S a second, pause the reader for FLOOD_PAUSE_S (`keypad.flood_pauses`):
  a device that floods events costs the loop a bounded share (bench/keypad_flood.py).
- Lost events (issue 43 item 5): a packet's key events are taken at its SYN_REPORT. When the
  kernel says it dropped events (SYN_DROPPED: the reader was too slow, or paused), the rest
  of that packet is dropped and the keys are read back from the device (EVIOCGKEY), as the
  evdev protocol prescribes (`keypad.resyncs`): a release lost is taken then, and a key found
  down that was never seen pressed is no press, so a lost release can never fire RESET's long
  press and a resync never starts one.
- Which device: of several of one name, the first in numeric order (event2 before event10)
  with the mapped keys, said in `keypad.choice` and by `timerd doctor`.
- Without python-evdev (`pip install 'timerd[keypad]'`) or without the device, the daemon
  logs why and runs on; a keypad is never a reason not to start.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import glob
import logging
import re
import struct
import time
from collections.abc import Iterable
from types import TracebackType
from typing import Any

from timerd.config import KeypadConfig
from timerd.limits import RateLimitedLog, TokenBucket
from timerd.ports import Control, Spawned, button_bindings, kernel_stamp

log = logging.getLogger("timerd.keypad")

#: The keypad's buttons in the service's table: `keypad_reset`.
PREFIX = "keypad_"
#: Key presses taken: this many at once, then PRESSES_PER_S a second (no one presses faster).
PRESS_BURST = 20
PRESSES_PER_S = 10.0
#: Linux's EVIOCSCLOCKID, _IOW('E', 0xa0, int): the clock of the device's event stamps.
EVIOCSCLOCKID = 0x400445A0
#: Linux's EV_KEY (keys and buttons); a key event's value: 0 up, 1 down, 2 autorepeat.
EV_KEY = 1
#: Linux's EV_SYN and its codes: SYN_REPORT ends a packet of events that happened together;
#: SYN_DROPPED says the kernel's buffer for this reader overflowed and events were lost.
EV_SYN, SYN_REPORT, SYN_DROPPED = 0, 0, 3
#: Reads (each at most 64 events) a second, beyond a burst of READ_BURST: a keypad typed on
#: fast wakes its reader a few dozen times a second, a faulty or hostile device can send tens
#: of thousands of events. Past it the device is not read for FLOOD_PAUSE_S, the kernel drops
#: what it sends meanwhile (SYN_DROPPED) and its keys are read back from the device. The
#: bound of what a flooding device costs the loop: bench/keypad_flood.py measures it at a
#: signal's onset.
READS_PER_S = 100.0
READ_BURST = 32
#: A device past its budget is not read for this long.
FLOOD_PAUSE_S = 0.25
INSTALL_HINT = "pip install 'timerd[keypad]' (python-evdev)"


def event_paths() -> list[str]:
    """/dev/input/event*, in the kernel's numeric order (event2 before event10)."""
    return sorted(glob.glob("/dev/input/event*"),
                  key=lambda path: [int(part) if part.isdigit() else part
                                    for part in re.split(r"(\d+)", path)])


def lookup(wanted: str, keys: Iterable[str] = ()) -> tuple[Any | None, str]:
    """The input device `wanted` (a path, or a device's name), opened, and which of several
    it is ('' if the only one); or None and why not.

    By name, every /dev/input/event* this user can read is opened and asked its name, and
    those it cannot read are counted in the reason (the `input` group). Many USB keypads and
    keyboards show as two or three devices of one name (the keys, the media keys, a mouse
    part): the one taken is the first in numeric order (event2 before event10) that has any
    of `keys` (names: KEY_KPENTER), the same one at every start (issue 43 item 5)."""
    try:
        import evdev  # noqa: PLC0415 (an optional extra)
    except ImportError:
        return None, f"python-evdev is not installed: {INSTALL_HINT}"
    by_path = wanted.startswith("/")
    codes = {getattr(evdev.ecodes, key, None) for key in keys}
    denied: list[str] = []
    keyless: list[str] = []
    named: list[str] = []
    taken: Any | None = None
    for path in [wanted] if by_path else event_paths():
        try:
            device = evdev.InputDevice(path)
        except PermissionError:
            denied.append(path)
            continue
        except OSError as exc:  # gone between the listing and the open, or no such path
            if by_path:
                return None, f"{path} is not there ({exc.strerror}; not plugged in?)"
            continue
        if by_path:
            return device, ""
        try:
            match = device.name == wanted
            keyed = match and (not codes or bool(
                codes & set(device.capabilities().get(evdev.ecodes.EV_KEY, ()))))
        except OSError:  # unplugged while it was asked
            match = keyed = False
        (named if keyed else keyless if match else []).append(path)
        if keyed and taken is None:
            taken = device
        else:
            device.close()
    if taken is not None:
        return taken, ("" if len(named) == 1 else
                       f"the first in numeric order of {len(named)} devices named "
                       f"{wanted!r} with its keys: {', '.join(named)}")
    if denied:
        return None, (f"cannot read {', '.join(denied)}: add the user to the input group"
                      + ("" if by_path else f" (none it can read is named {wanted!r})"))
    if keyless:
        return None, (f"{', '.join(keyless)} named {wanted!r} has none of the keys [keypad] "
                      "maps (`evtest` shows what its keys send)")
    return None, (f"no input device is named {wanted!r} (not plugged in? `timerd doctor` "
                  "lists those here)")


def devices() -> list[tuple[str, str]]:
    """Every input device this user can read: (path, name), for `timerd doctor`."""
    try:
        import evdev  # noqa: PLC0415
    except ImportError:
        return []
    out = []
    for path in event_paths():
        with contextlib.suppress(OSError):
            device = evdev.InputDevice(path)
            out.append((path, device.name))
            device.close()
    return out


class Keypad:
    """The keypad's buttons (`bindings`, `chords`) and the device they are read from, kept
    open across unplugging; an async context manager."""

    def __init__(self, config: KeypadConfig, control: Control, debounce_s: float,
                 long_press_s: float) -> None:
        self.config = config
        self.control = control
        self.bindings, self.chords = button_bindings(config.keys(), debounce_s, long_press_s,
                                                     PREFIX)
        self.device: Any | None = None  # the open, grabbed evdev.InputDevice
        #: Why the device is not open now ("" while it is).
        self.missing = "not looked for yet"
        self.presses_dropped = 0
        #: Which of several devices of its name it is ('' if the only one: `lookup`).
        self.choice = ""
        #: Times the kernel dropped its events (SYN_DROPPED) and its keys were read back.
        self.resyncs = 0
        #: Times it sent more than it may and was not read for FLOOD_PAUSE_S.
        self.flood_pauses = 0
        self._packet: list[Any] = []  # the key events since the last SYN_REPORT
        self._dropped_at: float | None = None  # the SYN_DROPPED's stamp, until its SYN_REPORT
        self._reads = TokenBucket(READS_PER_S, READ_BURST)
        self._paused: asyncio.TimerHandle | None = None
        self._codes: dict[int, str] = {}  # a key's code: its button in the service's table
        self._held: dict[str, set[int]] = {}  # a button: its keys down now
        self._presses = TokenBucket(PRESSES_PER_S, PRESS_BURST)
        self._log = RateLimitedLog(log, clock=control.now)
        self._lost: asyncio.Future[str] | None = None
        self._task: Spawned | None = None

    def map_keys(self, ecodes: Any) -> None:
        """Each configured key name as its code (`evdev.ecodes`); a name this evdev does not
        know (the config checks names when it is installed) is left out with a log line."""
        for name, keys in self.config.keys().items():
            for key in keys:
                code = getattr(ecodes, key, None)
                if isinstance(code, int):
                    self._codes[code] = PREFIX + name
                else:
                    log.warning("keypad: no key is called %s: %s does nothing", key, name)

    async def __aenter__(self) -> Keypad:
        try:
            from evdev import ecodes  # noqa: PLC0415 (an optional extra)
        except ImportError:
            self.missing = f"python-evdev is not installed: {INSTALL_HINT}"
            log.warning("keypad %s: python-evdev is not installed, so its keys do nothing "
                        "(every other button works): %s", self.config.device, INSTALL_HINT)
            return self
        self.map_keys(ecodes)
        self._task = self.control.spawn("keypad", self._keep_open)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._task is not None:
            await self._task.stop()
        self._close()

    def status_extra(self) -> dict[str, Any]:
        """For `timerctl status`: whether the keypad is there, and if not, why."""
        return {"keypad": {
            "device": self.config.device, "connected": self.device is not None,
            "path": None if self.device is None else str(self.device.path),
            "missing": self.missing or None, "presses_dropped": self.presses_dropped,
            "choice": self.choice or None, "resyncs": self.resyncs,
            "flood_pauses": self.flood_pauses}}

    # -- the device --------------------------------------------------------------------------

    async def _keep_open(self) -> None:
        """Open the device, read it until it is lost, and look for it again every retry_s."""
        loop = asyncio.get_running_loop()
        told = ""
        while True:
            try:
                device, why = self._open()
            except OSError as exc:  # unplugged halfway through opening it
                device, why = None, f"lost while it was opened ({exc})"
            if device is None:
                if why != told:  # once per reason, not once per look
                    log.warning("keypad %s: %s; looking for it every %g s", self.config.device,
                                why, self.config.retry_s)
                    told = why
                self.missing = why
                await asyncio.sleep(self.config.retry_s)
                continue
            told, self.missing, self.device, self.choice = "", "", device, why
            # A loose cable writes these once per 30 s, with a count.
            self._log.info("found", "keypad %s: %s (%s) grabbed; its keys are buttons now%s",
                           self.config.device, device.name, device.path,
                           f" ({why})" if why else "")
            self._lost = loop.create_future()
            loop.add_reader(device.fd, self._readable)
            reason = await self._lost
            self.missing = f"lost ({reason})"
            self._log.warning("lost", "keypad %s: lost (%s); looking for it every %g s",
                              self.config.device, reason, self.config.retry_s)
            told = self.missing

    def _open(self) -> tuple[Any | None, str]:
        """The device opened, grabbed and on the monotonic clock, and which of several it is
        (`lookup`); or None and why not."""
        device, why = lookup(self.config.device, self.config.key_names())
        if device is None:
            return None, why
        try:
            device.grab()
        except OSError as exc:
            device.close()
            if exc.errno == errno.EBUSY:
                return None, (f"{device.path} is grabbed by another program (another timerd? "
                              "a remapping daemon?)")
            return None, f"cannot grab {device.path}: {exc}"
        # On an old kernel that cannot, the stamps stay realtime: kernel_stamp does not take
        # them, and a press is dated when it is read.
        with contextlib.suppress(OSError):
            fcntl.ioctl(device.fd, EVIOCSCLOCKID, struct.pack("i", time.CLOCK_MONOTONIC))
        self._packet.clear()
        self._dropped_at = None
        return device, why

    def _readable(self) -> None:
        """The loop's reader: one read(2) (at most 64 events), within the device's budget
        (READS_PER_S); each packet's key events handled at its SYN_REPORT."""
        device = self.device
        if device is None:
            return
        if not self._reads.take(self.control.now()):
            self._pause(device)
            return
        try:
            events = list(device.read())
        except BlockingIOError:
            return
        except OSError as exc:  # ENODEV: unplugged
            self._gone(exc.strerror or str(exc))
            return
        for event in events:
            if event.type == EV_KEY:
                if self._dropped_at is None:
                    self._packet.append(event)
            elif event.type == EV_SYN and event.code == SYN_DROPPED:
                self._packet.clear()  # the packet it cut short is incomplete: not taken
                self._dropped_at = event.timestamp()
            elif event.type == EV_SYN and event.code == SYN_REPORT:
                if self._dropped_at is not None:
                    if not self._resync(device):
                        return
                else:
                    for key in self._packet:
                        self.key(key.code, key.value, key.timestamp())
                self._packet.clear()

    def _resync(self, device: Any) -> bool:
        """After SYN_DROPPED and its SYN_REPORT, the keys as the device holds them now
        (EVIOCGKEY), as the evdev protocol prescribes (issue 43 item 5): a key this side
        holds that is up there lost its release, which is taken now, dated by the drop; a
        key down there that this side never saw pressed is no press (never a long press from
        a resync): its release is ignored like that of any press not seen. False: the device
        is lost."""
        dropped_at, self._dropped_at = self._dropped_at, None
        try:
            down = set(device.active_keys())
        except OSError as exc:
            self._gone(exc.strerror or str(exc))
            return False
        self.resyncs += 1
        at = None if dropped_at is None else kernel_stamp(self.control, dropped_at)
        released = []
        for name, held in self._held.items():
            if held and not held & down:
                released.append(name)
                self.control.button_edge(name, False, self.control.now() if at is None else at)
            held.intersection_update(down)
        self._log.warning("released" if released else "dropped",
                          "keypad %s: the kernel dropped its events (SYN_DROPPED); keys read "
                          "back from the device%s",
                          self.config.device,
                          f", released: {', '.join(released)}" if released else "")
        return True

    def _pause(self, device: Any) -> None:
        """Past its budget: not read for FLOOD_PAUSE_S (what it sends meanwhile, the kernel
        drops and says so with SYN_DROPPED)."""
        if self._paused is not None:
            return
        self.flood_pauses += 1
        self._log.warning("flood", "keypad %s: it sends more than %d reads of events at "
                          "once or %g a second; not read for %g s (a faulty device?)",
                          self.config.device, READ_BURST, READS_PER_S, FLOOD_PAUSE_S)
        loop = asyncio.get_running_loop()
        loop.remove_reader(device.fd)
        self._paused = loop.call_later(FLOOD_PAUSE_S, self._resume, device)

    def _resume(self, device: Any) -> None:
        self._paused = None
        current = self.device
        if current is not None and current is device:  # not lost meanwhile
            asyncio.get_running_loop().add_reader(current.fd, self._readable)

    def key(self, code: int, value: int, stamp: float) -> None:
        """A key event: `value` 1 down, 0 up (2, the keyboard's autorepeat, is no edge);
        `stamp` the kernel's time of it. A button is down while any of its keys is."""
        name = self._codes.get(code)
        if name is None or value not in (0, 1):
            return
        held = self._held.setdefault(name, set())
        was = bool(held)
        now = self.control.now()
        if value == 1:
            if code in held:
                return
            if not self._presses.take(now):
                self.presses_dropped += 1
                self._log.warning("flood", "keypad %s: more than %d presses at once or %g a "
                                  "second; a press of %s was dropped", self.config.device,
                                  PRESS_BURST, PRESSES_PER_S, name)
                return
            held.add(code)
        else:
            if code not in held:  # its press was dropped, or came before the device was open
                return
            held.discard(code)
        if bool(held) != was:
            at = kernel_stamp(self.control, stamp)
            self.control.button_edge(name, bool(held), now if at is None else at)

    def _gone(self, reason: str) -> None:
        """The device is lost: its held keys let go (a RESET held as it was pulled out must
        not act), the reader stopped, and `_keep_open` told."""
        now = self.control.now()
        for name, held in self._held.items():
            if held:
                held.clear()
                self.control.button_edge(name, False, now)
        self._close()
        if self._lost is not None and not self._lost.done():
            self._lost.set_result(reason)

    def _close(self) -> None:
        if self._paused is not None:
            self._paused.cancel()
            self._paused = None
        device, self.device = self.device, None
        if device is None:
            return
        # The loop may be closing (RuntimeError), the device gone (ValueError, OSError).
        with contextlib.suppress(RuntimeError, ValueError, OSError):
            asyncio.get_running_loop().remove_reader(device.fd)
        with contextlib.suppress(OSError):
            device.close()  # the grab ends with the descriptor
