"""The intermission rule module (timerd.core.rules.intermission): ISBHF 410 intermissions,
the early intermission (407 !2) and the switch of ends (401, 407 !3), as the match asks it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.conftest import refused, said
from tests.core.test_isbhf_match_rules import kinds, started
from timerd.config import profiles
from timerd.config.schema import SchemaError
from timerd.core.effects import Phase, SignalKind
from timerd.core.match import Match
from timerd.core.profile import Intermission


def test_isbhf_407_2_early_intermission_refusals() -> None:
    with refused(r"profile ithf has no intermissions \(ISBHF 410\)", "lacks_intermission"):
        (m := started("ithf")).handle(m.parse("early-intermission"), 30.0)
    match = started()
    with refused("the clock is running; stop it first", "stop_first"):
        match.handle(match.parse("early-intermission"), 500.0)
    match.handle(match.parse("stop"), 500.0)
    with refused(r"6:40 is left, and ISBHF 407 !2 allows it only "
                                             r"in the last 5:00 of a period"):
        match.handle(match.parse("early-intermission"), 510.0)
    # Period 3: there is no intermission to bring forward.
    late = started()
    for t in (1500.0, 3000.0):
        late.poll(t)
        late.handle(late.parse("start"), t)
    late.handle(late.parse("stop"), 3800.0)
    with refused("only in a period followed by an intermission"):
        late.handle(late.parse("early-intermission"), 3801.0)


def test_isbhf_407_2_early_intermission_carries_the_time_left_and_skips_the_next() -> None:
    match = started()
    match.handle(match.parse("stop"), 700.0)  # 3:20 left
    effects = match.handle(match.parse("early-intermission"), 710.0)
    assert ("early intermission: 3:20 of period 1 follows it, on the same ends "
            "(ISBHF 407 !2)") in said(effects)
    status = match.status(720.0)
    assert (status.phase, status.break_kind, status.early_intermission) == (
        Phase.BREAK, "intermission", True)
    assert status.remaining_s == 200.0
    assert kinds(match.poll(1310.0)) == [SignalKind.BREAK_WARNING, SignalKind.INTERMISSION_END]
    assert (match.period, match.status(1310.0).ends_switched) == (1, False)
    with refused("already taken"):
        match.handle(match.parse("early-intermission"), 1315.0)
    match.handle(match.parse("start"), 1320.0)
    effects = match.poll(1520.0)
    assert kinds(effects) == [SignalKind.PERIOD_END]
    assert "no intermission: it was taken early (ISBHF 407 !2)" in said(effects)
    status = match.status(1520.0)
    assert (status.phase, status.period, status.ends_switched, status.early_intermission) == (
        Phase.PAUSED, 2, True, False)


def test_isbhf_407_3_half_time_signal_outdoors() -> None:
    outdoor = replace(profiles.load("isbhf-playoff"), half_period_signal=True)
    match = Match(outdoor)
    match.handle(match.parse("start"), 0.0)
    assert kinds(match.poll(450.0)) == []  # not in the 1st period
    for t in (1500.0, 3000.0):
        match.poll(t)
        match.handle(match.parse("start"), t)
    assert match.status(3000.0).ends_switched is False  # period 3 on the starting ends
    assert kinds(match.poll(3450.0)) == [SignalKind.HALF_PERIOD]
    assert match.status(3451.0).ends_switched is True  # 407 !3: switched at half-time
    match.poll(3900.0)  # 0:0, overtime after a 10:00 break
    match.poll(4500.0)
    match.handle(match.parse("start"), 4500.0)
    assert match.status(4500.0).ends_switched is False  # switched again for overtime (401)
    assert kinds(match.poll(4800.0)) == [SignalKind.HALF_PERIOD]
    assert match.status(4801.0).ends_switched is True


def test_without_an_early_window_the_intermission_comes_only_after_the_period() -> None:
    match = Match(replace(profiles.load("isbhf"), intermission=Intermission()))
    match.handle(match.parse("start"), 0.0)
    match.handle(match.parse("stop"), 800.0)
    with refused("profile isbhf has no early intermission", "lacks_early_intermission"):
        match.handle(match.parse("early-intermission"), 801.0)
    match.handle(match.parse("start"), 801.0)
    match.poll(901.0)  # ISBHF 410: the intermission, of the rulebook's 10:00
    assert (match.phase, match.status(901.0).break_kind) == (Phase.BREAK, "intermission")
    assert match.next_deadline() == 901.0 + 600.0 - 60.0  # its warning


def test_a_replay_plays_the_periods_again_on_the_starting_ends() -> None:
    """ITHF 4.5 with the intermission module (a club's mix): the replay forgets the early
    intermission taken and the ends switched at half-time."""
    profile = replace(profiles.load("isbhf"), periods=2, half_period_signal=True,
                      rules=("rulings", "intermission"))
    match = Match(profile)
    match.handle(match.parse("start"), 0.0)
    match.handle(match.parse("stop"), 700.0)
    match.handle(match.parse("early-intermission"), 700.0)
    match.poll(1300.0)
    match.handle(match.parse("start"), 1300.0)
    match.poll(1500.0)  # period 1 ends: no intermission; period 2
    match.handle(match.parse("start"), 1500.0)
    match.poll(1950.0)  # 407 !3: half-time of the last period
    assert match.status(1950.0).ends_switched is False  # switched twice: period 2, half-time
    match.handle(match.parse("stop"), 1951.0)
    match.handle(match.parse("replay"), 1952.0)
    status = match.status(1952.0)
    assert (status.period, status.ends_switched, status.early_intermission) == (1, False, False)


def test_a_profile_with_intermissions_lists_the_rule_module(tmp_path) -> None:
    path = tmp_path / "club.toml"
    path.write_text('extends = "isbhf"\nname = "club"\nrules = ["penalties"]\n')
    with pytest.raises(SchemaError, match=r"need `intermission` in rules"):
        profiles.load(str(path))
