"""The daemon's buttons and outputs through a real kernel's GPIO lines (gpio-sim, lgpio).

Presses are the sim line's pull, outputs its value, timed by `Watch` (sim.py). Under QEMU's
emulator the pin path's timing is an upper bound: the slack (tier.py) is generous, and the
benchmark holds the real budgets. The tests wait for what they check (a line's edge, a
status, an event); a `time.sleep` is only ever a button held down that long.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.daemon_process import Daemon
from tests.kernel.sim import SimChip, watching
from tests.kernel.tier import (
    AT_ONCE_S,
    BUZZER,
    FACEOFF,
    GOAL_AWAY,
    GOAL_HOME,
    HORN,
    LED_GUARD,
    LED_LAST_30,
    LED_PASSIVE,
    LED_PAUSED,
    LED_RUNNING,
    PASSIVE_HOME,
    PRE_SIGNAL,
    RESET,
    START,
    lengths_match,
    pattern,
    start_daemon,
)
from timerd.cli import request
from timerd.config import GpioConfig

pytestmark = pytest.mark.kernel

PERIOD_S, LEAD_S, FORFEIT_WINDOW_S, GUARD_S, PASSIVE_S = 14.0, 2.0, 1.0, 3.0, 1.5
#: The tier's match: 14 s, the start 2 s after the pre-signal (which lasts 1.1 s), a forfeit
#: possible 1 s after the start, a 3-s faceoff guard, passive play warned after 1.5 s, the
#: horn relay on for 0.5 s at the final signal.
PROFILE = f"""\
name = "kernel-tier"
description = "14 s, training: the kernel tier's match"
rules = ["passive", "rulings"]
ithf_conformant = false
faceoff_guard_s = {GUARD_S:g}
passive_play_s = {PASSIVE_S:g}
period_s = {PERIOD_S:g}
pre_signal_lead_s = {LEAD_S:g}
forfeit_window_s = {FORFEIT_WINDOW_S:g}
signals = []

[horn]
final = [0.5]
"""
#: `[gpio] long_press_s`: RESET held this long resets; the forfeit chord is held as long.
LONG_PRESS_S = GpioConfig().long_press_s


@pytest.fixture(scope="module")
def table(sim: SimChip, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One daemon for this module's tests (its start under the emulator is the tier's cost)."""
    home = tmp_path_factory.mktemp("table")
    (home / "tier.toml").write_text(PROFILE)
    daemon = start_daemon(home, "--profile", str(home / "tier.toml"))
    with daemon:
        yield daemon
        assert daemon.stop() == 0, "".join(daemon.log)


def back_to_idle(sim: SimChip, table: Daemon) -> None:
    """The daemon back to idle, its buzzer and horn quiet, its event queue empty.

    Quiet matters: a signal still sounding (a forfeit's 2.5-s final) keeps the buzzer line
    high into the next test, whose first beep then shows as no rising edge at all."""
    for name in ("pause", "reset"):
        request(table.socket, name, [])  # refused when there is nothing to do: fine
    table.wait_status(lambda s: s["phase"] == "idle", "idle")
    for line in (BUZZER, HORN):
        sim.wait_value(line, 0)
    drain(table)


@pytest.fixture
def idle(released: SimChip, table: Daemon) -> Daemon:
    """The module's daemon idle and quiet (`back_to_idle`)."""
    back_to_idle(released, table)
    return table


def state(table: Daemon) -> str:
    phase: str = table.command("status")["phase"]
    return phase


def started(sim: SimChip, table: Daemon) -> float:
    """START tapped and the start signal heard; the tap's time."""
    t = sim.tap(START)
    table.wait_signal("start")
    return t


def drain(table: Daemon) -> list[dict[str, Any]]:
    out = []
    while not table.events.empty():
        out.append(table.events.get_nowait())
    return out


