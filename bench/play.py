"""One player of a benchmark match, in a process of its own: timerd, or one of the baselines.

Every player gets the same things: gpiozero's MockFactory whose pins note the instant of every
edge (`HookedPin`), a START/PAUSE button on GPIO17 and a buzzer on GPIO22 (timerd's default
wiring), and an operator thread that presses the button at given instants with `drive_low()`,
as a real contact does from outside the event loop. It plays until `--until-s`, then prints what
it saw as one JSON object: the press instants and, for every signal it sounded, the instant its
buzzer pin went high; for timerd also every edge of the buzzer pin and the pulses each
signal's pattern asks for, so that every pulse's length can be checked. All instants are
`time.monotonic_ns()`, which is one clock for every process on the machine, so the
orchestrator can start all players on the same instant (`--t0-ns`).

A process per player keeps one design's work from ever delaying another's wake-up; each is idle
between its wake-ups, so on two cores they hardly meet.

    python -m bench.play timerd --profile bench/profiles/dense.toml --t0-ns N \
        --presses 0.5,20.1,21.9 --until-s 70

timerd's options: `--priority realtime:10` (or `nice:-10`, or `off`) gives its loop thread that
priority as `[service] priority` does in the daemon (`timerd.priority`); without it, the
daemon's default `[service]` priority (refused where the system does not allow it, as in the
daemon: the result's `loop_priority` says whether it was granted); `--state DIR` adds the match
journal and the results file in DIR as the daemon has them, so that their disk writes happen
as in the daemon; `--cpu-latency-us N` holds the CPUs' wake-up latency as
`[service] cpu_latency_us` does (the daemon's default without it; -1 does not hold it; the
result's `cpu_latency_held` says whether it was); `--goals` presses GOAL HOME (GPIO23) at
those instants; `--web-port N` serves the web scoreboard and its event stream on 127.0.0.1:N,
as the daemon does, after the buzzer (the stream-flood phase floods it); `--speaker thread`
adds the speaker as the daemon has it, its device owned by a playback thread (`--speaker
process`: by a helper process, `bench.speaker_process`, the candidate it was chosen against),
playing on ALSA's default device (the bench points ALSA_CONFIG_PATH at a file plugin), tried
again every `--speaker-retry-s` while it fails; `--slow-output-ms N` adds an output that
blocks the loop N ms at every dispatch it is handed (issue 32: a signal's first edge must not
wait for it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from gpiozero import Button, DigitalOutputDevice
from gpiozero.pins.mock import MockFactory, MockPin

from bench.baselines import DESIGNS as BASELINES
from timerd import priority
from timerd.adapters.audio import AlsaPlayer, Player, Speaker
from timerd.adapters.gpio import GpioBoard
from timerd.adapters.journal.writer import Journal
from timerd.adapters.results.file import ResultsFile
from timerd.app import attach
from timerd.config import Config, ServiceConfig, profiles
from timerd.core.effects import Signal
from timerd.core.match import Match
from timerd.core.profile import Profile
from timerd.core.pulses import pulses
from timerd.disk import DiskWriter
from timerd.ports import Dispatch, Output, SoundOutput
from timerd.service import Service

START_PAUSE_PIN = 17
GOAL_HOME_PIN = 23
BUZZER_PIN = 22
#: How long the operator's finger holds the button (longer than timerd's 30 ms debounce).
HOLD_S = 0.04


class HookedPin(MockPin):  # type: ignore[misc]  # gpiozero has no type hints
    """A gpiozero mock pin that notes the monotonic instant (ns) of each edge.

    The instant is read before the pin changes, so it is when the driver asked for the edge: on a
    real Pi, the instant the buzzer's transistor would switch on or off.
    """

    def __init__(self, factory: Any, info: Any) -> None:
        self.rises: list[int] = []
        #: (instant, level) of every edge; not `edges`, which is a gpiozero pin property.
        self.transitions: list[tuple[int, bool]] = []
        super().__init__(factory, info)

    def _change_state(self, value: bool) -> bool:
        at = time.monotonic_ns()
        changed: bool = super()._change_state(value)
        if changed:
            self.transitions.append((at, bool(value)))
            if value:
                self.rises.append(at)
        return changed


class Operator(threading.Thread):
    """Presses START/PAUSE at `presses_s` and GOAL HOME at `goals_s` after `t0_ns`, from its own
    thread. A goal must not fall within HOLD_S of a START/PAUSE press."""

    def __init__(self, pin: HookedPin, t0_ns: int, presses_s: list[float],
                 goal_pin: HookedPin | None = None, goals_s: list[float] | None = None) -> None:
        super().__init__(name="operator", daemon=True)
        self.t0_ns = t0_ns
        self.plan = sorted([(at, pin) for at in presses_s]
                           + [(at, goal_pin) for at in goals_s or [] if goal_pin is not None],
                           key=lambda p: p[0])
        self.start_pause = pin
        self.pressed_ns: list[int] = []  # START/PAUSE only: the presses the match hangs on
        self.goals_ns: list[int] = []

    def run(self) -> None:
        for at_s, pin in self.plan:
            wait_s = (self.t0_ns + round(at_s * 1e9) - time.monotonic_ns()) / 1e9
            if wait_s > 0:
                time.sleep(wait_s)
            (self.pressed_ns if pin is self.start_pause else self.goals_ns).append(
                time.monotonic_ns())
            pin.drive_low()
            time.sleep(HOLD_S)
            pin.drive_high()


class SignalLog:
    """timerd sound outputs around the buzzers: which buzzer edge belongs to which signal.

    `before` is handed each signal just ahead of the buzzers and `after` just behind them, so a
    rising edge noted in between was made by this very signal (a missing edge is logged as
    None).
    """

    def __init__(self, buzzer: HookedPin, config: Config) -> None:
        self.buzzer = buzzer
        self.config = config
        self.signals: list[dict[str, Any]] = []
        self._rises_before = 0
        self._edges_before = 0

    def before(self, effect: Signal, dispatch: Dispatch) -> None:
        self._rises_before = len(self.buzzer.rises)
        self._edges_before = len(self.buzzer.transitions)

    def after(self, effect: Signal, dispatch: Dispatch) -> None:
        rises = self.buzzer.rises
        out = self.config.signals.get(effect.kind)
        self.signals.append({
            "signal": effect.kind.value,
            "remaining_s": effect.remaining_s,
            "due_ns": round(effect.due * 1e9),  # loop time is time.monotonic()
            "onset_ns": rises[-1] if len(rises) > self._rises_before else None,
            # This signal's edges begin here in `buzzer_edges`; (on, off) s from its onset.
            "first_edge": self._edges_before,
            "pulses_s": pulses(out.pattern_s, effect.beeps, out.gap_s)
            if out is not None and out.buzzer else [],
        })


class _Hook:
    """A sound output that calls one function (SignalLog.before or .after)."""

    def __init__(self, fn: Callable[[Signal, Dispatch], object]) -> None:
        self.signal = fn


class SlowOutput:
    """An output that blocks the loop `seconds` at every dispatch (a display on a stuck
    write, a slow encoder): handed dispatches before every other output, as the worst place
    for it (`--slow-output-ms`)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def notify(self, dispatch: Dispatch) -> None:
        time.sleep(self.seconds)  # deliberate: the loop blocked, as by a slow output


