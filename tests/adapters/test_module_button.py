"""A rule module's button needs no line outside the module (issue 44 item 5): the test-only
`Laps` (tests/laps_module.py) declares a LAP button beside its `lap` command, and, registered
by the test alone as `core/rules/__init__.py` registers a module, it has its `[gpio] lap_pin`
and `[keypad] lap` config keys (with their defaults, their meaning in the annotated config
and the config's checks), and a press on its pin (gpiozero's MockFactory) or its key (the
keypad's stand-in device) takes a lap, with no edit to `ports.py`, `core/buttons.py`, the
config or an adapter.

Fails on the old code: `[gpio]` and `[keypad]` had a fixed field per button and refused
`lap_pin` as an unknown key, and the header and the keypad bound only `core.buttons.BUTTONS`
through `ports.button_bindings`' own table."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from gpiozero.pins import mock

from tests.adapters.test_keypad import NAME, Table, evdev
from tests.conftest import Recorder, require, run_virtual
from tests.laps_module import LAP_KEY, LAP_PIN, laps_profile, register
from timerd import config
from timerd.adapters import keypad as keypad_mod
from timerd.adapters.gpio import GpioBoard
from timerd.adapters.keypad import Keypad
from timerd.app import attach
from timerd.config.reference import annotated
from timerd.config.schema import SchemaError
from timerd.core.match import Match
from timerd.service import Service


def test_a_modules_button_has_its_config_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SchemaError, match=r"gpio.lap_pin: unknown key `lap_pin`"):
        config.load(None, ["gpio.lap_pin=18"])  # not registered: no such button
    register(monkeypatch)
    cfg = config.load(None, [])
    assert cfg.gpio.buttons["lap"] == LAP_PIN
    assert cfg.keypad.buttons["lap"] == (LAP_KEY,)
    assert config.load(None, ["gpio.lap_pin=18"]).gpio.buttons["lap"] == 18
    assert config.load(None, ['gpio.lap_pin="none"']).gpio.buttons["lap"] is None
    assert config.load(None, ["keypad.lap=[]"]).keypad.keys().get("lap") is None
    # The config's own checks hold for it: a pin taken twice, a key that is not a key name.
    with pytest.raises(SchemaError, match=r"gpio.lap_pin = 17: pin already used by "
                                          r"start_pause_pin"):
        config.load(None, ["gpio.lap_pin=17"])
    with pytest.raises(SchemaError, match=r"keypad.lap\[0\] = 'KEY_KP7': already the key of "
                                          r"goal_home"):
        config.load(None, ['keypad.lap=["KEY_KP7"]'])
    with pytest.raises(SchemaError, match=r"gpio.lap_pim: unknown key `lap_pim`; did you mean "
                                          r"`lap_pin`\?"):
        config.load(None, ["gpio.lap_pim=18"])
    text = annotated(cfg)
    assert "# The LAP button: a lap is taken.\n# a whole number or \"none\"; default 21; BCM " \
           "pins on the 40-pin header are 0 to 27\nlap_pin = 21\n" in text
    assert "# Keys for the LAP button: a lap is taken.\n" in text
    assert 'lap = ["KEY_KP1"]\n' in text
    assert "lap_pin = 21" in cfg.to_toml()


def test_a_press_on_a_modules_pin_takes_a_lap(mock_factory, monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    register(monkeypatch)
    cfg = config.load(None, [])

    async def main() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        monkeypatch.setattr(mock, "monotonic", loop.time)
        service = Service(Match(laps_profile(tmp_path)))
        board = GpioBoard(cfg.gpio, cfg.signals, service, mock_factory)
        attach(service, board)
        task = asyncio.create_task(service.run())
        await asyncio.sleep(0)
        before = service.status().laps
        pin = mock_factory.pin(LAP_PIN)
        for level in (pin.drive_low, pin.drive_high):  # from gpiozero's thread, as on a Pi
            thread = threading.Thread(target=level)
            thread.start()
            thread.join()
            await asyncio.sleep(0.1)
        after = service.status().laps
        task.cancel()
        board.close()
        return before, after

    assert run_virtual(main) == (0, 1)


def test_a_modules_key_on_the_keypad_takes_a_lap(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    require(evdev is not None, "python-evdev (pip install 'timerd[keypad]')")
    register(monkeypatch)
    cfg = config.load(None, [f'keypad.device="{NAME}"'])

    async def main() -> tuple[int, int]:
        service = Service(Match(laps_profile(tmp_path)))
        pad = Keypad(cfg.keypad, service, cfg.gpio.debounce_ms / 1000, cfg.gpio.long_press_s)
        attach(service, pad)
        table = Table(service, pad, Recorder(asyncio.get_running_loop()))
        monkeypatch.setattr(keypad_mod, "lookup", table.lookup)
        task = asyncio.create_task(service.run())
        async with pad:
            await asyncio.sleep(0.01)
            before = service.status().laps
            await table.press(LAP_KEY)
            after = service.status().laps
        task.cancel()
        return before, after

    assert run_virtual(main) == (0, 1)
