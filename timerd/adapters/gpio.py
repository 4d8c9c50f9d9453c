"""Buttons, buzzers and status LEDs on the Pi's GPIO header, through gpiozero.

Wiring (BCM numbers are the defaults in `[gpio]`; the full table is in hw/README.md):

- Buttons (START/PAUSE on GPIO17, RESET on GPIO27) are momentary switches between the pin and
  ground. The Pi's internal pull-up holds the pin high; a press pulls it low (active low).
  gpiozero reports raw edges; debounce and long press are `timerd.core.buttons`.
- Buzzers (GPIO22) are active buzzers switched by an NPN transistor or a logic-level MOSFET,
  on while the pin is high (`buzzer_active_high = false` for a low-side module that is on
  while low). The event loop times every edge; gpiozero's `beep()` threads are not used.
- Scoring buttons, wired like the others: GOAL HOME (GPIO23), GOAL AWAY (GPIO24), FACEOFF
  (GPIO25), UNDO (GPIO12, acts only on a long press: a tap must not remove a goal), PASSIVE
  HOME (GPIO16) and PASSIVE AWAY (GPIO20) for the side holding the puck (ITHF 8.3). RESET held
  with GOAL HOME (or AWAY) is the ITHF 4.6 forfeit of the other side (`Chord`).
- Horn (GPIO26): a relay that switches a loud 12 V horn (ball hockey: period ends and the
  final signal). The relay coil is driven through an NPN transistor or MOSFET with a flyback
  diode, or by a ready-made relay module; the horn and its 12 V supply go through the relay's
  contacts only, never near the Pi. On while the pin is high; `horn_active_high = false` for
  the common modules that switch on while their input is low. Which signals blow it, and for
  how long, is the profile's `[horn]`; the event loop times each edge, like the buzzers'.
- LINE CHANGE button (GPIO7, wired like the others) starts the line-change stages (ISBHF
  404b). GPIO7 is SPI CE1: with SPI enabled, choose another pin.
- LEDs (running GPIO5, paused GPIO6, last 30 s GPIO13, faceoff guard GPIO19: lit while a goal
  cannot count (ITHF 5.6), passive warning GPIO4) through a 330 ohm resistor to ground, lit
  while the pin is high.
"""

from __future__ import annotations

import importlib
import logging
import re
import sys
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any

from timerd.config import GpioConfig, SignalOutput
from timerd.core.effects import Phase, Signal, SignalKind
from timerd.core.profile import Profile
from timerd.core.pulses import pulses
from timerd.ports import Cancellable, Control, Dispatch, button_bindings, kernel_stamp

log = logging.getLogger("timerd.gpio")

#: gpiozero's own order of real pin factories, with the class that implements each.
FACTORIES = {
    "lgpio": "gpiozero.pins.lgpio:LGPIOFactory",
    "rpigpio": "gpiozero.pins.rpigpio:RPiGPIOFactory",
    "pigpio": "gpiozero.pins.pigpio:PiGPIOFactory",
    "native": "gpiozero.pins.native:NativeFactory",
}

#: The last-30-s LED's flash while something cannot be written (a storage fault): on, off.
STORAGE_BLINK_S = 0.25
#: The last-30-seconds LED lights from this much time left (ITHF 4.4).
LAST_30_S = 30.0


#: Where Debian and Raspberry Pi OS install Python packages from apt (python3-lgpio).
SYSTEM_SITE = Path("/usr/lib/python3/dist-packages")


class NoGpio(RuntimeError):
    """No real pin factory could be loaded on this machine."""


class PinBusy(RuntimeError):
    """A line the config names is held by another program: the daemon cannot start on it."""


def line_holder(factory: Any, pin: int) -> str:
    """Who holds `pin`'s line, as far as this process can see: the consumer label the kernel
    keeps for it (set by the program that requested it) and the processes that have the
    chip's device open (only those of this user, unless root). Empty when nothing is known
    (a factory that is not lgpio)."""
    try:
        import lgpio  # noqa: PLC0415 (only with the lgpio factory)

        consumer = lgpio.gpio_get_line_info(factory._handle, pin)[4]
        chip = int(factory.chip)
    except Exception:  # noqa: BLE001 (another factory, or no lgpio: nothing to tell)
        return ""
    device = f"/dev/gpiochip{chip}"
    own = Path("/proc/self").resolve().name
    holders = []
    for proc in Path("/proc").glob("[0-9]*"):
        if proc.name == own:
            continue
        try:
            if any(str(fd.readlink()) == device for fd in (proc / "fd").iterdir()):
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
                holders.append(f"pid {proc.name} ({cmd[:60]})")
        except OSError:  # gone, or not ours to read
            continue
    who = f'consumer "{consumer}"' if consumer else "no consumer label"
    return who + (f"; {device} is open in " + ", ".join(holders) if holders else "")


