"""A match moved onto another clock (`core.rebase`) is the match its commands make at shifted
times: every instant it keeps moves, play time and durations stay (docs/service.md, a
journal's snapshot restored in a later run)."""

from __future__ import annotations

import contextlib
import enum
import functools
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from timerd.config import profiles
from timerd.core.match import Match
from timerd.core.rebase import rebase
from timerd.core.refused import CommandRefused
from timerd.core.rule import RuleModule

SHIFT = 12_345.678
PROFILES = {name: profiles.load(name) for name in ("ithf", "isbhf", "ithf-playoff")}
WORDS = [
    ("start",), ("pause",), ("resume",), ("resume", "faceoff"), ("goal", "home"),
    ("goal", "away", "10"), ("faceoff",), ("undo",), ("correct", "1", "7"), ("teams", "A", "B"),
    ("start_in", "20"), ("passive", "home"), ("forfeit", "away"), ("replay",),
    ("late-goal", "home"), ("penalty", "home", "minor", "4"), ("penalty", "away", "major"),
    ("penalty-cancel", "home"), ("timeout", "away"), ("timeout", "home"), ("linechange",),
    ("goalie-change", "home"), ("early-intermission",), ("reset",),
]


def played(profile: str, steps: list[tuple[tuple[str, ...], float]], shift: float) -> Match:
    """The match the commands make, each `dt` after the one before, `shift` later."""
    match, t = Match(PROFILES[profile]), 0.0
    for words, dt in steps:
        t += dt
        with contextlib.suppress(CommandRefused):
            match.handle(match.parse(*words), t + shift)
    match.poll(t + 1.0 + shift)
    return match


def flat(value: Any, path: str = "", seen: frozenset[int] = frozenset()) -> Iterator[
        tuple[str, Any]]:
    """Every leaf of a match's state with its path (the profile, shared, and a rule module's
    view of the match left out; a step's callable by its name)."""
    if isinstance(value, enum.Enum | str | bool | int | float | None):
        yield path, value
        return
    if id(value) in seen:
        yield path, "(seen)"
        return
    seen = seen | {id(value)}
    if isinstance(value, functools.partial):
        yield path, (value.func.__name__, value.args)
    elif callable(value) and not hasattr(value, "__dict__"):
        yield path, getattr(value, "__name__", repr(value))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from flat(item, f"{path}[{key}]", seen)
    elif isinstance(value, list | tuple | set | frozenset):
        items = sorted(value) if isinstance(value, set | frozenset) else value
        for i, item in enumerate(items):
            yield from flat(item, f"{path}[{i}]", seen)
    else:
        for key, item in vars(value).items():
            if key != "profile" and not (isinstance(value, RuleModule) and key == "match"):
                yield from flat(item, f"{path}.{key}", seen)


STEPS = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from([0.0, 0.4, 3.0, 31.0, 170.0])),
                 max_size=40)


@settings(max_examples=150)
@given(st.sampled_from(sorted(PROFILES)), STEPS)
def test_a_match_moved_onto_a_later_clock_is_the_match_its_commands_make_there(
        profile: str, steps: list[tuple[tuple[str, ...], float]]) -> None:
    there = played(profile, steps, SHIFT)
    moved = played(profile, steps, 0.0)
    rebase(vars(moved), SHIFT)
    want, got = list(flat(there)), list(flat(moved))
    assert [path for path, _ in got] == [path for path, _ in want]
    for (path, value), (_, wanted) in zip(got, want, strict=True):
        if isinstance(wanted, float):
            assert value == pytest.approx(wanted, abs=1e-6), path
        else:
            assert value == wanted, path


def test_a_running_timeout_and_the_ended_match_kept_for_a_reopen_move() -> None:
    """The parts the property reaches only now and then, each at least once: a timeout
    running in a stoppage (ISBHF 412) and the state kept as regular time ended tied."""
    steps = [(("start",), 0.0), (("pause",), 40.0), (("timeout", "home"), 1.0)]
    there, moved = played("isbhf", steps, SHIFT), played("isbhf", steps, 0.0)
    rebase(vars(moved), SHIFT)
    assert moved.status(SHIFT + 50.0) == there.status(SHIFT + 50.0)
    assert moved.next_deadline() == pytest.approx(there.next_deadline())
    tied = [(("start",), 0.0), (("goal", "home"), 20.0), (("goal", "away"), 20.0),
            (("pause",), 400.0)]
    there, moved = played("ithf", tied, SHIFT), played("ithf", tied, 0.0)
    rebase(vars(moved), SHIFT)
    assert dict(flat(moved))[".rules[1].ended[1]"] == pytest.approx(
        dict(flat(there))[".rules[1].ended[1]"])
