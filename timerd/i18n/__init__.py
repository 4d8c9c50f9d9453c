"""The message catalogue: every text a person reads on the scoreboard, the control page, the
simulate-mode terminal and `timerctl status`, in English, Slovenian and Slovak.

One JSON file per language beside this module (`en.json`, `sl.json`, `sk.json`), a flat map
from a key to a text with `{name}` placeholders; the web page gets the same files through
`GET /api/i18n`, so the Python and the JavaScript side read one catalogue. Rule terms are the
rulebooks' own: the Slovenian ITHF rules (buli, podaljšek, prekinitev) and the Slovak ISBHF
rules (tretina, vhadzovanie, oddychový čas). English is the reference: a test fails when a key
is missing in another language, and at run time a missing key falls back to English (logged)
so a text is never blank.

`[ui] language` chooses: `en`, `sl`, `sk`, or `auto` (the web page follows the browser's
languages, the terminal and timerctl the locale: `LC_ALL`, `LC_MESSAGES`, `LANG`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from timerd.core.display import elapsed_clock
from timerd.core.effects import refusal
from timerd.core.refused import CommandRefused

log = logging.getLogger("timerd.i18n")

LANGUAGES = ("en", "sl", "sk")
DEFAULT = "en"
#: Each language's own name, for the page's language switch.
NAMES = {"en": "English", "sl": "Slovenščina", "sk": "Slovenčina"}


@cache
def catalogue(language: str) -> Mapping[str, str]:
    """The texts of `language` (one of LANGUAGES), read once from the package."""
    if language not in LANGUAGES:
        raise ValueError(f"language {language!r}: one of {', '.join(LANGUAGES)}")
    path = resources.files("timerd") / "i18n" / f"{language}.json"
    data: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))
    return data


def from_locale(environ: Mapping[str, str] = os.environ) -> str:
    """The language of the POSIX locale (LC_ALL, LC_MESSAGES, LANG: "sl_SI.UTF-8" is sl)."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "")
        if value:
            code = value.split("_")[0].split(".")[0].lower()
            return code if code in LANGUAGES else DEFAULT
    return DEFAULT


def from_accept(header: str) -> str | None:
    """The first of LANGUAGES a browser's Accept-Language asks for ("sk-SK,sk;q=0.9,en"),
    by its q order; None when it asks for none of them."""
    ranked = []
    for i, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                continue
        ranked.append((-q, i, tag.strip().split("-")[0].lower()))
    return next((code for _, _, code in sorted(ranked) if code in LANGUAGES and code), None)


def resolve(setting: str, environ: Mapping[str, str] = os.environ) -> str:
    """The language for the terminal and timerctl: `setting`, or the locale's for "auto"."""
    return setting if setting in LANGUAGES else from_locale(environ)


#: Notice values that are words of the catalogue, by the parameter's name: `side` "home" is
#: `side.home`, `kind` "minor" is `kind.minor`. And the values the core hands over as numbers
#: that the catalogue alone shows (issue 32: the core formats no text): a `clock` kind is a
#: number of seconds shown as the count-up clock face (120.0 is "2:00"), `score` the sides'
#: goals ({"home": 2, "away": 1} is "2:1"), `player` a shirt number after the side (" #17",
#: none: ""), `shirts` shirt numbers (["5", "9"] is "5, 9", none: "-"), `tenths` seconds
#: to a tenth ("18.0"), `thousandths` to a thousandth (a hall start's "59.982"). Any
#: other number shows as it is, a float without a trailing ".0" (`:g`). The page's `said`
#: (web/timerd.js) reads the same table.
WORDS = {"side": "side", "winner": "side", "kind": "kind", "reason": "reason",
         "evidence": "evidence", "stage": "stage", "phase": "term.phase", "was": "term.phase",
         "period": "span", "time": "clock", "left": "clock", "within": "clock",
         "clock": "clock", "at": "clock", "after": "clock", "score": "score",
         "player": "player", "left_s": "tenths", "lead_s": "tenths",
         "scorer": "shirts", "assists": "shirts", "in_s": "thousandths"}


