"""The dispatch: what the match did, handed to the outputs as one `Dispatch` (ports.py).

A dispatch goes out in two rounds: first every signal to every sound output (`signal`: the
buzzers, the horn, the speaker), then the whole dispatch to every output (`notify`), so a
buzzer's first edge never waits for a display, a disk or a network (issue 32), nor for the
match's status, which is made between the rounds (issue 33). Both return at once (a buzzer
schedules its later edges, a writer buffers). One that raises is logged and the match goes
on without it for that dispatch. While a dispatch is handed out, the service refuses to make
its status for anyone (`handing_out`, `Service.status`): an output reads the dispatch's own
(issue 44 item 2).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from timerd.core.effects import Effect, Signal
from timerd.core.score import Goal
from timerd.core.status import Status
from timerd.i18n import LOG_TEXT
from timerd.ports import Dispatch, Output, SoundOutput, StatusExtra

log = logging.getLogger("timerd.service")

#: Signals later than this are logged as a warning (a slow SD card, an overloaded Pi).
LATE_WARNING_S = 0.005


@dataclass
class Dispatcher:
    """The registers `timerd.app` fills (the order is its), and the hand-out."""

    #: Handed each dispatch, in this order, after the sound outputs had its signals.
    outputs: list[Output] = field(default_factory=list)
    #: Handed each signal first (the buzzers, the horn, the speaker), in this order.
    sound_outputs: list[SoundOutput] = field(default_factory=list)
    #: Adapters' own state shown beside the match's (`{"muted": true}`), in each document.
    status_extras: list[StatusExtra] = field(default_factory=list)
    #: True while a dispatch's signals or the dispatch itself are handed out.
    handing_out: bool = False

    def hand_out(self, effects: Sequence[Effect], status: Callable[[], Status], now: float,
                 sounded: int = 0) -> Dispatch:
        """Every signal to every sound output, then the dispatch to every output; the log
        lines after the sounds, which they must not delay. The sound outputs had the first
        `sounded` signals already (`sound`), before the match worked out what follows them."""
        dispatch = self.dispatch(effects, status, now)
        self.handing_out = True
        try:
            self.sound(dispatch, dispatch.signals[sounded:])
            dispatch.status  # noqa: B018 (made now, before any output could change the match)
            for effect in dispatch.effects:
                if isinstance(effect, Signal):
                    late = dispatch.now - effect.due
                    level = logging.WARNING if late > LATE_WARNING_S else logging.DEBUG
                    log.log(level, "signal %s x%d at %.1f s left, %.1f ms late", effect.kind,
                            effect.beeps, effect.remaining_s, late * 1000)
                elif isinstance(effect, Goal) and not effect.counted:
                    log.info("%s", LOG_TEXT("goal.not_counted", side=effect.side.value,
                                            reason=LOG_TEXT.reason(effect.reason)))
            for output in self.outputs:
                try:
                    output.notify(dispatch)
                except Exception:
                    log.exception("output %s failed on %s; the match goes on",
                                  type(output).__name__, dispatch.effects)
        finally:
            self.handing_out = False
        return dispatch

    def dispatch(self, effects: Sequence[Effect], status: Callable[[], Status],
                 now: float) -> Dispatch:
        return Dispatch(tuple(effects), status, now, self.extras)

    def extras(self) -> list[dict[str, Any]]:
        """The adapters' keys of a status document: they are read while a document is built,
        whether an output handed a dispatch reads it or a tool asks for the status."""
        was, self.handing_out = self.handing_out, False
        try:
            return [extra() for extra in self.status_extras]
        finally:
            self.handing_out = was

    def sound(self, dispatch: Dispatch, signals: Sequence[Signal]) -> None:
        """`signals` to every sound output, each sound output's failure logged."""
        was, self.handing_out = self.handing_out, True
        try:
            for signal in signals:
                for sounder in self.sound_outputs:
                    try:
                        sounder.signal(signal, dispatch)
                    except Exception:
                        log.exception("sound output %s failed on %s; the match goes on",
                                      type(sounder).__name__, signal)
        finally:
            self.handing_out = was