def test_start_pause_press_sounds_pre_signal_then_pause_and_resume(
        released: SimChip, idle: Daemon) -> None:
    sim = released
    with watching(sim, [BUZZER]) as watch:
        pressed = sim.tap(START)
        pre_and_start = watch.wait_pulses(BUZZER, pressed, 4)
        pre, start = pre_and_start[:3], pre_and_start[3:]
        assert lengths_match(pre, PRE_SIGNAL), pre
        assert pre[0][0] <= AT_ONCE_S, pre
        assert lengths_match(start, pattern("start")), start
        assert abs(start[0][0] - LEAD_S) <= AT_ONCE_S, start
        assert (sim.value(LED_RUNNING), sim.value(LED_PAUSED)) == (1, 0)

        paused = sim.tap(START)
        chirp = watch.wait_pulses(BUZZER, paused, 1)
        assert lengths_match(chirp, pattern("pause")), chirp
        assert chirp[0][0] <= AT_ONCE_S, chirp
        assert (sim.value(LED_RUNNING), sim.value(LED_PAUSED)) == (0, 1)
        assert state(idle) == "paused"

        resumed = sim.tap(START)
        again = watch.wait_pulses(BUZZER, resumed, 2)
        assert lengths_match(again, pattern("resume")), again
        assert again[0][0] <= AT_ONCE_S, again
        assert (sim.value(LED_RUNNING), sim.value(LED_PAUSED)) == (1, 0)
        assert state(idle) == "running"


def test_reset_needs_a_long_press_a_short_one_does_nothing(released: SimChip,
                                                         idle: Daemon) -> None:
    sim = released
    started(sim, idle)
    sim.tap(START)
    idle.wait_signal("pause")
    sim.tap(RESET, hold_s=0.4)  # a short press: held 0.4 s (the sleep is the press itself)
    hint = idle.wait_event(lambda e: e["type"] == "notice")
    assert hint["code"] == "notice.hold_reset", hint  # told to hold it, nothing reset
    assert state(idle) == "paused"
    down = sim.press(RESET)
    idle.wait_status(lambda s: s["phase"] == "idle", "idle while RESET is held")
    held = time.monotonic() - down
    sim.release(RESET)
    assert held >= LONG_PRESS_S - 0.01, held
    sim.wait_value(LED_PAUSED, 0)
    assert sim.value(LED_RUNNING) == 0


def test_goal_buttons(released: SimChip, idle: Daemon) -> None:
    sim = released
    started(sim, idle)
    # The start is a faceoff: a goal counts once its guard is over (ITHF 5.6).
    idle.wait_status(lambda s: s["faceoff_guard_s"] is None, "the faceoff guard over")
    sim.tap(GOAL_HOME)
    home = idle.wait_event(lambda e: e["type"] == "goal")
    assert (home["side"], home["counted"]) == ("home", True), home
    assert home["score"] == {"home": 1, "away": 0}, home
    idle.command("faceoff")  # play restarts with a faceoff after a counted goal
    idle.wait_status(lambda s: s["faceoff_guard_s"] is None, "the faceoff guard over")
    sim.tap(GOAL_AWAY)
    away = idle.wait_event(lambda e: e["type"] == "goal")
    assert (away["side"], away["counted"]) == ("away", True), away
    assert away["score"] == {"home": 1, "away": 1}, away


def test_the_forfeit_chord_reset_and_goal_held(released: SimChip, idle: Daemon) -> None:
    sim = released
    started(sim, idle)
    idle.wait_status(lambda s: s["remaining_s"] < PERIOD_S - FORFEIT_WINDOW_S - 0.2,
                     "past the profile's forfeit window")
    # ITHF 4.6 without a keyboard: RESET + GOAL HOME held, the away side forfeits.
    down = sim.press(RESET)
    sim.press(GOAL_HOME)
    final = idle.wait_status(lambda s: s["phase"] == "finished", "finished by the forfeit")
    held = time.monotonic() - down
    sim.release(GOAL_HOME)
    sim.release(RESET)
    assert held >= LONG_PRESS_S - 0.01, held
    assert final["score"]["home"] > final["score"]["away"], final
    assert not [e for e in drain(idle) if e["type"] == "goal"]  # the chord's GOAL scored none


#: A bounce's toggles come within this (issue 29: 5 toggles within 3 ms).
BOUNCE_S = 0.003


