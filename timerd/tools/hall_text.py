"""What the `timerd hall` commands say at the desk's terminal, in its language (issue 46
item 1): the desk config's `[ui] language`, "auto" the locale's (LC_ALL, LC_MESSAGES, LANG),
from the message catalogue (`hall.*`), as the board says it in the page's language.

A command chooses the language for its run (`speaking`); every function below it reads
it (`text`), as `decimal` reads its context: the sentences are made deep in the desk's
helpers (a result set aside, a schedule's error), and a context variable carries the language
there without a parameter through each. Unset (a test calling a helper), it is English.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from timerd.i18n import LOG_TEXT, Messages, resolve

_TERMINAL: ContextVar[Messages] = ContextVar("timerd_hall_terminal", default=LOG_TEXT)


@contextlib.contextmanager
def speaking(setting: str) -> Iterator[None]:
    """Speak `setting`'s language ("auto": the locale's) inside the block, and what was
    spoken before after it: a command's run (`timerd hall ...`), and no later one called in
    the same process (a test's) inherits it."""
    token = _TERMINAL.set(Messages(resolve(setting)))
    try:
        yield
    finally:
        _TERMINAL.reset(token)


def terminal() -> Messages:
    """The terminal's texts, for its notices and words (`Messages.notice`, `get`)."""
    return _TERMINAL.get()


def text(key: str, **values: Any) -> str:
    """The catalogue's sentence `key` with its values, in the terminal's language."""
    return _TERMINAL.get()(key, **values)
