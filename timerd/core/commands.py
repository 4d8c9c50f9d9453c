"""An operator command as a value: its name and its words, parsed once where it comes in.

A button, a chord, the control socket, the web page and MQTT each turn what they receive into
a name and a tuple of arguments at their edge; the service hands those to `Match.handle` as
they are and never splits a string again (issue 14, invariant 7).
"""

from __future__ import annotations

from dataclasses import dataclass

from timerd.core.refused import CommandRefused


@dataclass(frozen=True)
class Command:
    """`goal home` is Command("goal", ("home",))."""

    name: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        return " ".join((self.name, *self.args))


def check_arguments(usage: tuple[str, ...], args: tuple[str, ...]) -> None:
    """Refuse `args` that do not fit `usage`, the names of a command's arguments (one ending
    in "?" may be left out), saying what the command takes."""
    required = sum(not u.endswith("?") for u in usage)
    if not required <= len(args) <= len(usage):
        wanted = " ".join(f"[{u[:-1]}]" if u.endswith("?") else f"<{u}>"
                          for u in usage) or "no arguments"
        raise CommandRefused("arguments", wanted=wanted, got=len(args))
