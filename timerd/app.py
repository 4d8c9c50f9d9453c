"""The composition root: builds the match, the service and every adapter from config, and runs
them on one event loop until SIGTERM or SIGINT.

An optional adapter's module (and its library: h11 and wsproto, aiomqtt, pyserial) is
imported only when the config switches it on, so a daemon without them does not carry them in
memory (issue 16: peak RSS)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import signal
import sys
import traceback
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from timerd import __version__, priority
from timerd.adapters.audio import Speaker
from timerd.adapters.control import ControlSocket
from timerd.adapters.events import EventStream
from timerd.adapters.gpio import GpioBoard, NoGpio, PinBusy, chip_lines, pin_factory
from timerd.adapters.hall.protocol import HallUnavailable
from timerd.adapters.journal.writer import Journal
from timerd.adapters.results.file import PENDING_DIR, ResultsFile
from timerd.adapters.results.format import recent_results
from timerd.adapters.systemd import SystemdNotifier
from timerd.config import (
    Config,
    InUse,
    KeypadConfig,
    UnsafePath,
    hall_outbox,
    private_directory,
)
from timerd.core.commands import Reset
from timerd.core.effects import Applied, Effect, Phase, Told
from timerd.core.match import Match
from timerd.core.profile import Profile
from timerd.disk import DiskWriter
from timerd.i18n import LOG_TEXT, Messages, resolve
from timerd.limits import LoopFaults
from timerd.ports import (
    Dispatch,
    HasButtons,
    HasCommands,
    HasStatus,
    Output,
    SoundOutput,
    StatusExtra,
)
from timerd.service import Service
from timerd.timebase import scaled_loop

if TYPE_CHECKING:
    from timerd.adapters.hall.link import HallLink
    from timerd.adapters.keypad import Keypad
    from timerd.adapters.web.adapter import WebServer

log = logging.getLogger("timerd")


@dataclass(frozen=True)
class RunOptions:
    simulate: bool = False
    speed: float = 1.0
    events: str | None = None  # a path, or "-" for stdout
    control: Path | None = None  # overrides config's control.socket
    interactive: bool = False  # keys and status line on the terminal (simulate mode)


class CannotStart(RuntimeError):
    """The daemon (or `timerd sound-test`, `timerd doctor`'s pin check) cannot start as
    configured: no GPIO pin factory loads, hall mode without aiomqtt, a runtime directory that
    is not the daemon's own. The message says what to do; the tools show it as it is."""


def pin_chip(factory: Any) -> tuple[int, str] | None:
    """The pin factory's chip, its lines and label (`timerd doctor`); None without one."""
    return chip_lines(factory)


def open_pins(name: str, chip: int | str = "auto") -> Any:
    """gpiozero's pin factory `name` (config `gpio.pin_factory`, "mock" to simulate) on `chip`
    (`gpio.chip`), as the daemon opens it; CannotStart, naming the fix, when none loads here."""
    try:
        return pin_factory(name, chip)
    except NoGpio as exc:
        raise CannotStart(str(exc)) from None


def run(config: Config, options: RunOptions) -> None:
    """Run the daemon until it is told to stop; CannotStart when it cannot start as
    configured (the tools see only this, not which adapter refused)."""
    factory = open_pins("mock" if options.simulate else config.gpio.pin_factory,
                        config.gpio.chip)
    if options.interactive:  # the status line's terminal: log lines clear it and fit its width
        from timerd.adapters.terminal import LogLines  # noqa: PLC0415

        for handler in logging.getLogger().handlers:
            handler.setFormatter(LogLines(sys.stderr))
    loop_factory = asyncio.new_event_loop if options.speed == 1 else (
        lambda: scaled_loop(options.speed))
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(serve(config, options, factory))
    except (HallUnavailable, UnsafePath, InUse, PinBusy) as exc:
        raise CannotStart(str(exc)) from None


@dataclass
class Daemon:
    """A table's parts, built and wired by `build`: what `serve` runs and a test drives."""

    service: Service
    journal: Journal
    notifier: SystemdNotifier
    switch: ProfileSwitch
    board: GpioBoard
    #: Set to stop the daemon (SIGTERM, SIGINT, `q` on the keyboard).
    stop: asyncio.Event


async def build(config: Config, options: RunOptions, factory: object,
                stack: contextlib.AsyncExitStack) -> Daemon:
    """Build every part the config asks for, open it on `stack` (closed in reverse order),
    and wire it: the one composition root (issue 14, invariant 4). `timerd run` serves what
    it builds; the tests build through it too.

    The journal's match (restored, or a new one) goes to the service; the order of the
    outputs is read here: the sound outputs (the buzzers, the horn, then the speaker) are
    handed each signal before any output is handed anything of its dispatch (`Service`), so
    their first edge waits for no display, disk or network; of the outputs, the journal
    before the results (the end of a match is one sequence on the disk writer: the ending
    command, the results line, the compaction: `keep_results`) and before the notifier (READY
    and WATCHDOG never vouch for a command not yet written); the results (their status key,
    the goals' wall times, comes from what they are handed) before any output that reads the
    document.
    """
    loop = asyncio.get_running_loop()
    t0 = loop.time()
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
    journal.match_of = lambda: service.match  # the live match, for the journal's snapshots
    stop = asyncio.Event()
    await stack.enter_async_context(writer)  # first in, last out: it drains the rest
    # The adapters' supervised tasks: each adapter stops its own; what is left, after them.
    stack.push_async_callback(service.tasks.aclose)
    door = Registrar(service)  # the one door: no part is handed it
    door.status(service.tasks.status_extra)
    notifier = await stack.enter_async_context(SystemdNotifier(loop, options.speed))
    board = await _board(stack, config, service, factory)
    keypad = await _keypad(stack, config, service)
    speaker = await _speaker(stack, config, service, board)
    results = _storage(config, journal, writer, board)
    events, serial = await _streams(stack, config, options, service, t0)
    control_socket = await stack.enter_async_context(
        ControlSocket(control, service, config.control))
    web, hall = await network_adapters(stack, config, options, service, writer=writer, t0=t0)
    if web is not None:  # `timerctl desk`: the pairing, for the machine's own users only
        control_socket.requests.update(web.requests)
    if hall is not None:
        results.listeners.append(hall.publish_result)  # every result to the desk, QoS 1
    terminal = None
    if options.interactive:
        from timerd.adapters.terminal import Keyboard, TerminalDisplay  # noqa: PLC0415

        terminal = TerminalDisplay(sys.stdout, Messages(resolve(config.ui.language)), service)
        await stack.enter_async_context(
            Keyboard(board.buttons, config.gpio.long_press_s, stop.set, help=terminal.help))
    await stack.enter_async_context(journal)
    switch = ProfileSwitch(service, journal, profile)
    # The tenths of the last 10 s (ten wake-ups a second) only for a display showing them.
    service.tenths = serial is not None or terminal is not None
    door.sound_outputs(board.buzzers, board.horn, speaker)
    door.outputs(*(part for part in (
        board.leds, journal, results, speaker, events, serial, web, hall, terminal, notifier,
        switch) if part is not None))
    for part in (writer, board, keypad, results, speaker, serial, hall, journal, switch):
        if part is not None:
            door.attach(part)
    identity = {"version": __version__, "table": config.table.name or None,
                "language": config.ui.language}
    door.status(lambda: identity)
    return Daemon(service, journal, notifier, switch, board, stop)


async def serve(config: Config, options: RunOptions, factory: object) -> None:
    """`timerd run`: build the table (`build`), say it is ready, run the match loop until a
    signal or the keyboard stops it."""
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(LoopFaults(log))  # a refused accept: a line per 30 s, no trace
    # First, on the loop thread: the threads the adapters start from here on stay normal.
    priority.apply(config.service)
    async with contextlib.AsyncExitStack() as stack:
        latency = priority.hold_cpu_latency(config.service)
        if latency is not None:
            stack.callback(os.close, latency)
        daemon = await build(config, options, factory, stack)
        service = daemon.service
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, daemon.stop.set)
        loop.add_signal_handler(signal.SIGUSR1, log_task_stacks)
        priority.freeze_heap()  # no full collection walks the start's objects again
        log.info("timerd ready: profile %s, pins %s%s", service.match.profile.name,
                 "simulated" if options.simulate else type(factory).__name__,
                 f", speed x{options.speed:g}" if options.speed != 1 else "")
        daemon.notifier.ready(service.status())
        service.announce(*daemon.journal.announcement(service.status()),
                         *daemon.switch.announcement())
        async with asyncio.TaskGroup() as tasks:
            match_loop = tasks.create_task(service.run(), name="match-loop")
            await daemon.stop.wait()
            daemon.notifier.stopping()
            match_loop.cancel()
    log.info("timerd stopped")


