"""The USB keypad's keys as the header's buttons (issue 29 item 3), on the host: python-evdev's
own events, read by the adapter's loop reader from a stand-in device (a pipe is its
descriptor), the service on virtual time. The real device (uinput, the grab, unplugging
through the kernel) is the kernel tier's: tests/kernel/test_keypad.py.

The ITHF profile: the start signal is at t=20 after START (pre-signal lead 20 s), a forfeit
is possible from 30 s of play.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.conftest import Recorder, require, run_virtual, said
from tests.keypad_example import keypad_example
from timerd import config
from timerd.adapters import keypad as keypad_mod
from timerd.adapters.keypad import PRESS_BURST, Keypad
from timerd.app import attach
from timerd.config import profiles
from timerd.config.schema import SchemaError
from timerd.core.effects import Phase, Signal
from timerd.core.match import Match
from timerd.core.score import Ending, Side
from timerd.service import Service
from timerd.tools import doctor

try:
    import evdev
    from evdev import ecodes
except ImportError:  # the `keypad` extra is not installed: `require` says so
    evdev = None

NAME = "Test Keypad"
HOLD = config.Config().gpio.long_press_s


@pytest.fixture(autouse=True)
def _evdev() -> None:
    require(evdev is not None, "python-evdev (pip install 'timerd[keypad]')")


class StandIn:
    """An input device as the adapter uses evdev's InputDevice: a descriptor the loop watches
    (a pipe's read end), `read()` of one batch of events per byte written (BlockingIOError
    when there is none, as evdev raises), and ENODEV once unplugged."""

    def __init__(self, path: str = "/dev/input/event9") -> None:
        self.name, self.path = NAME, path
        self.fd, self._w = os.pipe()
        os.set_blocking(self.fd, False)
        self.batches: list[list[Any]] = []
        self.gone = self.grabbed = self.closed = False
        self.down: set[int] = set()  # the keys down, as the kernel's state says (EVIOCGKEY)

    def send(self, *keys: tuple[str, int], stamp: float | None = None) -> None:
        """Key events, (name, value), in one batch with the kernel's SYN after them."""
        t = time.monotonic() if stamp is None else stamp
        sec, usec = int(t), int(t % 1 * 1_000_000)
        batch = [evdev.InputEvent(sec, usec, ecodes.EV_KEY, getattr(ecodes, k), v)
                 for k, v in keys]
        self.batches.append([*batch, evdev.InputEvent(sec, usec, ecodes.EV_SYN, 0, 0)])
        os.write(self._w, b".")

    def drop(self, *lost: tuple[str, int], cut: str = "KEY_KP1") -> None:
        """The kernel's buffer overflowed: the events `lost` with it never reach the reader
        (only the device's state has them); it reads a packet cut short (`cut` down), then
        SYN_DROPPED, then the packet's tail (`cut` up) up to the next SYN_REPORT, which it
        must drop too (the evdev protocol)."""
        t = time.monotonic()
        sec, usec = int(t), int(t % 1 * 1_000_000)
        for key, value in lost:
            (self.down.add if value else self.down.discard)(getattr(ecodes, key))
        code = getattr(ecodes, cut)
        self.batches.append([evdev.InputEvent(sec, usec, ecodes.EV_KEY, code, 1),
                             evdev.InputEvent(sec, usec, ecodes.EV_SYN, ecodes.SYN_DROPPED, 0)])
        self.batches.append([evdev.InputEvent(sec, usec, ecodes.EV_KEY, code, 0),
                             evdev.InputEvent(sec, usec, ecodes.EV_SYN, ecodes.SYN_REPORT, 0)])
        os.write(self._w, b"..")

    def active_keys(self) -> list[int]:
        return sorted(self.down)

    def unplug(self) -> None:
        self.gone = True
        os.write(self._w, b".")

    def read(self) -> Iterator[Any]:
        os.read(self.fd, 1)
        if self.gone:
            raise OSError(errno.ENODEV, "No such device")
        return iter(self.batches.pop(0))

    def grab(self) -> None:
        self.grabbed = True

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self.fd)
            os.close(self._w)


