"""The match service: one asyncio loop that owns the match and sleeps until the next deadline.

Inputs (button edges, control commands) arrive on the loop thread; gpiozero's callback threads
only take a timestamp and hop over with `call_soon_threadsafe`. The loop then waits until the
earliest deadline (the next signal, the next shown second, a button's bounce window or long
press), asks the core what is due, and hands every effect to the outputs. Nothing is counted
per tick: a late wake-up fires what is due exactly once and logs how late it was.

Outputs are plain objects with `notify(effect, status)`; they must return at once (a buzzer
schedules its edges on the loop, a writer buffers). One that raises is logged and the match
goes on without it for that effect.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from timerd.core.buttons import Chord, Gesture
from timerd.core.display import next_change, tenth_only
from timerd.core.effects import Applied, Effect, Phase, Signal, Tick, refusal
from timerd.core.match import Match
from timerd.core.offered import offered_commands
from timerd.core.profile import Profile
from timerd.core.refused import CommandRefused
from timerd.core.score import Goal
from timerd.core.status import Status
from timerd.i18n import LOG_TEXT
from timerd.limits import RateLimitedLog
from timerd.ports import ButtonBinding, ExtraCommand, Output, StatusExtra
from timerd.wire import (
    arg_names,
    error_reply,
    new_match_id,
    ok_reply,
    refused_reply,
    status_document,
)

log = logging.getLogger("timerd.service")

#: Signals later than this are logged as a warning (a slow SD card, an overloaded Pi).
LATE_WARNING_S = 0.005


#: The last stretch before a deadline is slept with `time.sleep`, on the loop thread: the kernel
#: times a nanosleep to its 50 us timer slack, while an epoll timeout (how asyncio sleeps) is
#: rounded up to whole milliseconds. An input arriving in this stretch waits at most this long.
FINE_WAIT_S = 0.003


def slack_margin(wait_s: float) -> float:
    """How early to wake from the event loop's sleep before a deadline `wait_s` away.

    Linux lets a poll timeout fire late by 0.1% of its length, up to 100 ms (timer slack), and
    epoll rounds the timeout up to whole milliseconds (DESIGN.md). Waking that much early plus
    2 ms leaves the deadline inside the FINE_WAIT_S stretch, slept precisely (for a wait
    longer than FINE_WAIT_S, the margin is always shorter than the wait). Measured with
    `bench/run`: sleeping the last milliseconds in epoll sounded signals 1.4 to 2.5 ms late.
    """
    return min(0.1, 0.001 * wait_s) + 0.002


@dataclass
class Service:
    match: Match
    outputs: list[Output] = field(default_factory=list)
    buttons: dict[str, ButtonBinding] = field(default_factory=dict)
    #: Two buttons held together (the ITHF 4.6 forfeit: RESET with a GOAL button).
    chords: list[Chord] = field(default_factory=list)
    #: Commands adapters add beside the match's own, by name.
    extra_commands: dict[str, ExtraCommand] = field(default_factory=dict)
    #: Adapters' own state shown beside the match's (`{"muted": true}`), merged into status.
    status_extras: list[StatusExtra] = field(default_factory=list)
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
    _loop: asyncio.AbstractEventLoop | None = None
    _waiter: asyncio.Future[str] | None = None
    #: When the shown clock next changes, and whether only its tenths (`Tick.tenth`).
    _next_tick: tuple[float, bool] | None = None
    _told_until: float = float("-inf")  # the latest instant the match has been handed
    #: The status of the dispatch under way, and its document once an output asked for it
    #: (both None between dispatches).
    _dispatching: Status | None = None
    _document: dict[str, Any] | None = None
    #: How many status documents dispatches have built (at most one each; a test counts them).
    documents_built: int = 0
    #: The line per command (from a socket, the web, MQTT, the serial display), at most one
    #: per kind per 30 s with a count (issue 13): a flood of commands must not push the line
    #: that holds an unwritten result out of journald's rate limit. The match journal keeps
    #: every command.
    _log: RateLimitedLog = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._log = RateLimitedLog(log, clock=self.now)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    def now(self) -> float:
        return self.loop.time()

    def status(self) -> Status:
        return self.match.status(self.now())

    @property
    def profile(self) -> Profile:
        return self.match.profile

    def status_dict(self) -> dict[str, Any]:
        """The state every tool sees (`timerctl status --json`, `GET /api/state`, MQTT).

        During a dispatch, the one document of that dispatch: built when the first output asks
        for it (a dispatch nobody shows costs nothing), then the same one for every output
        (issue 14, invariant 5)."""
        if self._dispatching is None:
            return status_document(self.status(), [extra() for extra in self.status_extras])
        if self._document is None:
            self._document = status_document(self._dispatching,
                                             [extra() for extra in self.status_extras])
            self.documents_built += 1
        return self._document

    def offered(self) -> dict[str, tuple[str, ...]]:
        """The commands the match's profile has (the others it would refuse anyway) and the
        adapters' own, each with its arguments' names: what a score desk offers."""
        have = offered_commands(self.match.profile)
        table = {name: usage for name, (_, usage) in self.match.commands().items()
                 if name in have}
        return table | {name: arg_names(fn) for name, fn in self.extra_commands.items()}

    def announce(self, *effects: Effect) -> None:
        """Hand effects that did not come from the match (a recovery) to every output now."""
        self._dispatch(list(effects), self.now())

    # -- inputs (loop thread) --------------------------------------------------------------

    def execute(self, command: str, *args: str, at: float | None = None) -> Status:
        """Run an operator command; CommandRefused says why it was not allowed.

        `at` is when it was given (a button's edge, timestamped in gpiozero's thread): the
        clock starts and stops at the press, not when the loop got round to it. It is never
        earlier than what the match has already been told, so time only moves forward.
        """
        now = self.now()
        when = now if at is None else min(now, max(at, self._told_until))
        try:
            effects = self.match.handle(command, when, *args)
        except CommandRefused as exc:
            told = refusal(exc)
            self._log.info("refused", "%s", LOG_TEXT.notice(told.code, told.params))
            # What fell due before the refusal (the match holds it): sounded now, not lost.
            self._told_until = max(self._told_until, when)
            self._dispatch([*self.match.poll(when), told], now)
            self._wake()
            raise
        self._told_until = when
        self._log.info(f"command {command}", "command %s %s", command, " ".join(args))
        effects.append(Applied(command, args, at=when))
        self._dispatch(effects, now)
        self._wake()
        return self.match.status(now)

    def command(self, request: Any) -> dict[str, Any]:
        """A command from a tool, `{"command": name, "args": [...]}`, answered as a reply dict.

        Shared by every control surface (socket, web, MQTT): anything malformed gets an error
        reply and never reaches the match.
        """
        if not isinstance(request, Mapping) or not isinstance(request.get("command"), str):
            return error_reply('expected {"command": NAME, "args": [...]}')
        args = request.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            return error_reply("args must be a list of strings")
        name = request["command"]
        try:
            if name in self.extra_commands:
                try:
                    self.extra_commands[name](*args)
                except TypeError:
                    self._log.log(logging.ERROR, "wrong arguments", "command %s %s", name,
                                  args, exc_info=True)
                    return error_reply(f"{name}: wrong number of arguments")
            elif name != "status":
                self.execute(name, *args)
        except CommandRefused as exc:
            exc.command = exc.command or name
            return refused_reply(refusal(exc))
        return ok_reply(self.status_dict())

    async def acknowledge(self, request: Any) -> dict[str, Any]:
        """`command`, with the reply held until the command is on disk (the loop goes on).

        A reply that cannot promise that says so: `"durable": false` and a `warning` (a full
        or failing card, no journal, a device slower than the writer's SLOW_S): the command
        is applied all the same and the match goes on (docs/service.md, "Limits and failure
        modes"). For the control socket and HTTP, whose tools read the reply.
        """
        reply = self.command(request)
        if reply["ok"] and self.durability is not None and request.get("command") != "status":
            problem = await self.durability()
            if problem is not None:  # and the status as it is now, with `storage`
                reply.update(durable=False, status=self.status_dict(),
                             warning=f"not durable: {problem}; a crash now would lose this "
                                     "command")
        return reply

    def button_edge(self, name: str, pressed: bool, at: float) -> None:
        """A raw edge of button `name` seen at loop time `at`."""
        binding = self.buttons.get(name)
        if binding is None:
            return
        self._buttons_act({name: binding.logic.edge(pressed, at)}, at)
        self._wake()

    def edge_from_thread(self, name: str, pressed: bool) -> None:
        """For gpiozero callbacks: timestamp now, then hand over to the loop thread."""
        loop = self.loop
        loop.call_soon_threadsafe(self.button_edge, name, pressed, loop.time())

    def _buttons_act(self, gestures: Mapping[str, Iterable[Gesture]], at: float) -> None:
        """Act on buttons' gestures at `at`, after their chords: a chord's gesture is its own."""
        levels = {name: b.logic.pressed for name, b in self.buttons.items()}
        for chord in self.chords:
            if chord.update(levels, at):
                log.info("buttons %s: held together", " + ".join(chord.buttons))
                with contextlib.suppress(CommandRefused):  # logged and shown as a notice
                    self.execute(chord.command.name, *chord.command.args, at=at)
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
                    self.execute(command.name, *command.args, at=at)
            elif gesture is Gesture.SHORT and binding.hint is not None:
                self._dispatch([binding.hint], self.now())

    # -- the loop --------------------------------------------------------------------------

    async def run(self) -> None:
        """Run until cancelled."""
        self._dispatch([Tick()], self.now())
        while True:
            deadline, exact, inputs = self._deadlines()
            await self._sleep_until(deadline, exact)
            now = self.now()
            # The buttons and chords only when one of theirs is due: an edge that came during
            # the sleep acted at once (`button_edge`), and its deadlines are later than now.
            if inputs is not None and now >= inputs:
                self._buttons_act({n: b.logic.poll(now) for n, b in self.buttons.items()}, now)
            effects: list[Effect] = list(self.match.poll(now))
            self._told_until = now
            if self._next_tick is not None and now >= self._next_tick[0]:
                effects.append(Tick(tenth=self._next_tick[1]))
            self._dispatch(effects, now)

    def _deadlines(self) -> tuple[float | None, float | None, float | None]:
        """The next deadline of all; the next one that must be met exactly: a signal, a
        button's bounce window or long press, a chord (not the shown clock's next change);
        and the next of the buttons' and chords' alone."""
        inputs = [b.logic.next_deadline() for b in self.buttons.values()]
        inputs += [chord.next_deadline() for chord in self.chords]
        first_input = min((c for c in inputs if c is not None), default=None)
        exact = self.match.next_deadline()
        if exact is None or (first_input is not None and first_input < exact):
            exact = first_input
        tick = None if self._next_tick is None else self._next_tick[0]
        if tick is None or (exact is not None and exact <= tick):
            return exact, exact, first_input
        return tick, exact, first_input

    async def _sleep_until(self, deadline: float | None, exact: float | None) -> None:
        """Wait for `deadline` or an input: in epoll until just before it, then exactly.

        The early wake-up (`slack_margin`) absorbs epoll's lateness; the rest, at most
        FINE_WAIT_S, is one `time.sleep` that blocks the loop and returns on the deadline. Both
        only on a loop that reads the monotonic clock: virtual and scaled loops (tests,
        `--speed`) keep their own time, and a real sleep would not move it.

        A deadline that is only the shown clock's next change, with the next `exact` one
        further than epoll's lateness after it, is slept in epoll to the instant: a display a
        millisecond late is not seen, and the fine wait's second wake-up is saved: one a
        second, ten a second in the last 10 s (issue 16: CPU per match minute).
        """
        loop = self.loop
        real_clock = type(loop).time is asyncio.BaseEventLoop.time
        while True:
            now = loop.time()
            if deadline is not None and now >= deadline:
                return
            if real_clock and deadline is not None and deadline - now <= FINE_WAIT_S:
                time.sleep(deadline - now)  # noqa: ASYNC251 (deliberate, at most FINE_WAIT_S)
                return
            waiter = self._waiter = loop.create_future()
            timer = None
            if deadline is not None:
                wait = deadline - now
                early = slack_margin(wait) if real_clock else 0.0
                if exact is None or exact - deadline > early:  # only the display: no hurry
                    early = 0.0
                timer = loop.call_later(wait - early, _settle, waiter)
            try:
                await waiter
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()
            if waiter.result() == "input":
                return

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result("input")

    def _dispatch(self, effects: list[Effect], now: float) -> None:
        if self.match.match_id is None and self.match.phase is not Phase.IDLE:
            self.match.match_id = self.mint_id()  # set up: before any output sees it
        if not effects:
            return
        status = self._dispatching = self.match.status(now)
        try:
            self._hand_out(effects, status, now)
        finally:
            self._dispatching = self._document = None
        self._next_tick = _next_shown_change(status, now, self.tenths)

    def _hand_out(self, effects: list[Effect], status: Status, now: float) -> None:
        for effect in effects:
            if isinstance(effect, Signal):
                late = now - effect.due
                level = logging.WARNING if late > LATE_WARNING_S else logging.DEBUG
                log.log(level, "signal %s x%d at %.1f s left, %.1f ms late", effect.kind,
                        effect.beeps, effect.remaining_s, late * 1000)
            elif isinstance(effect, Goal) and not effect.counted:
                log.info("%s", LOG_TEXT("goal.not_counted", side=effect.side.value,
                                        reason=LOG_TEXT.reason(effect.reason)))
            for output in self.outputs:
                try:
                    output.notify(effect, status)
                except Exception:
                    log.exception("output %s failed on %s; the match goes on",
                                  type(output).__name__, effect)


def _settle(waiter: asyncio.Future[str]) -> None:
    if not waiter.done():
        waiter.set_result("timer")


def _next_shown_change(status: Status, now: float, tenths: bool) -> tuple[float, bool] | None:
    """When the shown clock (or pre-signal countdown, or interruption length) next changes,
    and whether only its tenths will (`Tick.tenth`); tenths only where `tenths` are shown."""
    if status.phase is Phase.RUNNING and status.count_up and status.overtime_s is not None:
        return now + 1.0 - (status.overtime_s % 1.0), False  # ITHF 4.8: overtime counts up
    counting_down = (Phase.SCHEDULED, Phase.PRE_SIGNAL, Phase.BREAK)
    left = status.remaining_s if status.phase is Phase.RUNNING else \
        status.start_in_s if status.phase in counting_down else None
    if left is not None:
        step = next_change(left, tenths)
        return now + step, tenth_only(left - step)
    if status.phase is Phase.PAUSED and status.interruption_s is not None:
        return now + 1.0 - (status.interruption_s % 1.0), False
    return None
