"""What an adapter may see of the daemon: ports, never the service or the app (issue 14).

An adapter is handed a `Control` (the match as a control surface sees it: its time, its
status, its commands) and is itself an `Output` when it shows what happens, a `SoundOutput`
when it sounds signals (the buzzers, the horn, the speaker). Each is handed one `Dispatch` per
dispatch: its effects, the status they leave, and the one status document, built at the first
output that reads it; no output asks the service for the document (issue 32). What an adapter
adds beside the match (buttons, chords, commands such as `mute`, keys in the status) it
declares as plain attributes; `timerd.app` alone registers them with the service, so who
wires what, and in which order, is read in one place.

Every method of these ports returns at once on the loop thread: an adapter never blocks the
loop, and the service never waits for an adapter (`acknowledge` awaits the disk writer's
future, not the device).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, overload, runtime_checkable

from timerd.core import rules
from timerd.core.buttons import ButtonLogic, Chord, Gesture
from timerd.core.commands import Command, check_arguments
from timerd.core.effects import Effect, Notice, Signal, Told
from timerd.core.frozen import ReadOnlyDict
from timerd.core.profile import Profile
from timerd.core.status import Status
from timerd.wire import status_document

#: Keys an adapter adds to the status document (`{"muted": true}`); never a core key.
StatusExtra = Callable[[], dict[str, Any]]


T = TypeVar("T")


class made_once(Generic[T]):
    """`functools.cached_property` without its lock: made at the first read into the
    instance's dict, where every later read finds it at once. Python 3.11's takes a lock in
    Python code at each first read, three per dispatch, a tenth of the bytecode a dispatch
    added over the round before (issue 44 item 8); a dispatch is read on the loop thread
    alone, where no lock is needed."""

    def __init__(self, make: Callable[[Any], T]) -> None:
        self.make, self.name, self.__doc__ = make, make.__name__, make.__doc__

    @overload
    def __get__(self, instance: None, owner: type) -> made_once[T]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object, owner: type | None = None) -> T | made_once[T]:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.make(instance)
        return value


@dataclass(frozen=True, eq=False)
class Dispatch:
    """What one dispatch hands every output: its effects in the order the match made them,
    the status they leave at loop time `now`, and (`document`) the one status document of
    the dispatch, built when the first output reads it (a dispatch nobody shows costs
    nothing) and the same object for every output after (issue 14, invariant 5). Frozen:
    an output reads it and cannot change it, the document included: its dicts and lists are
    read-only (`core.frozen`; a write raises TypeError, issue 44 item 2), so what one output
    writes never reaches the next; an output copies it to add (`{**document, "wall": ...}`)."""

    effects: tuple[Effect, ...]
    #: Makes `status`, once: after the buzzers had the signals (`Dispatcher.hand_out`).
    status_of: Callable[[], Status]
    now: float
    #: The adapters' keys beside the core's (`Service.status_extras`), read at the build
    #: (`Dispatcher.extras`).
    extras_of: Callable[[], Iterable[Mapping[str, Any]]] = tuple

    @made_once
    def status(self) -> Status:
        """The match's status at `now`, made when first read: not before a buzzer's first
        edge (0.1 ms in the daemon's process on the bench's machine, issue 33), and before
        any output that is not a sound output has the dispatch."""
        return self.status_of()

    @made_once
    def document(self) -> Mapping[str, Any]:
        """The versioned status document (`timerd.wire.status_document`) of this dispatch,
        read-only to its depth: its parts are read-only as made (the core's in
        `core.status.snapshot`, the rule modules' and the adapters' frozen where they are
        composed), so only the document itself is made read-only here."""
        return ReadOnlyDict(status_document(self.status, self.extras_of()))

    @made_once
    def signals(self) -> tuple[Signal, ...]:
        """The signals among the effects: the sound outputs get them before anything else
        of the dispatch reaches any output (`Service`)."""
        return tuple(e for e in self.effects if isinstance(e, Signal))


@runtime_checkable
class Output(Protocol):
    """Shows what happens: handed each dispatch once, after every sound output has had its
    signals. It returns at once (a writer buffers, a stream queues) and reads the status
    document from the dispatch, never from the service."""

    def notify(self, dispatch: Dispatch) -> None: ...


@runtime_checkable
class SoundOutput(Protocol):
    """Sounds signals (the buzzers, the horn, the speaker): handed each signal of a dispatch
    before any output is handed anything of it, so its first edge waits for no display, no
    disk and no network. It only starts the sound (a buzzer's later edges are
    `Control.call_exactly_at`s) and returns."""

    def signal(self, signal: Signal, dispatch: Dispatch) -> None: ...


@runtime_checkable
class HasButtons(Protocol):
    """An adapter with buttons: each by name with what its gestures do, and the chords
    (two buttons held together) among them (`button_bindings`)."""

    @property
    def bindings(self) -> Mapping[str, ButtonBinding]: ...
    @property
    def chords(self) -> Sequence[Chord]: ...


@runtime_checkable
class HasCommands(Protocol):
    """An adapter with commands of its own beside the match's (`mute`), by name."""

    @property
    def commands(self) -> Mapping[str, ExtraCommand]: ...


