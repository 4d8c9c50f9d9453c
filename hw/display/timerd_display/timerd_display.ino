// timerd reference display: an 8-digit MAX7219 LED module showing the match clock and the
// score, five status LEDs, and two buttons that send commands back to timerd.
// Protocol: docs/serial-protocol.md. Wiring: hw/display/README.md.
//
//   digits (left to right):  [ m  m. s  s ] [ home ] [ away ]
//   "4:59" shows as " 4.59", the last 10 s as "  9.9"; the clock blinks while paused.
//   No valid frame for LINK_TIMEOUT_MS: "----" (the daemon sends one at least every second).
//   A command that timerd refused blanks the display for a moment.

#include "timerd_protocol.h"

// MAX7219 module: DIN, CLK, CS (LOAD). Bit-banged with shiftOut, so any three pins will do.
const uint8_t PIN_DIN = 11;
const uint8_t PIN_CLK = 13;
const uint8_t PIN_CS = 10;
// Buttons between the pin and GND, read with the internal pull-up (pressed reads LOW).
const uint8_t PIN_START_PAUSE = 2;
const uint8_t PIN_RESET = 3;
// Status LEDs, each through a 330 ohm resistor to GND, lit while the pin is HIGH.
const uint8_t PIN_RUNNING = 5;
const uint8_t PIN_PAUSED = 6;
const uint8_t PIN_LAST_30 = 7;
const uint8_t PIN_OVERTIME = 8;
const uint8_t PIN_INTERMISSION = 9;

// Must match [serial] baud; hw/display/build --baud 9600 builds a slow one.
#ifndef TIMERD_BAUD
#define TIMERD_BAUD 115200UL
#endif
const unsigned long BAUD = TIMERD_BAUD;
const unsigned long LINK_TIMEOUT_MS = 3000;  // three keep-alives missed
const unsigned long DEBOUNCE_MS = 30;
const unsigned long LONG_PRESS_MS = 2000;    // RESET, like timerd's own RESET button
const unsigned long REFUSED_BLANK_MS = 300;

// MAX7219 registers.
const uint8_t REG_DECODE = 0x09, REG_INTENSITY = 0x0A, REG_SCAN_LIMIT = 0x0B;
const uint8_t REG_SHUTDOWN = 0x0C, REG_TEST = 0x0F;
// Segments in no-decode mode: bit 7 DP, then A B C D E F G.
const uint8_t DIGITS[10] = {0x7E, 0x30, 0x6D, 0x79, 0x33, 0x5B, 0x5F, 0x70, 0x7F, 0x7B};
const uint8_t DASH = 0x01, BLANK = 0x00, DP = 0x80;

timerd::LineReader reader;
timerd::State state;
unsigned long lastFrameMs = 0;
bool haveState = false;
bool refused = false;  // blanked since refusedMs
unsigned long refusedMs = 0;

void max7219(uint8_t reg, uint8_t value) {
  digitalWrite(PIN_CS, LOW);
  shiftOut(PIN_DIN, PIN_CLK, MSBFIRST, reg);
  shiftOut(PIN_DIN, PIN_CLK, MSBFIRST, value);
  digitalWrite(PIN_CS, HIGH);
}

// Position 0 is the leftmost digit; the module's digit register 8 is on the left.
void showDigit(uint8_t position, uint8_t segments) { max7219(8 - position, segments); }

uint8_t segmentsOf(char c) { return (c >= '0' && c <= '9') ? DIGITS[c - '0'] : BLANK; }

// The clock text right-aligned on digits 0..3; ':' and '.' become the previous digit's DP.
void showClock(const char* clock, bool visible) {
  uint8_t cells[4] = {BLANK, BLANK, BLANK, BLANK};
  int8_t cell = 3;
  bool dot = false;
  for (int8_t i = (int8_t)strlen(clock) - 1; i >= 0 && cell >= 0; i--) {
    if (clock[i] == ':' || clock[i] == '.') {
      dot = true;
      continue;
    }
    cells[cell--] = segmentsOf(clock[i]) | (dot ? DP : 0);
    dot = false;
  }
  for (uint8_t i = 0; i < 4; i++) showDigit(i, visible ? cells[i] : BLANK);
}

