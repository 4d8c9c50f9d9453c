"""The kernel tier's parts beside the fixtures (conftest.py): the board's default pins, the
daemon on lgpio, and how a pulse seen on a line is judged."""

from __future__ import annotations

import os
from pathlib import Path

from tests.daemon_process import Daemon
from timerd.config import Config, GpioConfig
from timerd.core.effects import SignalKind

#: The daemon's start under TCG takes 7-8 s (shared/gpio-sim's measure); a loaded machine more.
READY_S = 90.0
#: The board's default pins (`[gpio]`, hw/README.md).
START, RESET, BUZZER, GOAL_HOME, GOAL_AWAY = 17, 27, 22, 23, 24
LED_RUNNING, LED_PAUSED, LED_LAST_30, LED_GUARD, HORN = 5, 6, 13, 19, 26
FACEOFF, PASSIVE_HOME, LED_PASSIVE = 25, 16, 4
#: The daemon's overrides: real pins on lgpio; nothing that needs a network or a sound card.
LGPIO = ("-o", 'gpio.pin_factory="lgpio"', "-o", "web.enabled=false",
         "-o", "speaker.enabled=false")


def pattern(kind: str) -> tuple[float, ...]:
    """A signal's default buzzer pattern (on, off, on, ... s; `[signals]`)."""
    return Config().signals[SignalKind(kind)].pattern_s


#: ITHF 4.4's pre-signal: three beeps, the last one long.
PRE_SIGNAL = pattern("pre_signal")
#: A hold well past `[gpio] long_press_s` (2 s), for a test that holds a key that long.
LONG_S = GpioConfig().long_press_s + 0.6

#: A pulse's length as the line shows it, against its pattern, and the time from a press to
#: its signal's first edge (the 30 ms debounce included). Generous: the VM is emulated; on an
#: idle 2-core machine edges came within 20 ms (shared/gpio-sim's figures), still far below
#: the patterns' differences (50, 150, 600, 1000 ms). TIMERD_KERNEL_SLACK_S widens both for a
#: run on a machine busy with other work (edges 150 ms late were seen at a load of 9).
LENGTH_SLACK_S = float(os.environ.get("TIMERD_KERNEL_SLACK_S", "0.08"))
AT_ONCE_S = 0.3 + LENGTH_SLACK_S


def lengths_match(pulses: list[tuple[float, float]], pattern: tuple[float, ...]) -> bool:
    """Each pulse as long as the pattern's on-times (its even entries)."""
    ons = pattern[0::2]
    return len(pulses) == len(ons) and all(
        abs(length - want) <= LENGTH_SLACK_S for (_, length), want in zip(pulses, ons, strict=True))


def start_daemon(home: Path, *extra: str, env: dict[str, str] | None = None) -> Daemon:
    """`timerd run` on lgpio with its state under `home`, ready (log: "timerd ready")."""
    home.mkdir(parents=True, exist_ok=True)
    daemon = Daemon(home, *LGPIO, *extra, speed=1.0, simulate=False, env=env)
    try:
        daemon.wait_log("timerd ready", timeout_s=READY_S)
    except BaseException:
        daemon.__exit__()
        raise
    return daemon
