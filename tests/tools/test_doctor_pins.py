"""`timerd doctor`'s pin checks claim each button as a plain input, read once, never watched
for edges (issue 29's kernel tier: on lgpio, giving back a line with edge events raced lgpio's
alert thread and the close raised 'GPIO busy', a traceback instead of a report)."""

from __future__ import annotations

from gpiozero.pins.mock import MockFactory

from timerd.config import GpioConfig
from timerd.tools import doctor


def test_doctor_reads_each_button_without_watching_its_edges() -> None:
    factory = MockFactory()
    gpio = GpioConfig()
    inputs = {key for key in gpio.pins() if not key.startswith(("buzzer", "led", "horn"))}
    seen = []
    for check in doctor._check_pins(gpio, factory):  # each device is open at its check
        key = check.message.split(":")[0]
        if key in inputs:
            pin = factory.pin(gpio.pins()[key])
            assert pin.when_changed is None, f"{key}: edge events requested"
            assert check.level == doctor.OK, check
            assert "reads released" in check.message, check
            seen.append(key)
    assert sorted(seen) == sorted(inputs)

