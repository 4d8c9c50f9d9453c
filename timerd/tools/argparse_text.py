"""The command lines' help and argparse's own words in the terminal's language (issue 46
item 1): `timerd --help`, `timerd hall ... --help`, `timerctl --help` and their usage errors.

A help text is `said("cli.help.run")`: the catalogue's English text (what shell completion and
a script see), which remembers its key and values, so the help formatter (`Formatter`) says it
in the terminal's language when the help is printed. argparse's own words ("usage: ",
"options", "show this help message and exit", its error messages) go through its gettext
hook, the module's `_` and `ngettext`, which `Parser` points at the catalogue (`argparse.*`,
by argparse's English text in `MSGIDS`) while it parses, prints help or reports an error,
and puts back afterwards. Headings and the help option's text that argparse made in English
when the parser was built are said again by `Formatter`.

The language is found only when a text is shown (`speak`'s `language`, called once): a
`timerd run` that parses its arguments without an error reads no config for it.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from timerd.i18n import LOG_TEXT, Messages

#: argparse's English words (its gettext message ids, Python 3.11 and later) and their keys.
MSGIDS = {
    "usage: ": "argparse.usage",
    "options": "argparse.options",
    "positional arguments": "argparse.positional",
    "show this help message and exit": "argparse.help",
    "show program's version number and exit": "argparse.version",
    "%(prog)s: error: %(message)s\n": "argparse.error",
    "the following arguments are required: %s": "argparse.required",
    "unrecognized arguments: %s": "argparse.unrecognized",
    "invalid choice: %(value)r (choose from %(choices)s)": "argparse.invalid_choice",
    "argument %(argument_name)s: %(message)s": "argparse.argument",
    "expected one argument": "argparse.expected_one",
    "expected at least one argument": "argparse.expected_at_least_one",
    "expected at most one argument": "argparse.expected_at_most_one",
    "expected %s argument": "argparse.expected_n",
    "expected %s arguments": "argparse.expected_n",
    "invalid %(type)s value: %(value)r": "argparse.invalid_value",
    "not allowed with argument %s": "argparse.not_allowed_with",
    "one of the arguments %s is required": "argparse.one_required",
    "ambiguous option: %(option)s could match %(matches)s": "argparse.ambiguous",
    "ignored explicit argument %r": "argparse.ignored_argument",
    "can't open '%(filename)s': %(error)s": "argparse.cannot_open",
}

_language: Callable[[], Messages] = lambda: LOG_TEXT  # noqa: E731
_spoken: Messages | None = None


def speak(language: Callable[[], Messages]) -> None:
    """The command line speaks `language()`'s texts from now on; it is called when the first
    text is shown, and once."""
    global _language, _spoken
    _language, _spoken = language, None


def spoken() -> Messages:
    """The texts of the terminal's language (found on first use)."""
    global _spoken  # noqa: PLW0603
    if _spoken is None:
        _spoken = _language()
    return _spoken


class Said(str):
    """A catalogue text in English that remembers its key and values (`said`)."""

    key: str
    values: dict[str, Any]

    def __new__(cls, key: str, **values: Any) -> Said:
        text = super().__new__(cls, LOG_TEXT(key, **values))
        text.key, text.values = key, values
        return text


def said(key: str, **values: Any) -> str:
    """A help text: the catalogue's `key`, English until the help is printed."""
    return Said(key, **values)


def translated(text: str | None) -> str | None:
    """`text` in the terminal's language: a `Said` by its key, argparse's own words by
    `MSGIDS`, anything else (a name, a metavar) as it is."""
    if isinstance(text, Said):
        return spoken()(text.key, **text.values)
    if text in MSGIDS:
        return spoken().get(MSGIDS[text], text)
    return text


def _ngettext(singular: str, plural: str, n: int) -> str:
    return str(translated(singular if n == 1 else plural))


@contextlib.contextmanager
def _argparse_speaks() -> Iterator[None]:
    """argparse's gettext hook on the catalogue, for as long as the block runs."""
    saved = argparse._, argparse.ngettext  # type: ignore[attr-defined]
    argparse._, argparse.ngettext = translated, _ngettext  # type: ignore[attr-defined]
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved  # type: ignore[attr-defined]


class Formatter(argparse.HelpFormatter):
    """Help in the terminal's language: each help text, heading and description."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        return translated(action.help)

    def start_section(self, heading: str | None) -> None:
        super().start_section(translated(heading))

    def add_text(self, text: str | None) -> None:
        super().add_text(translated(text))


class Parser(argparse.ArgumentParser):
    """An ArgumentParser (and its subcommands') that speaks the terminal's language."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        with _argparse_speaks():
            return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        with _argparse_speaks():
            return super().format_usage()

    def format_help(self) -> str:
        with _argparse_speaks():
            return super().format_help()

    def error(self, message: str) -> Any:
        with _argparse_speaks():
            return super().error(message)
