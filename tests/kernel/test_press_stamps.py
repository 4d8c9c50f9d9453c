"""Press times from the kernel's edge timestamp (issue 29 item 2): lgpio hands each edge over
with the time the kernel stamped it, and the daemon dates the press by that, not by when its
callback ran. Measured here: the stamped time's error against the instant the test wrote the
line's `pull`, and the callback's delay the stamp spares; the start signal is scheduled from
the stamp. The figures are printed (docs/BENCHMARKS.md, "Kernel tier") and are an emulator's:
QEMU's TCG on a shared machine, an upper bound for a Pi."""

from __future__ import annotations

import re
import statistics
import time
from pathlib import Path

import pytest

from tests.daemon_process import Daemon
from tests.kernel.sim import SimChip, watching
from tests.kernel.tier import BUZZER, GOAL_HOME, START, start_daemon

pytestmark = pytest.mark.kernel

PRESSES = 40
STAMP = re.compile(r"button (\w+): edge \(pressed\) stamped by the kernel at ([0-9.]+), "
                   r"(-?[0-9.]+) ms ago")
LEAD_S = 2.0


def next_stamp(table: Daemon, button: str) -> tuple[float, float]:
    """The next kernel-stamped press of `button` in the daemon's log: (loop time, delay s)."""
    line = table.wait_log(f"button {button}: edge (pressed) stamped by the kernel")
    found = STAMP.search(line)
    assert found is not None, line
    return float(found.group(2)), float(found.group(3)) / 1000


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def test_press_time_is_the_kernels_edge_and_the_schedule_follows_it(
        released: SimChip, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sim = released
    home = tmp_path / "table"
    home.mkdir()
    (home / "lead.toml").write_text(
        'name = "stamps"\ndescription = "the kernel tier\'s stamp check"\n'
        'rules = []\nithf_conformant = false\nperiod_s = 60\n'
        f"pre_signal_lead_s = {LEAD_S:g}\nsignals = []\n")
    table = start_daemon(home, "--profile", str(home / "lead.toml"), "-o", 'log.level="debug"')
    with table:
        errors, delays = [], []
        for _ in range(PRESSES):
            written = sim.press(GOAL_HOME)  # refused (no match running): only its edge counts
            stamp, delay = next_stamp(table, "goal_home")
            errors.append(stamp - written)
            delays.append(delay)
            time.sleep(0.08)
            sim.release(GOAL_HOME)
            time.sleep(0.08)
        # The kernel stamps the edge after the write began and before the callback ran.
        assert all(-0.001 <= e <= 0.05 for e in errors), errors
        with watching(sim, [BUZZER]) as watch:
            written = sim.tap(START)
            stamp, _ = next_stamp(table, "start_pause")
            table.wait_signal("start")
            time.sleep(0.3)
        rises = [t for t, v in watch.edges[BUZZER] if v == 1 and t > stamp + LEAD_S - 0.5]
        assert rises, watch.edges
        late = rises[0] - (stamp + LEAD_S)
        # The start is due `lead` after the stamped press: its edge comes at that instant
        # (an asyncio timer plus a line write late), not `lead` after the callback ran.
        assert -0.002 <= late <= 0.05, late
        assert table.stop() == 0, "".join(table.log)
    with capsys.disabled():
        print(f"\nkernel tier press stamps (n={PRESSES}, under QEMU TCG): error of the stamp "
              f"against the pull write p50 {statistics.median(errors) * 1000:.2f} ms, "
              f"p99 {pct(errors, 0.99) * 1000:.2f} ms; callback delay after the stamp p50 "
              f"{statistics.median(delays) * 1000:.2f} ms, p99 {pct(delays, 0.99) * 1000:.2f} "
              f"ms; start signal edge after stamp + lead: {late * 1000:.2f} ms")
