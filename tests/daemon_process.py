"""A real `timerd run --simulate` in a subprocess, for tests that kill it, restart it, or talk
to it as systemd would. Tests wait on its output lines with timeouts, never on the clock."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from timerd.cli import request

T = TypeVar("T")
REPO = Path(__file__).resolve().parent.parent
WAIT_S = 15.0

#: A short training profile (ITHF 4.4's signals, compressed into 34 s, the last 30 s cue
#: early) so that a kill-and-restart case runs in about three seconds.
SHORT_PROFILE = """\
name = "kill-test"
description = "34 s, training: signals at 0:32 (2 beeps), the last 30 s, 0:20, 0:10"
rules = ["passive", "rulings"]
ithf_conformant = false
faceoff_guard_s = 3
period_s = 34
pre_signal_lead_s = 1
signals = [
  { signal = "interval", remaining_s = 32, beeps = 2 },
  { signal = "last_30", remaining_s = 30 },
  { signal = "interval", remaining_s = 20, beeps = 1 },
  { signal = "interval", remaining_s = 10, beeps = 1 },
]
"""


def goals_with_walls(status: dict[str, Any]) -> list[dict[str, Any]]:
    """A status document's goal entries each with its `wall_time` (`goal_wall_times`, the
    results' key beside the core's goals), as the results line has them."""
    return [goal | {"wall_time": wall}
            for goal, wall in zip(status["goals"], status["goal_wall_times"], strict=True)]


def assert_same_goals(after: list[dict[str, Any]], before: list[dict[str, Any]]) -> None:
    """The goal entries of a restarted daemon are those it had: every field the same, and the
    wall time (stamped by the results when the goal came in, restored from the journal's
    line, written a moment later) within 10 ms."""
    assert [{**g, "wall_time": None} for g in after] == [{**g, "wall_time": None} for g in before]
    for restored, entered in zip(after, before, strict=True):
        assert (restored["wall_time"] is None) == (entered["wall_time"] is None)
        if entered["wall_time"] is not None:
            gap = datetime.fromisoformat(restored["wall_time"]) - datetime.fromisoformat(
                entered["wall_time"])
            assert abs(gap.total_seconds()) <= 0.01, (restored, entered)


class Daemon:
    """`python -m timerd run --simulate` (real pins with `simulate=False`, on a Pi) with its
    state and runtime directories under `home`.

    Its event stream (stdout) and log (stderr) are read by threads into queues.
    """

    def __init__(self, home: Path, *extra: str, speed: float = 25.0,
                 env: dict[str, str] | None = None, simulate: bool = True,
                 wrapper: list[str] | None = None) -> None:
        self.home = home
        self.socket = home / "control.sock"
        config = home / "timerd.toml"
        if not config.exists():
            config.write_text("")  # hermetic: never the machine's /etc/timerd/timerd.toml
        full_env = {k: v for k, v in os.environ.items()
                    if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")}
        full_env.update(STATE_DIRECTORY=str(home / "state"), RUNTIME_DIRECTORY=str(home / "run"),
                        PYTHONUNBUFFERED="1")
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            [*(wrapper or []), sys.executable, "-m", "timerd", "run",
             *(["--simulate"] if simulate else []),
             "--speed", str(speed),
             "--config", str(config), "--events", "-", "--control", str(self.socket),
             # Loopback and any free port: the suite's daemons never contend for 8080 (a
             # second daemon on a port in use refuses to start).
             "-o", "web.host=127.0.0.1", "-o", "web.port=0", *extra],
            cwd=REPO, env=full_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.log_lines: queue.Queue[str] = queue.Queue()
        self.log: list[str] = []
        self._readers = [threading.Thread(target=self._read_events, daemon=True),
                         threading.Thread(target=self._read_log, daemon=True)]
        for reader in self._readers:
            reader.start()

    def _read_events(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.events.put(json.loads(line))

    def _read_log(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            self.log_lines.put(line)

    def _next(self, lines: queue.Queue[T], match: Callable[[T], bool], what: str,
              timeout_s: float) -> T:
        """The next item of `lines` that `match`es (earlier ones are dropped)."""
        while True:
            try:
                item = lines.get(timeout=timeout_s)
            except queue.Empty:
                raise AssertionError(f"no {what} within {timeout_s} s; log:\n"
                                     + "".join(self.log)) from None
            if match(item):
                return item

    def wait_event(self, match: Callable[[dict[str, Any]], bool],
                   timeout_s: float = WAIT_S) -> dict[str, Any]:
        return self._next(self.events, match, "such event", timeout_s)

    def wait_signal(self, kind: str, remaining_s: float | None = None) -> dict[str, Any]:
        return self.wait_event(lambda e: e["type"] == "signal" and e["signal"] == kind and (
            remaining_s is None or e["remaining_s"] == remaining_s))

    def wait_log(self, text: str, timeout_s: float = WAIT_S) -> str:
        return self._next(self.log_lines, lambda line: text in line,
                          f"log line with {text!r}", timeout_s)

    def refused(self) -> str:
        """Wait for a daemon that must not start to exit non-zero; its log."""
        code = self.proc.wait(timeout=WAIT_S)
        for reader in self._readers:
            reader.join(timeout=WAIT_S)
        assert code != 0, "".join(self.log)
        return "".join(self.log)

    def ready(self) -> Daemon:
        self.wait_log("timerd ready")
        return self

    def command(self, name: str, *args: str) -> dict[str, Any]:
        reply = request(self.socket, name, list(args))
        assert reply["ok"], reply
        status: dict[str, Any] = reply["status"]
        return status

    def wait_status(self, match: Callable[[dict[str, Any]], bool], what: str,
                    timeout_s: float = WAIT_S) -> dict[str, Any]:
        """Ask for the status until it `match`es; `what` names the wait in the failure."""
        deadline = time.monotonic() + timeout_s
        while not match(status := self.command("status")):
            if time.monotonic() > deadline:
                raise AssertionError(f"the status did not reach {what}: {status}")
        return status

    def wait_remaining(self, at_most_s: float, timeout_s: float = WAIT_S) -> dict[str, Any]:
        """Ask for the status until the clock shows at most `at_most_s` left."""
        return self.wait_status(lambda s: s["remaining_s"] <= at_most_s,
                                f"{at_most_s} s left", timeout_s)

    def stop(self, signum: int = signal.SIGTERM) -> int:
        """Send `signum`, wait for the exit, return the exit code."""
        self.proc.send_signal(signum)
        return self.proc.wait(timeout=WAIT_S)

    def __enter__(self) -> Daemon:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=WAIT_S)
        for reader in self._readers:
            reader.join(timeout=WAIT_S)  # they end at the pipes' end of file
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
