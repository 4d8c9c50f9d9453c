"""Names of the two sides and the round: shown in the status, kept in the result."""

import pytest

from tests.conftest import refused
from tests.core.test_match import started
from timerd.config import profiles
from timerd.core.match import Match
from timerd.core.record import NAME_MAX


def test_names_and_round_are_in_the_status_and_the_result():
    match = started()
    match.handle(match.parse("teams", "Jana Novák", "Peter Šťastný", "3"), 30.0)
    status = match.status(31.0)
    assert status.teams == {"home": "Jana Novák", "away": "Peter Šťastný"}
    assert status.round == "3"
    assert status.clock_running  # naming mid-match leaves the clock alone
    match.poll(400.0)
    assert match.status(400.0).result["teams"] == {"home": "Jana Novák", "away": "Peter Šťastný"}
    assert match.status(400.0).result["round"] == "3"


def test_names_outlive_a_reset_for_the_next_match():
    match = Match(profiles.load("isbhf"))
    match.handle(match.parse("teams", "HC Kometa", ""), 0.0)
    match.handle(match.parse("reset"), 1.0)
    assert match.status(2.0).teams == {"home": "HC Kometa", "away": ""}
    assert match.status(2.0).round is None


@pytest.mark.parametrize("name", ["x" * (NAME_MAX + 1), "two\nlines", "bell\a"])
def test_a_name_that_no_scoreboard_can_show_is_refused(name):
    match = Match(profiles.load("ithf"))
    with refused("teams refused"):
        match.handle(match.parse("teams", name, "B"), 0.0)
    assert match.status(0.0).teams == {"home": "", "away": ""}
