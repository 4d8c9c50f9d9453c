"""The value checks that config sections and rule profiles share in their `problems()`.

Each helper returns `problems()` lines, each starting with the key it is about, so that the
schema reports them under the section's key path ("gpio.long_press_s = 0: ..."). The upper
bounds are there because a typo must not reach the match: `beeps = 100000000` froze the loop,
`period_s = 1e9` never ends, a pattern of an hour holds the buzzer on (issue 13 item 9). Each
message says the limit and the reason, so that a volunteer knows what to write instead.

Each line is a `Line`: its English (the str), and its catalogue code (`check.*`) and values,
so that the command line says it in the user's language (`timerd.config.schema.said`, issue
46). The core reads no catalogue (issue 32): the English is made here, and a test holds it
to the catalogue's (tests/test_i18n_terminal.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

#: No period, break, penalty or countdown of either rulebook comes near an hour (ITHF 4.1: 5:00
#: matches; ISBHF 410: 15:00 periods, 10:00 intermissions): a longer one is a typo.
HOUR_S = 3600.0
HOUR_WHY = "no period, break or countdown of ITHF or ISBHF comes near an hour"

#: A signal's on/off pattern (one beep, one horn blast): at most this many entries lasting at
#: most this long in all, so that it ends before the next signal can fall due (the last-30 cue
#: comes 30 s before the final, ITHF 4.4) and a typo cannot hold the buzzer or horn on.
PATTERN_MAX_ENTRIES = 31
PATTERN_MAX_S = 30.0

#: A goal count, an award or points: two digits, as the scoreboards show them.
SCORE_MAX = 99


class Line(str):
    """A `problems()` line: "{head}: {text}" in English, with the catalogue's `code` for
    `text` and its `values` (a value may be a Line, a reason said in the reader's language)."""

    head: str
    code: str
    text: str
    values: dict[str, Any]

    def __new__(cls, head: str, code: str, text: str, /, **values: Any) -> Self:
        line = super().__new__(cls, f"{head}: {text}" if head else text)
        line.head, line.code, line.text, line.values = head, code, text, values
        return line

    def under(self, path: str) -> Self:
        """The same line under the key path `path` ("gpio" makes "gpio.long_press_s = 0")."""
        head = f"{path}.{self.head}" if self.head else path
        return Line.__new__(type(self), head, self.code, self.text, **self.values)


def number(value: float) -> str:
    """`value` as written in TOML: a whole number in full (100000000, not 1e+08)."""
    return str(value) if isinstance(value, int) else f"{value:g}"


def durations(**seconds: float) -> list[str]:
    """The lines for durations that must be longer than 0 s, by key."""
    return [Line(f"{key} = {number(value)}", "check.longer_than_0", "must be longer than 0 s")
            for key, value in seconds.items() if value <= 0]


def at_most(limit: float, why: str, unit: str = "", /, **values: float | None) -> list[str]:
    """The lines for values (None: not set) above `limit`, with the reason `why`."""
    return [Line(f"{key} = {number(value)}", "check.at_most",
                 f"at most {number(limit)}{unit} ({why})", limit=number(limit), unit=unit,
                 why=why) for key, value in values.items() if value is not None and value > limit]


def hours(**seconds: float | None) -> list[str]:
    """The lines for durations longer than an hour (`HOUR_S`)."""
    return at_most(HOUR_S, HOUR_WHY, " s", **seconds)


def scores(key: str, counts: Sequence[int]) -> list[str]:
    """The line for a list of goal counts or points outside 0 to `SCORE_MAX`."""
    if all(0 <= c <= SCORE_MAX for c in counts):
        return []
    return [Line(f"{key} = {list(counts)}", "check.scores",
                 f"each from 0 to {SCORE_MAX} (two digits on the scoreboard)", most=SCORE_MAX)]


def pattern(key: str, seconds: Sequence[float]) -> list[str]:
    """The lines for an on, off, on, ... pattern in seconds that is not one."""
    listed = ", ".join(f"{s:g}" for s in seconds[:8]) + (", ..." if len(seconds) > 8 else "")
    shown = f"{key} = [{listed}]"
    if len(seconds) % 2 == 0 or min(seconds, default=0) <= 0:
        return [Line(shown, "check.pattern", "give on, off, on, ... seconds, all positive, "
                     "starting and ending with on")]
    if len(seconds) > PATTERN_MAX_ENTRIES or sum(seconds) > PATTERN_MAX_S:
        return [Line(shown, "check.pattern_long", f"at most {PATTERN_MAX_ENTRIES} entries and "
                     f"{PATTERN_MAX_S:g} s in all (a signal must end before the next one can "
                     "fall due, ITHF 4.4)", entries=PATTERN_MAX_ENTRIES,
                     s=f"{PATTERN_MAX_S:g}")]
    return []