def lgpio_hint() -> str:
    """The fix when lgpio is installed for the system (apt's python3-lgpio, in SYSTEM_SITE)
    but this virtual environment cannot see it: made with a plain `python3 -m venv`, the trap
    on a Pi. Empty when that is not the case (no venv, lgpio in the venv, none at all).

    The fix re-runs venv with --system-site-packages over the same directory: it only turns
    the setting on in pyvenv.cfg and keeps what is installed there.
    """
    venv = Path(sys.prefix)
    try:
        cfg = (venv / "pyvenv.cfg").read_text()
    except OSError:  # not a virtual environment: it sees the system's packages already
        return ""
    hidden = re.search(r"^include-system-site-packages\s*=\s*false", cfg, re.MULTILINE)
    own = any(venv.glob("lib/python3*/site-packages/lgpio*"))
    if not hidden or own or not any(SYSTEM_SITE.glob("lgpio*")):
        return ""
    home = re.search(r"^home\s*=\s*(.+)$", cfg, re.MULTILINE)
    python = Path(home.group(1).strip()) / "python3" if home else Path("python3")
    return (f"lgpio is installed for the system ({SYSTEM_SITE}) but the virtual environment "
            f"{venv} does not see the system's packages. Fix it with `{python} -m venv "
            f"--system-site-packages {venv}` (it keeps what is installed there).")


def lgpio_chip(chip: int | str) -> int | None:
    """`[gpio] chip` as lgpio's chip number: None for "auto" (gpiozero picks), a number as it
    is, a label the /dev/gpiochipN that carries it (NoGpio, naming the chips, when none)."""
    if isinstance(chip, int) or chip == "auto":
        return None if chip == "auto" else int(chip)
    import lgpio  # noqa: PLC0415 (only with the lgpio factory)

    seen = []
    for dev in sorted(Path("/dev").glob("gpiochip[0-9]*"), key=lambda p: int(p.name[8:])):
        number = int(dev.name[8:])
        try:
            handle = lgpio.gpiochip_open(number)
        except Exception as exc:  # noqa: BLE001 (no access, or gone)
            seen.append(f"{dev}: {exc}")
            continue
        try:
            label = lgpio.gpio_get_chip_info(handle)[3]
        finally:
            lgpio.gpiochip_close(handle)
        if label == chip:
            return number
        seen.append(f'{dev} "{label}"')
    raise NoGpio(f'no GPIO chip is labelled "{chip}" (gpio.chip); there are: '
                 + ("; ".join(seen) or "none"))


def chip_lines(factory: Any) -> tuple[int, str] | None:
    """The lgpio factory's chip: how many lines it has and its label (None for another
    factory, which has no chip to ask)."""
    try:
        import lgpio  # noqa: PLC0415 (only with the lgpio factory)

        info = lgpio.gpio_get_chip_info(factory._handle)
        return int(info[1]), str(info[3])
    except Exception:  # noqa: BLE001 (not lgpio)
        return None


def pin_factory(name: str, chip: int | str = "auto") -> Any:
    """The gpiozero pin factory `name` ("auto" tries lgpio, rpigpio, pigpio, native), on
    `chip` (`[gpio] chip`) for lgpio, the one factory that drives any chip.

    gpiozero never picks its mock factory by itself; simulate mode asks for "mock".
    """
    if name == "mock":
        from gpiozero.pins.mock import MockFactory  # noqa: PLC0415 (only in simulate mode)

        return MockFactory()
    tried = []
    for candidate in FACTORIES if name == "auto" else [name]:
        module, _, cls = FACTORIES[candidate].partition(":")
        try:
            factory = getattr(importlib.import_module(module), cls)
            if candidate == "lgpio" and (number := lgpio_chip(chip)) is not None:
                return factory(chip=number)
            return factory()
        except Exception as exc:  # noqa: BLE001 (each factory fails its own way off a Pi)
            tried.append(f"{candidate}: {exc}")
    raise NoGpio("no GPIO pin factory could be loaded (" + "; ".join(tried) + "). "
                 + (lgpio_hint() or "On a Raspberry Pi, install the lgpio factory: `sudo apt "
                    "install python3-lgpio`; on a machine without GPIO, run `timerd run "
                    "--simulate` for simulated pins."))


