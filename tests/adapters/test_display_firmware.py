"""The reference display's firmware on its real chip: built for the ATmega328P (Arduino Uno or
Nano) with the Debian Arduino AVR core by `hw/display/build`, run on a simulated chip (simavr,
hw/display/sim/) with its UART on a pty and its MAX7219 decoded into the digits it shows, and
driven by a real `timerd run --simulate` (issue 20).

The simulated chip runs at 16 MHz paced to the wall clock, so these tests take real time
(marked `e2e`); they wait on the simulator's output lines with generous timeouts, never on the
clock. Every frame the daemon sent reaches the board's log (`rx`) before the firmware gets it,
so the digits are checked against the frames themselves (each one must be drawn) and against
the match (every second, tenths in the last 10 s, ITHF 4.4's last 30 s).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import shutil
import statistics
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import require
from daemon_process import SHORT_PROFILE, Daemon

from timerd.adapters.serial_protocol import frame

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "hw" / "display" / "build"
CORE = Path(os.environ.get("ARDUINO_AVR_CORE", "/usr/share/arduino/hardware/arduino/avr"))
WAIT_S = 30.0  # a loaded machine: the simulator and the daemon share two cores with others
START_PAUSE, RESET = 2, 3  # the board's button pins (hw/display/README.md)

pytestmark = pytest.mark.e2e

#: 11 s with no signals: the last 10 s, in tenths, come at one frame per 100 ms at --speed 1.
TENTHS_PROFILE = """\
name = "tenths"
description = "11 s, training: a frame per 100 ms in the last 10 s at --speed 1"
ithf_conformant = false
period_s = 11
pre_signal_lead_s = 1
signals = []
"""


@dataclass(frozen=True)
class Firmware:
    elf: Path
    sim: Path
    report: str  # what hw/display/build printed


def parts_installed() -> bool:
    have_pkg = shutil.which("pkg-config") is not None and subprocess.run(
        ["pkg-config", "--exists", "simavr", "simavrparts"], check=False).returncode == 0
    return (shutil.which("avr-g++") is not None and (CORE / "cores/arduino/Arduino.h").exists()
            and have_pkg and Path("/usr/include/libelf.h").exists())


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("display-build")


def build(out: Path, baud: int) -> Firmware:
    require(parts_installed(), "the AVR toolchain and simavr (Debian gcc-avr avr-libc "
            "binutils-avr arduino-core-avr libsimavr-dev libelf-dev)")
    target = out / str(baud)
    if not (target / "display-sim").exists():
        done = subprocess.run([str(BUILD), "--baud", str(baud), "--out", str(target), "--sim"],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        (target / "report.txt").write_text(done.stdout)
    return Firmware(target / "timerd_display.elf", target / "display-sim",
                    (target / "report.txt").read_text())


@dataclass(frozen=True)
class Line:
    """One line of the simulator's output (hw/display/sim/display_sim.c's header)."""

    kind: str  # display, rx, tx, error
    t_ms: int
    text: str  # display: "digits=[...] leds=....."; rx, tx: the line

    @property
    def digits(self) -> str:
        return self.text[len("digits=["):self.text.index("]")]

    @property
    def leds(self) -> str:
        return self.text.rpartition("leds=")[2]


def cells(digits: str) -> list[str]:
    """The 8 digits shown, each its character and a '.' when its decimal point is lit."""
    out: list[str] = []
    for c in digits:
        if c == "." and out:
            out[-1] += c
        else:
            out.append(c)
    return out


class Board:
    """The firmware on a simulated ATmega328P (display-sim), its output read by a thread."""

    def __init__(self, firmware: Firmware, max_s: float) -> None:
        self.proc = subprocess.Popen(
            [str(firmware.sim), str(firmware.elf), "--max-s", str(max_s)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        if not first.startswith("pty "):
            _, err = self.proc.communicate(timeout=WAIT_S)
            raise AssertionError(f"display-sim did not start: {first}{err}")
        self.pty = first.split()[1]
        self.lines: list[Line] = []
        self.stderr = ""
        self.context: Callable[[], str] = lambda: ""  # more for a failure message
        self._queue: queue.Queue[Line] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            kind, _, rest = raw.rstrip("\n").partition(" ")
            t_ms = 0
            if rest.startswith("t="):
                stamp, _, rest = rest.partition(" ")
                t_ms = int(stamp[2:])
            line = Line(kind, t_ms, rest)
            self.lines.append(line)
            self._queue.put(line)

    def wait(self, match: Callable[[Line], bool], what: str, timeout_s: float = WAIT_S,
             since: Line | None = None) -> Line:
        """The next line that `match`es; with `since`, the first one after that line, even if
        an earlier wait went past it (the firmware logs the bytes it is fed as they enter its
        receive buffer, so a reply line may come before the redraw of the frame before it)."""
        if since is not None:
            for line in self.lines[self.lines.index(since) + 1:]:
                if match(line):
                    return line
        while True:
            try:
                line = self._queue.get(timeout=timeout_s)
            except queue.Empty:
                tail = "\n".join(f"{x.kind} {x.t_ms} {x.text}" for x in self.lines[-30:])
                raise AssertionError(f"the board showed no {what} within {timeout_s} s; "
                                     f"its last lines:\n{tail}\n{self.context()}") from None
            if match(line):
                return line

    def wait_digits(self, test: Callable[[list[str]], bool], what: str,
                    timeout_s: float = WAIT_S) -> Line:
        return self.wait(lambda x: x.kind == "display" and test(cells(x.digits)), what,
                         timeout_s)

    def button(self, pin: int, pressed: bool) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{'press' if pressed else 'release'} {pin}\n")
        self.proc.stdin.flush()

    def close(self) -> str:
        """Stops the simulator; its closing line (how far it fell behind) on stderr."""
        if self.proc.returncode is None:
            assert self.proc.stdin is not None
            with contextlib.suppress(BrokenPipeError):
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
            self.proc.stdin.close()
            self.proc.wait(timeout=WAIT_S)
            self._reader.join(timeout=WAIT_S)
            assert self.proc.stderr is not None
            self.stderr = self.proc.stderr.read()
            self.proc.stderr.close()
        assert not [x for x in self.lines if x.kind == "error"], self.lines
        return self.stderr


@pytest.fixture
def board_at(build_dir: Path) -> Iterator[Callable[[int, float], Board]]:
    boards: list[Board] = []

    def start(baud: int, max_s: float) -> Board:
        boards.append(Board(build(build_dir, baud), max_s))
        return boards[-1]

    yield start
    for board in boards:
        board.close()


def shown_clock(clock: str) -> str:
    """The four clock digits the sketch shows for a frame's clock: right-aligned, ':' and '.'
    as the decimal point of the digit before ("0:34" shows as " 0.34", "9.9" as "  9.9")."""
    out: list[str] = []
    dot = False
    for c in reversed(clock):
        if c in ":.":
            dot = True
            continue
        out.insert(0, c + ("." if dot else ""))
        dot = False
    return "".join([" "] * (4 - len(out)) + out)


def expected(fields: list[str]) -> tuple[str, str]:
    """The digits and LEDs the display must show for a state frame's fields."""
    home, away = (int(x) % 100 for x in fields[7:9])
    leds = "".join("0" if flag == "-" else "1" for flag in fields[4])
    return shown_clock(fields[3]) + f"{home:>2}{away:>2}", leds


