"""The value checks that config sections and rule profiles share in their `problems()`.

Each helper returns `problems()` lines, each starting with the key it is about, so that the
schema reports them under the section's key path ("gpio.long_press_s = 0: ..."). The upper
bounds are there because a typo must not reach the match: `beeps = 100000000` froze the loop,
`period_s = 1e9` never ends, a pattern of an hour holds the buzzer on (issue 13 item 9). Each
message says the limit and the reason, so that a volunteer knows what to write instead.
"""

from __future__ import annotations

from collections.abc import Sequence

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


def number(value: float) -> str:
    """`value` as written in TOML: a whole number in full (100000000, not 1e+08)."""
    return str(value) if isinstance(value, int) else f"{value:g}"


def durations(**seconds: float) -> list[str]:
    """The lines for durations that must be longer than 0 s, by key."""
    return [f"{key} = {number(value)}: must be longer than 0 s"
            for key, value in seconds.items() if value <= 0]


def at_most(limit: float, why: str, unit: str = "", /, **values: float | None) -> list[str]:
    """The lines for values (None: not set) above `limit`, with the reason `why`."""
    return [f"{key} = {number(value)}: at most {number(limit)}{unit} ({why})"
            for key, value in values.items() if value is not None and value > limit]


def hours(**seconds: float | None) -> list[str]:
    """The lines for durations longer than an hour (`HOUR_S`)."""
    return at_most(HOUR_S, HOUR_WHY, " s", **seconds)


def scores(key: str, counts: Sequence[int]) -> list[str]:
    """The line for a list of goal counts or points outside 0 to `SCORE_MAX`."""
    if all(0 <= c <= SCORE_MAX for c in counts):
        return []
    return [f"{key} = {list(counts)}: each from 0 to {SCORE_MAX} (two digits on the scoreboard)"]


def pattern(key: str, seconds: Sequence[float]) -> list[str]:
    """The lines for an on, off, on, ... pattern in seconds that is not one."""
    listed = ", ".join(f"{s:g}" for s in seconds[:8]) + (", ..." if len(seconds) > 8 else "")
    shown = f"{key} = [{listed}]"
    if len(seconds) % 2 == 0 or min(seconds, default=0) <= 0:
        return [f"{shown}: give on, off, on, ... seconds, all positive, starting and ending "
                "with on"]
    if len(seconds) > PATTERN_MAX_ENTRIES or sum(seconds) > PATTERN_MAX_S:
        return [f"{shown}: at most {PATTERN_MAX_ENTRIES} entries and {PATTERN_MAX_S:g} s in all "
                "(a signal must end before the next one can fall due, ITHF 4.4)"]
    return []
