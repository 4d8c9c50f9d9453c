"""The daemon's hold on its lines: a button down while it starts, a restart after SIGKILL (the
kernel frees a dead process's lines), and a line another program holds (a clear error naming
the line and its holder, not a traceback)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.daemon_process import WAIT_S, Daemon
from tests.kernel.sim import SimChip
from tests.kernel.tier import BUZZER, LGPIO, READY_S, START, start_daemon

pytestmark = pytest.mark.kernel


def signals_so_far(table: Daemon) -> list[str]:
    out = []
    while not table.events.empty():
        event = table.events.get_nowait()
        if event["type"] == "signal":
            out.append(event["signal"])
    return out


def test_button_held_at_start_then_sigkill_and_restart_reclaims_the_lines(
        released: SimChip, tmp_path: Path) -> None:
    sim = released
    sim.press(START)  # stuck down (or a thumb on it) while the daemon comes up
    first = start_daemon(tmp_path, "-o", 'log.level="debug"')
    with first:
        # Still held: the daemon's pull-up request did not open the switch (tier's gpio-sim).
        assert sim.value(START) == 0, "the sim line lost its pull to the daemon's bias: a " \
            "stock gpio-sim (tests/kernel/run builds one that keeps it)"
        assert first.command("status")["phase"] == "idle"
        sim.release(START)
        # The daemon saw the contact open (its kernel-stamped edge is logged) ...
        first.wait_log("button start_pause: edge (released) stamped by the kernel")
        # ... and neither the press held from before its start nor letting go is a press.
        assert signals_so_far(first) == []
        assert first.command("status")["phase"] == "idle"
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(timeout=WAIT_S)
    second = start_daemon(tmp_path)
    with second:
        assert not any("busy" in line.lower() for line in second.log), second.log
        assert sim.requested(START)
        assert sim.requested(BUZZER)
        sim.tap(START)
        second.wait_signal("pre_signal")
        assert second.stop() == 0, "".join(second.log)


#: Claims the buzzer's line as an output and holds it until its stdin closes.
HOLDER = """\
import sys, lgpio
h = lgpio.gpiochip_open(int(sys.argv[1]))
lgpio.gpio_claim_output(h, int(sys.argv[2]), 0)
print("held", flush=True)
sys.stdin.read()
"""


def test_a_line_held_by_another_program_is_named_with_its_holder(
        released: SimChip, tmp_path: Path) -> None:
    sim = released
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(sim.number), str(BUZZER)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        table = Daemon(tmp_path, *LGPIO, speed=1.0, simulate=False)
        with table:
            code = table.proc.wait(timeout=READY_S)
        log = "".join(table.log)
        assert code != 0, log
        assert "Traceback" not in log, log
        assert f"GPIO{BUZZER} (buzzer_pins[0]) is in use by another program" in log, log
        assert f"pid {holder.pid} " in log, log
    finally:
        holder.communicate("", timeout=WAIT_S)
