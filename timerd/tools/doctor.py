"""`timerd doctor`: check what the daemon needs, and say in plain words what is wrong.

Each check prints one line, `ok`, `warn` or `FAIL`, and what to do about anything that is not
ok: the config, the pin factory and access to the GPIO chip, each configured pin, the USB
keypad, the sound device, serial ports, the web's JSON writer, the state directory (the match
journal) and the runtime directory (the heartbeat, which belongs in RAM). The exit status is
1 if anything failed. `--service` checks what the installed service sees instead (its unit's user,
directories and journal: `doctor_service`).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes.util
import glob
import grp
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from timerd import config as config_mod
from timerd import version
from timerd.config.schema import SchemaError
from timerd.disk import on_ram
from timerd.tools.checks import FAIL, OK, WARN, Check, journal_summary

#: Less free space than this on the state directory's file system is worth a warning.
LOW_SPACE_BYTES = 50 * 1024 * 1024


def _member_of(group: str) -> bool:
    try:
        gid = grp.getgrnam(group).gr_gid
    except KeyError:
        return False
    return gid in os.getgroups() or gid == os.getgid()


def check_config(path: Path | None, overrides: list[str]) -> tuple[list[Check],
                                                                   config_mod.Config | None]:
    default = config_mod.system_config()  # /etc/timerd/timerd.toml, or NAME.toml (--instance)
    shown = path or (default if default.is_file() else None)
    try:
        config = config_mod.load(path, overrides)
    except SchemaError as exc:
        lines = "; ".join(exc.problems)
        return [Check(FAIL, "config", f"{shown or 'the defaults'} has errors: {lines}. The "
                                      "daemon will not start until they are fixed; the other "
                                      "checks use the defaults")], None
    where = f"{shown} is valid" if shown else (
        f"no {default}: the defaults are used (`timerd install` writes one)")
    return [Check(OK, "config", f"{where}; profile {config.profile().name}")], config


def check_gpio(config: config_mod.Config) -> list[Check]:
    """The pin factory, access to the GPIO character devices, and every configured pin."""
    from timerd.app import CannotStart, open_pins  # noqa: PLC0415 (imports gpiozero)

    out = []
    name = config.gpio.pin_factory
    if name != "mock":
        chips = sorted(glob.glob("/dev/gpiochip*"))
        if not chips:
            out.append(Check(FAIL, "gpio access", "no /dev/gpiochip* here: this is not a "
                                                  "Raspberry Pi, or the GPIO driver is "
                                                  "missing. `timerd run --simulate` runs "
                                                  "without GPIO"))
        else:
            denied = [c for c in chips if not os.access(c, os.R_OK | os.W_OK)]
            if denied:
                out.append(Check(FAIL, "gpio access", f"cannot open {', '.join(denied)}: add "
                                 "this user to the gpio group (`sudo usermod -aG gpio "
                                 "$USER`, then log in again)"))
            else:
                out.append(Check(OK, "gpio access", f"{', '.join(chips)} readable and "
                                                    "writable"))
    try:
        factory = open_pins(name, config.gpio.chip)
    except CannotStart as exc:  # it names the fix: the venv's, lgpio's, or --simulate
        out.append(Check(FAIL, "pin factory", str(exc)))
        return out
    out.append(Check(OK, "pin factory", f"{type(factory).__name__} (gpio.pin_factory = "
                                        f"{name!r})"))
    try:
        out += list(_check_pins(config.gpio, factory))
    finally:
        with contextlib.suppress(Exception):
            factory.close()
    return out


def _check_pins(gpio: config_mod.GpioConfig, factory: Any) -> Iterator[Check]:
    """Claim each pin as the daemon would (buttons as inputs with the pull-up, outputs low)."""
    import gpiozero  # noqa: PLC0415

    from timerd.app import pin_chip  # noqa: PLC0415 (imports gpiozero)

    chip = pin_chip(factory)
    for key, pin in gpio.pins().items():
        output = key.startswith(("buzzer", "led", "horn"))
        if chip is not None and pin >= chip[0]:
            yield Check(FAIL, f"GPIO{pin}", f"{key}: not on gpiochip{factory.chip} "
                        f'("{chip[1]}", lines 0-{chip[0] - 1}): check gpio.chip, or choose a '
                        "pin the chip has")
            continue
        try:
            if output:
                device = gpiozero.DigitalOutputDevice(pin, initial_value=False,
                                                      pin_factory=factory)
            else:
                # Read, not watched: an input with edge events (gpiozero's Button) is given
                # back on lgpio while lgpio's alert thread may still hold the line, and its
                # close then raised 'GPIO busy' (a traceback; the kernel tier, under load).
                device = gpiozero.InputDevice(pin, pull_up=True, pin_factory=factory)
        except gpiozero.GPIOPinInUse:
            yield Check(FAIL, f"GPIO{pin}", f"{key}: in use by another program (is the "
                                            "timerd service running? `sudo systemctl stop "
                                            "timerd` before `timerd doctor`)")
            continue
        except Exception as exc:  # noqa: BLE001 (each factory refuses its own way)
            yield Check(FAIL, f"GPIO{pin}", f"{key}: cannot be claimed: {exc}")
            continue
        with contextlib.closing(device):
            if output:
                yield Check(OK, f"GPIO{pin}", f"{key}: output, driven low (off)")
            elif device.is_active:
                yield Check(WARN, f"GPIO{pin}", f"{key}: reads pressed (low) with nobody "
                                                "touching it: a button stuck or wired to the "
                                                "wrong pin, or a short to ground")
            else:
                yield Check(OK, f"GPIO{pin}", f"{key}: input with pull-up, reads released")


def check_sound() -> list[Check]:
    out = []
    try:
        cards = Path("/proc/asound/cards").read_text().strip()
    except OSError:
        cards = ""
    if not cards or "no soundcards" in cards:
        out.append(Check(WARN, "sound device", "no sound card found: the speaker stays "
                                               "silent; the buzzer still gives every signal"))
    else:
        names = [line.split("]:", 1)[-1].strip() for line in cards.splitlines()
                 if "]:" in line]
        out.append(Check(OK, "sound device", f"sound cards: {'; '.join(names)}"))
        denied = [d for d in sorted(glob.glob("/dev/snd/pcm*")) if not os.access(d, os.W_OK)]
        if denied:
            out.append(Check(FAIL, "sound access", f"cannot open {denied[0]}: add this user "
                                                   "to the audio group"))
    if ctypes.util.find_library("asound") is None:
        out.append(Check(WARN, "sound library", "libasound2 is not installed: no speaker "
                                                "sounds (`apt install libasound2`)"))
    return out


def check_serial(config: config_mod.Config) -> list[Check]:
    """Serial ports for an LED display: the configured one if the config names one."""
    # The [serial] section comes with the serial display; until then, list what is there.
    configured = getattr(getattr(config, "serial", None), "port", "")
    ports = [configured] if configured else sorted(
        glob.glob("/dev/ttyUSB*") + glob.glob("/dev/ttyACM*") + glob.glob("/dev/serial0"))
    if not ports:
        return [Check(OK, "serial device", "no serial port present (only needed for an LED "
                                           "display)")]
    out = []
    for port in ports:
        if not os.path.exists(port):
            out.append(Check(FAIL, "serial device", f"{port} does not exist: is the display "
                                                    "plugged in? (/dev/serial/by-id/ names "
                                                    "stay the same across USB sockets)"))
        elif not os.access(port, os.R_OK | os.W_OK):
            hint = "" if _member_of("dialout") else ": add this user to the dialout group"
            out.append(Check(FAIL, "serial device", f"cannot open {port}{hint}"))
        else:
            out.append(Check(OK, "serial device", f"{port} readable and writable"))
    return out


def check_keypad(config: config_mod.Config) -> list[Check]:
    """The USB keypad `[keypad] device` names, if any: there, readable, and its keys' names
    (the config checks those); when it is missing, the input devices that are here."""
    wanted = config.keypad.device
    if not wanted:
        return []
    from timerd.app import find_keypad, input_devices  # noqa: PLC0415 (evdev)

    found, why = find_keypad(config.keypad)
    if found is not None:
        keys = "; ".join(f"{name} {'/'.join(keys)}" for name, keys in config.keypad.keys().items())
        return [Check(OK, "keypad", f"{found}: {keys}")]
    here = "; ".join(f"{name!r} at {path}" for path, name in input_devices())
    return [Check(FAIL, "keypad", f"missing: {why}; the match goes on without its keys. "
                                  "Input devices here: " + (here or "none"))]


def check_state(config: config_mod.Config) -> list[Check]:
    """The state directory (journal, on disk) and the runtime directory (heartbeat, RAM)."""
    out = []
    state = config.state_directory()
    source = ("state.directory" if config.state.directory else
              "$STATE_DIRECTORY" if os.environ.get("STATE_DIRECTORY") else "the default")
    try:
        state.mkdir(parents=True, exist_ok=True)
        probe = state / ".doctor-probe"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        out.append(Check(FAIL, "state directory", f"{state} ({source}) is not writable "
                                                  f"({exc.strerror}): matches cannot be "
                                                  "recovered after a crash"))
    else:
        free = shutil.disk_usage(state).free
        level = WARN if free < LOW_SPACE_BYTES else OK
        out.append(Check(level, "state directory", f"{state} ({source}) is writable, "
                                                   f"{free // 2**20} MiB free"))
        out.append(journal_summary(state, config.runtime_directory(),
                                   config.state.resume_within_s))
    runtime = config.runtime_directory()
    ram = on_ram(runtime) if runtime.exists() else on_ram(runtime.parent)
    if ram is False:
        out.append(Check(WARN, "runtime directory", f"{runtime} is not in RAM: the heartbeat "
                                                    "written once a second wears an SD card "
                                                    "(set state.runtime_directory to a tmpfs)"))
    else:
        out.append(Check(OK, "runtime directory", f"{runtime} (heartbeat and control socket)"
                                                  + (", in RAM" if ram else "")))
    return out


def check_web(config: config_mod.Config) -> list[Check]:
    """What writes the web's JSON (issue 44 item 8): orjson, a dependency; where it is missing
    the standard library writes the same JSON, a push in about ten times orjson's time
    (bench/push_encoding.py)."""
    if not config.web.enabled:
        return []
    try:
        import orjson  # noqa: PLC0415 (the web's library: the daemon loads it with the web only)
    except ImportError:
        return [Check(WARN, "web", "orjson is not installed: the standard library writes the "
                                   "web's JSON, about ten times orjson's time for each state push "
                                   "(`pip install orjson` in timerd's environment)")]
    return [Check(OK, "web", f"JSON written by orjson {orjson.__version__}")]


def run_checks(config_path: Path | None, overrides: list[str]) -> list[Check]:
    checks = [Check(OK, "version", f"timerd {version()} ({sys.prefix})")]
    more, config = check_config(config_path, overrides)
    checks += more
    config = config or config_mod.Config()
    for part in (check_gpio, check_keypad, check_serial, check_web, check_state):
        checks += part(config)
    checks += check_sound()
    return checks


def main(args: argparse.Namespace, out: TextIO) -> int:
    overrides = list(args.overrides)
    if args.profile:
        overrides.append(f'match.profile="{args.profile}"')
    if getattr(args, "service", False):
        from timerd.tools import doctor_service  # noqa: PLC0415 (only for --service)

        checks = doctor_service.run_checks(args.root, config_mod.instance(), args.config,
                                           overrides)
    else:
        checks = run_checks(args.config, overrides)
    width = max(len(c.topic) for c in checks)
    for check in checks:
        print(f"{check.level:4}  {check.topic:{width}}  {check.message}", file=out)
    failed = sum(c.level == FAIL for c in checks)
    warned = sum(c.level == WARN for c in checks)
    print(f"\n{failed} failed, {warned} warnings, {len(checks) - failed - warned} ok", file=out)
    return 1 if failed else 0
