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

from timerd.core.display import elapsed_clock, shown_clock
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
        as it is; `countdown`: seconds left as the scoreboard shows them, rounded up, tenths
        in the last 10 s): a notice's values, and a rule module's (`RuleModule.display`)."""
        if kind == "countdown" and isinstance(value, int | float) \
                and not isinstance(value, bool):
            return shown_clock(value)
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
        """A rule module's row of the status (an entry of `Status.display` shown whole): its
        label (`label`) and its value as its kind shows it."""
        value = status.get(entry["key"])
        return self.label(entry), "-" if value is None else str(
            self.value(entry.get("kind"), value, status.get("teams")))

    def label(self, entry: Mapping[str, Any]) -> str:
        """The label of an entry of `Status.display`: its catalogue key's text, or its text
        in this language (else English), or else its key."""
        label = entry.get("label")
        if isinstance(label, str):
            return self.get(label, label)  # a key this catalogue lacks (a newer daemon's)
        return str((label or {}).get(self.language) or (label or {}).get(DEFAULT)
                   or entry["key"])

    def shown(self, status: Mapping[str, Any]) -> tuple[list[tuple[str, str]], list[str]]:
        """What `timerctl status` shows of the rule modules (`Status.display`, `Shown`): the
        rows, each a label and its value (the parts of a value with parts, in one row), and
        the lines of the parts of a value without a label, each on a line of its own. No
        view names a module's key (issue 44 item 5)."""
        rows, lines = [], []
        for entry in status.get("display") or []:
            if entry.get("kind") not in PARTS:
                rows.append(self.row(entry, status))
                continue
            parts = self.parts(entry, status, entry.get("texts") or {}, status.get("teams"))
            if entry.get("label") is None:
                lines += parts
            elif parts:
                rows.append((self.label(entry), ", ".join(parts)))
        return rows, lines

    def brief(self, status: Mapping[str, Any]) -> list[str]:
        """What the terminal's status line shows of the rule modules: each part in its
        `brief` text, its side as Home/Away (the line's score names the teams), else a row
        with a label as "label value"; a value with parts and no brief is not on it."""
        out = []
        for entry in status.get("display") or []:
            if entry.get("kind") in PARTS:
                out += self.parts(entry, status, entry.get("brief") or {})
            else:
                out.append(" ".join(self.row(entry, status)))
        return out

    def parts(self, entry: Mapping[str, Any], status: Mapping[str, Any],
              texts: Mapping[str, str], teams: Mapping[str, str] | None = None) -> list[str]:
        """The parts of a rule module's value (an entry of `Status.display` of kind `sides`,
        `entries` or `entry`), each in the first of `texts` (a catalogue key: the part's
        field it needs set, "" none) that holds, its placeholders from the entry's `fields`
        (a part's field and its kind); a part none of `texts` holds for is left out."""
        value, kind = status.get(entry["key"]), entry.get("kind")
        if kind == "sides":
            parts = [{**_fields(part), "side": side} for side, part in (value or {}).items()
                     if part is not None]
        else:
            parts = [_fields(part) for part in (value or [] if kind == "entries" else
                                                [] if value is None else [value])]
        fields = entry.get("fields") or {}
        out = []
        for part in parts:
            key = next((key for key, needs in texts.items() if not needs or part.get(needs)),
                       None)
            if key is not None:
                out.append(self.get(key, key, **{name: self.value(shows, part.get(field), teams)
                                                 for name, (field, shows) in fields.items()}))
        return out

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


#: The kinds of a rule module's value of parts (`core.rule.Shown`): each part is a text of
#: its own (`Messages.parts`), not one value.
PARTS = ("sides", "entries", "entry")


def _fields(part: Any) -> dict[str, Any]:
    """A part of a rule module's value by its fields: a mapping's own, else `value`."""
    return dict(part) if isinstance(part, Mapping) else {"value": part}


#: The log's language (and the `message` beside a code in public shapes): English, from the
#: catalogue like every other text.
LOG_TEXT = Messages(DEFAULT)
