"""The reference display sketch (hw/display/), compiled on this machine and fed daemon frames.

The sketch is built with g++ as C++11 (what avr-gcc uses for an Arduino Uno) against a small
stand-in for the Arduino API, which records what the sketch writes to the MAX7219 and the LEDs
and plays its serial port and buttons. The frames come from the daemon's own encoder, so the
two sides of the protocol are checked against each other.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import require
from test_serial_protocol import DOC_STATUS  # the documented example's status

from timerd.adapters.serial_protocol import frame, state_frame

SKETCH = Path(__file__).resolve().parents[2] / "hw" / "display" / "timerd_display"

# The Arduino calls the sketch uses, recording their effect. Digit registers 1..8 hold the
# segments the MAX7219 shows; CS is pin 10, as in the sketch.
HARNESS = r"""
#include <stdint.h>
#include <iostream>
#include <string>
#define LOW 0
#define HIGH 1
#define OUTPUT 1
#define INPUT_PULLUP 2
#define MSBFIRST 1
static unsigned long fake_ms = 0;
static std::string serial_in, serial_out;
static int level[32];
static uint8_t shifted[2];
static int shifts = 0;
static uint8_t reg[16];
unsigned long millis() { return fake_ms; }
void pinMode(uint8_t, uint8_t) {}
int digitalRead(uint8_t pin) { return level[pin]; }
void digitalWrite(uint8_t pin, uint8_t value) {
  if (pin == 10 && value == LOW) shifts = 0;
  if (pin == 10 && value == HIGH && shifts == 2) reg[shifted[0] & 15] = shifted[1];
  level[pin] = value;
}
void shiftOut(uint8_t, uint8_t, uint8_t, uint8_t value) {
  if (shifts < 2) shifted[shifts++] = value;
}
struct FakeSerial {
  void begin(unsigned long) {}
  int available() { return (int)serial_in.size(); }
  int read() { int c = (uint8_t)serial_in[0]; serial_in.erase(0, 1); return c; }
  void print(const char* text) { serial_out += text; }
} Serial;

#include "timerd_display.ino"

static char shown(uint8_t segments) {
  for (int d = 0; d < 10; d++) if ((segments & 0x7F) == DIGITS[d]) return (char)('0' + d);
  return (segments & 0x7F) == DASH ? '-' : ' ';
}

