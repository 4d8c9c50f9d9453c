"""gpio-sim chips for the kernel tier: made through configfs, driven through sysfs.

A chip stands in for the Pi's header: lines named GPIO0..GPIO27 (the BCM numbers). A test
presses a button as its switch would: writing `pull-down` to the sim line's `pull` is the
contact closing to ground (the daemon's pull-up loses), `pull-up` lets it go. An output the
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
        return cls(name, label, int(chip.removeprefix("gpiochip")),
                   Path("/sys/devices/platform") / device / chip)

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

    def bounce(self, pin: int, toggles: int = 5) -> float:
        """A bouncing contact: `toggles` writes alternating closed and open as fast as they go
        (well inside 3 ms on a loaded machine, checked), ending closed; the first one's time."""
        fd = os.open(self._attr(pin, "pull"), os.O_WRONLY)
        try:
            t0 = time.monotonic()
            for n in range(toggles):
                os.pwrite(fd, b"pull-down" if n % 2 == 0 else b"pull-up", 0)
            spent = time.monotonic() - t0
        finally:
            os.close(fd)
        assert spent < 0.003, f"{toggles} toggles took {spent * 1000:.2f} ms, not under 3 ms"
        assert toggles % 2 == 1, "a bounce ends with the contact closed"
        return t0


class Watch(threading.Thread):
    """Samples `pins` of `chip` every WATCH_PERIOD_S; `edges[pin]` is [(monotonic, value)]."""

    def __init__(self, chip: SimChip, pins: Iterable[int]) -> None:
        super().__init__(daemon=True)
        self.chip = chip
        self.pins = list(pins)
        self.edges: dict[int, list[tuple[float, int]]] = {p: [] for p in self.pins}
        self._done = threading.Event()

    def run(self) -> None:
        fds = {p: os.open(self.chip.sysfs / f"sim_gpio{p}" / "value", os.O_RDONLY)
               for p in self.pins}
        try:
            last = {p: os.pread(fd, 4, 0)[:1] for p, fd in fds.items()}
            while not self._done.is_set():
                for p, fd in fds.items():
                    v = os.pread(fd, 4, 0)[:1]
                    if v != last[p]:
                        self.edges[p].append((time.monotonic(), int(v)))
                        last[p] = v
                time.sleep(WATCH_PERIOD_S)
        finally:
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

    def level_at(self, pin: int, t: float, initial: int = 0) -> int:
        """The pin's level at monotonic time `t` by the edges seen."""
        level = initial
        for at, v in list(self.edges[pin]):
            if at > t:
                break
            level = v
        return level


@contextlib.contextmanager
def watching(chip: SimChip, pins: Iterable[int]) -> Iterator[Watch]:
    watch = Watch(chip, pins)
    watch.start()
    try:
        yield watch
    finally:
        watch.stop()
