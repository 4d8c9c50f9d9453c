"""The shown clock: rounded up like every scoreboard, tenths in the last 10 s."""

import pytest

from timerd.config import profiles
from timerd.core.display import (
    ClockFace,
    FaceKind,
    elapsed_clock,
    next_change,
    next_whole,
    shown_clock,
)
from timerd.core.effects import Phase
from timerd.core.match import Match
from timerd.core.status import Status, next_shown_change


@pytest.mark.parametrize(("remaining", "shown"), [
    (300, "5:00"), (299.9, "5:00"), (299.0, "4:59"), (60.0, "1:00"), (59.01, "1:00"),
    (10.0, "0:10"), (9.95, "0:10"), (9.9, "9.9"), (0.01, "0.1"), (0, "0:00"), (-3, "0:00"),
])
def test_shown_clock(remaining, shown):
    assert shown_clock(remaining) == shown


@pytest.mark.parametrize(("remaining", "change"), [
    (300.0, 1.0), (299.5, 0.5), (10.5, 0.5), (10.0, 0.1), (5.25, 0.05),
])
def test_next_change_is_when_the_shown_clock_reads_differently(remaining, change):
    assert next_change(remaining) == pytest.approx(change)
    assert shown_clock(remaining - change + 1e-4) == shown_clock(remaining)
    assert shown_clock(remaining - change) != shown_clock(remaining)


def _match_at(profile: str, script: list[tuple[str, float, tuple[str, ...]]],
              now: float) -> Status:
    match = Match(profiles.load(profile))
    for command, at, args in script:
        match.poll(at)
        match.handle(match.parse(command, *args), at)
    match.poll(now)
    return match.status(now)


def test_the_clock_face_counts_the_period_down() -> None:
    face = _match_at("ithf", [("start", 0.0, ())], 95.5).clock_face
    assert (face.kind, face.value_s, face.text) == (FaceKind.COUNTDOWN, 224.5, "3:45")


def test_the_clock_face_counts_a_sudden_death_overtime_up_not_0_00_left() -> None:
    # ITHF 4.8: the final at 320, a 30-s break, then overtime from 350 that counts up.
    status = _match_at("ithf-playoff", [("start", 0.0, ())], 421.75)
    assert status.clock_face == ClockFace(FaceKind.COUNT_UP, pytest.approx(71.75), "1:11")
    assert status.to_dict()["clock_face"]["text"] == "1:11"


def test_the_clock_face_counts_the_break_before_overtime_down() -> None:
    face = _match_at("ithf-playoff", [("start", 0.0, ())], 330.2).clock_face
    assert (face.kind, face.text) == (FaceKind.BREAK, "0:20")


@pytest.mark.parametrize(("played", "shown"), [(0, "0:00"), (0.99, "0:00"), (1.0, "0:01"),
                                                (61.5, "1:01"), (-1, "0:00")])
def test_elapsed_clock_rounds_down(played, shown):
    assert elapsed_clock(played) == shown


def test_the_next_change_of_an_interruption_is_after_now_despite_float_noise() -> None:
    """Paused at 1017.1, at 1078.1 the interruption has lasted 60.99999999999989 s in floats
    (61 s shown). The shown length's next change used to be 1.1e-13 s on, which added to
    1078.1 is 1078.1 itself: the service's timer fired for it again and again, and a test on
    virtual time hung (tests/cli/test_hostile_commands.py, once in a whole run)."""
    match = Match(profiles.load("ithf"))
    match.handle(match.parse("start"), 900.0)
    match.poll(920.0)  # the start signal; paused 97.1 s into play
    match.handle(match.parse("pause"), 1017.1)
    now = 1078.1
    status = match.status(now)
    assert status.phase is Phase.PAUSED
    nxt = next_shown_change(status, now, tenths=True)
    assert nxt is not None
    assert nxt[0] - now == pytest.approx(1.0, abs=1e-9)
    assert next_whole(60.5) == pytest.approx(0.5)
    assert next_whole(61.0) == 1.0