def bounced(sim: SimChip, table: Daemon) -> float:
    """START pressed with a bouncing contact: 5 toggles within BOUNCE_S, ending closed; the
    first one's time. A burst the emulator spread wider (a loaded machine) is let go, the
    daemon put back to idle, and the burst made again."""
    spent = []
    for _ in range(5):
        t, took = sim.bounce(START, toggles=5)
        if took < BOUNCE_S:
            return t
        spent.append(took)
        sim.release(START)
        back_to_idle(sim, table)
    raise AssertionError(f"5 toggles never came within {BOUNCE_S * 1000:g} ms: {spent}")


def test_a_bouncing_contact_is_one_press(released: SimChip, idle: Daemon) -> None:
    sim = released
    with watching(sim, [BUZZER]) as watch:
        t = bounced(sim, idle)
        pulses = watch.wait_pulses(BUZZER, t, 4)
        sim.release(START)
        assert lengths_match(pulses[:3], PRE_SIGNAL), pulses
        assert lengths_match(pulses[3:], pattern("start")), pulses
    kinds = [e["signal"] for e in drain(idle) if e["type"] == "signal"]
    assert kinds == ["pre_signal", "start"], kinds  # no second press: no cancel, no pause
    assert state(idle) == "running"


def test_leds_and_horn_follow_the_phase(released: SimChip, idle: Daemon) -> None:
    sim = released
    with watching(sim, [HORN, LED_RUNNING, LED_LAST_30]) as watch:
        assert (sim.value(LED_RUNNING), sim.value(LED_LAST_30), sim.value(HORN)) == (0, 0, 0)
        pressed = sim.tap(START)
        running = watch.wait_edge(LED_RUNNING, 1, pressed)
        last_30 = watch.wait_edge(LED_LAST_30, 1, pressed)  # 14 s <= 30 s: at once
        assert abs(running - pressed - LEAD_S) <= AT_ONCE_S, running - pressed
        assert abs(last_30 - running) <= AT_ONCE_S, last_30 - running
        final = idle.wait_signal("final")
        assert final["remaining_s"] == 0
        horn = watch.wait_pulses(HORN, pressed, 1)
        assert lengths_match(horn, (0.5,)), horn
        ended = watch.wait_edge(LED_RUNNING, 0, running)
        assert abs(horn[0][0] - (ended - pressed)) <= AT_ONCE_S, (horn, ended - pressed)
        assert abs(ended - running - PERIOD_S) <= AT_ONCE_S, ended - running
        sim.wait_value(LED_LAST_30, 0)
        assert (sim.value(LED_RUNNING), sim.value(HORN)) == (0, 0)


def test_faceoff_guard_and_passive_leds(released: SimChip, idle: Daemon) -> None:
    sim = released
    with watching(sim, [LED_GUARD, LED_PASSIVE, BUZZER]) as watch:
        pressed = sim.tap(START)
        # The start signal is a faceoff: the guard LED lights with it, lit while a goal
        # cannot count (ITHF 5.6), and goes out with the status after the guard, at the
        # clock's next shown second at the latest.
        lit = watch.wait_edge(LED_GUARD, 1, pressed)
        out = watch.wait_edge(LED_GUARD, 0, lit)
        assert abs(lit - pressed - LEAD_S) <= AT_ONCE_S, lit - pressed
        assert GUARD_S - AT_ONCE_S <= out - lit <= GUARD_S + 1 + AT_ONCE_S, out - lit
        faceoff = sim.tap(FACEOFF)  # a marked faceoff starts it again
        lit = watch.wait_edge(LED_GUARD, 1, faceoff)
        assert lit - faceoff <= AT_ONCE_S, lit - faceoff
        passive = sim.tap(PASSIVE_HOME)
        warned = watch.wait_edge(LED_PASSIVE, 1, passive)
        assert abs(warned - passive - PASSIVE_S) <= AT_ONCE_S, warned - passive  # ITHF 8.3
        warning = watch.wait_pulses(BUZZER, warned - AT_ONCE_S, 4)
        assert lengths_match(warning, pattern("passive_warning")), warning
        cleared = sim.tap(PASSIVE_HOME)  # the same button again clears the count
        assert watch.wait_edge(LED_PASSIVE, 0, cleared) - cleared <= AT_ONCE_S
