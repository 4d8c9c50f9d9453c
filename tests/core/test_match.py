"""The match state machine with literal times: ITHF 4.4 signals, 10.1/10.2 interruptions."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import refused
from timerd.config import profiles
from timerd.core.effects import Phase, PhaseChanged, Signal, SignalKind
from timerd.core.match import Match
from timerd.core.plan import signal_plan

K = SignalKind


def signals(effects):
    return [(e.kind, e.beeps, e.remaining_s) for e in effects if isinstance(e, Signal)]


def started(profile="ithf", at=0.0):
    match = Match(profiles.load(profile))
    match.handle(match.parse("start"), at)
    match.poll(at + match.profile.pre_signal_lead_s)
    return match


def test_ithf_4_4_signal_plan():
    plan = signal_plan(profiles.load("ithf"), 1)
    assert [(p.at_elapsed_s, p.kind, p.beeps) for p in plan] == [
        (60, K.INTERVAL, 4), (120, K.INTERVAL, 3), (180, K.INTERVAL, 2), (240, K.INTERVAL, 1),
        (270, K.LAST_30, 1), (300, K.FINAL, 1)]


def test_ithf_4_4_thirds_plan():
    plan = signal_plan(profiles.load("ithf-thirds"), 1)
    assert [(p.remaining_s, p.kind, p.beeps) for p in plan] == [
        (200, K.INTERVAL, 2), (100, K.INTERVAL, 1), (30, K.LAST_30, 1), (0, K.FINAL, 1)]


def test_ithf_4_4_pre_signal_leads_the_start_by_20_s():
    match = Match(profiles.load("ithf"))
    effects = match.handle(match.parse("start"), 100.0)
    assert signals(effects) == [(K.PRE_SIGNAL, 1, 300)]
    assert match.phase is Phase.PRE_SIGNAL
    assert match.next_deadline() == 120.0
    assert match.poll(119.999) == []
    effects = match.poll(120.0)
    assert signals(effects) == [(K.START, 1, 300)]
    assert match.phase is Phase.RUNNING


def test_late_poll_fires_each_due_signal_once_and_keeps_the_planned_instants():
    match = started()
    effects = match.poll(20 + 130.0)  # woke 70 s after the first interval signal was due
    assert signals(effects) == [(K.INTERVAL, 4, 240), (K.INTERVAL, 3, 180)]
    assert [e.due for e in effects if isinstance(e, Signal)] == [80.0, 140.0]
    assert match.poll(20 + 130.0) == []
    assert match.next_deadline() == 20 + 180.0


def test_a_late_start_does_not_shift_the_match():
    match = Match(profiles.load("ithf"))
    match.handle(match.parse("start"), 0.0)
    match.poll(20.3)  # the loop woke 300 ms late for the start
    assert match.clock.anchor == 20.0
    assert match.clock.when_elapsed(60) == 80.0


def test_ithf_10_2_pause_adds_the_lost_time_back():
    match = started()
    effects = match.handle(match.parse("pause"), 50.0)
    assert match.phase is Phase.PAUSED
    assert signals(effects) == [(K.PAUSE, 1, 270)]
    assert match.next_deadline() is None
    assert match.status(62.5).interruption_s == 12.5
    effects = match.handle(match.parse("resume"), 80.0)
    assert signals(effects) == [(K.RESUME, 1, 270)]
    assert match.next_deadline() == 80.0 + 30.0  # 4:00 left comes 30 s of play later


def test_signals_due_before_a_command_fire_first():
    match = started()
    effects = match.handle(match.parse("pause"), 80.0)  # exactly at 4:00 left
    kinds = [e.kind for e in effects if isinstance(e, Signal)]
    assert kinds == [K.INTERVAL, K.PAUSE]


def test_final_signal_finishes_the_match_at_exactly_zero():
    match = started()
    effects = match.poll(1000.0)
    assert signals(effects)[-1] == (K.FINAL, 1, 0)
    assert match.phase is Phase.FINISHED
    assert match.status(1000.0).remaining_s == 0


def test_toggle_is_the_start_pause_button():
    match = Match(profiles.load("ithf"))
    match.handle(match.parse("toggle"), 0.0)
    assert match.phase is Phase.PRE_SIGNAL
    with refused("pre-signal"):
        match.handle(match.parse("toggle"), 5.0)
    match.poll(20.0)
    match.handle(match.parse("toggle"), 30.0)
    assert match.phase is Phase.PAUSED
    match.handle(match.parse("toggle"), 40.0)
    assert match.phase is Phase.RUNNING


def test_reset_is_refused_while_the_clock_runs():
    match = started()
    with refused("pause first"):
        match.handle(match.parse("reset"), 30.0)
    match.handle(match.parse("pause"), 31.0)
    effects = match.handle(match.parse("reset"), 32.0)
    assert effects == [PhaseChanged(Phase.IDLE, Phase.PAUSED)]
    assert match.status(32.0).remaining_s == 300
    assert match.interruptions == []


def test_start_after_the_match_finished_is_refused_with_a_hint():
    match = started()
    match.poll(400.0)
    with refused("long-press RESET"):
        match.handle(match.parse("toggle"), 401.0)


def test_unknown_command_and_wrong_arguments_are_refused():
    match = Match(profiles.load("ithf"))
    with refused("explode refused: unknown command; known: .*faceoff", "unknown"):
        match.handle(match.parse("explode"), 0.0)
    with refused("takes no arguments"):
        match.handle(match.parse("start", "now"), 0.0)
    assert match.phase is Phase.IDLE


@given(st.lists(st.tuples(st.floats(0.5, 120), st.floats(0.5, 300)), max_size=12))
def test_final_comes_300_s_plus_paused_time_after_start_and_intervals_keep_match_time(gaps):
    """ITHF 10.2: for any pauses and resumes, every signal keeps its match-time position."""
    match = started()
    start, now, paused = 20.0, 20.0, 0.0
    fired = []
    for run_s, pause_s in gaps:
        if match.phase is not Phase.RUNNING:
            break
        now += run_s
        fired += [(e, paused) for e in match.poll(now) if isinstance(e, Signal)]
        if match.phase is not Phase.RUNNING:
            break
        fired += [(e, paused) for e in match.handle(match.parse("pause"), now)
                  if isinstance(e, Signal)]
        now += pause_s
        paused += pause_s
        match.handle(match.parse("resume"), now)
    fired += [(e, paused) for e in match.poll(now + 1000) if isinstance(e, Signal)]
    timed = [(e, p) for e, p in fired if e.kind not in (K.PAUSE, K.RESUME)]
    assert [e.kind for e, _ in timed][-1] is K.FINAL
    for signal, paused_before in timed:
        # due = start + match time at the signal + all interruption time before it
        assert signal.due == pytest.approx(start + 300 - signal.remaining_s + paused_before)
    assert timed[-1][0].due == pytest.approx(start + 300 + paused)


def test_a_poll_to_the_signal_leaves_the_finals_end_due_at_its_instant() -> None:
    """Issue 33: `poll(to_signal=True)` stops after the step that sounds the final, so that the
    service hands it to the buzzer before the match works out its end; the end is still due at
    the same instant and follows at the next poll. Together they are what one poll gives."""
    def before_the_final() -> Match:
        match = Match(profiles.load("ithf"))
        match.handle(match.parse("start"), 0.0)
        match.poll(20.0)  # the start signal
        match.handle(match.parse("goal", "away"), 100.0)
        match.poll(319.0)  # every signal before the final
        return match

    whole = before_the_final().poll(400.0)
    match = before_the_final()
    first = match.poll(400.0, to_signal=True)
    assert [type(e).__name__ for e in first] == ["Signal"]
    assert first[0].kind is SignalKind.FINAL
    assert (match.phase, match.result) == (Phase.RUNNING, None)
    assert match.next_deadline() == pytest.approx(320.0)
    rest = match.poll(400.0)
    assert first + rest == whole
    assert match.phase is Phase.FINISHED
    assert match.result is not None
    assert match.next_deadline() is None
