// The reference display on a simulated ATmega328P (simavr), with a MAX7219 and two buttons.
//
//   display-sim FIRMWARE.elf [--max-s SECONDS]
//
// Runs the firmware at the chip's real speed (16 MHz, paced to the wall clock), connects its
// UART to a new pty (the first line on stdout: "pty /dev/pts/N"; open it as a USB serial port,
// e.g. `timerd run -o serial.port=/dev/pts/N`), and decodes what the firmware shifts out to the
// MAX7219 on DIN/CLK/LOAD (D11, D13, D10) into the digits a real module would show. stdout:
//
//   display t=<ms> digits=[ 1.24 3 2] leds=10000   the digits, left to right (a '.' after a
//                                                   digit is its decimal point), and the five
//                                                   status LEDs D5..D9, each time the firmware
//                                                   has redrawn them into something new
//   rx t=<ms> <line>                                each line fed to the firmware's UART
//   tx t=<ms> <line>                                each line the firmware sends (its commands)
//   button t=<ms> press|release <pin>               a command from stdin, when it took effect
//   error <what>                                    a MAX7219 write that was not 16 bits, a bad
//                                                   command, the firmware stopped
//
// stdin: "press <pin>" / "release <pin>" (Arduino pin numbers; D2 START/PAUSE, D3 RESET) pull
// a button's pin low or let it go; "quit" or the end of stdin stops. So does --max-s of wall
// time (default 120), so that a forgotten simulator never runs on. At the end, a line on stderr
// tells how far the simulation fell behind the wall clock at worst.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "avr_ioport.h"
#include "avr_uart.h"
#include "sim_avr.h"
#include "sim_elf.h"

#define F_CPU 16000000UL
#define QUIET_US 5000  // a full rewrite of the 8 digits takes about 2 ms at 16 MHz
#define LOG_LINE 160  // longer than any line of the protocol (128)
#define CHECK_CYCLES 1600  // the pty, stdin and the pacing are looked at every 100 us

static avr_t* avr;
static int pty_master = -1;

// Arduino pin number to port and bit on the ATmega328P: D0..D7 PORTD, D8..D13 PORTB.
static avr_irq_t* pin_irq(int pin) {
  char port = pin < 8 ? 'D' : 'B';
  return avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(port), pin < 8 ? pin : pin - 8);
}

// A button drives its pin: an "external" level in simavr's terms, which its port then keeps
// (simavr 1.6 otherwise lets the pull-up win again at the firmware's next write to the port).
static void drive(int pin, int level) {
  static uint8_t mask[2], value[2];  // PORTD, PORTB
  int port = pin < 8 ? 0 : 1;
  uint8_t bit = (uint8_t)(1 << (pin < 8 ? pin : pin - 8));
  mask[port] |= bit;
  value[port] = (uint8_t)(level ? value[port] | bit : value[port] & ~bit);
  avr_ioport_external_t external = {.name = port == 0 ? 'D' : 'B', .mask = mask[port],
                                    .value = value[port]};
  avr_ioctl(avr, AVR_IOCTL_IOPORT_SET_EXTERNAL(external.name), &external);
  avr_raise_irq(pin_irq(pin), (uint32_t)level);
}

// --- the MAX7219 (datasheet: DIN is shifted in on CLK's rising edge, the last 16 bits are
// latched on LOAD's rising edge; register 0xX1..0xX8 digit 0..7, 9 decode mode, 0xA intensity,
// 0xB scan limit, 0xC shutdown, 0xF display test).
enum { PIN_DIN = 11, PIN_CLK = 13, PIN_LOAD = 10 };
static const int LED_PINS[5] = {5, 6, 7, 8, 9};  // running, paused, last 30 s, overtime, break

static struct {
  int din, clk, load;
  uint16_t shift;
  int bits;  // clocked in since LOAD went low
  uint8_t reg[16];
} chip;
static int leds[5];
static char shown[96];  // the last line printed

// Segments in no-decode mode: bit 7 DP, then A B C D E F G (what the sketch writes).
static char segment_char(uint8_t segments) {
  static const uint8_t DIGITS[10] = {0x7E, 0x30, 0x6D, 0x79, 0x33, 0x5B, 0x5F, 0x70, 0x7F,
                                     0x7B};
  segments &= 0x7F;
  for (int d = 0; d < 10; d++)
    if (segments == DIGITS[d]) return (char)('0' + d);
  if (segments == 0x01) return '-';
  return segments == 0 ? ' ' : '?';
}

// The text of digit register `digit` (1..8) as the module shows it.
static void render_digit(int digit, char* out, int* n) {
  uint8_t value = chip.reg[digit];
  char c;
  if (chip.reg[0x0F] & 1) {  // display test: every segment lit
    c = '8';
    value = 0x80;
  } else if (!(chip.reg[0x0C] & 1) || digit - 1 > (chip.reg[0x0B] & 7)) {
    c = ' ';  // shut down, or beyond the scan limit
    value = 0;
  } else if (chip.reg[0x09] & (1 << (digit - 1))) {
    c = "0123456789-EHLP "[value & 0x0F];  // code B
  } else {
    c = segment_char(value);
  }
  out[(*n)++] = c;
  if (value & 0x80) out[(*n)++] = '.';
}

