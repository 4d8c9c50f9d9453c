"""The match service: one asyncio loop that owns the match and sleeps until the next deadline.

Inputs (button edges, control commands) arrive on the loop thread; gpiozero's callback threads
only take a timestamp and hop over with `call_soon_threadsafe`. The loop then waits until the
earliest deadline (the next signal, the next shown second, a button's bounce window or long
press), asks the core what is due, and hands it out as one `Dispatch` (ports.py). Nothing is
counted per tick: a late wake-up fires what is due exactly once and logs how late it was.

Three parts (issue 32 item 5, issue 44 item 6): the timer (`timerd.timer.Timer`: the loop's
one timer, the deadlines, the step at each, and the outputs' exact calls), the dispatch
(`timerd.dispatch.Dispatcher`: every signal to the sound outputs first, then the whole
dispatch to every output), and this module, the request/reply surface (`execute`, `command`,
`acknowledge`: what `ports.Control` offers) and the match the timer drives.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from timerd.core.buttons import Chord, Gesture
from timerd.core.commands import Command
from timerd.core.effects import Applied, Effect, Phase, Tick, refusal
from timerd.core.match import Match
from timerd.core.offered import offered_commands
from timerd.core.profile import Profile
from timerd.core.refused import CommandRefused, named
from timerd.core.status import Status, check, next_shown_change
from timerd.dispatch import Dispatcher
from timerd.i18n import LOG_TEXT
from timerd.limits import RateLimitedLog
from timerd.ports import (
    ButtonBinding,
    Cancellable,
    ExtraCommand,
    Output,
    SoundOutput,
    StatusExtra,
)
from timerd.tasks import Supervised, Supervisor
from timerd.timer import Timer
from timerd.wire import (
    commands_reply,
    events,
    new_match_id,
    ok_reply,
    refused_reply,
    status_document,
)

log = logging.getLogger("timerd.service")

@dataclass
class Service:
    match: Match
    #: The outputs, the sound outputs and the status's extra keys, and the hand-out.
    dispatcher: Dispatcher = field(default_factory=Dispatcher)
    buttons: dict[str, ButtonBinding] = field(default_factory=dict)
    #: Two buttons held together (the ITHF 4.6 forfeit: RESET with a GOAL button).
    chords: list[Chord] = field(default_factory=list)
    #: Commands adapters add beside the match's own, by name.
    extra_commands: dict[str, ExtraCommand] = field(default_factory=dict)
    #: Waits until the last accepted command is on disk: None, or why it is not (the
    #: journal's `synced`). None: nothing is kept, and no reply waits.
    durability: Callable[[], Awaitable[str | None]] | None = None
    #: Makes the id of a match being set up (issue 14, invariant 8): one id, minted here
    #: when the match leaves idle (a start, a scheduled start) and kept by the match until
    #: its reset, for the results, the journal, hall mode and the status alike.
    mint_id: Callable[[], str] = new_match_id
    #: Tick ten times a second in the last 10 s: an output shows the tenths (the LED digits,
    #: the terminal). Without one (`app.build` says), once a second: the web page runs its
    #: clock between pushes, and every wake-up costs CPU (issue 16).
    tenths: bool = True
    #: The adapters' long-lived tasks (`spawn`): a crash is logged and the task restarted.
    tasks: Supervisor = field(default_factory=Supervisor)
    _loop: asyncio.AbstractEventLoop | None = None
    #: The loop's timer: what is due, when (`timerd.timer`).
    timer: Timer = field(init=False, repr=False)
    #: The line per command (from a socket, the web, MQTT, the serial display), at most one
    #: per kind per 30 s with a count (issue 13): a flood of commands must not push the line
    #: that holds an unwritten result out of journald's rate limit. The match journal keeps
    #: every command.
    _log: RateLimitedLog = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._log = RateLimitedLog(log, clock=self.now)
        self.timer = Timer(self)

    # The dispatcher's registers, which `timerd.app` fills (ports.py).

    @property
    def outputs(self) -> list[Output]:
        """Handed each dispatch, in this order, after the sound outputs had its signals."""
        return self.dispatcher.outputs

    @outputs.setter
    def outputs(self, outputs: list[Output]) -> None:
        self.dispatcher.outputs = outputs

    @property
    def sound_outputs(self) -> list[SoundOutput]:
        """Handed each signal first (the buzzers, the horn, the speaker), in this order."""
        return self.dispatcher.sound_outputs

    @sound_outputs.setter
    def sound_outputs(self, outputs: list[SoundOutput]) -> None:
        self.dispatcher.sound_outputs = outputs

    @property
    def status_extras(self) -> list[StatusExtra]:
        """Adapters' own state shown beside the match's (`{"muted": true}`)."""
        return self.dispatcher.status_extras

    @status_extras.setter
    def status_extras(self, extras: list[StatusExtra]) -> None:
        self.dispatcher.status_extras = extras

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    def now(self) -> float:
        return self.loop.time()

    def status(self) -> Status:
        """The match's status now. Refused while a dispatch is handed out (RuntimeError): an
        output reads the dispatch's (`Dispatch.status`, `Dispatch.document`), made once for
        every output; one made again would cost the hand-out a snapshot (issue 44 item 2)."""
        if self.dispatcher.handing_out:
            raise RuntimeError("the status was asked for during a hand-out: an output reads "
                               "its dispatch's (Dispatch.status, Dispatch.document)")
        return self.match.status(self.now())

    @property
    def profile(self) -> Profile:
        return self.match.profile

    def status_dict(self) -> dict[str, Any]:
        """The state every tool sees now (`timerctl status --json`, `GET /api/state`, a
        reply, MQTT's heartbeat). An output handed a dispatch reads `Dispatch.document`."""
        return status_document(self.status(), self.dispatcher.extras())

    def replace_match(self, profile: Profile) -> Match:
        """Play the next match under `profile` (a restored match, played under the profile it
        began with, was reset: `app.ProfileSwitch`). Only between matches: the match is idle.
        The teams' names and round stay, as over any reset; every part that reads the
        profile (`Control.profile`, the status's `profile` and `clock_rule`, the horn's
        pulses) reads the new one from the next dispatch on."""
        old = self.match
        if old.phase is not Phase.IDLE:
            raise RuntimeError(f"replace_match: the match is {old.phase.value}, not idle")
        fresh = Match(profile)
        fresh.teams, fresh.round = dict(old.teams), old.round
        self.match = fresh
        return fresh

    def offered(self) -> dict[str, tuple[str, ...]]:
        """The commands the match's profile has (the others it would refuse anyway) and the
        adapters' own, each with its arguments' names: what a score desk offers."""
        have = offered_commands(self.match.profile)
        table = {cls.name: cls.usage(self.match.profile) for cls in self.match.commands()
                 if cls.name in have}
        return table | {name: extra.args for name, extra in self.extra_commands.items()}

    def announce(self, *effects: Effect) -> None:
        """Hand effects that did not come from the match (a recovery) to every output now."""
        self.hand_out(list(effects), self.now())

    # -- inputs (loop thread) --------------------------------------------------------------

    def parse(self, name: str, *words: str) -> Command:
        """Command `name` read from its words as the match's profile declares it
        (`Match.parse`): each edge that receives words calls this once."""
        return self.match.parse(name, *words)

    def execute(self, command: Command, *, at: float | None = None) -> Status:
        """Run an operator command; CommandRefused says why it was not allowed.

        `at` is when it was given (a button's edge, timestamped in gpiozero's thread): the
        clock starts and stops at the press, not when the loop got round to it. It is never
        earlier than what the match has already been told, so time only moves forward.
        """
        return self._execute(command, at)[0]

    def _execute(self, command: Command, at: float | None) -> tuple[Status, list[Effect]]:
        """`execute`, and what the command did (its effects): a tool's reply says it."""
        now = self.now()
        timer = self.timer
        when = now if at is None else min(now, max(at, timer.told_until))
        try:
            effects = self.match.handle(command, when)
            self._mint()
            # The status the dispatch hands out, checked first: no second snapshot, so the
            # check costs a press no time before the buzzer's edge.
            status = check(self.match, now)
        except CommandRefused as exc:
            told = refusal(exc)
            self._log.info("refused", "%s", LOG_TEXT.notice(told.code, told.params))
            # What fell due before the refusal (the match holds it): sounded now, not lost.
            timer.told_until = max(timer.told_until, when)
            self.hand_out([*self.match.poll(when), told], now)
            timer.wake()
            raise
        except Exception as exc:
            raise self._failed(command, exc) from exc
        timer.told_until = when
        self._log.info(f"command {command.name}", "command %s", command)
        effects.append(Applied(command, at=when))
        self.hand_out(effects, now, status_of=lambda: status)
        timer.wake()
        return status, effects

    def _failed(self, command: Command, exc: Exception) -> CommandRefused:
        """A command the core raised on, or took but cannot show or time (`core.status.check`): a
        defect. It reached no output, so it is not journalled; the match object may be
        half-changed, so the daemon stops as for any defect in the loop (systemd restarts it,
        and the journal restores the match as it was before this command), and the tool that
        sent it is told (`refused.failed`) instead of getting no reply (issue 34)."""
        log.error("command %s failed inside timerd; not applied, not journalled; the daemon "
                  "stops and restarts from its journal", str(command)[:200], exc_info=exc)
        self.timer.fail(exc)
        failed = CommandRefused("failed")
        failed.command = command.name
        return failed

    def command(self, request: Any) -> dict[str, Any]:
        """A command from a tool, `{"command": name, "args": [...]}`, answered as a reply dict.

        Shared by every control surface (socket, web, MQTT): anything malformed gets a
        refusal with its code (`refused.not_a_command`, `refused.args_not_strings`, an adapter
        command's `refused.arguments`) and never reaches the match.
        """
        if not isinstance(request, Mapping) or not isinstance(request.get("command"), str):
            return refused_reply(refusal(CommandRefused("not_a_command")))
        name = request["command"]
        args = request.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            return refused_reply(refusal(named(name, CommandRefused("args_not_strings"))))
        if name == "commands":  # what `timerctl help` lists: asks, changes nothing
            return commands_reply(self.status_dict(), {"status": (), **self.offered()})
        try:
            extra = self.extra_commands.get(name)
            if extra is not None:
                extra.check(tuple(args))
                extra.run(*args)
            elif name != "status":
                status, effects = self._execute(self.parse(name, *args), None)
                return ok_reply(self.status_dict(), events(effects, status))
        except CommandRefused as exc:
            exc.command = exc.command or name
            return refused_reply(refusal(exc))
        return ok_reply(self.status_dict())

    async def acknowledge(self, request: Any) -> dict[str, Any]:
        """`command`, with the reply held until the command is on disk (the loop goes on).

        A reply that cannot promise that says so: `"durable": false`, a `warning` and its
        `problem` (for timerctl to say it in the terminal's language) (a full
        or failing card, no journal, a device slower than the writer's SLOW_S): the command
        is applied all the same and the match goes on (docs/service.md, "Limits and failure
        modes"). For the control socket and HTTP, whose tools read the reply.
        """
        reply = self.command(request)
        if reply["ok"] and self.durability is not None and request.get("command") != "status":
            problem = await self.durability()
            if problem is not None:  # and the status as it is now, with `storage`
                reply.update(durable=False, status=self.status_dict(), problem=problem,
                             warning=LOG_TEXT("reply.not_durable", problem=problem))
        return reply

    def button_edge(self, name: str, pressed: bool, at: float) -> None:
        """A raw edge of button `name` seen at loop time `at`."""
        binding = self.buttons.get(name)
        if binding is None:
            return
        self.act_on_buttons({name: binding.logic.edge(pressed, at)}, at)
        self.timer.inputs_stirred = True
        self.timer.wake()

    def edge_from_thread(self, name: str, pressed: bool, at: float | None = None) -> None:
        """For gpiozero callbacks: the edge's time (`at`, the kernel's stamp mapped onto the
        loop's clock, where the pin driver gives one; else now), then over to the loop thread.
        A callback can wait for the interpreter lock: its own stamp would be late, and every
        later signal of the match with it."""
        loop = self.loop
        if at is None:
            at = loop.time()
        else:
            log.debug("button %s: edge (%s) stamped by the kernel at %.6f, %.1f ms ago",
                      name, "pressed" if pressed else "released", at,
                      (loop.time() - at) * 1000)
        loop.call_soon_threadsafe(self.button_edge, name, pressed, at)

    def act_on_buttons(self, gestures: Mapping[str, Iterable[Gesture]], at: float) -> None:
        """Act on buttons' gestures at `at`, after their chords: a chord's gesture is its own."""
        levels = {name: b.logic.pressed for name, b in self.buttons.items()}
        for chord in self.chords:
            if chord.update(levels, at):
                log.info("buttons %s: held together", " + ".join(chord.buttons))
                with contextlib.suppress(CommandRefused):  # logged and shown as a notice
                    self.execute(chord.command, at=at)
        for name, those in gestures.items():
            if not any(chord.swallows(name) for chord in self.chords):
                self._gestures(name, self.buttons[name], those, at)

    def _gestures(self, name: str, binding: ButtonBinding, gestures: Iterable[Gesture],
                  at: float) -> None:
        for gesture in gestures:
            command = binding.commands.get(gesture)
            if command is not None:
                log.info("button %s: %s", name, gesture)
                with contextlib.suppress(CommandRefused):  # logged and shown as a notice
                    self.execute(command, at=at)
            elif gesture is Gesture.SHORT and binding.hint is not None:
                self.hand_out([binding.hint], self.now())

    def spawn(self, name: str, factory: Callable[[], Coroutine[Any, Any, None]]) -> Supervised:
        """An adapter's long-lived task, in the supervised group (`timerd.tasks`)."""
        return self.tasks.spawn(name, factory)

    def call_exactly_at(self, when: float, callback: Callable[[], None]) -> Cancellable:
        """Run `callback` at loop time `when` as a signal is sounded: woken early from epoll
        and slept to the instant (`Timer.arm`), where `loop.call_at` can fire up to a
        millisecond late (epoll rounds its timeout up). For a buzzer pulse's edges: a 50 ms
        chirp must last 50 ms (issue 16)."""
        return self.timer.call_exactly_at(when, callback)

    # -- the loop --------------------------------------------------------------------------

    async def run(self) -> None:
        """Run until cancelled: the first tick's dispatch, then the timer (`timerd.timer`)."""
        self.hand_out([Tick()], self.now())
        await self.timer.run()  # fails with what a step raised: a defect stops the daemon

    def _mint(self) -> None:
        if self.match.match_id is None and self.match.phase is not Phase.IDLE:
            self.match.match_id = self.mint_id()  # set up: before any output sees it

    def hand_out(self, effects: list[Effect], now: float, sounded: int = 0,
                 status_of: Callable[[], Status] | None = None) -> None:
        """Hand `effects` to every output with the match's status at `now` (`status_of`: that
        status, already made and checked by `execute`; `sounded`: how many of the signals
        the sound outputs had already)."""
        self._mint()
        if not effects:
            return
        made = partial(self.match.status, now) if status_of is None else status_of
        dispatch = self.dispatcher.hand_out(effects, made, now, sounded)
        self.timer.next_tick = next_shown_change(dispatch.status, now, self.tenths)
