"""One player of a benchmark match, in a process of its own: timerd, or one of the baselines.

Every player gets the same things: gpiozero's MockFactory whose pins note the instant of every
rising edge (`HookedPin`), a START/PAUSE button on GPIO17 and a buzzer on GPIO22 (timerd's default
wiring), and an operator thread that presses the button at given instants with `drive_low()`,
as a real contact does from outside the event loop. It plays until `--until-s`, then prints what
it saw as one JSON object: the press instants and, for every signal it sounded, the instant its
buzzer pin went high. All instants are `time.monotonic_ns()`, which is one clock for every
process on the machine, so the orchestrator can start all players on the same instant (`--t0-ns`).

A process per player keeps one design's work from ever delaying another's wake-up; each is idle
between its wake-ups, so on two cores they hardly meet.

    python -m bench.play timerd --profile bench/profiles/dense.toml --t0-ns N \
        --presses 0.5,20.1,21.9 --until-s 70
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from gpiozero import Button, DigitalOutputDevice
from gpiozero.pins.mock import MockFactory, MockPin

from bench.baselines import DESIGNS as BASELINES
from timerd import profiles
from timerd.adapters.gpio import GpioBoard
from timerd.config import Config
from timerd.core.effects import Effect, Signal
from timerd.core.match import Match, Status
from timerd.core.profile import Profile
from timerd.service import Service

START_PAUSE_PIN = 17
BUZZER_PIN = 22
#: How long the operator's finger holds the button (longer than timerd's 30 ms debounce).
HOLD_S = 0.04


class HookedPin(MockPin):  # type: ignore[misc]  # gpiozero has no type hints
    """A gpiozero mock pin that notes the monotonic instant (ns) of each rising edge.

    The instant is read before the pin changes, so it is when the driver asked for the edge: on a
    real Pi, the instant the buzzer's transistor would switch on.
    """

    def __init__(self, factory: Any, info: Any) -> None:
        self.rises: list[int] = []
        super().__init__(factory, info)

    def _change_state(self, value: bool) -> bool:
        at = time.monotonic_ns()
        changed: bool = super()._change_state(value)
        if changed and value:
            self.rises.append(at)
        return changed


class Operator(threading.Thread):
    """Presses the START/PAUSE button at `presses_s` after `t0_ns`, from its own thread."""

    def __init__(self, pin: HookedPin, t0_ns: int, presses_s: list[float]) -> None:
        super().__init__(name="operator", daemon=True)
        self.pin, self.t0_ns, self.presses_s = pin, t0_ns, presses_s
        self.pressed_ns: list[int] = []

    def run(self) -> None:
        for at_s in self.presses_s:
            wait_s = (self.t0_ns + round(at_s * 1e9) - time.monotonic_ns()) / 1e9
            if wait_s > 0:
                time.sleep(wait_s)
            self.pressed_ns.append(time.monotonic_ns())
            self.pin.drive_low()
            time.sleep(HOLD_S)
            self.pin.drive_high()


class SignalLog:
    """timerd outputs around the buzzers: which buzzer edge belongs to which signal.

    `before` is notified just ahead of the buzzers and `after` just behind them, so a rising edge
    noted in between was made by this very signal (a missing edge is logged as None).
    """

    def __init__(self, buzzer: HookedPin) -> None:
        self.buzzer = buzzer
        self.signals: list[dict[str, Any]] = []
        self._rises_before = 0

    def before(self, effect: Effect, status: Status) -> None:
        self._rises_before = len(self.buzzer.rises)

    def after(self, effect: Effect, status: Status) -> None:
        if not isinstance(effect, Signal):
            return
        rises = self.buzzer.rises
        self.signals.append({
            "signal": effect.kind.value,
            "remaining_s": effect.remaining_s,
            "due_ns": round(effect.due * 1e9),  # loop time is time.monotonic()
            "onset_ns": rises[-1] if len(rises) > self._rises_before else None,
        })


class _Hook:
    """An output that calls one function (SignalLog.before or .after)."""

    def __init__(self, fn: Callable[[Effect, Status], None]) -> None:
        self.notify = fn


async def play_timerd(profile: Profile, factory: MockFactory, buzzer: HookedPin,
                      played: Callable[[], Awaitable[None]]) -> list[dict[str, Any]]:
    """timerd composed as `timerd.app.serve` does: Service + GpioBoard, default wiring."""
    config = Config()
    service = Service(Match(profile))
    log = SignalLog(buzzer)
    async with GpioBoard(config.gpio, config.signals, service, factory) as board:
        service.outputs += [_Hook(log.before), board.buzzers, board.leds, _Hook(log.after)]
        task = asyncio.create_task(service.run(), name="match-loop")
        await played()
        task.cancel()
    return log.signals


async def play_baseline(design: str, profile: Profile, factory: MockFactory, buzzer: HookedPin,
                        played: Callable[[], Awaitable[None]]) -> list[dict[str, Any]]:
    loop = asyncio.get_running_loop()
    device = DigitalOutputDevice(BUZZER_PIN, pin_factory=factory)
    timer = BASELINES[design](profile, device, buzzer.rises)
    button = Button(START_PAUSE_PIN, pull_up=True, bounce_time=None, pin_factory=factory)
    # As timerd does: the pin callback runs in the pressing thread and hops onto the loop.
    button.when_pressed = lambda: loop.call_soon_threadsafe(timer.press)
    try:
        await played()
    finally:
        timer.stop()
        button.close()
        device.close()
    return timer.signals


async def play(design: str, profile: Profile, t0_ns: int, presses_s: list[float],
               until_s: float) -> dict[str, Any]:
    factory = MockFactory(pin_class=HookedPin)
    buzzer = factory.pin(BUZZER_PIN)
    operator = Operator(factory.pin(START_PAUSE_PIN), t0_ns, presses_s)

    async def played() -> None:
        """Wired up: let the operator press, and play until `until_s`."""
        if presses_s and time.monotonic_ns() > t0_ns + round(presses_s[0] * 1e9):
            raise RuntimeError(f"{design} was wired up after its first press was due; "
                               "give the players more time to start")
        operator.start()
        await asyncio.sleep((t0_ns + round(until_s * 1e9) - time.monotonic_ns()) / 1e9)
        operator.join()

    if design == "timerd":
        signals = await play_timerd(profile, factory, buzzer, played)
    else:
        signals = await play_baseline(design, profile, factory, buzzer, played)
    return {"design": design, "presses_ns": operator.pressed_ns, "signals": signals}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.play", description=__doc__)
    parser.add_argument("design", choices=["timerd", *BASELINES])
    parser.add_argument("--profile", required=True)
    parser.add_argument("--t0-ns", type=int, required=True,
                        help="time.monotonic_ns() instant the press times count from")
    parser.add_argument("--presses", default="", help="press instants, s after t0, comma-separated")
    parser.add_argument("--until-s", type=float, required=True, help="stop at t0 + this")
    args = parser.parse_args(argv)
    profile = profiles.load(args.profile)
    presses = [float(p) for p in args.presses.split(",") if p]
    result = asyncio.run(play(args.design, profile, args.t0_ns, presses, args.until_s))
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
