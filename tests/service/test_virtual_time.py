"""The tests' virtual clock (`timerd.timebase`) always moves when a timer waits."""

from __future__ import annotations

from timerd.timebase import WarpClock


def test_a_wait_shorter_than_the_clocks_step_still_moves_time() -> None:
    """Fails on the old code: at 4000 s, 4000.0 + 1e-13 == 4000.0, so a timer due 1e-13 s
    ahead never came due; a service woken that early re-armed for the same instant for ever
    (a full run of the suite once spun for minutes in Service._arm)."""
    clock = WarpClock(None)
    clock.advance(4000.0)
    before = clock.time()
    clock.advance(1e-13)
    assert clock.time() > before
    clock.advance(0.0)
    assert clock.time() > before  # and a zero wait does not move it back or stall