async def _board(stack: contextlib.AsyncExitStack, config: Config, service: Service,
                 factory: object) -> GpioBoard:
    """The GPIO board (buzzers, horn, LEDs, buttons), open on `stack`: for `timerd run` and
    `timerd sound-test` alike."""
    return await stack.enter_async_context(
        GpioBoard(config.gpio, config.signals, service, factory))


async def _keypad(stack: contextlib.AsyncExitStack, config: Config,
                  service: Service) -> Keypad | None:
    """The USB keypad's buttons (`[keypad] device`), open on `stack`, with the header's
    debounce and long press; None when no keypad is configured."""
    if not config.keypad.device:
        return None
    from timerd.adapters.keypad import Keypad  # noqa: PLC0415 (evdev only with a keypad)

    return await stack.enter_async_context(Keypad(
        config.keypad, service, config.gpio.debounce_ms / 1000, config.gpio.long_press_s))


def find_keypad(config: KeypadConfig) -> tuple[str | None, str]:
    """`[keypad] device` as `timerd doctor` checks it: its name and path (and which of several
    of its name it is), or None and why it is not there (not plugged in, no python-evdev,
    not readable, none of the keys)."""
    from timerd.adapters import keypad  # noqa: PLC0415

    device, why = keypad.lookup(config.device, config.key_names())
    if device is None:
        return None, why
    found = f"{device.name!r} at {device.path}" + (f" ({why})" if why else "")
    device.close()
    return found, ""