int main() {
  for (int i = 0; i < 32; i++) level[i] = HIGH;  // pull-ups: buttons released
  setup();
  std::string word;
  while (std::cin >> word) {
    if (word == "feed") {  // one line of the serial stream, its bytes hex-encoded
      std::string hex; std::cin >> hex;
      for (size_t i = 0; i + 1 < hex.size(); i += 2)
        serial_in += (char)std::stoi(hex.substr(i, 2), nullptr, 16);
    } else if (word == "at") { std::cin >> fake_ms;
    } else if (word == "press") { int pin; std::cin >> pin; level[pin] = LOW;
    } else if (word == "release") { int pin; std::cin >> pin; level[pin] = HIGH;
    } else if (word == "show") {
      loop();
      std::string digits;
      for (int position = 0; position < 8; position++) {
        uint8_t segments = reg[8 - position];
        digits += shown(segments);
        if (segments & 0x80) digits += '.';
      }
      std::cout << "digits=[" << digits << "] leds=" << level[5] << level[6] << level[7]
                << level[8] << level[9] << " phase=" << (haveState ? state.phase : "-")
                << " period=" << state.period << "/" << state.periods
                << " penalties=" << (int)state.penaltyCount;
      for (int i = 0; i < state.penaltyCount; i++)
        std::cout << " " << state.penalties[i].side << state.penalties[i].player << "="
                  << state.penalties[i].clock;
      for (char& c : serial_out) if (c == '\n') c = '|';
      std::cout << " sent=" << serial_out << std::endl;
      serial_out.clear();
    }
  }
}
"""


@pytest.fixture(scope="module")
def sketch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require(shutil.which("g++") is not None, "g++")
    build = tmp_path_factory.mktemp("sketch")
    (build / "harness.cpp").write_text(HARNESS)
    subprocess.run(["g++", "-std=gnu++11", "-Wall", "-Wextra", "-Werror", "-x", "c++",
                    "-I", str(SKETCH), str(build / "harness.cpp"), "-o", str(build / "sketch")],
                   check=True, capture_output=True, text=True)
    return build / "sketch"


def run(sketch: Path, steps: list[Any]) -> list[str]:
    """Play `steps` (a frame as bytes, or a harness word line) and return each `show` line."""
    script = "\n".join(f"feed {step.hex()}" if isinstance(step, bytes) else step
                       for step in steps)
    done = subprocess.run([str(sketch)], input=script + "\n", capture_output=True, text=True,
                          check=True, timeout=10)
    return done.stdout.splitlines()


def test_the_sketch_shows_what_the_daemon_sends(sketch: Path) -> None:
    paused = {"phase": "paused", "remaining_s": 9.85, "clock_running": False, "period": 1,
              "periods": 1, "score": {"home": 12, "away": 0}}
    out = run(sketch, [
        "at 100", "show",  # nothing received yet: the link is down
        state_frame(DOC_STATUS), "at 200", "show",
        state_frame(paused), "at 1000", "show", "at 1500", "show",  # paused: the clock blinks
        "at 5000", "show",  # no frame for 4 s: the link is down
    ])
    assert out == [
        "digits=[----    ] leds=00000 phase=- period=0/0 penalties=0 sent=",
        "digits=[ 1.24 3 2] leds=10000 phase=running period=2/3 penalties=2 A=4.3 H17=1:12 sent=",
        "digits=[  9.912 0] leds=01100 phase=paused period=1/1 penalties=0 sent=",
        "digits=[    12 0] leds=01100 phase=paused period=1/1 penalties=0 sent=",
        "digits=[----    ] leds=00000 phase=paused period=1/1 penalties=0 sent=",
    ]


def test_the_sketch_drops_broken_frames_and_resyncs(sketch: Path) -> None:
    good = state_frame(DOC_STATUS)
    idle = state_frame({"phase": "idle", "remaining_s": 300, "period": 1, "periods": 1})
    out = run(sketch, [
        idle, "at 10", "show",
        good.replace(b"1:24", b"1:25"),  # checksum no longer matches
        b"x" * 200 + b"\n",  # overlong noise
        b"$TDS,1,runn" + b"\x00\xff" + good,  # a frame cut off by a full port, then a whole one
        "at 20", "show",
    ])
    assert out[0].startswith("digits=[ 5.00 0 0] leds=00000 phase=idle")
    assert out[1].startswith("digits=[ 1.24 3 2] leds=10000 phase=running")


def test_the_sketch_buttons_send_commands(sketch: Path) -> None:
    refused = frame(["TDR", "1", "no", "reset"])
    out = run(sketch, [
        state_frame(DOC_STATUS),
        "at 0", "press 2", "show", "at 40", "show", "at 100", "release 2", "show",
        "at 200", "press 3", "show", "at 1000", "show", "at 2300", "show", "at 2400", "show",
        "release 3", "at 2500", "show", refused, "at 2600", "show",
        state_frame(DOC_STATUS), "at 3000", "show",
    ])
    sent = [line.split(" sent=")[1] for line in out]
    toggle = frame(["TDC", "1", "toggle"]).decode().replace("\n", "|")
    reset = frame(["TDC", "1", "reset"]).decode().replace("\n", "|")
    # START/PAUSE once the 30 ms debounce has passed, once; RESET only when held for 2 s.
    assert sent == ["", toggle, "", "", "", reset, "", "", "", ""]
    assert toggle == "$TDC,1,toggle*C15C|"  # the documented line
    assert "digits=[        ]" in out[-2]  # refused: blanked for a moment
    assert "digits=[ 1.24 3 2]" in out[-1]


def test_a_refusal_just_before_millis_wraps_blanks_only_for_a_moment(sketch: Path) -> None:
    """millis() wraps (after 49.7 days on an Uno, whose unsigned long is 32 bits; here the
    host's 64): the blank after a refusal is timed by elapsed time, so it still lasts 300 ms.
    Fails on the old sketch, which compared millis() with a wrapped end time."""
    wrap = 2**64
    out = run(sketch, [
        f"at {wrap - 100}", state_frame(DOC_STATUS), frame(["TDR", "1", "no", "reset"]),
        "show", "at 150", "show", "at 250", "show",
    ])
    assert [line.split(" leds=")[0] for line in out] == [
        "digits=[        ]", "digits=[        ]", "digits=[ 1.24 3 2]"]
