"""Typed commands (issue 32 item 3): one declaration per command gives its parser, its usage
and its journalled words, and the core handles the value by its type."""

from __future__ import annotations

import dataclasses

import pytest

from tests.conftest import refused
from timerd.config import profiles
from timerd.core.commands import Command, Resume
from timerd.core.match import Match
from timerd.core.refused import CommandRefused
from timerd.core.rules.passive import PassivePress
from timerd.core.rules.penalties import Penalty
from timerd.core.rules.scheduled import StartIn
from timerd.core.rules.scoring import Goal
from timerd.core.score import Side

#: A word that fits each argument name a declaration uses.
SAMPLE = {"home|away": "away", "scorer": "9", "number": "1", "player": "17",
          "seconds": "90", "round": "R2", "home-name": "Lions", "away-name": "Bears",
          "faceoff": "faceoff", "scored|missed": "scored"}


def sample(usage: str, position: int) -> str:
    name = usage.rstrip("?")
    if name == "assist":  # two assistants are two players
        return str(10 + position)
    return SAMPLE.get(name, name.split("|")[-1])


@pytest.mark.parametrize("name", profiles.builtin_names())
def test_every_command_reads_back_from_the_words_it_is_journalled_as(name: str) -> None:
    """Parse, then `words()`, then parse again gives the same value: the journal and hall
    mode keep a command as words and read it back through the same declaration."""
    profile = profiles.load(name)
    match = Match(profile)
    for cls in match.commands():
        usage = cls.usage(profile)
        required = sum(not u.endswith("?") for u in usage)
        for given in range(required, len(usage) + 1):
            words = tuple(sample(u, i) for i, u in enumerate(usage[:given]))
            command = match.parse(cls.name, *words)
            assert isinstance(command, cls)
            assert match.parse(cls.name, *command.words()) == command
            assert str(command) == " ".join((cls.name, *command.words()))


def test_the_usage_comes_from_the_declaration_and_the_profile() -> None:
    """`timerctl help` and the desk's forms read the fields' declarations; the penalty kinds
    are the profile's."""
    isbhf = profiles.load("isbhf")
    assert Goal.usage() == ("home|away", "scorer?", "assist?", "assist?")
    assert Penalty.usage(isbhf) == ("home|away", "minor|major|misconduct", "player?")
    fewer = dataclasses.replace(isbhf.penalties, kinds={"minor": isbhf.penalties.kinds["minor"]})
    assert Penalty.usage(dataclasses.replace(isbhf, penalties=fewer))[1] == "minor"
    assert Resume.usage() == ("faceoff?",)
    with refused(r"takes <seconds> \[round\]", "arguments"):
        Match(isbhf).parse("start_in")


def test_a_command_made_as_a_value_is_handled_by_its_type() -> None:
    """A button makes `Goal(Side.HOME)` itself; a command the profile's modules do not
    declare is refused by name, as when it comes in as words."""
    match = Match(profiles.load("ithf"))
    match.handle(StartIn(20.0), 0.0)
    match.poll(40.0)
    effects = match.handle(Goal(Side.HOME, "7"), 50.0)
    assert match.sheet.score() == {Side.HOME: 1, Side.AWAY: 0}
    assert match.sheet.goals[0].scorer == "7"
    assert any(getattr(e, "counted", False) for e in effects)
    isbhf = Match(profiles.load("isbhf"))
    with refused("passive refused: profile isbhf", "lacks_passive"):
        isbhf.handle(PassivePress(Side.HOME), 0.0)


def test_a_value_made_in_code_is_held_to_the_words_bounds() -> None:
    """Hall mode makes `StartIn(lead_s)` from a number: not finite is refused as the word
    `nan` is (issue 34); a goal naming a player twice is refused however it is made."""
    for bad in (float("nan"), float("inf")):
        with pytest.raises(CommandRefused) as info:
            StartIn(bad)
        assert info.value.code == "not_seconds"
    with pytest.raises(CommandRefused) as info:
        Goal(Side.AWAY, "9", ("9",))
    assert info.value.code == "same_player"


@pytest.mark.parametrize(("words", "code"), [
    (("penalty-cancel", "home", "²"), "penalty_number"),
    (("penalty-cancel", "home", "-1"), "penalty_number"),
    (("correct", "²"), "no_goal_number"),
    (("correct", "01"), "no_goal_number"),
    (("resume", "now"), "resume_how"),
    (("shot", "home", "wide"), "shot_outcome"),
    (("goal", "sideways"), "side"),
])
def test_a_malformed_word_is_refused_at_the_edge(words: tuple[str, ...], code: str) -> None:
    """Fails on the old code for `penalty-cancel home ²`: "²".isdigit() let it through to
    int(), whose ValueError stopped the daemon as a defect (`refused.failed`). Every word is
    read by its declaration before the match sees the command."""
    match = Match(profiles.load("isbhf-playoff"))
    for setup in (("start",), ("stop",), ("penalty", "home", "minor")):
        match.handle(match.parse(*setup), 10.0)
    with pytest.raises(CommandRefused) as info:
        match.parse(*words)
    assert info.value.code == code
    assert info.value.command == words[0]


def test_every_declared_field_says_how_it_is_read() -> None:
    """A command's field without `arg(...)` could not be parsed, shown or journalled."""
    declared = {cls for name in profiles.builtin_names()
                for cls in Match(profiles.load(name)).commands()}
    assert len(declared) > 20
    for cls in declared:
        assert issubclass(cls, Command)
        assert cls.__dataclass_params__.frozen, cls  # type: ignore[attr-defined]
        for field in dataclasses.fields(cls):
            assert "arg" in field.metadata, (cls.name, field.name)