class Table:
    """A match with the keypad of the README's example (or `overrides`), its device found by
    `lookup` as the script says: `plugged` the stand-in, or None (not there)."""

    def __init__(self, service: Service, pad: Keypad, recorder: Recorder) -> None:
        self.service, self.pad, self.recorder = service, pad, recorder
        self.device: StandIn | None = StandIn()
        self.lookups = 0
        self.choice = ""  # which of several devices of its name `lookup` says it is

    def lookup(self, wanted: str, keys: Any) -> tuple[Any, str]:
        self.lookups += 1
        if self.device is None or self.device.closed:
            return None, f"no input device is named {wanted!r}"
        return self.device, self.choice

    async def press(self, key: str, hold_s: float = 0.1) -> None:
        assert self.device is not None
        self.device.send((key, 1))
        await asyncio.sleep(hold_s)
        self.device.send((key, 0))
        await asyncio.sleep(0.1)

    @property
    def phase(self) -> Phase:
        return self.service.match.phase

    def signals(self) -> list[str]:
        return [e.kind.value for _, e, _ in self.recorder.seen if isinstance(e, Signal)]


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """hw/README.md's numeric keypad, as a config file."""
    path = tmp_path / "timerd.toml"
    path.write_text(keypad_example())
    return path


def at_table(monkeypatch: pytest.MonkeyPatch, example: Path, script: Callable[[Table], Any],
             *overrides: str) -> Any:
    """Run `script` at a table with the example's keypad (its device: `NAME`, found)."""
    async def main() -> Any:
        loop = asyncio.get_running_loop()
        cfg = config.load(example, [f'keypad.device="{NAME}"', *overrides])
        service = Service(Match(profiles.load("ithf")))
        pad = Keypad(cfg.keypad, service, cfg.gpio.debounce_ms / 1000, cfg.gpio.long_press_s)
        attach(service, pad)
        recorder = Recorder(loop)
        service.outputs.append(recorder)
        table = Table(service, pad, recorder)
        monkeypatch.setattr(keypad_mod, "lookup", table.lookup)
        task = asyncio.create_task(service.run())
        async with pad:
            await asyncio.sleep(0.01)
            out = await script(table)
        task.cancel()
        return out

    return run_virtual(main)


def test_the_readme_example_maps_every_button(example: Path) -> None:
    cfg = config.load(example, [])
    assert cfg.keypad.device.startswith("/dev/input/by-id/")
    assert cfg.keypad.keys() == {
        "start_pause": ("KEY_KPENTER",), "reset": ("KEY_KPMINUS",), "goal_home": ("KEY_KP7",),
        "goal_away": ("KEY_KP9",), "faceoff": ("KEY_KP5",), "undo": ("KEY_KPASTERISK",),
        "passive_home": ("KEY_KP4",), "passive_away": ("KEY_KP6",),
        "line_change": ("KEY_KPPLUS",)}


def test_enter_starts_the_pre_signal_dated_by_the_kernels_stamp(monkeypatch, example) -> None:
    async def script(t: Table) -> tuple[Phase, list[tuple[float, str]], bool]:
        assert t.device is not None
        # The key went down 0.2 s before it is read: the match is timed from the key.
        t.recorder.t0 = t.service.now()
        t.device.send(("KEY_KPENTER", 1), stamp=time.monotonic() - 0.2)
        await asyncio.sleep(0.05)
        t.device.send(("KEY_KPENTER", 0))
        await asyncio.sleep(0.5)
        phase = t.phase
        await asyncio.sleep(20)
        heard = [(at, e.kind.value) for at, e, _ in t.recorder.seen if isinstance(e, Signal)]
        return phase, heard, t.device.grabbed

    phase, heard, grabbed = at_table(monkeypatch, example, script)
    assert phase is Phase.PRE_SIGNAL
    assert heard[0][1] == "pre_signal"
    # The start signal 20 s (ITHF's pre-signal lead) after the key went down, not after it
    # was read.
    start = next(at for at, kind in heard if kind == "start")
    assert start == pytest.approx(19.8, abs=0.02)
    assert grabbed