@runtime_checkable
class HasStatus(Protocol):
    """An adapter with keys of its own in the status document (`{"muted": true}`)."""

    def status_extra(self) -> dict[str, Any]: ...


class Buzzer(Protocol):
    """A buzzer that can be muted (`mute buzzer on`) and silenced at once."""

    muted: bool

    def silence(self) -> None: ...


@dataclass(frozen=True)
class ExtraCommand:
    """A command an adapter adds beside the match's (`mute`): what runs it with the words
    given, and its arguments' names as a score desk shows them (`x`, optional `x?`, a last
    `x...` for any number more). The service refuses words that do not fit them
    (`refused.arguments`, a code and its values) before it runs the command, so a command is
    never run to fail with a TypeError caught and told as a sentence (issue 44 item 6)."""

    run: Callable[..., None]
    args: tuple[str, ...] = ()

    def check(self, words: tuple[str, ...]) -> None:
        """CommandRefused `arguments` unless `words` fit `args`."""
        fixed = self.args[:-1] if self.args and self.args[-1].endswith("...") else self.args
        check_arguments(fixed, words if fixed is self.args else words[:len(fixed)])


#: A request only the control socket serves (its users are the machine's own: the timerd
#: group), never HTTP or MQTT: `desk`, the score desk's pairing (issue 43). Takes the
#: request's arguments and returns its reply (built in `timerd.wire`).
LocalRequest = Callable[..., Coroutine[Any, Any, dict[str, Any]]]


@dataclass
class ButtonBinding:
    """What a physical button does: the command for each gesture, and its debounce logic."""

    logic: ButtonLogic
    commands: Mapping[Gesture, Command]  # Goal(Side.HOME)
    hint: Notice | None = None  # told to the operator on a too-short press of a long press


def button_bindings(names: Iterable[str], debounce_s: float, long_press_s: float,
                    prefix: str = "") -> tuple[dict[str, ButtonBinding], list[Chord]]:
    """The bindings of the buttons `names` a control surface has (of the declared ones,
    `timerd.core.rules.buttons()`: "start_pause", "reset", "goal_home", ...), and the chords
    they make (`rules.chords()`): what a button does, for the GPIO header and a USB keypad
    alike, as the part of the core that owns its command declares it. Each is registered as
    `prefix` + its name, so two surfaces' buttons never share a debounce state (`button
    keypad_reset: long_press`).

    A long-press button (RESET, UNDO) acts only when held `long_press_s` (a stray touch never
    ends a match or takes back a goal) and tells its hint on a shorter press; a chord (the
    ITHF 4.6 forfeit, RESET with a GOAL) acts when both are held `long_press_s`.
    """
    present = set(names)
    bindings = {
        prefix + b.name: ButtonBinding(
            ButtonLogic(debounce_s, None if b.long_press is None else long_press_s),
            b.gestures, None if b.hint is None else Told(b.hint, {"s": long_press_s}))
        for b in rules.buttons() if b.name in present}
    chords = [Chord((prefix + c.buttons[0], prefix + c.buttons[1]), long_press_s, c.command)
              for c in rules.chords() if set(c.buttons) <= present]
    return bindings, chords


