"""Hardware in the loop on a real Raspberry Pi (hw/README.md, "Hardware-in-the-loop tests").

Skipped unless TIMERD_HIL=1. The rig: GPIO22 (the buzzer output) wired to GPIO21 (or
$TIMERD_HIL_LOOPBACK) through 1 kΩ, read back here through lgpio while the daemon drives
the real pins.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemon_process import SHORT_PROFILE, Daemon

pytestmark = [
    pytest.mark.hil,
    pytest.mark.skipif(os.environ.get("TIMERD_HIL") != "1",
                       reason="hardware-in-the-loop: set TIMERD_HIL=1 on a Pi with the rig"),
]

EDGE_TIMEOUT_S = 5.0


@pytest.fixture
def loopback() -> Iterator[Any]:
    from gpiozero import DigitalInputDevice  # noqa: PLC0415 (the real pin factory)

    device = DigitalInputDevice(int(os.environ.get("TIMERD_HIL_LOOPBACK", "21")),
                                pull_up=False)
    yield device
    device.close()


def real_daemon(home: Path) -> Daemon:
    profile = home / "hil.toml"
    profile.write_text(SHORT_PROFILE)
    return Daemon(home, "--profile", str(profile), speed=1.0, simulate=False)


def test_the_buzzer_pin_sounds_the_pre_signal(tmp_path: Path, loopback: Any) -> None:
    with real_daemon(tmp_path).ready() as daemon:
        assert not loopback.is_active
        daemon.command("start")
        assert loopback.wait_for_active(EDGE_TIMEOUT_S)  # the pre-signal's first beep
        assert loopback.wait_for_inactive(EDGE_TIMEOUT_S)
        assert daemon.stop() == 0


def test_killed_mid_beep_the_restarted_daemon_silences_and_restores(
        tmp_path: Path, loopback: Any) -> None:
    (tmp_path / "timerd.toml").write_text("[signals.start]\npattern_s = [30.0]\n")
    with real_daemon(tmp_path).ready() as first:
        first.command("start")
        first.wait_signal("start")
        assert loopback.wait_for_active(EDGE_TIMEOUT_S)  # the 30 s start tone
        first.stop(signal.SIGKILL)
    with real_daemon(tmp_path).ready() as second:
        assert loopback.wait_for_inactive(EDGE_TIMEOUT_S)
        status = second.command("status")
        assert status["phase"] == "paused"
        assert status["recovery"]["outcome"] == "restored"
        assert second.stop() == 0
    assert not loopback.is_active  # SIGTERM leaves the buzzer off