def input_devices() -> list[tuple[str, str]]:
    """Every input device this user can read, (path, name): what a keypad can be."""
    from timerd.adapters import keypad  # noqa: PLC0415

    return keypad.devices()


async def _speaker(stack: contextlib.AsyncExitStack, config: Config, service: Service,
                   board: GpioBoard | None) -> Speaker:
    """The speaker, open on `stack`; without a card it falls back to the board's buzzers."""
    return await stack.enter_async_context(Speaker.for_service(
        config, service, None if board is None else board.buzzers))


async def _streams(stack: contextlib.AsyncExitStack, config: Config, options: RunOptions,
                   service: Service, t0: float) -> tuple[EventStream | None, Any]:
    """The event stream (`--events`) and the serial display (`[serial] port`), if asked for."""
    events = serial = None
    if options.events is not None:
        events = await stack.enter_async_context(
            EventStream.open(options.events, service.loop, t0))
    if config.serial.port:
        from timerd.adapters.serial_display import SerialDisplay  # noqa: PLC0415 (pyserial)

        serial = await stack.enter_async_context(SerialDisplay(config.serial, service))
    return events, serial


class Registrar:
    """The one door through which parts are wired into the service (issue 44 item 4): `build`
    makes it and keeps it. No adapter can reach it: adapters import no `app` (the import
    contracts) and see the service only as a `ports.Control`, which has no register. Each
    door is typed, so mypy checks what `build` hands it against the adapter protocols of
    ports.py (`Output`, `SoundOutput`, `HasButtons`, `HasCommands`, `HasStatus`)."""

    def __init__(self, service: Service) -> None:
        self._service = service

    def sound_outputs(self, *parts: SoundOutput) -> None:
        """Handed each signal, in this order, before any output has its dispatch."""
        self._service.sound_outputs.extend(parts)

    def outputs(self, *parts: Output) -> None:
        """Handed each dispatch, in this order."""
        self._service.outputs.extend(parts)

    def status(self, extra: StatusExtra) -> None:
        """Keys of the status document beside the core's."""
        self._service.status_extras.append(extra)

    def attach(self, part: HasButtons | HasCommands | HasStatus) -> None:
        """What `part` declares beside being an output, by the protocols it has: its
        buttons and chords, its commands (`mute`) and its keys in the status."""
        if isinstance(part, HasButtons):
            self._service.buttons.update(part.bindings)
            self._service.chords.extend(part.chords)
        if isinstance(part, HasCommands):
            self._service.extra_commands.update(part.commands)
        if isinstance(part, HasStatus):
            self.status(part.status_extra)


def attach(service: Service, part: HasButtons | HasCommands | HasStatus) -> None:
    """Wire what `part` declares into `service` (`Registrar.attach`): for a test that builds
    a part by itself, as `build` does."""
    Registrar(service).attach(part)


async def network_adapters(stack: contextlib.AsyncExitStack, config: Config,
                           options: RunOptions, service: Service, *, writer: DiskWriter,
                           t0: float) -> tuple[WebServer | None, HallLink | None]:
    """The web scoreboard and the hall link, each imported only when switched on."""
    web = hall = None
    if config.web.enabled:
        from timerd.adapters.web.adapter import WebServer  # noqa: PLC0415

        path = config.results_path()
        web = await stack.enter_async_context(
            WebServer(config.web, service, rate=options.speed, t0=t0,
                      results=None if path is None else partial(recent_results, path),
                      state_directory=config.state_directory(), writer=writer))
    if config.hall.enabled:
        from timerd.adapters.hall.link import (  # noqa: PLC0415 (aiomqtt only if enabled)
            HallLink,
            Outbox,
        )

        hall = await stack.enter_async_context(HallLink(
            config.hall, service, Outbox(hall_outbox(config), writer), rate=options.speed))
    return web, hall


def _storage(config: Config, journal: Journal, writer: DiskWriter,
             board: GpioBoard) -> ResultsFile:
    """The results file on the shared disk writer, and storage faults on the LEDs."""
    writer.listeners.append(board.leds.storage)
    board.leds.storage(writer.faults)  # a journal that could not be opened at the start
    results = ResultsFile(config.results_path(), writer=writer,
                          pending=config.state_directory() / PENDING_DIR,
                          spare=config.runtime_directory() / PENDING_DIR)
    keep_results(journal, results)
    return results