#: A kernel's edge stamp is taken only when it lies this far back at most: further is not the
#: monotonic clock, and the time it was handed over is used instead.
STAMP_TRUST_S = 1.0


def kernel_stamp(control: Control, stamp: float) -> float | None:
    """A kernel's event timestamp (`stamp`, seconds of CLOCK_MONOTONIC: a GPIO line's edge,
    an input device's key) on the loop's clock (the same clock, unless the loop is scaled),
    or None when it is not within STAMP_TRUST_S back (another clock: realtime stamps), and the
    caller's own time is to be used."""
    now = control.now()
    at = stamp + now - time.monotonic()
    return at if now - STAMP_TRUST_S <= at <= now else None


class Cancellable(Protocol):
    """A callback that is still to run, and can be called off."""

    def cancel(self) -> None: ...


class Spawned(Protocol):
    """An adapter's long-lived task, supervised by the daemon (`Control.spawn`,
    `timerd.tasks`): `task` is the run under way, if any."""

    name: str

    @property
    def task(self) -> asyncio.Task[None] | None: ...

    def cancel(self) -> None: ...

    async def stop(self, timeout_s: float | None = None) -> bool:
        """Cancel it for good and wait for its end; False if it did not end in time."""
        ...


class Control(Protocol):
    """The match as a control surface (socket, web, serial display, MQTT, buttons) sees it."""

    @property
    def loop(self) -> asyncio.AbstractEventLoop: ...

    @property
    def profile(self) -> Profile: ...

    def now(self) -> float: ...

    def status(self) -> Status:
        """The match's status now; RuntimeError while a dispatch is handed out (an output
        reads `Dispatch.status`)."""
        ...

    def status_dict(self) -> dict[str, Any]:
        """The versioned status document (`timerd.wire.status_document`) as it is now: for a
        request (a tool's `status`, `GET /api/state`, a heartbeat), never for an output
        during a dispatch (it has `Dispatch.document`: RuntimeError then)."""
        ...

    def parse(self, name: str, *words: str) -> Command:
        """Command `name` read from its words as the profile's modules declare it
        (`Match.parse`); CommandRefused says what is wrong."""
        ...

    def execute(self, command: Command, *, at: float | None = None) -> Status:
        """Run a typed command (`timerd.core.commands`); CommandRefused says why not."""
        ...

    def command(self, request: Any) -> dict[str, Any]:
        """A tool's `{"command", "args"}`, answered as a reply dict (never raises)."""
        ...

    async def acknowledge(self, request: Any) -> dict[str, Any]:
        """`command`, the reply held until the command is on disk."""
        ...

    def offered(self) -> dict[str, tuple[str, ...]]:
        """Every command the match under its profile has now, with its arguments' names,
        and the adapters' own (`mute`)."""
        ...

    def button_edge(self, name: str, pressed: bool, at: float) -> None:
        """A button's raw edge seen at loop time `at`, handed over on the loop thread (an
        input device read with the loop's reader)."""
        ...

    def edge_from_thread(self, name: str, pressed: bool, at: float | None = None) -> None:
        """A button's edge from a driver thread, handled on the loop: at loop time `at` when
        the driver knows when it happened (the kernel's edge timestamp), else stamped now."""
        ...

    def spawn(self, name: str, factory: Callable[[], Coroutine[Any, Any, None]]) -> Spawned:
        """Run `factory()` as the long-lived task `name` in the daemon's supervised group: a
        crash is logged, shown in the status and the task started again (`timerd.tasks`);
        the match goes on."""
        ...

    def call_exactly_at(self, when: float, callback: Callable[[], None]) -> Cancellable:
        """Run `callback` on the loop thread at loop time `when`, as exactly as a signal is
        sounded (a buzzer pulse's edges): an asyncio timer wakes up to a millisecond late."""
        ...
