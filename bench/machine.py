"""The machine a benchmark ran on, named in every result: CPU, cores, kernel, Python."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any


def _cpuinfo() -> dict[str, str]:
    info: dict[str, str] = {}
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return info
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            info.setdefault(key.strip(), value.strip())
    return info


def cores() -> int:
    """The cores this process may run on (what CPU burners must fill)."""
    return len(os.sched_getaffinity(0))


def describe() -> dict[str, Any]:
    cpu = _cpuinfo()
    try:
        slack_ns: int | None = int(Path("/proc/self/timerslack_ns").read_text())
    except OSError:
        slack_ns = None
    return {
        "cpu": cpu.get("model name") or cpu.get("Model") or platform.processor() or "unknown",
        "cores": cores(),
        "virtualized": "hypervisor" in cpu.get("flags", "").split(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "timer_slack_ns": slack_ns,
    }


#: What `bench/run` itself writes: an earlier run's results do not change the code measured.
OWN_OUTPUTS = (":!bench/results.json", ":!docs/BENCHMARKS.md")


def revision(repo: Path) -> str:
    """The git commit measured, with "+dirty" if the work tree had changes (other than an
    earlier run's results)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, check=True,
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                ".", *OWN_OUTPUTS],
                               cwd=repo, check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty.strip() else "")


def label(machine: dict[str, Any]) -> str:
    """One line naming the machine."""
    vm = ", virtual machine" if machine["virtualized"] else ""
    return (f"{machine['cpu']}, {machine['cores']} cores{vm}; Linux {machine['kernel']}; "
            f"Python {machine['python']}")


def _cpu_ticks() -> tuple[int, int, int]:
    """(busy, total, steal) jiffies of all CPUs since boot, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    steal = fields[7] if len(fields) > 7 else 0
    total = sum(fields[:8])
    return total - idle, total, steal


def _pressure_us() -> int | None:
    """Microseconds in which some runnable task waited for a CPU (PSI), if the kernel says."""
    try:
        some = Path("/proc/pressure/cpu").read_text().split("\n", 1)[0]
    except OSError:
        return None
    return int(some.rsplit("total=", 1)[1])


class Load:
    """How busy the machine was while inside: every process, the bench's own included.

    `busy_pct` is the share of all CPUs' time not idle, `steal_pct` the share a hypervisor
    gave to other guests, `pressure_pct` the share of time some task waited for a CPU.
    A benchmark on a shared machine is only as quiet as these say.
    """

    def __enter__(self) -> Load:
        self._start = (_cpu_ticks(), _pressure_us(), time.monotonic())
        self.figures: dict[str, float | None] = {}
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        (busy0, total0, steal0), pressure0, t0 = self._start
        busy1, total1, steal1 = _cpu_ticks()
        pressure1, t1 = _pressure_us(), time.monotonic()
        ticks = max(1, total1 - total0)
        waited = None if pressure0 is None or pressure1 is None else (
            100 * (pressure1 - pressure0) / 1e6 / (t1 - t0))
        self.figures = {"busy_pct": 100 * (busy1 - busy0) / ticks,
                        "steal_pct": 100 * (steal1 - steal0) / ticks,
                        "pressure_pct": waited,
                        "loadavg_1min": float(Path("/proc/loadavg").read_text().split()[0])}