def state_fields(line: Line) -> list[str] | None:
    if line.kind != "rx" or not line.text.startswith("$TDS,"):
        return None
    return line.text[1:line.text.index("*")].split(",")


def drawn(lines: list[Line]) -> list[tuple[str, str]]:
    """What the display showed with a clock on it (not its blink off, its refused blank or
    `----`), each change once."""
    out: list[tuple[str, str]] = []
    for line in lines:
        if line.kind != "display":
            continue
        clock = "".join(cells(line.digits)[:4])
        if clock.strip() == "" or "-" in clock:
            continue
        state = ("".join(cells(line.digits)), line.leds)
        if not out or out[-1] != state:
            out.append(state)
    return out


def sent(lines: list[Line]) -> list[tuple[str, str]]:
    """What the state frames the firmware was given ask it to show, each change once."""
    out: list[tuple[str, str]] = []
    for line in lines:
        fields = state_fields(line)
        if fields is not None and (not out or out[-1] != expected(fields)):
            out.append(expected(fields))
    return out


def clocks(states: list[tuple[str, str]]) -> list[str]:
    return [digits[:len(digits) - 4].replace(" ", "") for digits, _ in states]


def test_the_build_fits_an_uno_and_says_how_to_flash_it(build_dir: Path) -> None:
    """Issue 20.1: flash and static RAM under the limits, the avrdude line for the .hex."""
    report = build(build_dir, 115200).report
    flash = next(x for x in report.splitlines() if x.startswith("flash: "))
    ram = next(x for x in report.splitlines() if x.startswith("static RAM: "))
    used_flash, total_flash = (int(x) for x in flash.split()[1:4:2])
    used_ram, total_ram = (int(x) for x in ram.split()[2:5:2])
    assert (total_flash, total_ram) == (32256, 2048)  # an Uno: 32 KB less the bootloader, 2 KB
    assert 0 < used_flash * 100 <= total_flash * 90
    assert 0 < used_ram * 100 <= total_ram * 75
    assert f"-Uflash:w:{build_dir / '115200' / 'timerd_display.hex'}:i" in report
    assert "avrdude -C/etc/avrdude.conf -patmega328p -carduino" in report


