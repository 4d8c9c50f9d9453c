"""The kernel tier's parts beside the fixtures (conftest.py): the board's default pins and
the daemon on lgpio."""

from __future__ import annotations

from pathlib import Path

from tests.daemon_process import Daemon

#: The daemon's start under TCG takes 7-8 s (shared/gpio-sim's measure); a loaded machine more.
READY_S = 90.0
#: The board's default pins (`[gpio]`, hw/README.md).
START, RESET, BUZZER, GOAL_HOME, GOAL_AWAY = 17, 27, 22, 23, 24
LED_RUNNING, LED_PAUSED, LED_LAST_30, LED_GUARD, HORN = 5, 6, 13, 19, 26
#: The daemon's overrides: real pins on lgpio; nothing that needs a network or a sound card.
LGPIO = ("-o", 'gpio.pin_factory="lgpio"', "-o", "web.enabled=false",
         "-o", "speaker.enabled=false")


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
