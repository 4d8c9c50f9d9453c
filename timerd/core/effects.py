"""What the core asks the outside world to do: plain frozen values, no behaviour."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any

from timerd.core.commands import Command
from timerd.core.refused import CommandRefused
from timerd.core.score import Goal
from timerd.core.signals import SignalKind as SignalKind  # noqa: PLC0414 (its home was here)


class Phase(StrEnum):
    """Where a match stands."""

    IDLE = "idle"
    SCHEDULED = "scheduled"  # a start instant is set (hall mode); the pre-signal is still to come
    PRE_SIGNAL = "pre_signal"  # ITHF 4.4: the pre-signal has sounded, the start is due
    RUNNING = "running"
    PAUSED = "paused"  # ITHF 10.1 interruption; the clock stands still
    BREAK = "break"  # a timed break: before overtime (ITHF 4.8), an intermission (ISBHF 410)
    SHOOTOUT = "shootout"  # ISBHF 414b: still tied after overtime; attempts are entered
    FINISHED = "finished"


@dataclass(frozen=True)
class Signal:
    """Sound `kind` now, `beeps` times; `due` is the instant it was planned for."""

    kind: SignalKind
    due: float
    beeps: int = 1
    remaining_s: float = 0.0
    period: int = 1


@dataclass(frozen=True)
class PhaseChanged:
    phase: Phase
    previous: Phase


class Notice:
    """Something to tell the operator (a refused press, a penalty that ran out, a hint); not an
    error of the daemon.

    A typed event, not prose (issue 14, invariant 7; issue 32 item 3): each kind is a frozen
    dataclass subclass declared by the rule module that emits it (`PenaltyStarted` in
    `rules/penalties.py`), `code` its key in the message catalogue (`timerd/i18n/*.json`:
    `notice.*` for what happened, `refused.*` for a refusal) as a class attribute, its fields
    the values, typed (seconds as floats, a shirt number as text, a side as `Side`). `params`
    is derived from the fields, in their order: the values that fill in the text's
    placeholders and the event stream's `params` (a side as its word, a score's keys as
    words). The text is rendered in one place, `timerd.i18n.Messages.notice`, in the
    language of whoever reads it; the core formats none (`i18n.WORDS` says how each value
    shows).
    """

    code: str

    @property
    def params(self) -> Mapping[str, Any]:
        return {name: _plain(value) for name, value in vars(self).items()}


def _plain(value: Any) -> Any:
    """A field's value as the catalogue and the wire take it: an enum as its word, a
    mapping's keys and values likewise (a score `{Side.HOME: 1}` is `{"home": 1}`), a tuple
    as a list (a goal's assists)."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Told(Notice):
    """A notice made outside the core from a code and values it was handed (a recovery
    report read from the journal, a profile switch, a button's hint): the core makes none
    (tests/test_typed_notices.py)."""

    code: str
    values: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def params(self) -> Mapping[str, Any]:
        return self.values


@dataclass(frozen=True)
class Tick:
    """The shown clock changed (a second, or a tenth in the last 10 s); made by the service.

    `tenth`: only its tenths changed, not a whole second: for the displays that show them
    (the LED digits, the terminal); a view that runs the clock itself skips it."""

    tenth: bool = False


@dataclass(frozen=True)
class Applied:
    """An operator command the match accepted, as given; made by the service.

    For outputs that keep or forward the match's history (the journal, hall mode).
    """

    command: Command
    #: The loop time the match applied it at: the journal replays it at exactly that instant.
    at: float = field(default=0.0, compare=False)


@dataclass(frozen=True)
class FaceoffGuardChanged:
    """The 3-s faceoff guard (ITHF 5.6) started (`active`) or ran out: for the guard LED."""

    active: bool


@dataclass(frozen=True)
class Reopened:
    """`undo` took back goal entry `number`, which had ended the match (ITHF 6.1 with 4.8;
    ISBHF 420 !1 with 411): its result is superseded by revision `revision`: given at once
    when the correction leaves the match finished; else the match is in play again
    (`in_play`), and revision `revision` says so (no winner until it ends again, issue 42),
    the result to come being the next one."""

    revision: int
    number: int
    in_play: bool = False


@dataclass(frozen=True)
class ResultAbandoned:
    """RESET of a reopened match (issue 42): revision `revision` of match `match_id`'s
    result says it was abandoned, no winner, at `score` (side name -> goals) as it stood."""

    revision: int
    match_id: str | None
    score: Mapping[str, int]


@dataclass(frozen=True)
class ResultCorrected:
    """The finished match's result changed after the end: revision `revision` (1, 2, ...)
    supersedes the one before (a reopened match ended again, ISBHF 420 !3 names put right)."""

    revision: int


#: A goal entry (`timerd.core.score.Goal`) is itself an effect: "this goal was entered".
Effect = (Signal | PhaseChanged | Notice | Tick | Applied | Goal | FaceoffGuardChanged
          | Reopened | ResultCorrected | ResultAbandoned)


@dataclass(frozen=True)
class Refused(Notice):
    """A refused command as the operator is told it: `refused.<reason>`, saying which command
    (`CommandRefused`'s code and values, as the refusal gave them)."""

    reason: str
    command: str
    values: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def code(self) -> str:  # type: ignore[override]
        return f"refused.{self.reason}"

    @property
    def params(self) -> Mapping[str, Any]:
        return {"command": self.command, **self.values}


def refusal(exc: CommandRefused) -> Refused:
    """A refused command as the operator is told it."""
    return Refused(exc.code, exc.command or "", dict(exc.params))


@dataclass(frozen=True)
class AlreadyIdle(Notice):
    """`reset` when no match was set up: nothing to clear."""

    code = "notice.already_idle"
