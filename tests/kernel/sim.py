"""gpio-sim chips for the kernel tier: made through configfs, driven through sysfs.

A chip stands in for the Pi's header: lines named GPIO0..GPIO27 (the BCM numbers). A test
presses a button as its switch would: writing `pull-down` to the sim line's `pull` is the
contact closing to ground (the daemon's pull-up loses), `pull-up` lets it go. The tier's
build of gpio-sim (tests/kernel/run) keeps that level when a program requests the line with a
bias, as a closed switch beats the Pi's pull-up; stock gpio-sim would take the bias as the
line's pull. An output the
daemon drives (buzzer, LED, horn relay) is read from the line's `value`. `Watch` samples lines
in a thread and keeps their edges on `time.monotonic()`, the clock of the daemon's loop.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

CONFIGFS = Path("/sys/kernel/config/gpio-sim")
#: BCM 0-27, the 40-pin header.
LINES = 28
#: lgpio's line flag for a line in use (requested by a program or the kernel).
LINE_USED = 1
#: How long a wait for a line (`SimChip.wait_value`, `Watch.wait_pulses`) lasts at most.
WAIT_S = 15.0
#: How often `Watch` samples (the edges' resolution is this plus one pass over the lines).
WATCH_PERIOD_S = 0.0002


@dataclass
class SimChip:
    """One live gpio-sim chip (`make` it; `remove` takes it down)."""

    name: str
    label: str
    number: int
    sysfs: Path

    @classmethod
    def make(cls, name: str, label: str, lines: int = LINES) -> SimChip:
        top = CONFIGFS / name
        bank = top / "bank0"
        bank.mkdir(parents=True)
        (bank / "num_lines").write_text(str(lines))
        (bank / "label").write_text(label)
        for n in range(lines):
            (bank / f"line{n}").mkdir()
            (bank / f"line{n}" / "name").write_text(f"GPIO{n}")
        (top / "live").write_text("1")
        chip = (bank / "chip_name").read_text().strip()  # gpiochipN
        device = (top / "dev_name").read_text().strip()  # gpio-sim.M
        made = cls(name, label, int(chip.removeprefix("gpiochip")),
                   Path("/sys/devices/platform") / device / chip)
        for n in range(lines):  # every switch open (a sim line starts pulled down)
            made.release(n)
        return made

    def remove(self) -> None:
        top = CONFIGFS / self.name
        (top / "live").write_text("0")
        bank = top / "bank0"
        for line in bank.glob("line*"):
            line.rmdir()
        bank.rmdir()
        top.rmdir()

    def _attr(self, pin: int, attr: str) -> Path:
        return self.sysfs / f"sim_gpio{pin}" / attr

    def press(self, pin: int) -> float:
        """Close the switch on `pin`; the monotonic time just before the write."""
        t = time.monotonic()
        self._attr(pin, "pull").write_text("pull-down")
        return t

    def release(self, pin: int) -> float:
        t = time.monotonic()
        self._attr(pin, "pull").write_text("pull-up")
        return t

    def tap(self, pin: int, hold_s: float = 0.15) -> float:
        """A press held for `hold_s` (longer than the 30 ms debounce); the press's time."""
        t = self.press(pin)
        time.sleep(hold_s)
        self.release(pin)
        return t

    def value(self, pin: int) -> int:
        return int(self._attr(pin, "value").read_text())

    def wait_value(self, pin: int, value: int, timeout_s: float = WAIT_S) -> float:
        """Read the line every millisecond until it shows `value`; the monotonic time it did
        (AssertionError after `timeout_s`)."""
        deadline = time.monotonic() + timeout_s
        while self.value(pin) != value:
            if time.monotonic() > deadline:
                raise AssertionError(f"GPIO{pin} of {self.label} did not read {value} "
                                     f"within {timeout_s} s")
            time.sleep(0.001)
        return time.monotonic()

    def requested(self, pin: int) -> bool:
        """Whether a program holds the line (the kernel's "used" flag, through lgpio)."""
        import lgpio  # noqa: PLC0415 (the tier's own lgpio: tests/kernel/run brings it)

        handle = lgpio.gpiochip_open(self.number)
        try:
            flags = lgpio.gpio_get_line_info(handle, pin)[2]
        finally:
            lgpio.gpiochip_close(handle)
        return bool(flags & LINE_USED)

    def bounce(self, pin: int, toggles: int = 5) -> tuple[float, float]:
        """A bouncing contact: `toggles` writes alternating closed and open as fast as they go
        (at real-time priority, so that nothing in the VM comes between them), ending closed;
        the first one's time and how long they took (the caller checks it: on a loaded
        machine the emulator can spread them)."""
        assert toggles % 2 == 1, "a bounce ends with the contact closed"
        writes = [b"pull-down" if n % 2 == 0 else b"pull-up" for n in range(toggles)]
        fd = os.open(self._attr(pin, "pull"), os.O_WRONLY)
        policy = os.sched_getscheduler(0)
        param = os.sched_getparam(0)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
        try:
            t0 = time.monotonic()
            for data in writes:
                os.pwrite(fd, data, 0)
            spent = time.monotonic() - t0
        finally:
            os.sched_setscheduler(0, policy, param)
            os.close(fd)
        return t0, spent