def test_reset_acts_only_held_long_and_a_short_press_hints(monkeypatch, example) -> None:
    async def script(t: Table) -> tuple[Phase, Phase, list[str]]:
        await t.press("KEY_KPENTER")
        await asyncio.sleep(25)  # running
        await t.press("KEY_KPENTER")  # paused
        await t.press("KEY_KPMINUS", hold_s=0.5)
        short = t.phase
        await t.press("KEY_KPMINUS", hold_s=HOLD + 0.2)
        return short, t.phase, said(e for _, e, _ in t.recorder.seen)

    short, after, notices = at_table(monkeypatch, example, script)
    assert short is Phase.PAUSED
    assert after is Phase.IDLE
    assert f"hold RESET for {HOLD:g} s to reset" in notices


def test_reset_with_goal_home_held_is_the_forfeit_of_away(monkeypatch, example) -> None:
    async def script(t: Table) -> Any:
        assert t.device is not None
        await t.press("KEY_KPENTER")
        await asyncio.sleep(60)
        t.device.send(("KEY_KPMINUS", 1))
        await asyncio.sleep(0.3)
        t.device.send(("KEY_KP7", 1))
        await asyncio.sleep(HOLD + 0.2)
        t.device.send(("KEY_KP7", 0), ("KEY_KPMINUS", 0))
        await asyncio.sleep(0.1)
        return t.service.match

    match = at_table(monkeypatch, example, script)
    assert match.result is not None
    assert (match.result.how, match.result.side, match.result.winner) == (
        Ending.FORFEIT, Side.AWAY, Side.HOME)


def test_goal_keys_score_and_autorepeat_is_no_press(monkeypatch, example) -> None:
    async def script(t: Table) -> dict[str, int]:
        assert t.device is not None
        await t.press("KEY_KPENTER")
        await asyncio.sleep(25)
        t.device.send(("KEY_KP7", 1), ("KEY_KP7", 2), ("KEY_KP7", 2))  # held: it repeats
        await asyncio.sleep(0.6)
        t.device.send(("KEY_KP7", 2), ("KEY_KP7", 0))
        await asyncio.sleep(6)  # the face-off guard (ITHF 5.6) is over
        await t.press("KEY_KP9")
        return dict(t.service.match.status(t.service.now()).score)

    assert at_table(monkeypatch, example, script) == {"home": 1, "away": 1}


def test_two_keys_of_one_button_are_one_button(monkeypatch, example) -> None:
    async def script(t: Table) -> Phase:
        assert t.device is not None
        t.device.send(("KEY_KPENTER", 1))
        await asyncio.sleep(0.1)
        t.device.send(("KEY_KP0", 1))
        await asyncio.sleep(0.1)
        t.device.send(("KEY_KPENTER", 0))  # KP0 still holds it down: no release yet
        await asyncio.sleep(0.1)
        t.device.send(("KEY_KPENTER", 1))  # so this is no second press
        await asyncio.sleep(0.1)
        t.device.send(("KEY_KPENTER", 0), ("KEY_KP0", 0))
        await asyncio.sleep(0.1)
        return t.phase

    assert at_table(monkeypatch, example, script,
                    'keypad.start_pause=["KEY_KPENTER", "KEY_KP0"]') is Phase.PRE_SIGNAL


def test_a_flood_of_presses_is_cut_to_the_rate(monkeypatch, caplog, example) -> None:
    async def script(t: Table) -> tuple[int, dict[str, Any]]:
        assert t.device is not None
        t.device.send(*[("KEY_KP5", v) for _ in range(50) for v in (1, 0)])
        await asyncio.sleep(0.1)
        return t.pad.presses_dropped, t.service.status_dict()["keypad"]

    with caplog.at_level(logging.WARNING, "timerd.keypad"):
        dropped, status = at_table(monkeypatch, example, script)
    assert dropped == 50 - PRESS_BURST
    assert status["presses_dropped"] == dropped
    assert sum("presses" in r.getMessage() for r in caplog.records) == 1