def keep_results(journal: Journal, results: ResultsFile) -> None:
    """Wire the results file to the recovered journal (issue 36: a result acknowledged is
    never only in RAM): a finished match stays in the journal until its result is on disk,
    a start writes the results an earlier run could not, and the result of a match the
    journal found finished unless the file holds it; a restored match keeps its start and
    goal wall times (and a finished one its end's, issue 42)."""
    journal.result_off_disk = results.off_disk
    # The end of a match, one sequence on the disk writer: the ending command (the journal,
    # handed each dispatch before the results), the results line, then the journal closes the
    # match and compacts once that line is on disk (docs/service.md).
    journal.closes_itself = False
    results.ended.append(journal.close_finished)
    results.on_disk.append(journal.result_on_disk)
    results.load_pending()
    recovery = journal.recovery
    for done in [*journal.finished_earlier, recovery]:
        if done.final is not None:
            results.write_recovered(done.final, done.started_wall, done.goal_walls,
                                    done.final_wall)
    if recovery.match is not None:  # restored: in play, or finished and still correctable
        results.resume(recovery.started_wall, recovery.goal_walls, recovery.final,
                       recovery.final_wall)


class ProfileSwitch:
    """A restored match keeps the profile it was played under, even when the config or
    `--profile` now asks for another: its rules must not change mid-match. The start says so,
    the status names the profile to come (`next_profile`), and once that match is reset the
    daemon takes the asked-for profile (the teams' names stay, as over any reset)."""

    def __init__(self, service: Service, journal: Journal, wanted: Profile) -> None:
        self.service = service
        self.journal = journal
        self.wanted = wanted
        #: The match last asked about, and whether its profile is not the wanted one.
        self._asked: tuple[object, bool] = (None, False)

    def pending(self) -> bool:
        """The match's profile is not the one asked for. Asked per dispatch (the status's
        `next_profile`), answered once per match: a match keeps its profile, and comparing
        two profiles field by field each second was a third of the status's extras under
        cProfile (issue 44 item 8)."""
        match = self.service.match
        if match is not self._asked[0]:
            self._asked = (match, match.profile != self.wanted)
        return self._asked[1]

    def status_extra(self) -> dict[str, str | None]:
        return {"next_profile": self.wanted.name if self.pending() else None}

    def announcement(self) -> list[Effect]:
        if not self.pending():
            return []
        told = Told("notice.profile_after_reset", {"profile": self.service.match.profile.name,
                                                    "wanted": self.wanted.name})
        log.warning("%s", LOG_TEXT.notice(told.code, told.params))
        return [told]

    def notify(self, dispatch: Dispatch) -> None:
        if dispatch.status.phase is Phase.IDLE and self.pending() and any(
                isinstance(e, Applied) and isinstance(e.command, Reset)
                for e in dispatch.effects):
            # After this dispatch: the journal has closed the old match under its profile.
            self.service.loop.call_soon(self._switch)

    def _switch(self) -> None:
        old = self.service.match
        if old.phase is not Phase.IDLE or not self.pending():
            return
        self.service.replace_match(self.wanted)
        self.journal.use_profile(self.wanted)
        log.info("profile %s now (the restored match under %s was reset)",
                 self.wanted.name, old.profile.name)
        self.service.announce(Told("notice.profile_now", {"profile": self.wanted.name}))


def log_task_stacks() -> None:
    """SIGUSR1: log where every asyncio task is (cheap, and priceless on a headless Pi)."""
    for task in asyncio.all_tasks():
        out = io.StringIO()
        task.print_stack(file=out)
        log.warning("task %s:\n%s", task.get_name(), out.getvalue())
    log.warning("threads:\n%s", "".join(
        f"thread {ident}:\n{''.join(traceback.format_stack(frame))}"
        for ident, frame in sys._current_frames().items()))


@dataclass
class SoundingParts:
    """What `timerd sound-test` (timerd.tools.sound_test) plays through: the board's buzzers
    (None without GPIO) and the speaker, built as the daemon builds them, with no match
    loop running."""

    board: GpioBoard | None
    speaker: Speaker


async def sounding_parts(config: Config, factory: Any | None,
                         stack: contextlib.AsyncExitStack) -> SoundingParts:
    """The sounding parts of `config` on the pin factory `factory` (None: no GPIO), open on
    `stack`, once the speaker's playback thread has opened its device or said why not."""
    service = Service(Match(config.profile()))
    board = None if factory is None else await _board(stack, config, service, factory)
    speaker = await _speaker(stack, config, service, board)
    await speaker.settled()
    return SoundingParts(board, speaker)
