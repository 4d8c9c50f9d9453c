"""A start at a given instant (hall mode): the pre-signal is planned so the start keeps it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.conftest import refused, said
from timerd.config import profiles
from timerd.core.effects import Notice, Phase, PhaseChanged, Signal, SignalKind
from timerd.core.match import Match
from timerd.core.profile import Profile
from timerd.core.refused import CommandRefused
from timerd.core.rules.scheduled import ReadyForFaceoff, min_pre_signal_lead_s


def ithf() -> Match:
    return Match(profiles.load("ithf"))  # 20 s pre-signal lead (ITHF 4.4)


def signals(effects: list[object]) -> list[tuple[SignalKind, float]]:
    return [(e.kind, e.due) for e in effects if isinstance(e, Signal)]


def test_a_start_beyond_the_lead_waits_then_sounds_the_pre_signal_one_lead_before() -> None:
    match = ithf()
    effects = match.handle(match.parse("start_in", "60"), 100.0)
    assert effects == [PhaseChanged(Phase.SCHEDULED, Phase.IDLE)]
    assert match.next_deadline() == 140.0
    assert match.status(110.0).start_in_s == 50.0
    assert match.poll(139.999) == []
    assert signals(match.poll(140.0)) == [(SignalKind.PRE_SIGNAL, 140.0)]
    assert match.phase is Phase.PRE_SIGNAL
    assert match.next_deadline() == 160.0
    assert signals(match.poll(160.0)) == [(SignalKind.START, 160.0)]
    assert match.phase is Phase.RUNNING
    assert match.status(220.0).remaining_s == 240.0


def test_a_late_wake_up_fires_pre_signal_and_start_once_each_at_their_planned_instants() -> None:
    match = ithf()
    match.handle(match.parse("start_in", "60"), 0.0)
    effects = match.poll(65.0)
    assert signals(effects) == [(SignalKind.PRE_SIGNAL, 40.0), (SignalKind.START, 60.0)]
    assert match.clock.anchor == 60.0  # the match is not shifted by the late wake-up
    assert signals(match.poll(66.0)) == []


def test_a_start_inside_the_lead_sounds_the_pre_signal_at_once_with_a_shorter_lead() -> None:
    match = ithf()
    # 17 s: shorter than 20, at least ITHF's 15
    effects = match.handle(match.parse("start_in", "17"), 100.0)
    assert signals(effects) == [(SignalKind.PRE_SIGNAL, 100.0)]
    assert any("17.0 s" in text for text in said(effects))
    assert match.phase is Phase.PRE_SIGNAL
    assert signals(match.poll(117.0)) == [(SignalKind.START, 117.0)]


def test_a_start_exactly_one_lead_away_is_a_plain_start_without_a_notice() -> None:
    match = ithf()
    effects = match.handle(match.parse("start_in", "20"), 5.0)
    assert signals(effects) == [(SignalKind.PRE_SIGNAL, 5.0)]
    assert not any(isinstance(e, Notice) for e in effects)


@pytest.mark.parametrize("lead_s", [14.9, 0.0, -3.0])
def test_a_start_too_late_for_the_ithf_minimum_lead_is_refused_and_nothing_changes(
        lead_s: float) -> None:
    match = ithf()
    with refused(r"too late for the 15 s pre-signal ITHF 4\.4"):
        match.handle(match.parse("start_in", repr(lead_s)), 100.0)
    assert match.phase is Phase.IDLE
    assert match.start_at is None
    assert match.next_deadline() is None


def test_fifteen_seconds_is_still_kept() -> None:
    match = ithf()
    assert signals(match.handle(match.parse("start_in", "15"), 0.0)) == [
        (SignalKind.PRE_SIGNAL, 0.0)]


def test_a_training_profile_with_a_short_lead_has_that_lead_as_its_minimum() -> None:
    match = Match(Profile("drill", ithf_conformant=False, period_s=30, pre_signal_lead_s=2))
    assert min_pre_signal_lead_s(match.profile) == 2
    with pytest.raises(CommandRefused):
        match.handle(match.parse("start_in", "1.9"), 0.0)
    match.handle(match.parse("start_in", "2"), 0.0)
    assert match.phase is Phase.PRE_SIGNAL


def test_only_an_idle_match_can_be_scheduled() -> None:
    match = ithf()
    match.start(0.0)
    with refused("pre-signal is sounding"):
        match.handle(match.parse("start_in", "59"), 1.0)


def test_a_scheduled_start_refuses_start_and_pause_and_is_cancelled_by_reset() -> None:
    match = ithf()
    match.handle(match.parse("start_in", "60"), 0.0)
    for command in ("start", "pause", "resume"):
        with refused("a start is scheduled"):
            match.handle(match.parse(command), 1.0)
    assert match.handle(match.parse("reset"), 2.0) == [PhaseChanged(Phase.IDLE, Phase.SCHEDULED)]
    assert match.next_deadline() is None
    assert match.poll(100.0) == []


def test_start_in_is_the_command_form_relative_to_now() -> None:
    match = ithf()
    match.handle(match.parse("start_in", "30.5"), 10.0)
    assert match.phase is Phase.SCHEDULED
    assert match.start_at == 40.5
    for bad in ("soon", "nan", "inf"):
        with refused("number of seconds"):
            (m := ithf()).handle(m.parse("start_in", bad), 0.0)


# -- issue 28 item 6: a scheduled ball-hockey start waits for the referee's faceoff ----------

def test_isbhf_401_407_1_a_scheduled_start_waits_for_the_referees_faceoff() -> None:
    """Old code: the scheduled instant started the net time by itself (an ITHF start), so a
    ball dropped 15 s late cost 15 s of play."""
    match = Match(profiles.load("isbhf"))
    assert match.handle(match.parse("start_in", "60"), 100.0) == [
        PhaseChanged(Phase.SCHEDULED, Phase.IDLE)]
    assert match.next_deadline() == 160.0
    effects = match.poll(160.0)
    assert PhaseChanged(Phase.PAUSED, Phase.SCHEDULED) in effects
    assert ReadyForFaceoff() in effects
    assert signals(effects) == []  # isbhf has no pre-signal
    status = match.status(175.0)  # the referee drops the ball 15 s late
    assert (status.phase, status.clock_running, status.elapsed_s) == (Phase.PAUSED, False, 0.0)
    assert status.interruptions == 0
    assert signals(match.handle(match.parse("start"), 175.0)) == [(SignalKind.START, 175.0)]
    assert match.status(475.0).elapsed_s == 300.0  # net time from the faceoff
    assert match.interruptions == []


def test_isbhf_407_1_a_stop_clock_profile_with_a_pre_signal_sounds_it_when_ready() -> None:
    match = Match(replace(profiles.load("isbhf"), pre_signal_lead_s=10.0))
    match.handle(match.parse("start_in", "30"), 0.0)
    assert signals(match.poll(20.0)) == []  # no lead: the clock waits for the ball anyway
    assert signals(match.poll(30.0)) == [(SignalKind.PRE_SIGNAL, 30.0)]
    assert match.phase is Phase.PAUSED