// Prints the display when it shows something new. A snapshot is taken when the firmware
// starts rewriting a register it already wrote since the last one (the reference sketch
// redraws all 8 digits on each pass of loop(), so that is once per pass: a frame the firmware
// parsed is always seen, however soon the next one follows), or after QUIET_US without a
// write (a firmware that writes only what changed).
static uint16_t written;  // the registers written since the last snapshot

static void snapshot(void) {
  char line[64];
  int n = 0;
  for (int position = 0; position < 8; position++) render_digit(8 - position, line, &n);
  line[n] = '\0';
  char text[96];
  snprintf(text, sizeof text, "digits=[%s] leds=%d%d%d%d%d", line, leds[0], leds[1], leds[2],
           leds[3], leds[4]);
  if (strcmp(text, shown) != 0) {
    snprintf(shown, sizeof shown, "%s", text);
    printf("display t=%llu %s\n", (unsigned long long)(avr->cycle / (F_CPU / 1000)), text);
  }
  written = 0;
}

static avr_cycle_count_t quiet(avr_t* a, avr_cycle_count_t when, void* param) {
  (void)a;
  (void)when;
  (void)param;
  snapshot();
  return 0;
}

static void wrote(void) {
  avr_cycle_timer_cancel(avr, quiet, NULL);
  avr_cycle_timer_register_usec(avr, QUIET_US, quiet, NULL);
}

static void on_pin(struct avr_irq_t* irq, uint32_t value, void* param) {
  (void)irq;
  int pin = (int)(intptr_t)param;
  int level = value & 1;
  if (pin == PIN_DIN) {
    chip.din = level;
  } else if (pin == PIN_CLK) {
    if (level && !chip.clk) {
      chip.shift = (uint16_t)(chip.shift << 1 | chip.din);
      chip.bits++;
    }
    chip.clk = level;
  } else if (pin == PIN_LOAD) {
    if (level && !chip.load) {
      // No bits at all: the sketch setting LOAD high at start, before any write.
      if (chip.bits != 16 && chip.bits != 0)
        printf("error max7219: %d bits before LOAD, not 16\n", chip.bits);
      if (chip.bits >= 16) {
        uint8_t reg = (chip.shift >> 8) & 0x0F;
        if (written & (1u << reg)) snapshot();
        chip.reg[reg] = chip.shift & 0xFF;
        written |= (uint16_t)(1u << reg);
        wrote();
      }
    }
    if (!level) chip.bits = 0;
    chip.load = level;
  } else {
    for (int i = 0; i < 5; i++)
      if (LED_PINS[i] == pin && leds[i] != level) {
        leds[i] = level;
        wrote();
      }
  }
}

// --- the UART, bridged to the pty.
static int uart_xon;  // the simulated UART has room for another received byte
static uint8_t rx[4096];
static size_t rx_len, rx_pos;
static char tx_line[LOG_LINE];
static size_t tx_len;

static void on_xon(struct avr_irq_t* irq, uint32_t value, void* param) {
  (void)irq;
  (void)value;
  (void)param;
  uart_xon = 1;
}

static void on_xoff(struct avr_irq_t* irq, uint32_t value, void* param) {
  (void)irq;
  (void)value;
  (void)param;
  uart_xon = 0;
}

// Keeps a line for stdout: "rx" (fed to the firmware) or "tx" (sent by it), once its LF is.
static void log_line(const char* what, char* line, size_t* length, char c) {
  if (c == '\n' || *length == LOG_LINE - 1) {
    line[*length] = '\0';
    printf("%s t=%llu %s\n", what, (unsigned long long)(avr->cycle / (F_CPU / 1000)), line);
    *length = 0;
  } else if (c != '\r') {
    line[(*length)++] = c;
  }
}

static void on_tx(struct avr_irq_t* irq, uint32_t value, void* param) {
  (void)irq;
  (void)param;
  char c = (char)value;
  if (write(pty_master, &c, 1) != 1 && errno != EAGAIN && errno != EIO)
    perror("display-sim: pty write");
  log_line("tx", tx_line, &tx_len, c);
}

static void feed_uart(void) {
  static char line[LOG_LINE];
  static size_t length;
  avr_irq_t* input = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
  while (uart_xon && rx_pos < rx_len) {
    log_line("rx", line, &length, (char)rx[rx_pos]);
    avr_raise_irq(input, rx[rx_pos++]);
  }
}

static int open_pty(void) {
  pty_master = posix_openpt(O_RDWR | O_NOCTTY);
  if (pty_master < 0 || grantpt(pty_master) != 0 || unlockpt(pty_master) != 0) return -1;
  // The slave stays open here too, so that a reader closing it (timerd reopening the port)
  // never leaves the master reading EIO; raw, as a USB serial port is.
  int slave = open(ptsname(pty_master), O_RDWR | O_NOCTTY);
  struct termios raw;
  if (slave < 0 || tcgetattr(slave, &raw) != 0) return -1;
  cfmakeraw(&raw);
  if (tcsetattr(slave, TCSANOW, &raw) != 0) return -1;
  fcntl(pty_master, F_SETFL, fcntl(pty_master, F_GETFL) | O_NONBLOCK);
  return 0;
}

