"""The USB keypad through a real kernel's input layer (issue 29 item 3): a virtual numeric
keypad made through uinput (python-evdev's UInput) stands in for the USB one, and the daemon
runs with hw/README.md's example config, its `device` being the virtual keypad's name.

A key press is a uinput write; the daemon reads it from /dev/input/eventN as it would a real
keypad's, grabbed. Unplugging is closing the UInput (the kernel removes the device), plugging
in again a new UInput of the same name. The buzzer is read on the gpio-sim line, as in
test_pins.py, with its match (PROFILE: the start 2 s after the pre-signal, a forfeit from 1 s
of play) and its timing slack.
"""

from __future__ import annotations

import errno
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import require
from tests.daemon_process import REPO, Daemon
from tests.kernel import test_pins
from tests.kernel.sim import SimChip, watching
from tests.kernel.test_pins import PROFILE
from tests.kernel.tier import (
    AT_ONCE_S,
    BUZZER,
    LGPIO,
    LONG_S,
    READY_S,
    lengths_match,
    start_daemon,
)
from tests.keypad_example import keypad_example

pytestmark = pytest.mark.kernel

try:
    import evdev
    from evdev import UInput, ecodes
except ImportError:  # without the `keypad` extra: `pad` says so
    evdev = None

NAME = "timerd virtual keypad"
#: A numeric keypad's keys, the example's and the rest.
KEYS = ("KEY_NUMLOCK", "KEY_KPSLASH", "KEY_KPASTERISK", "KEY_KPMINUS", "KEY_KPPLUS",
        "KEY_KPENTER", "KEY_KPDOT", *(f"KEY_KP{n}" for n in range(10)))


class Keypad:
    """The virtual keypad: `plug` makes it (again), `unplug` removes it."""

    def __init__(self) -> None:
        self.ui: Any = None

    def plug(self) -> None:
        self.ui = UInput({ecodes.EV_KEY: [getattr(ecodes, k) for k in KEYS]}, name=NAME)

    def unplug(self) -> None:
        self.ui.close()
        self.ui = None

    @property
    def path(self) -> str:
        return str(self.ui.device.path)

    def key(self, name: str, down: bool) -> float:
        t = time.monotonic()
        self.ui.write(ecodes.EV_KEY, getattr(ecodes, name), int(down))
        self.ui.syn()
        return t

    def tap(self, name: str, hold_s: float = 0.15) -> float:
        t = self.key(name, True)
        time.sleep(hold_s)
        self.key(name, False)
        return t


@pytest.fixture(scope="module")
def pad() -> Iterator[Keypad]:
    require(evdev is not None, "python-evdev in the python that runs the tier (the keypad "
            "extra: pip install -e '.[keypad]', as tests/run and .ci/run do)")
    keypad = Keypad()
    keypad.plug()
    yield keypad
    if keypad.ui is not None:
        keypad.unplug()