async def play_timerd(profile: Profile, factory: MockFactory, buzzer: HookedPin,
                      played: Callable[[], Awaitable[None]], state: Path | None, *,
                      web_port: int | None = None, speaker: str | None = None,
                      speaker_retry_s: float = 5.0,
                      slow_output_s: float = 0.0) -> list[dict[str, Any]]:
    """timerd composed as `timerd.app.serve` does: Service + GpioBoard, default wiring; with
    `state`, also the results file and the match journal, in the daemon's order; with
    `web_port`, the web scoreboard on it; with `speaker` ("thread" or "process"), the
    speaker; with `slow_output_s`, a `SlowOutput` first of the outputs."""
    config = Config()
    log = SignalLog(buzzer, config)
    async with contextlib.AsyncExitStack() as stack:
        match, storage, speakers = Match(profile), list[Output](), list[SoundOutput]()
        if state is not None:
            # One disk writer thread for both, as the daemon has: no fsync on the loop.
            writer = await stack.enter_async_context(DiskWriter(asyncio.get_running_loop()))
            journal = Journal(state / "state", state / "run", asyncio.get_running_loop(),
                              config.state.resume_within_s, writer)
            match = journal.recover(profile)
            storage = [ResultsFile(state / "results.jsonl", writer=writer), journal]
        service = Service(match)
        board = await stack.enter_async_context(
            GpioBoard(config.gpio, config.signals, service, factory))
        attach(service, board)  # its buttons, as the daemon wires them
        if state is not None:
            await stack.enter_async_context(journal)
        if web_port is not None:
            from timerd.adapters.web.adapter import WebServer  # noqa: PLC0415 (the flood only)

            web = await stack.enter_async_context(WebServer(
                replace(config.web, host="127.0.0.1", port=web_port), service))
            attach(service, web)
            storage.append(web)
        if speaker is not None:
            loop = asyncio.get_running_loop()
            player: Player = AlsaPlayer(speaker_retry_s, loop.time)
            if speaker == "process":
                from bench.speaker_process import ProcessPlayer  # noqa: PLC0415

                player = ProcessPlayer(speaker_retry_s, loop.time)
            sound = await stack.enter_async_context(
                Speaker.for_service(config, service, board.buzzers, player))
            attach(service, sound)
            # The daemon's order: the buzzers, then the speaker; then each signal notes the
            # speaker's state ("ok", or "down" while its device fails).
            speakers = [sound, _Hook(lambda _signal, _dispatch, sound=sound: log.signals[
                -1].update(speaker=sound.status_extra()["speaker"]))]
            storage.insert(0, sound)  # a reset ends its sounds
        service.sound_outputs += [_Hook(log.before), board.buzzers, _Hook(log.after),
                                  *speakers]
        slow = [SlowOutput(slow_output_s)] if slow_output_s else []
        service.outputs += [*slow, board.leds, *storage]
        priority.freeze_heap()  # as the daemon does when it is ready (`timerd.app.serve`)
        task = asyncio.create_task(service.run(), name="match-loop")
        await played()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task  # stopped before the board closes its pins under it
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
               until_s: float, *, goals_s: list[float] | None = None,
               loop_priority: ServiceConfig | None = None, state: Path | None = None,
               web_port: int | None = None, speaker: str | None = None,
               speaker_retry_s: float = 5.0, slow_output_s: float = 0.0) -> dict[str, Any]:
    prioritised = loop_priority is not None and loop_priority.priority != "off" \
        and priority.apply(loop_priority)
    # As the daemon does (`timerd.app.serve`): held to the end of this process.
    held = None if loop_priority is None else priority.hold_cpu_latency(loop_priority)
    factory = MockFactory(pin_class=HookedPin)
    buzzer = factory.pin(BUZZER_PIN)
    operator = Operator(factory.pin(START_PAUSE_PIN), t0_ns, presses_s,
                        factory.pin(GOAL_HOME_PIN), goals_s or [])

    ended = 0  # the buzzer's edges until `until_s`; later ones are the teardown's

    async def played() -> None:
        """Wired up: let the operator press, and play until `until_s`."""
        nonlocal ended
        if presses_s and time.monotonic_ns() > t0_ns + round(presses_s[0] * 1e9):
            raise StartedLate(f"{design} was wired up after its first press was due; "
                              "give the players more time to start")
        operator.start()
        await asyncio.sleep((t0_ns + round(until_s * 1e9) - time.monotonic_ns()) / 1e9)
        operator.join()
        ended = len(buzzer.transitions)

    if design == "timerd":
        signals = await play_timerd(profile, factory, buzzer, played, state,
                                    web_port=web_port, speaker=speaker,
                                    speaker_retry_s=speaker_retry_s,
                                    slow_output_s=slow_output_s)
    else:
        signals = await play_baseline(design, profile, factory, buzzer, played)
    return {"design": design, "presses_ns": operator.pressed_ns, "goals_ns": operator.goals_ns,
            "signals": signals, "buzzer_edges": buzzer.transitions[:ended],
            "loop_priority": prioritised, "cpu_latency_held": held is not None}


