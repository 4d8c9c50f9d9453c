"""What a USB keypad that floods key events costs a signal's onset (issue 43 item 5):
`python -m bench.keypad_flood [SECONDS]`.

The keypad adapter (`timerd.adapters.keypad.Keypad`, with the service it drives) reads a
stand-in device: a pipe whose bytes are the kernel's `struct input_event`, parsed by
python-evdev's own reader (`evdev.eventio.EventIO.read`, the code that reads a real
/dev/input/eventN). A second process writes events into it as fast as the pipe takes them:
autorepeats of a mapped key and presses of an unmapped one, each packet with its SYN_REPORT,
far more than any USB device sends (a keyboard reports at most 1000 times a second). The
probe stands for a signal's onset: a timer due every 20 ms on the same loop, as the service's
signals are, and how late it runs (`time.monotonic` at the callback less its due instant).

Three phases of SECONDS each (default 10): `idle` (nothing sent), `flood` (the adapter as it
is: its reads bounded by READS_PER_S), and `unbounded` (READS_PER_S and READ_BURST raised out
of reach: what the bound saves). Printed as JSON: per phase the probe's lateness (p50, p99,
max in ms), the loop process's CPU seconds per second, and events read.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import statistics
import sys
import time
from typing import Any

from evdev import ecodes
from evdev.eventio import EventIO

from timerd import config
from timerd.adapters import keypad as keypad_mod
from timerd.app import attach
from timerd.config import profiles
from timerd.core.match import Match
from timerd.service import Service

PROBE_EVERY_S = 0.02
#: The flooder: one write of 28 packets (autorepeat of KP5, KEY_A down and up; 4032 bytes, at
#: most PIPE_BUF, so never cut short within an event), forever.
FLOODER = f"""
import os, struct, sys, time
event = struct.Struct("llHHi")  # struct input_event, 64-bit: timeval, type, code, value
fd = int(sys.argv[1])
packets = b""
for _ in range(28):
    sec = int(time.monotonic())
    packets += event.pack(sec, 0, {ecodes.EV_KEY}, {ecodes.KEY_KP5}, 2)
    packets += event.pack(sec, 0, 0, 0, 0)
    packets += event.pack(sec, 0, {ecodes.EV_KEY}, {ecodes.KEY_A}, 1)
    packets += event.pack(sec, 0, 0, 0, 0)
    packets += event.pack(sec, 0, {ecodes.EV_KEY}, {ecodes.KEY_A}, 0)
    packets += event.pack(sec, 0, 0, 0, 0)
while True:
    os.write(fd, packets)
"""


class PipeDevice(EventIO):
    """An input device as the adapter uses it; evdev's own `read()` parses its bytes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.name, self.path = "Bench Keypad", "/dev/input/bench"
        self.events = 0

    def read(self) -> Any:
        events = list(super().read())
        self.events += len(events)
        return events

    def grab(self) -> None:
        pass

    def active_keys(self) -> list[int]:
        return []

    def close(self) -> None:
        pass


async def _phase(pad: keypad_mod.Keypad, device: PipeDevice, write: int, seconds: float,
                 flood: bool) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    flooder = (await asyncio.create_subprocess_exec(sys.executable, "-c", FLOODER, str(write),
                                                    pass_fds=(write,)) if flood else None)
    late: list[float] = []
    done = loop.create_future()
    first = loop.time() + 0.5
    count = int(seconds / PROBE_EVERY_S)

    def probe(due: float, left: int) -> None:
        late.append((time.monotonic() - due) * 1e3)
        if left:
            loop.call_at(due + PROBE_EVERY_S, probe, due + PROBE_EVERY_S, left - 1)
        else:
            done.set_result(None)

    device.events = 0
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    loop.call_at(first, probe, first, count)
    await done
    used = resource.getrusage(resource.RUSAGE_SELF)
    if flooder is not None:
        flooder.kill()
        await flooder.wait()
    late.sort()
    spent = used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime
    return {"probe_late_ms": {"p50": round(statistics.median(late), 3),
                              "p99": round(late[int(len(late) * 0.99)], 3),
                              "max": round(late[-1], 3)},
            "probes": len(late), "cpu_s_per_s": round(spent / (seconds + 0.5), 3),
            "events_read": device.events, "flood_pauses": pad.flood_pauses}


async def _measure(seconds: float) -> dict[str, Any]:
    cfg = config.load(None, ['keypad.device="Bench Keypad"'])
    service = Service(Match(profiles.load("ithf")))
    pad = keypad_mod.Keypad(cfg.keypad, service, cfg.gpio.debounce_ms / 1000,
                            cfg.gpio.long_press_s)
    attach(service, pad)
    read, write = os.pipe()
    os.set_blocking(read, False)
    device = PipeDevice(read)
    keypad_mod.lookup = lambda wanted, keys=(): (device, "")
    task = asyncio.create_task(service.run())
    out: dict[str, Any] = {"seconds": seconds, "reads_per_s": keypad_mod.READS_PER_S,
                           "read_burst": keypad_mod.READ_BURST}
    async with pad:
        await asyncio.sleep(0.1)
        out["idle"] = await _phase(pad, device, write, seconds, flood=False)
        out["flood"] = await _phase(pad, device, write, seconds, flood=True)
        pad._reads = keypad_mod.TokenBucket(float("inf"), 2**62)  # the bound lifted
        out["unbounded"] = await _phase(pad, device, write, seconds, flood=True)
    task.cancel()
    return out


def main() -> int:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    print(json.dumps(asyncio.run(_measure(seconds)), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