class Messages:
    """The texts of one language: `msg("goal.not_counted", side=..., reason=...)`."""

    def __init__(self, language: str = DEFAULT) -> None:
        self.language = language
        self.texts = catalogue(language)

    def __call__(self, key: str, **values: Any) -> str:
        text = self.texts.get(key)
        if text is None:
            text = catalogue(DEFAULT).get(key)
            if text is None:
                raise KeyError(f"message {key!r} is not in the catalogue")
            log.warning("message %r missing in %s; English shown", key, self.language)
        return text.format(**values) if values else text

    def get(self, key: str, fallback: str, **values: Any) -> str:
        """The text of `key` if the catalogue has it, else `fallback` (a value the daemon sent
        that no catalogue names, e.g. a custom profile's penalty kind)."""
        if key in self.texts or key in catalogue(DEFAULT):
            return self(key, **values)
        return fallback

    def notice(self, code: str, params: Mapping[str, Any],
               teams: Mapping[str, str] | None = None) -> str:
        """A notice or a refusal of the core (`timerd.core.effects.Notice`: a catalogue key
        and its values) as a sentence: the one place their text is made (issue 14).

        Values that are words of the catalogue (a side, a penalty kind, a goal's reason) are
        translated too, a side by its team's name when `teams` gives one; a refusal
        (`refused.*`) says which command it refused."""
        values = {name: self._word(name, value, teams) for name, value in params.items()}
        text = self.get(code, code, **values)
        if code.startswith("refused."):
            return self("refused", command=params.get("command") or "?", reason=text)
        return text

    def refusal(self, exc: CommandRefused) -> str:
        """A refused command as a sentence: "goal refused: the clock is running; ..."."""
        told = refusal(exc)
        return self.notice(told.code, told.params)

    def _word(self, name: str, value: Any, teams: Mapping[str, str] | None) -> Any:
        return self.value(WORDS.get(name), value, teams)

    def value(self, kind: str | None, value: Any, teams: Mapping[str, str] | None = None) -> Any:
        """`value` as the catalogue shows a value of `kind` (`WORDS`' kinds; None or `text`:
        as it is): a notice's values, and a rule module's row (`RuleModule.display`)."""
        if kind == "player":
            return f" #{value}" if value else ""
        if kind == "shirts":
            shirts = [value] if isinstance(value, str) else list(value or [])
            return ", ".join(str(shirt) for shirt in shirts if shirt) or "-"
        if kind == "score" and isinstance(value, Mapping):
            return f"{value.get('home', 0)}:{value.get('away', 0)}"
        if isinstance(value, int | float) and not isinstance(value, bool) \
                and kind in ("clock", "tenths", "thousandths"):
            return elapsed_clock(value) if kind == "clock" else \
                f"{value:.1f}" if kind == "tenths" else f"{value:.3f}"
        if isinstance(value, float):
            return f"{value:g}"
        if kind in ("clock", "score") or not isinstance(value, str):
            return value  # a view's own text (a recovery's clock), or a value as it is
        if kind == "side":
            return self.side(value, teams)
        return self.get(f"{kind}.{value}", value) if kind not in (None, "text") else value

    def row(self, entry: Mapping[str, Any], status: Mapping[str, Any]) -> tuple[str, str]:
        """A rule module's row of the status (an entry of `Status.display`): its label in
        this language (else English, else its key) and its value as its kind shows it."""
        labels = entry.get("label") or {}
        label = labels.get(self.language) or labels.get(DEFAULT) or entry["key"]
        value = status.get(entry["key"])
        return str(label), "-" if value is None else str(
            self.value(entry.get("kind"), value, status.get("teams")))

    # -- the words every surface needs --------------------------------------------------------

    def side(self, side: str, teams: Mapping[str, str] | None = None) -> str:
        """A side by its team's name when `teams` gives one, else "Home"/"Away"."""
        name = (teams or {}).get(side) or ""
        return name or self.get(f"side.{side}", side)

    def reason(self, reason: str | None) -> str:
        """Why a goal did not count, with its rule (ITHF 5.6...)."""
        return self.get(f"reason.{reason}", str(reason))

    def signal(self, kind: str, beeps: int = 1, stop_clock: bool = False) -> str:
        """A signal as it sounds: "BEEP x3" for an interval with three beeps, "FINAL". Under
        a `stop_clock` (net time, ISBHF 407) the clock's stop acknowledged is the whistle's,
        not an interruption (ITHF 10.1): "TIME STOPPED", not "PAUSE"."""
        if kind == "interval":
            return self("signal.beeps", n=beeps)
        if kind == "pause" and stop_clock:
            return self("signal.stop")
        name = self.get(f"signal.{kind}", kind.replace("_", " ").upper())
        return f"{name} x{beeps}" if beeps > 1 else name


#: The log's language (and the `message` beside a code in public shapes): English, from the
#: catalogue like every other text.
LOG_TEXT = Messages(DEFAULT)
