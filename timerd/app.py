"""The composition root: builds the match, the service and every adapter from config, and runs
them on one event loop until SIGTERM or SIGINT.

An optional adapter's module (and its library: aiohttp, aiomqtt, pyserial) is imported only
when the config switches it on, so a daemon without them does not carry them in memory
(issue 16: peak RSS)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import signal
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from timerd import __version__, priority
from timerd.adapters.audio import Speaker
from timerd.adapters.control import ControlSocket
from timerd.adapters.events import EventStream
from timerd.adapters.gpio import GpioBoard, pin_factory
from timerd.adapters.journal import Journal
from timerd.adapters.results import PENDING_DIR, ResultsFile
from timerd.adapters.systemd import SystemdNotifier
from timerd.adapters.writer import DiskWriter
from timerd.config import Config, private_directory
from timerd.service import Service
from timerd.timebase import scaled_loop

log = logging.getLogger("timerd")


@dataclass(frozen=True)
class RunOptions:
    simulate: bool = False
    speed: float = 1.0
    events: str | None = None  # a path, or "-" for stdout
    control: Path | None = None  # overrides config's control.socket
    interactive: bool = False  # keys and status line on the terminal (simulate mode)


def run(config: Config, options: RunOptions) -> None:
    """Run the daemon until it is told to stop. Raises NoGpio when no pin factory loads,
    UnsafePath when the runtime directory is not the daemon's own."""
    factory = pin_factory("mock" if options.simulate else config.gpio.pin_factory)
    loop_factory = asyncio.new_event_loop if options.speed == 1 else (
        lambda: scaled_loop(options.speed))
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(serve(config, options, factory))


async def serve(config: Config, options: RunOptions, factory: object) -> None:
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    # First, on the loop thread: the threads the adapters start from here on stay normal.
    priority.apply(config.service)
    profile = config.profile()
    control = options.control or config.control_socket()
    # Before anything is written there: a directory another user made is refused (UnsafePath).
    for directory in dict.fromkeys((config.runtime_directory(), control.parent)):
        private_directory(directory)
    writer = DiskWriter(loop)  # every file write that can wait on the card, off the loop
    journal = Journal(config.state_directory(), config.runtime_directory(), loop,
                      config.state.resume_within_s, writer)
    service = Service(journal.recover(profile))  # the journalled match, restored, or a new one
    service.durability = journal.synced
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, log_task_stacks)

    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(writer)  # first in, last out: it drains the rest
        notifier = await stack.enter_async_context(SystemdNotifier(loop, options.speed))
        board = await stack.enter_async_context(
            GpioBoard(config.gpio, config.signals, service, factory))
        service.outputs += [board.buzzers, board.horn, board.leds]
        results = _storage(config, service, journal, writer, board)
        # After the buzzer: its first edge never waits for the sound device.
        service.outputs.append(await stack.enter_async_context(
            Speaker.for_service(config, service, board.buzzers)))
        if options.events is not None:
            service.outputs.append(await stack.enter_async_context(
                EventStream.open(options.events, loop, t0)))
        if config.serial.port:
            from timerd.adapters.serial_display import SerialDisplay  # noqa: PLC0415 (pyserial)

            await stack.enter_async_context(SerialDisplay(config.serial, service))
        await stack.enter_async_context(
            ControlSocket(control, service, config.control))
        await network_adapters(stack, config, options, service, results=results, writer=writer,
                               t0=t0)
        if options.interactive:
            from timerd.adapters.terminal import Keyboard, TerminalDisplay  # noqa: PLC0415

            service.outputs.append(TerminalDisplay(sys.stdout))
            await stack.enter_async_context(
                Keyboard(board.buttons, config.gpio.long_press_s, stop.set))
        await stack.enter_async_context(journal)
        service.outputs += [journal, notifier]
        service.status_extras.append(journal.status_extra)
        identity = {"version": __version__, "table": config.table.name or None}
        service.status_extras.append(lambda: identity)
        log.info("timerd ready: profile %s, pins %s%s", service.match.profile.name,
                 "simulated" if options.simulate else type(factory).__name__,
                 f", speed x{options.speed:g}" if options.speed != 1 else "")
        notifier.ready(service.status())
        service.announce(*journal.announcement(service.status()))
        async with asyncio.TaskGroup() as tasks:
            match_loop = tasks.create_task(service.run(), name="match-loop")
            await stop.wait()
            notifier.stopping()
            match_loop.cancel()
    log.info("timerd stopped")


async def network_adapters(stack: contextlib.AsyncExitStack, config: Config,
                           options: RunOptions, service: Service, *, results: ResultsFile,
                           writer: DiskWriter, t0: float) -> None:
    """The web scoreboard and the hall link, each imported only when switched on."""
    if config.web.enabled:
        from timerd.adapters.web import WebServer  # noqa: PLC0415 (aiohttp: some 15 MB)

        web = await stack.enter_async_context(
            WebServer(config.web, service, rate=options.speed, t0=t0,
                      results_path=config.results_path()))
        service.outputs.append(web)
    if config.hall.enabled:
        from timerd.adapters.hall import HallLink  # noqa: PLC0415 (aiomqtt only if enabled)

        hall = await stack.enter_async_context(
            HallLink(config.hall, service, rate=options.speed, writer=writer))
        results.listeners.append(hall.publish_result)  # every result to the desk, QoS 1


def _storage(config: Config, service: Service, journal: Journal, writer: DiskWriter,
             board: GpioBoard) -> ResultsFile:
    """The results file on the shared disk writer, and storage faults in status and LEDs."""
    service.status_extras.append(writer.status_extra)
    writer.listeners.append(board.leds.storage)
    board.leds.storage(writer.faults)  # a journal that could not be opened at the start
    results = ResultsFile(config.results_path(), writer=writer,
                          pending=config.runtime_directory() / PENDING_DIR)
    results.load_pending()
    service.outputs.append(results)
    service.status_extras.append(results.status_extra)
    if journal.recovery.match is not None:  # restored: keep its start and goal times
        results.resume(journal.recovery.started_wall, journal.recovery.goal_walls)
    return results


def log_task_stacks() -> None:
    """SIGUSR1: log where every asyncio task is (cheap, and priceless on a headless Pi)."""
    for task in asyncio.all_tasks():
        out = io.StringIO()
        task.print_stack(file=out)
        log.warning("task %s:\n%s", task.get_name(), out.getvalue())
    log.warning("threads:\n%s", "".join(
        f"thread {ident}:\n{''.join(traceback.format_stack(frame))}"
        for ident, frame in sys._current_frames().items()))