class StartedLate(RuntimeError):
    """The player was wired up after its first press was due (a loaded machine was slow to
    start it): nothing it measured would be the design's, so it plays nothing; its exit code
    (STARTED_LATE) asks the bench to play again with more time to start."""


#: The exit code of a player that started late (EX_TEMPFAIL: try again).
STARTED_LATE = 75


def loop_priority(value: str) -> ServiceConfig:
    """`default` (the daemon's default `[service]`), `off`, `realtime:10` or `nice:-10`, as
    `[service]` would say it."""
    policy, _, number = value.partition(":")
    if policy == "default":
        return ServiceConfig()
    if policy == "off":
        return ServiceConfig("off")
    if policy == "realtime":
        return ServiceConfig("realtime", rt_priority=int(number or 10))
    if policy == "nice":
        return ServiceConfig("nice", nice=int(number or -10))
    raise argparse.ArgumentTypeError(f"{value!r}: default, off, realtime[:N] or nice[:N]")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.play", description=__doc__)
    parser.add_argument("design", choices=["timerd", *BASELINES])
    parser.add_argument("--profile", required=True)
    parser.add_argument("--t0-ns", type=int, required=True,
                        help="time.monotonic_ns() instant the press times count from")
    parser.add_argument("--presses", default="", help="press instants, s after t0, comma-separated")
    parser.add_argument("--until-s", type=float, required=True, help="stop at t0 + this")
    parser.add_argument("--goals", default="", help="GOAL HOME press instants, s after t0")
    parser.add_argument("--priority", type=loop_priority, default=ServiceConfig(),
                        help="the loop thread's priority (timerd): default (the daemon's "
                        "default [service] priority, also without this option), off, "
                        "realtime[:N] or nice[:N]")
    parser.add_argument("--cpu-latency-us", type=int, default=ServiceConfig().cpu_latency_us,
                        help="timerd: [service] cpu_latency_us (default: the daemon's; -1: "
                        "the CPUs idle as the kernel chooses)")
    parser.add_argument("--state", type=Path, help="journal and results file here (timerd)")
    parser.add_argument("--web-port", type=int, help="the web scoreboard on 127.0.0.1:PORT "
                        "(timerd)")
    parser.add_argument("--speaker", choices=["thread", "process"],
                        help="timerd: the speaker, its device owned by a thread or a process")
    parser.add_argument("--speaker-retry-s", type=float, default=5.0,
                        help="timerd: [speaker] retry_s")
    parser.add_argument("--slow-output-ms", type=float, default=0.0,
                        help="timerd: an output that blocks the loop this long per dispatch")
    args = parser.parse_args(argv)
    service = replace(args.priority, cpu_latency_us=args.cpu_latency_us)
    profile = profiles.load(args.profile)
    presses = [float(p) for p in args.presses.split(",") if p]
    goals = [float(p) for p in args.goals.split(",") if p]
    try:
        result = asyncio.run(play(args.design, profile, args.t0_ns, presses, args.until_s,
                                  goals_s=goals, state=args.state, web_port=args.web_port,
                                  speaker=args.speaker, speaker_retry_s=args.speaker_retry_s,
                                  slow_output_s=args.slow_output_ms / 1000,
                                  loop_priority=service if args.design == "timerd" else None))
    except StartedLate as late:
        print(late, file=sys.stderr)
        return STARTED_LATE
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
