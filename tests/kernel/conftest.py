"""The kernel tier's fixtures: the gpio-sim chip, its switches left open after each test.

These tests run only inside the VM that `tests/kernel/run` boots (TIMERD_KERNEL_VM=1, set by
tests/kernel/guest); anywhere else they are deselected, and the runner says why the tier did
not run. Everything here is real time: margins are generous, as QEMU's emulator (TCG) is slow
and the machine is shared.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.kernel.sim import SimChip

IN_VM = os.environ.get("TIMERD_KERNEL_VM") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if IN_VM:
        return
    kept = [i for i in items if i.get_closest_marker("kernel") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept


@pytest.fixture(scope="session")
def sim() -> Iterator[SimChip]:
    """The header: gpio-sim chip 0, labelled as a Pi 4's, 28 lines named GPIO0..GPIO27."""
    chip = SimChip.make("timerd-pi", "pinctrl-bcm2711")
    assert chip.number == 0, f"the sim chip is gpiochip{chip.number}, lgpio's default is 0"
    yield chip
    chip.remove()


@pytest.fixture
def released(sim: SimChip) -> Iterator[SimChip]:
    """The chip with every switch open (a test that fails mid-press leaves none closed)."""
    yield sim
    for pin in range(28):
        sim.release(pin)