def test_the_digits_follow_a_match_from_the_daemon(
        tmp_path: Path, board_at: Callable[[int, float], Board]) -> None:
    """mm:ss each second, a goal on the score, the paused clock blinking with its LED, the
    last-30 LED from 0:30 (ITHF 4.4), tenths in the last 10 s, 0:00 at the end."""
    board = board_at(115200, 60)
    profile = tmp_path / "short.toml"
    profile.write_text(SHORT_PROFILE)
    with Daemon(tmp_path, "--profile", str(profile), "-o", f"serial.port={board.pty}",
                speed=2).ready() as daemon:
        board.context = lambda: "the daemon's log:\n" + "".join(daemon.log)
        board.wait_digits(lambda c: "".join(c) == " 0.34 0 0", "0:34 and 0:0 at rest")
        daemon.command("start")
        board.wait_digits(lambda c: "".join(c[:4]) == " 0.30", "0:30")
        daemon.command("goal", "home")  # after the 3 s faceoff guard (ITHF 5.6)
        board.wait_digits(lambda c: "".join(c[4:]) == " 1 0", "the goal")
        board.wait_digits(lambda c: "".join(c[:4]) == " 0.28", "0:28")
        daemon.command("pause")
        off = board.wait_digits(lambda c: "".join(c[:4]) == "    ", "the paused clock blink")
        board.wait_digits(lambda c: "".join(c[:4]) != "    ", "the paused clock back on")
        daemon.command("resume")
        board.wait_digits(lambda c: "".join(c) == " 0.00 1 0", "0:00 at the end")
    board.close()

    assert off.leds[1] == "1"  # the paused LED
    shown, frames = drawn(board.lines), sent(board.lines)
    assert shown == frames  # every frame the firmware got was drawn, in order
    running = clocks(shown)
    seconds = [c for c in running if c.count(".") == 1 and len(c.split(".")[1]) == 2]
    assert [c for i, c in enumerate(seconds) if c not in seconds[:i]] == [
        f"0.{s:02d}" for s in range(34, 9, -1)] + ["0.00"]
    tenths = running[running.index("0.10") + 1:-1]
    assert tenths
    assert all(len(c) == 3 and c[1] == "." for c in tenths), tenths
    assert tenths == sorted(set(tenths), reverse=True), tenths
    first_last_30 = next(digits for digits, leds in shown if leds[2] == "1")
    assert first_last_30.startswith(" 0.30")
    assert all((leds[2] == "1") == (clock <= "0.30" or len(clock) == 3)
               for clock, (_, leds) in zip(running, shown, strict=True)
               if leds[0] == "1")  # while the clock runs


