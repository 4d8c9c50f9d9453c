"""The status as `core.status.snapshot` makes it (issue 44 item 8): its instance dict set at
once, in the composed class's field order, and the parts it keeps while the match's goals and
names compare equal, made anew as soon as they change."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tests.conftest import play
from timerd.config import profiles
from timerd.core.match import Match
from timerd.core.status import Status
from timerd.service import Service


@pytest.mark.parametrize(("profile", "script"), [
    ("ithf", [(0, "start"), (30, "goal home"), (40, "pause"), (50, "resume")]),
    ("ithf-playoff", [(0, "start"), (10, "goal home"), (12, "goal away"), (318, "goal away")]),
    ("isbhf-playoff", [(0, "start"), (20, "penalty away minor 8"), (30, "stop"),
                       (31, "timeout home"), (100, "linechange"), (130, "start")]),
])
def test_every_status_has_its_class_s_fields_in_their_order(
        profile: str, script: list[tuple[float, str]]) -> None:
    """Each status handed out, in every phase a script passes through, holds exactly the
    composed class's fields, in order (the document's key order), and equals the status its
    dataclass `__init__` makes from the same values. Fails when a field is left out of, or
    added beside, the dict `snapshot` sets."""
    statuses: list[Status] = []

    def setup(service: Service) -> None:
        service.outputs.append(type("Statuses", (), {"notify": staticmethod(
            lambda dispatch: statuses.append(dispatch.status))})())

    play(profile, script, until=400, setup=setup)
    assert len({status.phase for status in statuses}) >= 3
    for status in statuses:
        names = [field.name for field in dataclasses.fields(status)]
        assert list(vars(status)) == names
        assert type(status)(**vars(status)) == status
        with pytest.raises(dataclasses.FrozenInstanceError):
            status.phase = status.phase  # type: ignore[misc]


def shown(match: Match, now: float) -> tuple[Any, Any, Any]:
    status = match.status(now)
    return status.score, status.goals, status.teams


def test_the_score_goals_and_names_are_made_anew_when_they_change() -> None:
    """Unchanged, the score, goals and names are the same read-only parts second after second;
    a goal, an undo, a forfeit or new names make them anew, as the match holds them now."""
    match = Match(profiles.load("ithf"))
    at = iter(range(100, 1000))

    def do(*words: str) -> None:
        match.handle(match.parse(*words), float(next(at)))

    do("teams", "Ana", "Bo")
    do("start")
    match.poll(130.0)
    first = shown(match, 130.0)
    assert shown(match, 131.0)[0] is first[0]
    assert shown(match, 131.0)[1] is first[1]
    assert first[2] == {"home": "Ana", "away": "Bo"}

    match.handle(match.parse("goal", "away"), 140.0)
    score, goals, _ = shown(match, 141.0)
    assert score == {"home": 0, "away": 1}
    assert [g["side"] for g in goals] == ["away"]
    assert shown(match, 142.0)[0] is score

    match.handle(match.parse("undo"), 143.0)
    assert shown(match, 144.0)[:2] == ({"home": 0, "away": 0}, [])

    match.handle(match.parse("teams", "Cid", "Dan"), 145.0)
    assert shown(match, 146.0)[2] == {"home": "Cid", "away": "Dan"}

    match.handle(match.parse("goal", "home"), 147.0)
    match.handle(match.parse("pause"), 155.0)
    match.handle(match.parse("forfeit", "away"), 156.0)
    score, goals, teams = shown(match, 161.0)
    assert score == {"home": 5, "away": 0}  # ITHF 4.6: the forfeit score replaces play
    assert [g["counted"] for g in goals] == [c.counted for c in match.sheet.goals]
    assert teams == {"home": "Cid", "away": "Dan"}

    other = Match(profiles.load("ithf"))  # another match's parts are its own
    other.handle(other.parse("teams", "Eva", "Fil"), 100.0)
    assert shown(other, 101.0)[2] == {"home": "Eva", "away": "Fil"}
    assert shown(match, 162.0)[2] == {"home": "Cid", "away": "Dan"}
