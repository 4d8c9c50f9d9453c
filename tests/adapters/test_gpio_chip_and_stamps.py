"""`[gpio] chip` (a number or a label) and the kernel-stamped press times (issue 29) where no
kernel is at hand; the kernel tier (tests/kernel/) drives both on real GPIO lines."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from timerd import config
from timerd.adapters.gpio import _stamped_edge, lgpio_chip
from timerd.config.schema import SchemaError
from timerd.ports import STAMP_TRUST_S


@pytest.mark.parametrize(("text", "chip"), [("", "auto"), ("chip = 4", 4),
                                            ('chip = "pinctrl-rp1"', "pinctrl-rp1")])
def test_the_chip_is_a_number_or_a_label(tmp_path: Path, text: str, chip: int | str) -> None:
    path = tmp_path / "timerd.toml"
    path.write_text(f"[gpio]\n{text}\n")
    assert config.load(path, []).gpio.chip == chip


@pytest.mark.parametrize(("value", "says"), [("-1", "chip = -1"), ("true", "gpio.chip")])
def test_a_chip_that_cannot_be_is_refused(value: str, says: str) -> None:
    with pytest.raises(SchemaError) as caught:
        config.load(None, [f"gpio.chip={value}"])
    assert any(says in problem for problem in caught.value.problems), caught.value.problems


def test_auto_and_a_number_need_no_lookup() -> None:
    assert lgpio_chip("auto") is None
    assert lgpio_chip(4) == 4


class Loop:
    """The service's side of a stamped edge: its clock (ahead of monotonic by `offset`) and
    the edges handed over."""

    def __init__(self, offset: float) -> None:
        self.offset = offset
        self.edges: list[tuple[str, bool, float | None]] = []

    def now(self) -> float:
        return time.monotonic() + self.offset

    def edge_from_thread(self, name: str, pressed: bool, at: float | None = None) -> None:
        self.edges.append((name, pressed, at))


def test_a_kernel_stamp_is_mapped_onto_the_loops_clock() -> None:
    loop = Loop(offset=1000.0)
    edge = 0.004  # 4 ms before the callback ran
    _stamped_edge(loop, "start_pause")(time.monotonic() - edge, 0)  # type: ignore[arg-type]
    ((name, pressed, at),) = loop.edges
    assert (name, pressed) == ("start_pause", True)  # low is pressed
    assert at is not None
    assert loop.now() - edge - 0.05 < at <= loop.now() - edge + 0.001


def test_a_stamp_on_another_clock_falls_back_to_the_callbacks_time() -> None:
    loop = Loop(offset=0.0)
    changed = _stamped_edge(loop, "reset")  # type: ignore[arg-type]
    changed(time.time(), 1)  # a realtime stamp: decades away from monotonic
    changed(time.monotonic() - STAMP_TRUST_S - 1, 0)
    changed(time.monotonic(), 2)  # lgpio's watchdog report: no edge
    assert loop.edges == [("reset", False, None), ("reset", True, None)]
