"""`timerd doctor` on a real chip, and `[gpio] chip` choosing one of two (a Pi 5's header is
gpiochip4, "pinctrl-rp1"; a HAT or an expander adds chips)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon_process import REPO
from tests.kernel.sim import SimChip, watching
from tests.kernel.tier import (
    BUZZER,
    LGPIO,
    PRE_SIGNAL,
    READY_S,
    START,
    lengths_match,
    start_daemon,
)
from timerd.config import GpioConfig

pytestmark = pytest.mark.kernel

#: The second chip: 8 lines, so that the default pins (up to GPIO27) are not all on it.
SECOND_LINES = 8


@pytest.fixture
def second(released: SimChip) -> Iterator[SimChip]:
    chip = SimChip.make("timerd-second", "timerd-second", lines=SECOND_LINES)
    yield chip
    for pin in range(SECOND_LINES):
        chip.release(pin)
    chip.remove()


def doctor(tmp_path: Path, *overrides: str) -> tuple[int, list[str]]:
    """`timerd doctor` with the tier's config; its exit code and its GPIO lines (it starts as
    the daemon does and checks every part: under the emulator on a loaded machine that took
    more than READY_S, as test_keypad.py's doctor found)."""
    config = tmp_path / "empty.toml"
    config.write_text("")
    done = subprocess.run([sys.executable, "-m", "timerd", "doctor", "--config", str(config),
                           *LGPIO, *overrides], cwd=REPO, capture_output=True, text=True,
                          timeout=2 * READY_S, check=False)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, [line for line in done.stdout.splitlines()
                             if line.split()[1:2] and line.split()[1].startswith("GPIO")]


def test_doctor_passes_every_pin_on_the_chip(released: SimChip, tmp_path: Path) -> None:
    _, lines = doctor(tmp_path)
    fitted = GpioConfig().pins()  # every fitted part of the default [gpio], a line each
    assert [line.split()[1] for line in lines] == [f"GPIO{pin}" for pin in fitted.values()], lines
    assert all(line.startswith("ok") for line in lines), lines
    assert all(key in line for key, line in zip(fitted, lines, strict=True)), lines


@pytest.mark.parametrize("by", ["number", "label"])
def test_doctor_fails_a_pin_the_chip_does_not_have(second: SimChip, tmp_path: Path,
                                                   by: str) -> None:
    chip = str(second.number) if by == "number" else f'"{second.label}"'
    code, lines = doctor(tmp_path, "-o", f"gpio.chip={chip}")
    assert code == 1
    bad = [line for line in lines if line.startswith("FAIL")]
    assert any(f"GPIO{START}" in line and "start_pause_pin: not on gpiochip"
               f'{second.number} ("timerd-second", lines 0-7)' in line for line in bad), lines
    assert sorted(int(line.split()[1][4:]) for line in bad) == sorted(
        pin for pin in GpioConfig().pins().values() if pin >= SECOND_LINES), lines


def test_the_chip_key_picks_a_chip_by_its_label(released: SimChip, second: SimChip,
                                                tmp_path: Path) -> None:
    """The daemon on the chip its label names (resolved to the chip's number: the doctor's
    test above takes both ways)."""
    home = tmp_path / "table"
    home.mkdir()
    chip = f'"{second.label}"'
    parts = ("reset_pin", "led_running_pin", "led_paused_pin", "led_last_30_pin",
             "goal_home_pin", "goal_away_pin", "faceoff_pin", "undo_pin", "passive_home_pin",
             "passive_away_pin", "led_faceoff_guard_pin", "led_passive_pin", "horn_pin",
             "line_change_pin")
    (home / "timerd.toml").write_text(
        f"[gpio]\nchip = {chip}\nstart_pause_pin = 1\nbuzzer_pins = [2]\n"
        + "".join(f'{part} = "none"\n' for part in parts))
    table = start_daemon(home)
    with table, watching(second, [2]) as watch:
        # The daemon holds its lines on the second chip, and none of the first (the default).
        assert [second.requested(1), second.requested(2)] == [True, True]
        assert [released.requested(p) for p in (START, BUZZER, 1, 2)] == [False] * 4
        pressed = second.tap(1)
        table.wait_signal("pre_signal")
        pre = watch.wait_pulses(2, pressed, 3)
        assert lengths_match(pre, PRE_SIGNAL), pre
        assert table.stop() == 0, "".join(table.log)
