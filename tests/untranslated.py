"""Whether a terminal's output speaks its language (issue 46 item 1): the lines of it that are
English from the message catalogue, apart from pure data (names, numbers, paths, links,
options and the programs' names).

A line is English when it is a line of the same scenario's English output, or when it holds a
phrase of an English catalogue text (its words between two placeholders) that the language's
text of that key does not have.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from functools import cache

from timerd.i18n import catalogue

#: What is data in any language: links, paths, options, metavars and variables, numbers,
#: punctuation and the QR code's blocks.
DATA = re.compile(r"https?://\S+|\S*/\S*|--?[\w-]+|\$?\b[A-Z_]{2,}\b|\d+|[^\w\s]")
#: The programs' names (argparse's own words speak the language too: argparse_text).
ARGPARSE = {"timerctl", "timerd"}


@cache
def english_phrases(language: str) -> tuple[str, ...]:
    """The English catalogue's phrases (12 characters or more, with two words at least) that
    `language`'s text of the same key does not have."""
    english, other = catalogue("en"), catalogue(language)
    phrases = []
    for key, text in english.items():
        for literal, *_ in string.Formatter().parse(text):
            phrase = literal.strip(" :;,.()")
            if len(phrase) >= 12 and re.search(r"[a-z]{3,} [a-z]{2,}", phrase) \
                    and phrase not in other[key]:
                phrases.append(phrase)
    return tuple(phrases)


def is_data(line: str, data: Iterable[str] = ()) -> bool:
    """Whether `line` has no words but data: `data` (names, commands) and DATA's."""
    for word in sorted(data, key=len, reverse=True):
        line = line.replace(word, " ")
    return not [w for w in DATA.sub(" ", line).split() if w.lower() not in ARGPARSE]


def untranslated(language: str, output: str, english: str, data: Iterable[str] = ()
                 ) -> list[str]:
    """The lines of `output` (in `language`) that are English: a line of `english` (the same
    scenario's English output) or an English catalogue phrase, unless the line is pure data."""
    data = tuple(data)
    lines = set(english.splitlines())
    return [line for line in output.splitlines() if not is_data(line, data) and (
        line in lines or any(phrase in line for phrase in english_phrases(language)))]
