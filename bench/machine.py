"""The machine a benchmark ran on, named in every result: CPU, cores, kernel, Python."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
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


def revision(repo: Path) -> str:
    """The git commit measured, with "+dirty" if the work tree had changes."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, check=True,
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=repo, check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty.strip() else "")


def label(machine: dict[str, Any]) -> str:
    """One line naming the machine."""
    vm = ", virtual machine" if machine["virtualized"] else ""
    return (f"{machine['cpu']}, {machine['cores']} cores{vm}; Linux {machine['kernel']}; "
            f"Python {machine['python']}")
