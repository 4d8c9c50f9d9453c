"""A command the rules or the phase do not allow, and why, as a code (issue 14, invariant 7).

Its own module because every part of the core raises it, the score sheet's parsers too, and
the reason is data: the message catalogue (`refused.<code>` in `timerd/i18n/*.json`) turns it
into a sentence in the reader's language.
"""

from __future__ import annotations

from typing import Any


class CommandRefused(ValueError):
    """A command that the rules or the current phase do not allow: `code` says why.

    `code` is the reason's key in the message catalogue (`refused.<code>`), `params` fill in
    its placeholders, and `command` is the command refused (set by `Match.handle` when the
    raiser did not know it). A ValueError, so the core's own parsers (a side, a shirt number)
    raise it directly.
    """

    def __init__(self, code: str, **params: Any) -> None:
        super().__init__(code, params)
        self.code = code
        self.params: dict[str, Any] = params
        self.command: str | None = None

    def __str__(self) -> str:
        """For a traceback: the code and its values; people read `Messages.refusal`."""
        return f"{self.command or 'command'} refused: {self.code} {self.params}"


def named(command: str, exc: CommandRefused) -> CommandRefused:
    """`exc`, saying which command it refused (a rule module raises without knowing)."""
    exc.command = exc.command or command
    return exc
