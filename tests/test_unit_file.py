"""systemd/timerd.service: systemd's own tools find nothing wrong and rate it well hardened.

`systemd-analyze verify` checks that ExecStart names an executable that exists. The template
names the virtual environment `timerd install` creates (/opt/timerd/venv), which does not
exist here; so the test verifies the unit exactly as the installer renders it, with ExecStart
pointing at this interpreter running timerd (the only line that differs).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require

from timerd.config import ServiceConfig
from timerd.tools.install import render_unit

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "systemd" / "timerd.service"
MAX_EXPOSURE = 2.5


def settings(text: str) -> dict[str, list[str]]:
    """Every `Key=value` of a unit, by key (keys such as DeviceAllow= repeat)."""
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line and not line.startswith(("#", "[")) and "=" in line:
            key, _, value = line.partition("=")
            out.setdefault(key, []).append(value)
    return out


@pytest.fixture
def rendered(tmp_path: Path) -> Path:
    require(shutil.which("systemd-analyze") is not None, "systemd-analyze (Debian: systemd)")
    path = tmp_path / "timerd.service"
    path.write_text(render_unit(TEMPLATE.read_text(), f"{sys.executable} -m timerd run"))
    return path


def test_the_rendered_unit_differs_from_the_template_only_in_exec_start(rendered: Path) -> None:
    changed = [(a, b) for a, b in zip(TEMPLATE.read_text().splitlines(),
                                      rendered.read_text().splitlines(), strict=True) if a != b]
    assert changed == [("ExecStart=/opt/timerd/venv/bin/timerd run",
                        f"ExecStart={sys.executable} -m timerd run")]


def test_systemd_analyze_verify_prints_nothing(rendered: Path) -> None:
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", str(rendered)],
                            capture_output=True, text=True, timeout=60, check=False)
    # verify exits 0 on unknown keys and bad values: any output at all is a failure.
    assert result.stdout + result.stderr == ""
    assert result.returncode == 0


def test_verify_would_catch_a_mistake(rendered: Path) -> None:
    rendered.write_text(rendered.read_text().replace("Restart=on-failure",
                                                     "Restart=on-failure\nRestartt=always"))
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", str(rendered)],
                            capture_output=True, text=True, timeout=60, check=False)
    assert "Unknown key 'Restartt'" in result.stdout + result.stderr


def test_systemd_analyze_security_rates_the_exposure_low(rendered: Path) -> None:
    result = subprocess.run(["systemd-analyze", "security", "--offline=yes", str(rendered)],
                            capture_output=True, text=True, timeout=60, check=False)
    found = re.search(r"Overall exposure level for timerd\.service: (\d+\.\d+)", result.stdout)
    assert found is not None, result.stdout + result.stderr
    assert float(found.group(1)) <= MAX_EXPOSURE


def test_the_unit_keeps_its_promises() -> None:
    unit = settings(TEMPLATE.read_text())
    assert unit["Type"] == ["notify"]
    assert unit["Restart"] == ["on-failure"]
    assert int(unit["WatchdogSec"][0]) > 0
    assert unit["User"] == ["timerd"]
    assert set(unit["SupplementaryGroups"][0].split()) == {"gpio", "audio", "dialout", "input"}
    assert unit["StateDirectory"] == unit["RuntimeDirectory"] == ["timerd"]
    assert unit["ConfigurationDirectory"] == ["timerd"]
    # The heartbeat must survive a restart (that is when recovery reads it).
    assert unit["RuntimeDirectoryPreserve"] == ["restart"]
    # lgpio's FIFO goes to a directory the service may write: its runtime directory.
    assert "LG_WD=/run/timerd" in unit["Environment"]
    assert unit["ProtectSystem"] == ["strict"]
    assert unit["NoNewPrivileges"] == ["yes"]
    # These would hide /dev/gpiochip*, /dev/snd and serial ports, or /proc/cpuinfo.
    assert "PrivateDevices" not in unit
    assert "ProcSubset" not in unit
    assert "char-gpiochip rw" in unit["DeviceAllow"]
    assert "char-alsa rw" in unit["DeviceAllow"]
    assert "char-input rw" in unit["DeviceAllow"]  # [keypad]: /dev/input/event*
    assert "/dev/cpu_dma_latency w" in unit["DeviceAllow"]  # [service] cpu_latency_us


def test_the_unit_grants_the_default_loop_priority() -> None:
    """`[service] priority` (timerd/priority.py) by resource limits, not by a capability: the
    syscall filter lets the two calls through and real-time scheduling is not forbidden."""
    unit = settings(TEMPLATE.read_text())
    default = ServiceConfig()
    assert int(unit["LimitRTPRIO"][0]) >= default.rt_priority
    assert int(unit["LimitNICE"][0]) <= default.nice
    assert "RestrictRealtime" not in unit
    assert unit["AmbientCapabilities"] == [""]
    assert unit["SystemCallFilter"][-1].split() == ["sched_setscheduler", "setpriority"]
