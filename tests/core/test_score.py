"""The score sheet and the scoring rules as properties over any sequence of commands."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import refused
from timerd.config import profiles
from timerd.core.effects import Phase
from timerd.core.match import Match
from timerd.core.refused import CommandRefused
from timerd.core.score import Goal, GoalReason, ScoreSheet, Side, parse_side


def goal(side: Side, t: float, counted: bool = True, reason: GoalReason | None = None) -> Goal:
    return Goal(side, t, counted, reason)


def test_score_counts_only_counted_entries() -> None:
    sheet = ScoreSheet([goal(Side.HOME, 10), goal(Side.AWAY, 20, False, GoalReason.INTERRUPTION),
                        goal(Side.AWAY, 30)])
    assert sheet.score() == {Side.HOME: 1, Side.AWAY: 1}
    assert sheet.tied()
    sheet.add(goal(Side.AWAY, 40))
    assert sheet.leader() is Side.AWAY


def test_undo_removes_the_last_entry_but_never_an_award() -> None:
    sheet = ScoreSheet([goal(Side.HOME, 10), goal(Side.AWAY, 20)])
    assert sheet.undo() == goal(Side.AWAY, 20)
    sheet.walkout(Side.HOME, 5, 25.0, 0.0)
    removed = sheet.undo()  # the awards come last, but the button entry before them goes
    assert removed is not None
    assert removed.reason is GoalReason.WALKOUT_ERASED
    assert [g.reason for g in sheet.goals] == [GoalReason.WALKOUT_AWARD] * 5
    assert sheet.undo() is None


def test_walkout_erases_the_walkers_goals_and_awards_five() -> None:
    # ITHF 4.7
    sheet = ScoreSheet([goal(Side.HOME, 10), goal(Side.HOME, 20), goal(Side.AWAY, 30)])
    sheet.walkout(Side.HOME, 5, 100.0, 0.0)
    assert sheet.score() == {Side.HOME: 0, Side.AWAY: 6}
    assert [g.reason for g in sheet.goals[:2]] == [GoalReason.WALKOUT_ERASED] * 2


def test_forfeit_replaces_play_with_the_forfeit_score() -> None:
    # ITHF 4.6
    sheet = ScoreSheet([goal(Side.AWAY, 10)])
    sheet.forfeit(Side.AWAY, (0, 5), 12.0, 0.0)
    assert sheet.score() == {Side.HOME: 5, Side.AWAY: 0}


@pytest.mark.parametrize(("word", "side"), [("home", Side.HOME), ("A", Side.AWAY)])
def test_parse_side(word: str, side: Side) -> None:
    assert parse_side(word) is side


def test_parse_side_names_the_choices() -> None:
    with refused("home or away", "side"):
        parse_side("left")


# -- properties over command sequences --------------------------------------------------------

COMMANDS = st.sampled_from([
    ("goal", "home"), ("goal", "away"), ("goal", "home"), ("goal", "away"),
    ("faceoff",), ("pause",), ("resume",), ("resume", "faceoff"), ("undo",),
    ("passive", "home"), ("passive", "away"), ("replay",), ("forfeit", "away"),
    ("walkout", "home"), ("walkout", "away"), ("start",), ("toggle",),
])
STEPS = st.lists(st.tuples(st.floats(0.0, 40.0), COMMANDS), max_size=40)
#: Sequences that mostly end with the match still in play (at most 300 s of gaps).
SHORT_STEPS = st.lists(st.tuples(st.floats(0.0, 10.0), COMMANDS), max_size=30)


def run_sequence(profile: str, steps: list[tuple[float, tuple[str, ...]]]) -> \
        tuple[Match, list[tuple[Goal, Phase, float | None]]]:
    """Start a match, then apply `steps` (gap, command); return every goal entered with the
    phase before it and the faceoff guard left at that instant."""
    match = Match(profiles.load(profile))
    now = 0.0
    match.handle(match.parse("start"), now)
    entered = []
    for gap, (command, *args) in steps:
        now += gap
        match.poll(now)
        phase, guard = match.phase, match.status(now).faceoff_guard_s
        try:
            effects = match.handle(match.parse(command, *args), now)
        except CommandRefused:
            continue
        entered += [(e, phase, guard) for e in effects if isinstance(e, Goal)]
    return match, entered


@settings(max_examples=300, deadline=None)
@given(STEPS, st.sampled_from(["ithf", "ithf-playoff"]))
def test_score_is_always_the_number_of_counted_goals(
        steps: list[tuple[float, tuple[str, ...]]], profile: str) -> None:
    match, _ = run_sequence(profile, steps)
    counted = {side: sum(g.counted and g.side is side for g in match.sheet.goals) for side in Side}
    assert match.sheet.score() == counted
    if match.result is not None:
        assert match.result.score == counted


@settings(max_examples=300, deadline=None)
@given(STEPS, st.sampled_from(["ithf", "ithf-playoff"]))
def test_no_goal_counts_inside_the_guard_after_the_final_or_while_paused(
        steps: list[tuple[float, tuple[str, ...]]], profile: str) -> None:
    # ITHF 5.6, 6.5, 10.3, whatever the operator presses
    _, entered = run_sequence(profile, steps)
    for entry, phase, guard in entered:
        if phase in (Phase.PAUSED, Phase.FINISHED, Phase.BREAK, Phase.PRE_SIGNAL) \
                or guard is not None:
            assert not entry.counted, (entry, phase, guard)


@settings(max_examples=300, deadline=None)
@given(SHORT_STEPS, st.sampled_from([Side.HOME, Side.AWAY]))
def test_a_walkout_leaves_the_opponent_at_least_five_ahead(
        steps: list[tuple[float, tuple[str, ...]]], walker: Side) -> None:
    # ITHF 4.7
    match, _ = run_sequence("ithf-playoff", steps)
    now = 301.0 + sum(gap for gap, _ in steps)
    try:
        match.handle(match.parse("walkout", walker.value), now)
    except CommandRefused:
        assert match.phase in (Phase.FINISHED, Phase.PRE_SIGNAL, Phase.IDLE)
        return
    assert match.result is not None
    assert match.result.score[walker.opponent] - match.result.score[walker] >= 5
    assert match.result.winner is walker.opponent