static double wall_s(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + now.tv_nsec / 1e9;
}

// One command from stdin; false to stop.
static int command(char* line) {
  int pin;
  int pressed = sscanf(line, "press %d", &pin) == 1;
  if ((pressed || sscanf(line, "release %d", &pin) == 1) && pin >= 0 && pin <= 13) {
    printf("button t=%llu %s %d\n", (unsigned long long)(avr->cycle / (F_CPU / 1000)),
           pressed ? "press" : "release", pin);
    drive(pin, !pressed);
  } else if (strncmp(line, "quit", 4) == 0) {
    return 0;
  } else if (line[0] != '\n') {
    printf("error unknown command: %s", line);
  }
  return 1;
}

// simavr's own messages ("Loaded 7336 .text ...", warnings) go to stderr: stdout is the
// harness's line protocol above.
static void log_to_stderr(avr_t* a, const int level, const char* format, va_list ap) {
  if (a == NULL || a->log >= level) vfprintf(stderr, format, ap);
}

int main(int argc, char** argv) {
  double max_s = 120;
  if (argc == 4 && strcmp(argv[2], "--max-s") == 0) max_s = atof(argv[3]);
  if ((argc != 2 && argc != 4) || max_s <= 0) {
    fprintf(stderr, "usage: display-sim FIRMWARE.elf [--max-s SECONDS]\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  avr_global_logger_set(log_to_stderr);
  elf_firmware_t firmware;
  memset(&firmware, 0, sizeof firmware);
  if (elf_read_firmware(argv[1], &firmware) != 0) {
    fprintf(stderr, "display-sim: cannot read %s\n", argv[1]);
    return 1;
  }
  avr = avr_make_mcu_by_name("atmega328p");
  if (avr == NULL) return 1;
  avr_init(avr);
  avr->frequency = F_CPU;
  avr->log = LOG_WARNING;
  avr_load_firmware(avr, &firmware);
  avr->frequency = F_CPU;  // the ELF carries no .mmcu section: an Uno's crystal

  uint32_t flags = 0;
  avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
  flags &= ~(AVR_UART_FLAG_STDIO | AVR_UART_FLAG_POLL_SLEEP);
  avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT),
                          on_tx, NULL);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON),
                          on_xon, NULL);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF),
                          on_xoff, NULL);
  const int watched[] = {PIN_DIN, PIN_CLK, PIN_LOAD, 5, 6, 7, 8, 9};
  for (size_t i = 0; i < sizeof watched / sizeof watched[0]; i++)
    avr_irq_register_notify(pin_irq(watched[i]), on_pin, (void*)(intptr_t)watched[i]);
  drive(2, 1);  // the buttons are released: their pull-ups hold them high
  drive(3, 1);

  if (open_pty() != 0) {
    perror("display-sim: pty");
    return 1;
  }
  printf("pty %s\n", ptsname(pty_master));

  double start = wall_s();
  double worst_lag_s = 0;
  char line[256];
  size_t line_len = 0;
  for (;;) {
    avr_cycle_count_t until = avr->cycle + CHECK_CYCLES;
    while (avr->cycle < until) {
      int state = avr_run(avr);
      if (state == cpu_Done || state == cpu_Crashed) {
        printf("error the firmware stopped (simavr state %d)\n", state);
        return 1;
      }
    }
    double sim_s = (double)avr->cycle / F_CPU;
    double now = wall_s() - start;
    if (now > max_s) break;
    if (now - sim_s > worst_lag_s) worst_lag_s = now - sim_s;
    int wait_ms = sim_s - now > 0.002 ? (int)((sim_s - now) * 1000) : 0;  // ahead: wait
    struct pollfd fds[2] = {{pty_master, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    if (poll(fds, 2, wait_ms) < 0 && errno != EINTR) break;
    if (rx_pos == rx_len && (fds[0].revents & POLLIN)) {
      ssize_t got = read(pty_master, rx, sizeof rx);
      rx_len = got > 0 ? (size_t)got : 0;
      rx_pos = 0;
    }
    feed_uart();
    if (fds[1].revents & (POLLIN | POLLHUP)) {
      ssize_t got = read(STDIN_FILENO, line + line_len, sizeof line - 1 - line_len);
      if (got <= 0) break;
      line_len += (size_t)got;
      line[line_len] = '\0';
      char* end;
      int go = 1;
      while (go && (end = strchr(line, '\n')) != NULL) {
        char saved = end[1];
        end[1] = '\0';
        go = command(line);
        end[1] = saved;
        line_len -= (size_t)(end + 1 - line);
        memmove(line, end + 1, line_len + 1);
      }
      if (!go) break;
      if (line_len == sizeof line - 1) line_len = 0;  // an overlong command: dropped
    }
  }
  fprintf(stderr, "display-sim: %.1f s simulated in %.1f s, at worst %.0f ms behind the clock\n",
          (double)avr->cycle / F_CPU, wall_s() - start, worst_lag_s * 1000);
  return 0;
}