class Watch(threading.Thread):
    """Samples `pins` of `chip` every WATCH_PERIOD_S; `edges[pin]` is [(monotonic, value)],
    `initial[pin]` the level of its first sample. `watching` returns once that first sample is
    taken: a press made before it could light an output the watch would then take as its
    starting level, and miss that pulse's rise (the first pre-signal beep went missing so)."""

    def __init__(self, chip: SimChip, pins: Iterable[int]) -> None:
        super().__init__(daemon=True)
        self.chip = chip
        self.pins = list(pins)
        self.edges: dict[int, list[tuple[float, int]]] = {p: [] for p in self.pins}
        self.initial: dict[int, int] = {}
        self.ready = threading.Event()
        self._edge = threading.Condition()
        self._done = threading.Event()

    def run(self) -> None:
        fds = {p: os.open(self.chip.sysfs / f"sim_gpio{p}" / "value", os.O_RDONLY)
               for p in self.pins}
        try:
            last = {p: os.pread(fd, 4, 0)[:1] for p, fd in fds.items()}
            self.initial = {p: int(v) for p, v in last.items()}
            self.ready.set()
            while not self._done.is_set():
                for p, fd in fds.items():
                    v = os.pread(fd, 4, 0)[:1]
                    if v != last[p]:
                        with self._edge:
                            self.edges[p].append((time.monotonic(), int(v)))
                            self._edge.notify_all()
                        last[p] = v
                time.sleep(WATCH_PERIOD_S)
        finally:
            self.ready.set()  # also when opening a line failed: `watching` then says so
            for fd in fds.values():
                os.close(fd)

    def stop(self) -> None:
        self._done.set()
        self.join()

    def pulses(self, pin: int, since: float, until: float = float("inf")
               ) -> list[tuple[float, float]]:
        """(start after `since`, length) of each high pulse of `pin` that began in the span."""
        out, rise = [], None
        for t, v in list(self.edges[pin]):
            if v == 1 and since <= t < until:
                rise = t
            elif v == 0 and rise is not None:
                out.append((rise - since, t - rise))
                rise = None
        return out

    def wait_pulses(self, pin: int, since: float, count: int, timeout_s: float = WAIT_S
                    ) -> list[tuple[float, float]]:
        """`pulses(pin, since)` once `count` of them have ended, or what there is after
        `timeout_s` (the caller's check then fails, showing them)."""
        deadline = time.monotonic() + timeout_s
        with self._edge:
            while len(found := self.pulses(pin, since)) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._edge.wait(left)
        return found

    def wait_edge(self, pin: int, value: int, since: float, timeout_s: float = WAIT_S
                  ) -> float:
        """The time of `pin`'s first edge to `value` after `since` (waited for)."""
        deadline = time.monotonic() + timeout_s
        with self._edge:
            while not (at := [t for t, v in self.edges[pin] if v == value and t >= since]):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"GPIO{pin} had no edge to {value} within "
                                         f"{timeout_s} s: {self.edges[pin]}")
                self._edge.wait(left)
        return at[0]


@contextlib.contextmanager
def watching(chip: SimChip, pins: Iterable[int]) -> Iterator[Watch]:
    watch = Watch(chip, pins)
    watch.start()
    watch.ready.wait()
    assert watch.initial, "the watch could not read its lines"
    try:
        yield watch
    finally:
        watch.stop()