def test_the_buttons_send_their_commands_and_a_refusal_blanks_the_digits(
        tmp_path: Path, board_at: Callable[[int, float], Board]) -> None:
    """START/PAUSE toggles at once; RESET only after a 2 s hold, refused while the clock runs
    (the digits blank for a moment), accepted once paused."""
    board = board_at(115200, 60)
    with Daemon(tmp_path, "-o", f"serial.port={board.pty}", speed=4).ready() as daemon:
        board.context = lambda: "the daemon's log:\n" + "".join(daemon.log)

        def fed(start: str, after: Line) -> Line:
            return board.wait(lambda x: x.kind == "rx" and x.text.startswith(start), start,
                              since=after)

        def press(pin: int) -> Line:
            board.button(pin, pressed=True)
            return board.wait(lambda x: x.kind == "button" and x.text == f"press {pin}",
                              "the press")

        board.wait_digits(lambda c: "".join(c[:4]) == " 5.00", "5:00 at rest")
        pressed = press(START_PAUSE)
        board.wait(lambda x: x.kind == "tx" and x.text.startswith("$TDC,1,toggle*"), "toggle")
        board.button(START_PAUSE, pressed=False)
        board.wait_digits(lambda c: "".join(c[:4]) == " 4.58", "the clock running")
        fed("$TDR,1,ok,toggle*", pressed)

        pressed = press(RESET)
        reset = board.wait(lambda x: x.kind == "tx" and x.text.startswith("$TDC,1,reset*"),
                           "reset after the hold")
        assert reset.t_ms - pressed.t_ms >= 2000
        board.wait_digits(lambda c: "".join(c).strip() == "", "the refused blank")
        fed("$TDR,1,no,reset*", reset)
        board.button(RESET, pressed=False)

        pressed = press(START_PAUSE)
        fed("$TDS,1,paused,", pressed)
        board.button(START_PAUSE, pressed=False)
        pressed = press(RESET)
        board.wait_digits(lambda c: "".join(c[:4]) == " 5.00", "5:00 again")
        fed("$TDR,1,ok,reset*", pressed)
        board.button(RESET, pressed=False)
        assert daemon.command("status")["phase"] == "idle"
    assert [x.text.split("*")[0] for x in board.lines if x.kind == "tx"] == [
        "$TDC,1,toggle", "$TDC,1,reset", "$TDC,1,toggle", "$TDC,1,reset"]


def test_a_corrupted_frame_is_rejected_by_the_crc(
        board_at: Callable[[int, float], Board]) -> None:
    """A changed byte under the old checksum, and a frame cut off, are not shown; the next
    good frame is (docs/serial-protocol.md: a receiver drops a line with a bad checksum)."""
    board = board_at(115200, 30)
    fd = os.open(board.pty, os.O_RDWR | os.O_NOCTTY)
    try:
        def state(home: str) -> bytes:
            return frame(["TDS", "1", "running", "4:00", "R----", "1", "1", home, "0", ""])

        os.write(fd, state("1"))
        board.wait_digits(lambda c: "".join(c) == " 4.00 1 0", "the first frame")
        good = state("2")
        corrupted = good.replace(b",2,0,", b",7,0,")
        os.write(fd, corrupted + good[:20] + b"\n" + state("3"))
        board.wait_digits(lambda c: "".join(c) == " 4.00 3 0", "the good frame after")
    finally:
        os.close(fd)
    board.close()
    fed = [x.text.encode() + b"\n" for x in board.lines if x.kind == "rx"]
    assert corrupted in fed  # it did reach the firmware
    assert [digits for digits, _ in drawn(board.lines)] == [" 4.00 1 0", " 4.00 3 0"]


@pytest.mark.parametrize("baud", [9600, 115200])
def test_a_frame_per_100_ms_is_drawn_every_time(
        baud: int, tmp_path: Path, board_at: Callable[[int, float], Board]) -> None:
    """The last 10 s at --speed 1: the daemon sends a frame each tenth, one per 100 ms; the
    firmware built for the baud rate draws every one (counted), none lost in its 64-byte
    receive buffer or behind its redraw."""
    board = board_at(baud, 60)
    profile = tmp_path / "tenths.toml"
    profile.write_text(TENTHS_PROFILE)
    with Daemon(tmp_path, "--profile", str(profile), "-o", f"serial.port={board.pty}",
                "-o", f"serial.baud={baud}", speed=1).ready() as daemon:
        board.context = lambda: "the daemon's log:\n" + "".join(daemon.log)
        board.wait_digits(lambda c: "".join(c[:4]) == " 0.11", "0:11 at rest")
        daemon.command("start")
        board.wait_digits(lambda c: "".join(c[:4]) == " 0.00", "0:00 at the end")
    board.close()
    frames = [f for f in map(state_fields, board.lines) if f is not None and "." in f[3]]
    times = [x.t_ms for x in board.lines if state_fields(x) is not None
             and "." in x.text.split(",")[3]]
    shown = [c for c in clocks(drawn(board.lines)) if len(c) == 3]
    assert shown == [shown_clock(f[3]).replace(" ", "") for f in frames]
    assert len(frames) >= 90, f"the daemon sent {len(frames)} of the 99 tenths"
    # ms: they came one per 100 ms (the median: a loaded machine may stall the daemon once)
    assert statistics.median(b - a for a, b in itertools.pairwise(times)) <= 120, times