@pytest.fixture(scope="module")
def table(sim: SimChip, pad: Keypad, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[Daemon]:
    """The daemon with the README's keypad example, the virtual keypad as its device."""
    home = tmp_path_factory.mktemp("keypad")
    (home / "tier.toml").write_text(PROFILE)
    example = keypad_example()
    assert 'device = "' in example
    (home / "timerd.toml").write_text(example)
    daemon = start_daemon(home, "--profile", str(home / "tier.toml"),
                          "-o", f'keypad.device="{NAME}"')
    with daemon:
        daemon.wait_status(lambda s: s["keypad"]["connected"], "the keypad grabbed")
        yield daemon
        assert daemon.stop() == 0, "".join(daemon.log)


#: test_pins.py's: the daemon back to idle (on this module's `table`), its events drained.
idle = test_pins.idle


def doctor(table: Daemon) -> str:
    """`timerd doctor`'s keypad line. It runs every check (each pin claimed, held by the
    daemon): under the emulator on a loaded machine that took more than READY_S once, so
    twice that here."""
    done = subprocess.run([sys.executable, "-m", "timerd", "doctor", "--config",
                           str(table.home / "timerd.toml"), *LGPIO,
                           "-o", f'keypad.device="{NAME}"'], cwd=REPO, capture_output=True,
                          text=True, timeout=2 * READY_S, check=False)
    assert "Traceback" not in done.stderr, done.stderr
    return next(line for line in done.stdout.splitlines() if " keypad " in f" {line} ")


def test_enter_sounds_the_pre_signal_on_the_buzzer_line(released: SimChip, idle: Daemon,
                                                        pad: Keypad) -> None:
    with watching(released, [BUZZER]) as watch:
        pressed = pad.tap("KEY_KPENTER")
        idle.wait_signal("start")
        time.sleep(0.3)
        pre = watch.pulses(BUZZER, pressed, pressed + 1.5)
    assert lengths_match(pre, (0.15, 0.1, 0.15, 0.1, 0.6)), pre
    assert pre[0][0] <= AT_ONCE_S, pre
    assert idle.command("status")["keypad"]["connected"] is True


def test_reset_needs_a_long_press(idle: Daemon, pad: Keypad) -> None:
    pad.tap("KEY_KPENTER")
    idle.wait_signal("start")
    pad.tap("KEY_KPENTER")
    idle.wait_signal("pause")
    pad.tap("KEY_KPMINUS", hold_s=0.4)
    time.sleep(1.0)
    assert idle.command("status")["phase"] == "paused"
    pad.tap("KEY_KPMINUS", hold_s=LONG_S)
    idle.wait_status(lambda s: s["phase"] == "idle", "idle after RESET held")


def test_reset_and_goal_home_held_is_the_forfeit_of_away(idle: Daemon, pad: Keypad) -> None:
    pad.tap("KEY_KPENTER")
    idle.wait_signal("start")
    time.sleep(1.5)  # the profile's forfeit window: 1 s of play
    pad.key("KEY_KPMINUS", True)
    pad.key("KEY_KP7", True)
    time.sleep(LONG_S)
    pad.key("KEY_KP7", False)
    pad.key("KEY_KPMINUS", False)
    final = idle.wait_status(lambda s: s["phase"] == "finished", "finished by the forfeit")
    assert final["score"]["home"] > final["score"]["away"], final


def test_the_grab_keeps_the_keys_from_every_other_reader(idle: Daemon, pad: Keypad) -> None:
    other = evdev.InputDevice(pad.path)
    try:
        with pytest.raises(OSError, match="busy") as grabbed:
            other.grab()
        assert grabbed.value.errno == errno.EBUSY
        pad.tap("KEY_KPENTER")
        idle.wait_signal("pre_signal")  # the daemon has it
        ready, _, _ = select.select([other.fd], [], [], 0.5)
        assert ready == [], list(other.read())
    finally:
        other.close()


def test_unplugged_the_match_goes_on_and_plugged_again_the_keys_work(
        idle: Daemon, pad: Keypad) -> None:
    pad.tap("KEY_KPENTER")
    idle.wait_signal("start")
    pad.unplug()
    gone = idle.wait_status(lambda s: not s["keypad"]["connected"], "the keypad missing")
    assert gone["keypad"]["missing"], gone["keypad"]
    assert gone["phase"] == "running"
    idle.wait_log("looking for it")
    time.sleep(0.5)
    running = idle.command("status")
    assert running["phase"] == "running"
    assert running["remaining_s"] < gone["remaining_s"]  # the clock runs on
    idle.command("pause")  # the 14 s match would end during doctor's run under the emulator
    assert doctor(idle).startswith("FAIL"), "doctor did not say the keypad is missing"

    pad.plug()
    back = idle.wait_status(lambda s: s["keypad"]["connected"], "the keypad back")
    assert back["keypad"]["missing"] is None
    assert doctor(idle).startswith("ok"), "doctor did not find the keypad plugged in again"
    pad.tap("KEY_KPENTER")
    idle.wait_signal("resume")
    assert idle.proc.poll() is None


def test_a_release_the_kernel_dropped_is_read_back_and_reset_never_fires(
        idle: Daemon, pad: Keypad) -> None:
    """Issue 43 item 5 through the kernel's own buffer: RESET is let go while the daemon is
    stopped (SIGSTOP) and the keypad then sends more than the kernel keeps for a reader (64
    events), so the kernel drops the release and says SYN_DROPPED. The daemon reads the keys
    back from the device. Fails on the old code: RESET stayed held and its long press reset
    the paused match."""
    pad.tap("KEY_KPENTER")
    idle.wait_signal("start")
    pad.tap("KEY_KPENTER")
    idle.wait_signal("pause")
    pad.key("KEY_KPMINUS", True)
    time.sleep(0.3)  # the daemon has RESET down
    os.kill(idle.proc.pid, signal.SIGSTOP)
    try:
        pad.key("KEY_KPMINUS", False)
        for _ in range(100):  # autorepeats of a key no button has: 200 events
            pad.ui.write(ecodes.EV_KEY, ecodes.KEY_KP1, 2)
            pad.ui.syn()
    finally:
        os.kill(idle.proc.pid, signal.SIGCONT)
    time.sleep(LONG_S + 0.5)
    status = idle.command("status")
    assert status["phase"] == "paused", status
    assert status["keypad"]["resyncs"] >= 1, status["keypad"]
    idle.wait_log("SYN_DROPPED")