def test_unplugged_the_match_goes_on_held_keys_let_go_and_it_is_found_again(
        monkeypatch, caplog, example) -> None:
    async def script(t: Table) -> dict[str, Any]:
        old = t.device
        assert old is not None
        await t.press("KEY_KPENTER")
        await asyncio.sleep(25)
        await t.press("KEY_KPENTER")  # paused
        old.send(("KEY_KPMINUS", 1))  # RESET held as the cable is pulled
        await asyncio.sleep(0.2)
        t.device = None
        old.unplug()
        await asyncio.sleep(HOLD + 3)
        seen: dict[str, Any] = {"gone": t.service.status_dict()["keypad"], "phase": t.phase,
                                "closed": old.closed, "looked": t.lookups}
        t.device = StandIn("/dev/input/event10")  # plugged in again
        await asyncio.sleep(1.5)
        seen["back"] = t.service.status_dict()["keypad"]
        await t.press("KEY_KPENTER")
        seen["resumed"] = t.phase
        return seen

    with caplog.at_level(logging.INFO, "timerd.keypad"):
        seen = at_table(monkeypatch, example, script)
    assert seen["phase"] is Phase.PAUSED  # RESET let go when the keypad went: no reset
    assert seen["closed"]
    gone = seen["gone"]
    assert (gone["connected"], gone["path"]) == (False, None)
    assert gone["missing"].startswith("no input device is named") or "lost" in gone["missing"]
    assert seen["looked"] >= 4  # every retry_s (1 s)
    back = seen["back"]
    assert (back["connected"], back["path"], back["missing"]) == (
        True, "/dev/input/event10", None)
    assert seen["resumed"] is Phase.RUNNING
    text = caplog.text
    assert "lost (No such device)" in text
    assert "grabbed" in text


def test_without_python_evdev_it_says_so_and_the_match_goes_on(monkeypatch, caplog,
                                                              example) -> None:
    monkeypatch.setitem(sys.modules, "evdev", None)  # `import evdev` raises ImportError

    async def script(t: Table) -> tuple[dict[str, Any], int]:
        return t.service.status_dict()["keypad"], t.lookups

    with caplog.at_level(logging.WARNING, "timerd.keypad"):
        status, looked = at_table(monkeypatch, example, script)
    assert status["connected"] is False
    assert "python-evdev is not installed" in status["missing"]
    assert looked == 0
    assert "timerd[keypad]" in caplog.text


def test_doctor_says_a_missing_keypad_is_missing_and_lists_what_is_there(monkeypatch) -> None:
    cfg = config.load(None, [f'keypad.device="{NAME}"'])
    monkeypatch.setattr(keypad_mod, "devices", lambda: [("/dev/input/event3", "Other Mouse")])
    checks = doctor.check_keypad(cfg)
    assert [c.level for c in checks] == [doctor.FAIL]
    assert f"no input device is named {NAME!r}" in checks[0].message
    assert "'Other Mouse' at /dev/input/event3" in checks[0].message
    assert doctor.check_keypad(config.load(None, [])) == []  # no keypad, no line


@pytest.mark.parametrize(("override", "problem"), [
    ('keypad.reset=["KEY_KPMINU"]', "reset[0] = 'KEY_KPMINU': not a key the kernel has; did "
                                    "you mean KEY_KPMINUS?"),
    ('keypad.faceoff=["kp5"]', "faceoff[0] = 'kp5': a key name is KEY_... or BTN_..."),
    ('keypad.undo=["KEY_KP7"]', "undo[0] = 'KEY_KP7': already the key of goal_home"),
    ("keypad.retry_s=0", "retry_s = 0: must be longer than 0 s"),
    ("keypad.retry_s=120", "retry_s = 120: at most 60 s"),
])
def test_a_bad_key_name_or_retry_is_a_config_error(override: str, problem: str) -> None:
    with pytest.raises(SchemaError) as caught:
        config.load(None, [f'keypad.device="{NAME}"', override])
    assert any(p.startswith(f"keypad.{problem}") for p in caught.value.problems), \
        caught.value.problems


