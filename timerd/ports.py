"""What an adapter may see of the daemon: ports, never the service or the app (issue 14).

An adapter is handed a `Control` (the match as a control surface sees it: its time, its
status, its commands) and is itself an `Output` when it shows or sounds what happens. What it
adds beside the match (buttons, chords, commands such as `mute`, keys in the status, what it
sends once a dispatch is over: `after_dispatch`) it declares as plain attributes;
`timerd.app` alone registers them with the service, so who wires what, and in which order,
is read in one place.

Every method of these ports returns at once on the loop thread: an adapter never blocks the
loop, and the service never waits for an adapter (`acknowledge` awaits the disk writer's
future, not the device).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from timerd.core.buttons import ButtonLogic, Gesture
from timerd.core.commands import Command
from timerd.core.effects import Effect, Notice
from timerd.core.profile import Profile
from timerd.core.status import Status


class Output(Protocol):
    """Shows or sounds what happens: handed every effect with the one status document of
    its dispatch (built once by the service; an output never asks for it again)."""

    def notify(self, effect: Effect, status: Status) -> None: ...


class Buzzer(Protocol):
    """A buzzer that can be muted (`mute buzzer on`) and silenced at once."""

    muted: bool

    def silence(self) -> None: ...


#: A command an adapter adds beside the match's own (`mute on`): takes the arguments, returns
#: nothing or raises CommandRefused with the reason.
ExtraCommand = Callable[..., None]

#: Keys an adapter adds to the status document (`{"muted": true}`); never a core key.
StatusExtra = Callable[[], dict[str, Any]]


@dataclass
class ButtonBinding:
    """What a physical button does: the command for each gesture, and its debounce logic."""

    logic: ButtonLogic
    commands: Mapping[Gesture, Command]  # Command("goal", ("home",))
    hint: Notice | None = None  # told to the operator on a too-short press of a long press


class Cancellable(Protocol):
    """A callback that is still to run, and can be called off."""

    def cancel(self) -> None: ...


class Control(Protocol):
    """The match as a control surface (socket, web, serial display, MQTT, buttons) sees it."""

    @property
    def loop(self) -> asyncio.AbstractEventLoop: ...

    @property
    def profile(self) -> Profile: ...

    def now(self) -> float: ...

    def status(self) -> Status: ...

    def status_dict(self) -> dict[str, Any]:
        """The versioned status document (`timerd.wire.status_document`)."""
        ...

    def execute(self, command: str, *args: str, at: float | None = None) -> Status:
        """Run a command; CommandRefused says why not."""
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

    def edge_from_thread(self, name: str, pressed: bool, at: float | None = None) -> None:
        """A button's edge from a driver thread, handled on the loop: at loop time `at` when
        the driver knows when it happened (the kernel's edge timestamp), else stamped now."""
        ...

    def call_exactly_at(self, when: float, callback: Callable[[], None]) -> Cancellable:
        """Run `callback` on the loop thread at loop time `when`, as exactly as a signal is
        sounded (a buzzer pulse's edges): an asyncio timer wakes up to a millisecond late."""
        ...
