"""The event stream: one JSON object per line for every state change and every signal.

`t` is seconds on the daemon's clock since it started (virtual time under `--speed` and in
tests), so tools and tests can check when each signal sounded.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from timerd.core.effects import Effect, FaceoffGuardChanged, Notice, PhaseChanged, Signal
from timerd.core.match import Status
from timerd.core.score import Goal


def event_record(effect: Effect, status: Status) -> dict[str, Any] | None:
    """The JSON-able record of one effect, without its time; None for effects not streamed."""
    if isinstance(effect, PhaseChanged):
        return {"type": "state", "state": effect.phase.value,
                "previous": effect.previous.value, "period": status.period,
                "remaining_s": round(status.remaining_s, 3)}
    if isinstance(effect, Signal):
        return {"type": "signal", "signal": effect.kind.value, "beeps": effect.beeps,
                "remaining_s": round(effect.remaining_s, 3), "period": effect.period}
    if isinstance(effect, Goal):
        record: dict[str, Any] = {"type": "goal", "side": effect.side.value,
                                  "counted": effect.counted,
                                  "reason": None if effect.reason is None
                                  else effect.reason.value,
                                  "match_time_s": round(effect.match_time_s, 3),
                                  "score": status.score}
        if effect.scorer is not None:  # ISBHF 420-422, when entered
            record |= {"scorer": effect.scorer, "assists": list(effect.assists)}
        return record
    if isinstance(effect, FaceoffGuardChanged):
        return {"type": "faceoff_guard", "active": effect.active}
    if isinstance(effect, Notice):
        return {"type": "notice", "message": effect.message}
    return None


class EventStream:
    """Writes records to `stream`, flushed per line so a tool reading a pipe sees them live."""

    def __init__(self, stream: TextIO, clock: Any, t0: float) -> None:
        self.stream = stream
        self.clock = clock  # anything with .time(): the running loop
        self.t0 = t0

    def notify(self, effect: Effect, status: Status) -> None:
        record = event_record(effect, status)
        if record is None:
            return
        line = json.dumps({"t": round(self.clock.time() - self.t0, 6), **record})
        self.stream.write(line + "\n")
        self.stream.flush()