def test_a_game_controllers_buttons_are_keys_too() -> None:
    cfg = config.load(None, [f'keypad.device="{NAME}"', 'keypad.start_pause=["BTN_SOUTH"]',
                             'keypad.reset=["BTN_EAST"]'])
    pad = Keypad(cfg.keypad, Service(Match(profiles.load("ithf"))), 0.03, HOLD)
    pad.map_keys(ecodes)
    assert pad._codes[ecodes.BTN_SOUTH] == "keypad_start_pause"
    assert pad._codes[ecodes.BTN_EAST] == "keypad_reset"
    assert set(pad.bindings) >= {"keypad_start_pause", "keypad_reset"}
    assert [c.buttons for c in pad.chords] == [("keypad_reset", "keypad_goal_home"),
                                               ("keypad_reset", "keypad_goal_away")]


class Node:
    """An input device node as evdev.InputDevice opens it: a name and the keys it has."""

    nodes: ClassVar[dict[str, tuple[str, list[int]]]] = {}

    def __init__(self, path: str) -> None:
        self.path = path
        self.name, self._keys = self.nodes[path]
        self.closed = False

    def capabilities(self) -> dict[int, list[int]]:
        return {ecodes.EV_KEY: self._keys}

    def close(self) -> None:
        self.closed = True


def test_of_the_devices_with_its_name_the_one_with_its_keys_is_taken(monkeypatch) -> None:
    """A USB keypad often shows as two devices of one name: the keys and the media keys."""
    Node.nodes = {"/dev/input/event1": ("USB Keypad", [ecodes.KEY_VOLUMEUP]),
                  "/dev/input/event2": ("USB Keypad", [ecodes.KEY_KPENTER, ecodes.KEY_KP7]),
                  "/dev/input/event3": ("Mouse", [ecodes.BTN_LEFT])}
    monkeypatch.setattr(evdev, "InputDevice", Node)
    monkeypatch.setattr(keypad_mod.glob, "glob", lambda _: sorted(Node.nodes))
    keys = config.KeypadConfig().key_names()
    device, why = keypad_mod.lookup("USB Keypad", keys)
    assert (device.path, why) == ("/dev/input/event2", "")
    del Node.nodes["/dev/input/event2"]
    device, why = keypad_mod.lookup("USB Keypad", keys)
    assert device is None
    assert why.startswith("/dev/input/event1 named 'USB Keypad' has none of the keys")


def test_a_release_the_kernel_dropped_is_read_back_and_reset_never_fires(
        monkeypatch, caplog, example) -> None:
    """Issue 43 item 5: after SYN_DROPPED the keys are read back from the device. Fails on
    the old code, which took the events around the drop as they came: a goal from a packet
    cut short; RESET's release lost, RESET stayed held and its long press reset the paused
    match."""
    async def script(t: Table) -> dict[str, Any]:
        assert t.device is not None
        await t.press("KEY_KPENTER")
        await asyncio.sleep(25)
        t.device.drop(cut="KEY_KP9")  # a goal key's packet cut short by the drop
        await asyncio.sleep(0.1)
        score = dict(t.service.match.status(t.service.now()).score)
        await t.press("KEY_KPENTER")  # paused
        t.device.down.add(ecodes.KEY_KPMINUS)
        t.device.send(("KEY_KPMINUS", 1))  # RESET down...
        await asyncio.sleep(0.2)
        t.device.drop(("KEY_KPMINUS", 0))  # ...and its release lost with the drop
        await asyncio.sleep(HOLD + 1)
        seen = {"released": t.phase, "status": t.service.status_dict()["keypad"],
                "cut": score}
        t.device.drop(("KEY_KPMINUS", 1))  # RESET down, seen only in the device's state
        await asyncio.sleep(HOLD + 1)
        seen["unseen"] = t.phase
        t.device.down.discard(ecodes.KEY_KPMINUS)
        t.device.send(("KEY_KPMINUS", 0))  # its release: of no press this side saw
        await asyncio.sleep(0.1)
        seen["after release"] = t.phase
        await t.press("KEY_KPMINUS", hold_s=HOLD + 0.2)  # a real long press still resets
        seen["reset"] = t.phase
        return seen

    with caplog.at_level(logging.WARNING, "timerd.keypad"):
        seen = at_table(monkeypatch, example, script)
    assert seen["cut"] == {"home": 0, "away": 0}  # a packet cut short is no press
    assert seen["released"] is Phase.PAUSED
    assert seen["status"]["resyncs"] == 2
    assert seen["unseen"] is Phase.PAUSED
    assert seen["after release"] is Phase.PAUSED
    assert seen["reset"] is Phase.IDLE
    assert "SYN_DROPPED" in caplog.text
    assert "released: keypad_reset" in caplog.text