void showNumber(uint8_t position, uint16_t value) {
  value %= 100;
  showDigit(position, value >= 10 ? DIGITS[value / 10] : BLANK);
  showDigit(position + 1, DIGITS[value % 10]);
}

void showAll(unsigned long now) {
  bool linkUp = haveState && now - lastFrameMs < LINK_TIMEOUT_MS;
  // Elapsed times only: millis() wraps after 49.7 days, and a display stays plugged in.
  if (refused && now - refusedMs < REFUSED_BLANK_MS) {
    for (uint8_t i = 0; i < 8; i++) showDigit(i, BLANK);
  } else if (!linkUp) {
    for (uint8_t i = 0; i < 8; i++) showDigit(i, i < 4 ? DASH : BLANK);
  } else {
    showClock(state.clock, !state.paused || (now / 500) % 2 == 0);
    showNumber(4, state.home);
    showNumber(6, state.away);
  }
  digitalWrite(PIN_RUNNING, linkUp && state.running);
  digitalWrite(PIN_PAUSED, linkUp && state.paused);
  digitalWrite(PIN_LAST_30, linkUp && state.last30);
  digitalWrite(PIN_OVERTIME, linkUp && state.overtime);
  digitalWrite(PIN_INTERMISSION, linkUp && state.intermission);
}

void send(const char* command) {
  char line[timerd::MAX_LINE];
  if (timerd::commandLine(line, sizeof line, command, nullptr) > 0) Serial.print(line);
}

// One button, debounced: sends its command on a press, or once held for `holdMs` if that is > 0.
struct Button {
  uint8_t pin;
  const char* command;
  unsigned long holdMs;
  bool pressed;
  bool fired;
  unsigned long changedMs;

  Button(uint8_t pin_, const char* command_, unsigned long holdMs_)
      : pin(pin_), command(command_), holdMs(holdMs_), pressed(false), fired(false),
        changedMs(0) {}

  void poll(unsigned long now) {
    bool down = digitalRead(pin) == LOW;
    if (down != pressed && now - changedMs >= DEBOUNCE_MS) {
      pressed = down;
      changedMs = now;
      fired = false;
    }
    if (pressed && !fired && now - changedMs >= holdMs) {
      send(command);
      fired = true;
    }
  }
};

Button startPause(PIN_START_PAUSE, "toggle", 0);
Button reset(PIN_RESET, "reset", LONG_PRESS_MS);

void setup() {
  Serial.begin(BAUD);
  pinMode(PIN_DIN, OUTPUT);
  pinMode(PIN_CLK, OUTPUT);
  pinMode(PIN_CS, OUTPUT);
  digitalWrite(PIN_CS, HIGH);
  pinMode(PIN_START_PAUSE, INPUT_PULLUP);
  pinMode(PIN_RESET, INPUT_PULLUP);
  const uint8_t leds[] = {PIN_RUNNING, PIN_PAUSED, PIN_LAST_30, PIN_OVERTIME, PIN_INTERMISSION};
  for (uint8_t pin : leds) pinMode(pin, OUTPUT);
  max7219(REG_TEST, 0);
  max7219(REG_DECODE, 0);  // segments as given
  max7219(REG_SCAN_LIMIT, 7);
  max7219(REG_INTENSITY, 8);
  max7219(REG_SHUTDOWN, 1);
}

void loop() {
  while (Serial.available() > 0) {
    if (!reader.feed((char)Serial.read())) continue;
    char* body = timerd::checkFrame(reader.line());  // nullptr: noise or a broken frame
    bool accepted;
    if (body == nullptr) continue;
    if (timerd::parseState(body, state)) {
      haveState = true;
      lastFrameMs = millis();
    } else if (timerd::parseReply(body, accepted) && !accepted) {
      refused = true;
      refusedMs = millis();
    }
  }
  unsigned long now = millis();
  startPause.poll(now);
  reset.poll(now);
  showAll(now);
}
