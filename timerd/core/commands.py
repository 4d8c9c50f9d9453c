"""An operator command as a typed value, declared once by the part of the core that owns it.

Every command is a frozen dataclass (`Goal(side, scorer, assists)`, `Penalty(side, kind,
player)`), declared by the rule module that handles it (`timerd.core.rules`) or, for the phase
machine's own, here. Its fields say how each word is read (`arg`): that one declaration gives
the parser every edge uses (`Command.parse`, through `Match.parse`: the control socket, the
HTTP API, MQTT, the serial display, the journal's replay), the usage text (`timerctl help`,
the score desk's forms) and the words it is journalled and forwarded as (`Command.words`).
A button makes the value itself (`Goal(Side.HOME)`). The core handles it by its type
(`Match.handle(command, now)`) and never reads a word again (issue 14, invariant 7; issue 32).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar

from timerd.core.refused import CommandRefused

if TYPE_CHECKING:
    from typing import Self

    from timerd.core.settings import ProfileBase as Profile


@dataclass(frozen=True)
class Arg:
    """How one field of a command is read from a word, and named in its usage."""

    #: Its name in the usage ("home|away", "scorer"), or that name from the profile.
    usage: str | Callable[[Profile], str]
    read: Callable[[str], Any]
    optional: bool = False
    #: A tuple field takes up to this many words, each optional (a goal's assists).
    repeat: int = 1

    def named(self, profile: Profile | None) -> str:
        if isinstance(self.usage, str):
            return self.usage
        return self.usage(profile) if profile is not None else "?"


def arg(usage: str | Callable[[Profile], str], read: Callable[[str], Any] = str, *,
        optional: bool = False, repeat: int = 1) -> Any:
    """A command's field read from one word (`repeat`: a tuple of up to that many)."""
    spec = Arg(usage, read, optional, repeat)
    if repeat > 1:
        return field(default=(), metadata={"arg": spec})
    return field(default=None if optional else MISSING, metadata={"arg": spec})


def _args(cls: type[Command]) -> list[tuple[str, Arg]]:
    return [(f.name, f.metadata["arg"]) for f in fields(cls)]  # type: ignore[arg-type]


class Command:
    """The base of every typed command: its wire `name` and the reading of its words."""

    name: ClassVar[str]

    @classmethod
    def usage(cls, profile: Profile | None = None) -> tuple[str, ...]:
        """The names of its words, an optional one ending in "?" (`timerctl help`)."""
        out: list[str] = []
        for _, spec in _args(cls):
            optional = "?" if spec.optional or spec.repeat > 1 else ""
            out += [spec.named(profile) + optional] * spec.repeat
        return tuple(out)

    @classmethod
    def parse(cls, words: tuple[str, ...], profile: Profile | None = None) -> Self:
        """The command from its words as an operator gives them; CommandRefused names what
        is wrong (how many words it takes, or the word that is not what it should be)."""
        check_arguments(cls.usage(profile), words)
        values: dict[str, Any] = {}
        rest = list(words)
        for name, spec in _args(cls):
            if spec.repeat > 1:
                taken, rest = rest[:spec.repeat], rest[spec.repeat:]
                values[name] = tuple(spec.read(word) for word in taken)
            elif rest:
                values[name] = spec.read(rest.pop(0))
        return cls(**values)

    def words(self) -> tuple[str, ...]:
        """Its words as `parse` reads them back: the journal and hall mode keep these."""
        out: list[str] = []
        for name, spec in _args(type(self)):
            value = getattr(self, name)
            if spec.repeat > 1:
                out += [str(v) for v in value]
            elif value is not None:
                out.append(f"{value:g}" if isinstance(value, float) else str(value))
        return tuple(out)

    def __str__(self) -> str:
        return " ".join((self.name, *self.words()))


def check_arguments(usage: tuple[str, ...], args: tuple[str, ...]) -> None:
    """Refuse `args` that do not fit `usage`, the names of a command's arguments (one ending
    in "?" may be left out), saying what the command takes."""
    required = sum(not u.endswith("?") for u in usage)
    if not required <= len(args) <= len(usage):
        wanted = " ".join(f"[{u[:-1]}]" if u.endswith("?") else f"<{u}>"
                          for u in usage) or "no arguments"
        raise CommandRefused("arguments", wanted=wanted, got=len(args))


def seconds(word: str) -> float:
    """A finite number of seconds; CommandRefused `not_seconds` otherwise."""
    try:
        return finite(float(word))
    except ValueError:
        raise CommandRefused("not_seconds", given=word[:20]) from None


def finite(value: float) -> float:
    """`value`, if it is a finite number of seconds (issue 34: no `1e308`, no `nan`)."""
    if not math.isfinite(value):
        raise CommandRefused("not_seconds", given=f"{value}")
    return value


def one_of(*choices: str, code: str) -> Callable[[str], str]:
    """A reader of one of `choices`; CommandRefused `code` with the word given otherwise."""
    def read(word: str) -> str:
        if word not in choices:
            raise CommandRefused(code, given=word)
        return word
    return read


# -- the phase machine's own commands (`Match`) ----------------------------------------------

@dataclass(frozen=True)
class Start(Command):
    """From idle: the pre-signal, then the start after the lead (ITHF 4.4); paused: resume."""

    name = "start"


@dataclass(frozen=True)
class Pause(Command):
    """ITHF 10.1: stop the clock at once."""

    name = "pause"


@dataclass(frozen=True)
class Stop(Pause):
    """The referee's word for a pause (ISBHF 401)."""

    name = "stop"


@dataclass(frozen=True)
class Resume(Command):
    """Play on after an interruption: `faceoff` with a new faceoff (ITHF 10.4)."""

    name = "resume"
    how: str | None = arg("faceoff", one_of("faceoff", code="resume_how"), optional=True)


@dataclass(frozen=True)
class Toggle(Command):
    """The START/PAUSE button."""

    name = "toggle"


@dataclass(frozen=True)
class Reset(Command):
    """Back to idle for a new match."""

    name = "reset"