def test_a_device_that_floods_is_paused_and_its_keys_read_back(monkeypatch, caplog,
                                                               example) -> None:
    async def script(t: Table) -> dict[str, Any]:
        assert t.device is not None
        for _ in range(3 * keypad_mod.READ_BURST):  # autorepeat as fast as it can
            t.device.send(("KEY_KP5", 2))
        await asyncio.sleep(0.01)
        paused = {"pauses": t.pad.flood_pauses, "left": len(t.device.batches)}
        await asyncio.sleep(2)
        paused["after"] = len(t.device.batches)
        await t.press("KEY_KPENTER")
        paused["phase"] = t.phase
        paused["status"] = t.service.status_dict()["keypad"]
        return paused

    with caplog.at_level(logging.WARNING, "timerd.keypad"):
        seen = at_table(monkeypatch, example, script)
    # READ_BURST reads at once, then not read for FLOOD_PAUSE_S; then READS_PER_S a second.
    assert seen["pauses"] == 1
    assert seen["left"] == 2 * keypad_mod.READ_BURST
    assert seen["after"] == 0
    assert seen["phase"] is Phase.PRE_SIGNAL
    assert seen["status"]["flood_pauses"] >= 1
    assert "not read for" in caplog.text


def test_of_two_devices_of_one_name_the_first_in_numeric_order_is_taken_and_said(
        monkeypatch) -> None:
    """Fails on the old code, which took event10 (the first in string order)."""
    Node.nodes = {"/dev/input/event10": ("USB Keypad", [ecodes.KEY_KPENTER]),
                  "/dev/input/event2": ("USB Keypad", [ecodes.KEY_KPENTER])}
    monkeypatch.setattr(evdev, "InputDevice", Node)
    monkeypatch.setattr(keypad_mod.glob, "glob", lambda _: sorted(Node.nodes))
    device, why = keypad_mod.lookup("USB Keypad", config.KeypadConfig().key_names())
    assert device.path == "/dev/input/event2"
    assert why == ("the first in numeric order of 2 devices named 'USB Keypad' with its keys: "
                   "/dev/input/event2, /dev/input/event10")
    checks = doctor.check_keypad(config.load(None, ['keypad.device="USB Keypad"']))
    assert [c.level for c in checks] == [doctor.OK]
    assert checks[0].message.startswith(f"'USB Keypad' at /dev/input/event2 ({why}): ")


def test_the_status_says_which_device_of_its_name_was_taken(monkeypatch, example) -> None:
    async def script(t: Table) -> tuple[Any, Any]:
        old = t.device
        assert old is not None
        only = t.service.status_dict()["keypad"]["choice"]
        t.choice = "the first in numeric order of 2 devices named 'Test Keypad' with its keys"
        t.device = StandIn("/dev/input/event2")
        old.unplug()
        await asyncio.sleep(1.5)
        return only, t.service.status_dict()["keypad"]["choice"]

    only, chosen = at_table(monkeypatch, example, script)
    assert only is None
    assert chosen.startswith("the first in numeric order of 2 devices")
