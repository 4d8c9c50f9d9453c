"""Which commands a profile has (timerd.core.offered): what a score desk shows."""

from __future__ import annotations

import pytest

from timerd.config import profiles
from timerd.core.match import Match
from timerd.core.offered import offered_commands
from timerd.core.refused import CommandRefused

NAMES = ["ithf", "ithf-playoff", "ithf-thirds", "isbhf", "isbhf-playoff"]


def first_args(usage: tuple[str, ...]) -> list[str]:
    """The first choice of each required argument ("home|away" -> "home")."""
    return [word.split("|")[0] for word in usage if not word.endswith("?")]


@pytest.mark.parametrize("name", NAMES)
def test_a_command_a_profile_lacks_is_refused_by_its_match(name: str) -> None:
    """The list follows the profile's data: every left-out command is one the match refuses,
    or one that changes nothing (ball hockey's faceoff is the referee's START, ISBHF 401), in
    every phase a desk reaches first (idle, running, stopped)."""
    profile = profiles.load(name)
    offered = offered_commands(profile)
    declared = {cls.name: cls.usage(profile) for cls in Match(profile).commands()}
    assert offered <= set(declared)
    for command, usage in declared.items():
        if command in offered:
            continue
        for setup in ([], ["start"], ["start", "pause"]):
            match = Match(profile)
            now = 0.0
            for step in setup:
                match.handle(match.parse(step), now)
                now += 40.0
            before = match.status(now).to_dict()
            try:
                match.handle(match.parse(command, *first_args(usage)), now)
            except CommandRefused:
                continue
            assert match.status(now).to_dict() == before, (command, setup)


def test_table_hockey_and_ball_hockey_get_their_own_commands() -> None:
    ithf, isbhf = offered_commands(profiles.load("ithf")), offered_commands(profiles.load("isbhf"))
    assert {"faceoff", "passive", "forfeit", "undo", "reset", "goal"} <= ithf  # ITHF 5.6, 8.3
    assert not {"penalty", "timeout", "linechange", "shot"} & ithf
    assert {"penalty", "timeout", "linechange", "goalie-change"} <= isbhf  # ISBHF 412, 404b
    assert not {"faceoff", "passive"} & isbhf
    assert "shot" not in isbhf  # a league match ends tied; the play-off has a shootout (414b)
    assert "shot" in offered_commands(profiles.load("isbhf-playoff"))
