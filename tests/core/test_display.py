"""The shown clock: rounded up like every scoreboard, tenths in the last 10 s."""

import pytest

from timerd.config import profiles
from timerd.core.display import ClockFace, FaceKind, elapsed_clock, next_change, shown_clock
from timerd.core.match import Match
from timerd.core.status import Status


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