class Buzzers:
    """Sounds signals on the buzzer(s): the first edge at once, each later one a
    `call_exactly_at` of the service (a pulse lasts as its pattern says); nothing blocks."""

    def __init__(self, devices: list[Any], patterns: Mapping[SignalKind, SignalOutput],
                 service: Control) -> None:
        self.devices = devices
        self.patterns = patterns
        self.service = service
        self.muted = False
        self._pending: list[Cancellable] = []

    def signal(self, signal: Signal, dispatch: Dispatch) -> None:
        """A sound output (ports.py): the signal's pattern, its first edge now."""
        out = self.pattern(signal.kind)
        if out is None or not out.buzzer or self.muted:
            return
        self.sound(pulses(out.pattern_s, signal.beeps, out.gap_s))

    def pattern(self, kind: SignalKind) -> SignalOutput | None:
        return self.patterns.get(kind)

    def sound(self, edges: list[tuple[float, float]]) -> None:
        """Play (on, off) offsets from now; a new signal cuts the one still sounding."""
        self.silence()
        t0 = self.service.now()
        at = self.service.call_exactly_at
        for on, off in edges:
            if on <= 0:
                self._set(True)
            else:
                self._pending.append(at(t0 + on, partial(self._set, True)))
            self._pending.append(at(t0 + off, partial(self._set, False)))

    def silence(self) -> None:
        for handle in self._pending:
            handle.cancel()
        self._pending.clear()
        self._set(False)

    def _set(self, on: bool) -> None:
        for device in self.devices:
            device.value = on


class Horn(Buzzers):
    """The horn relay: the pulses of the profile the match is played under (its `[horn]`),
    looked up at each signal, so that a profile switch (a restored match reset under the
    profile asked for) takes the new profile's horn along."""

    def __init__(self, devices: list[Any], service: Control) -> None:
        super().__init__(devices, {}, service)
        self._profile: Profile | None = None

    def pattern(self, kind: SignalKind) -> SignalOutput | None:
        profile = self.service.profile
        if profile is not self._profile:
            self._profile, self.patterns = profile, horn_patterns(profile.horn)
        return self.patterns.get(kind)


class Leds:
    """Status LEDs: running, paused (an interruption, ITHF 10.1), the last 30 s, the faceoff
    guard (ITHF 5.6) and the passive-play warning (ITHF 8.3).

    A storage fault (`storage`: the journal, the results or the outbox cannot be written)
    flashes the last-30-s LED, STORAGE_BLINK_S on and off, whenever it is not lit for the
    last 30 s: the match goes on, but the operator sees that a crash would lose it
    (hw/README.md)."""

    def __init__(self, running: Any | None, paused: Any | None, last_30: Any | None,
                 faceoff_guard: Any | None = None, passive: Any | None = None) -> None:
        self.running, self.paused, self.last_30 = running, paused, last_30
        self.faceoff_guard, self.passive = faceoff_guard, passive
        self.storage_fault = False
        self._last_30_lit = False
        self.blinking = False
        #: What the running, paused, guard and passive LEDs were last set to: a dispatch
        #: (ten a second in the last 10 s) that changes none of them touches no pin.
        self._lit: tuple[bool, ...] | None = None

    def notify(self, dispatch: Dispatch) -> None:
        status = dispatch.status
        live = status.phase in (Phase.RUNNING, Phase.PAUSED)
        last_30_lit = live and not status.count_up and status.remaining_s <= LAST_30_S
        lit = (status.phase is Phase.RUNNING, status.phase is Phase.PAUSED,
               status.faceoff_guard_s is not None,
               any(left == 0 for left in status.passive.values()))
        if lit != self._lit:
            self._lit = lit
            for led, on in zip((self.running, self.paused, self.faceoff_guard, self.passive),
                               lit, strict=True):
                if led is not None:
                    led.value = on
        if last_30_lit != self._last_30_lit:
            self._last_30_lit = last_30_lit
            self._show_last_30()

    def storage(self, faults: Mapping[str, str]) -> None:
        """A DiskWriter fault listener: what cannot be written now (empty: all is well)."""
        self.storage_fault = bool(faults)
        self._show_last_30()

    def _show_last_30(self) -> None:
        led = self.last_30
        if led is None:
            return
        blink = self.storage_fault and not self._last_30_lit
        if blink and not self.blinking:
            led.blink(on_time=STORAGE_BLINK_S, off_time=STORAGE_BLINK_S)  # gpiozero's thread
        elif not blink and (self.blinking or led.value != self._last_30_lit):
            led.value = self._last_30_lit  # also ends a blink
        self.blinking = blink


