"""An operator command as a value: its name and its words, parsed once where it comes in.

A button, a chord, the control socket, the web page and MQTT each turn what they receive into
a name and a tuple of arguments at their edge; the service hands those to `Match.handle` as
they are and never splits a string again (issue 14, invariant 7).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """`goal home` is Command("goal", ("home",))."""

    name: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        return " ".join((self.name, *self.args))
