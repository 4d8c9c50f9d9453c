"""The CPU that a wake-up of a bare asyncio loop costs on this machine: the floor under
timerd's CPU per match minute (docs/BENCHMARKS.md, "CPU").

A loop that does nothing but sleep `1/rate` seconds at a time, for `seconds`, on its own
thread's run time (`/proc/self/task/TID/schedstat`, ns): what the kernel, the hypervisor if
any, and asyncio's own turn cost per wake-up before timerd does any work. With `--hold`, the
CPUs' wake-up latency is held at 0 µs as the daemon holds it (`[service] cpu_latency_us`).

    python3 -m bench.wakeup_floor --rate 2 --seconds 60 [--hold]
"""

from __future__ import annotations

import argparse
import asyncio
import threading
import time
from pathlib import Path

from timerd import priority
from timerd.config import ServiceConfig


def run_time_ns() -> int:
    """This thread's CPU run time so far (ns)."""
    path = Path(f"/proc/self/task/{threading.get_native_id()}/schedstat")
    return int(path.read_text().split()[0])


async def idle_loop(rate: float, seconds: float) -> tuple[int, int]:
    """Wake `rate` times a second for `seconds`; the wake-ups and the run time they took."""
    began, used = time.monotonic(), run_time_ns()
    wakes = 0
    while time.monotonic() - began < seconds:
        await asyncio.sleep(1 / rate)
        wakes += 1
    return wakes, run_time_ns() - used


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m bench.wakeup_floor", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=2.0, help="wake-ups a second")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--hold", action="store_true",
                        help="hold the CPUs' wake-up latency at 0 µs, as the daemon does")
    args = parser.parse_args(argv)
    held = priority.hold_cpu_latency(ServiceConfig(cpu_latency_us=0)) if args.hold else None
    wakes, used_ns = asyncio.run(idle_loop(args.rate, args.seconds))
    minutes = args.seconds / 60
    print(f"{args.rate:g} wake-ups/s, CPU latency {'held' if held is not None else 'not held'}: "
          f"{used_ns / 1e9 / minutes:.4f} CPU-s per minute, {used_ns / 1e3 / wakes:.0f} µs "
          f"per wake-up")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