class GpioBoard:
    """Every GPIO part from `[gpio]`, opened together and closed together (buzzers off)."""

    def __init__(self, config: GpioConfig, patterns: Mapping[SignalKind, SignalOutput],
                 service: Control, factory: Any) -> None:
        import gpiozero  # noqa: PLC0415 (keeps `timerd config` and the CLI light)

        self.factory = factory
        self._devices: list[Any] = []
        self._stamped: list[Callable[[float, int], None]] = []

        def claimed(key: str, pin: int, make: Callable[[], Any]) -> Any:
            """The device `make` opens on `pin`; PinBusy naming the line, the key and its
            holder when another program has the line."""
            try:
                dev = make()
            except Exception as exc:
                if "busy" not in str(exc).lower():
                    raise
                self._release()
                holder = line_holder(factory, pin)
                raise PinBusy(f"GPIO{pin} ({key}) is in use by another program"
                              + (f": {holder}" if holder else "")
                              + ". Stop that program, or choose another pin in [gpio]"
                              ) from None
            self._devices.append(dev)
            return dev

        def output(key: str, pin: int | None, active_high: bool = True) -> Any | None:
            if pin is None:
                return None
            return claimed(key, pin, partial(
                gpiozero.DigitalOutputDevice, pin, active_high=active_high,
                initial_value=False, pin_factory=factory))

        self.buttons: dict[str, Any] = {}
        # lgpio hands each edge over with the kernel's timestamp (CLOCK_MONOTONIC, the loop's
        # clock): a press is dated when the contact closed, not when the callback ran.
        kernel_stamps = type(factory).__name__ == "LGPIOFactory"
        for name, pin in config.buttons.items():  # every declared button's (`[gpio] NAME_pin`)
            if pin is None:
                continue
            # A plain input, not gpiozero's Button: Button runs a thread per button that wakes
            # ten times a second for `when_held`, which timerd never uses (bench: a third of
            # the daemon's CPU). Pull-up on, so active (pressed) is low.
            button = claimed(f"{name}_pin", pin, partial(
                gpiozero.DigitalInputDevice, pin, pull_up=True, bounce_time=None,
                pin_factory=factory))
            if kernel_stamps:
                # gpiozero keeps only a weak reference to a pin's callback: the board keeps it.
                self._stamped.append(_stamped_edge(service, name))
                button.pin.when_changed = self._stamped[-1]
            else:
                button.when_activated = _edge(service, name, True)
                button.when_deactivated = _edge(service, name, False)
            self.buttons[name] = button
        #: What each button does and the chords (two held together, the ITHF 4.6 forfeit):
        #: `timerd.app` hands them to the service.
        self.bindings, self.chords = button_bindings(
            self.buttons, config.debounce_ms / 1000, config.long_press_s)
        self.buzzers = Buzzers(
            [output(f"buzzer_pins[{i}]", p, config.buzzer_active_high)
             for i, p in enumerate(config.buzzer_pins)],
            patterns, service)
        horn = output("horn_pin", config.horn_pin, config.horn_active_high)
        self.horn = Horn([] if horn is None else [horn], service)
        self.leds = Leds(*(output(key, getattr(config, key)) for key in (
            "led_running_pin", "led_paused_pin", "led_last_30_pin", "led_faceoff_guard_pin",
            "led_passive_pin")))

    async def __aenter__(self) -> GpioBoard:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self.buzzers.silence()
        self.horn.silence()
        self._release()

    def _release(self) -> None:
        """Give every line back to the kernel (also when opening the board failed halfway)."""
        for device in reversed(self._devices):
            device.close()
        self._devices.clear()


def horn_patterns(horn: Mapping[SignalKind, tuple[float, ...]]) -> dict[SignalKind, SignalOutput]:
    """The profile's horn pulses (on, off, on, ... s per signal) as the buzzer driver's patterns."""
    return {kind: SignalOutput(pattern_s=pattern) for kind, pattern in horn.items()}


def _stamped_edge(service: Control, name: str) -> Callable[[float, int], None]:
    """The pin's own callback (lgpio's thread): `ticks` is the kernel's edge time in seconds
    of CLOCK_MONOTONIC, mapped onto the loop's clock (the same clock, unless the loop is
    scaled); `state` the level, low when pressed (the switch closes to ground)."""

    def changed(ticks: float, state: int) -> None:
        if state not in (0, 1):  # lgpio's watchdog report (2): no edge
            return
        # Not a recent monotonic stamp (another clock): the callback's own time.
        service.edge_from_thread(name, not state, kernel_stamp(service, ticks))

    return changed


def _edge(service: Control, name: str, pressed: bool) -> Callable[[], None]:
    # Runs in gpiozero's (or the mock pin driver's) thread: timestamp and hop, nothing else.
    return lambda: service.edge_from_thread(name, pressed)
