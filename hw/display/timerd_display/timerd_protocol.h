// The display side of timerd's serial protocol, version 1 (docs/serial-protocol.md).
//
// Plain C++ with no Arduino headers and no heap: it builds for an AVR (Uno, Nano), an ESP32,
// and on a PC, where timerd's test suite compiles it and feeds it frames made by the daemon.

#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace timerd {

const uint8_t MAX_LINE = 128;      // bytes, line feed included
const uint8_t MAX_PENALTIES = 4;   // two per team
const uint8_t CLOCK_CHARS = 6;     // "99:59" and its NUL

// CRC-16/CCITT-FALSE: polynomial 0x1021, initial value 0xFFFF; "123456789" gives 0x29B1.
inline uint16_t crc16(const char* data, size_t length) {
  uint16_t crc = 0xFFFF;
  for (size_t i = 0; i < length; i++) {
    crc ^= (uint16_t)((uint8_t)data[i]) << 8;
    for (uint8_t bit = 0; bit < 8; bit++) {
      crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
  }
  return crc;
}

struct Penalty {
  char side;       // 'H' or 'A'
  char player[4];  // may be empty
  char clock[CLOCK_CHARS];
};

struct State {
  char phase[25];
  char clock[CLOCK_CHARS];  // as shown: "4:59", "9.9", "0:00"
  bool running, paused, last30, overtime, intermission;
  uint16_t period, periods, home, away;
  uint8_t penaltyCount;
  Penalty penalties[MAX_PENALTIES];
};

// Collects bytes into lines. A '$' starts the line afresh (whatever came before it is noise or
// the rest of a frame cut off by a full port); a frame longer than MAX_LINE is dropped whole.
class LineReader {
 public:
  // Feed one byte; true when line() holds a complete line (no CR, no LF).
  bool feed(char c) {
    if (c == '\n') {
      bool complete = !overlong_ && length_ > 0;
      buffer_[length_] = '\0';
      length_ = 0;
      overlong_ = false;
      return complete;
    }
    if (c == '\r') return false;
    if (c == '$') {
      length_ = 0;
      overlong_ = false;
    }
    if (length_ >= MAX_LINE - 1) {
      overlong_ = true;
      return false;
    }
    buffer_[length_++] = c;
    return false;
  }
  char* line() { return buffer_; }

 private:
  char buffer_[MAX_LINE] = {0};
  uint8_t length_ = 0;
  bool overlong_ = false;
};

// Checks a frame's start, checksum and version; on success cuts the line at '*' and returns the
// body ("TDS,1,...") in place, else nullptr.
inline char* checkFrame(char* line) {
  if (line[0] != '$') return nullptr;
  char* star = strchr(line, '*');
  if (star == nullptr || strlen(star + 1) != 4) return nullptr;
  char* end = nullptr;
  unsigned long sent = strtoul(star + 1, &end, 16);
  if (*end != '\0' || sent != crc16(line + 1, (size_t)(star - line - 1))) return nullptr;
  *star = '\0';
  if (strncmp(line + 1, "TD", 2) != 0 || strncmp(line + 4, ",1,", 3) != 0) return nullptr;
  return line + 1;
}

// The next field of a comma-separated body, empty fields kept (strtok would skip them).
inline char* nextField(char*& cursor, char separator = ',') {
  if (cursor == nullptr) return nullptr;
  char* field = cursor;
  char* comma = strchr(cursor, separator);
  if (comma != nullptr) {
    *comma = '\0';
    cursor = comma + 1;
  } else {
    cursor = nullptr;
  }
  return field;
}

inline void copyField(char* to, size_t size, const char* from) {
  strncpy(to, from, size - 1);
  to[size - 1] = '\0';
}

// The body of a state frame (from checkFrame) into `state`; false, and `state` untouched, if it
// is not one. Fields are cut apart in place.
inline bool parseState(char* body, State& state) {
  if (strncmp(body, "TDS,", 4) != 0) return false;
  char* cursor = body;
  char* fields[10];
  for (uint8_t i = 0; i < 10; i++) {
    fields[i] = nextField(cursor);
    if (fields[i] == nullptr) return false;
  }
  const char* flags = fields[4];
  if (strlen(flags) != 5) return false;
  State parsed;
  copyField(parsed.phase, sizeof parsed.phase, fields[2]);
  copyField(parsed.clock, sizeof parsed.clock, fields[3]);
  parsed.running = flags[0] == 'R';
  parsed.paused = flags[1] == 'P';
  parsed.last30 = flags[2] == 'L';
  parsed.overtime = flags[3] == 'O';
  parsed.intermission = flags[4] == 'I';
  parsed.period = (uint16_t)atoi(fields[5]);
  parsed.periods = (uint16_t)atoi(fields[6]);
  parsed.home = (uint16_t)atoi(fields[7]);
  parsed.away = (uint16_t)atoi(fields[8]);
  parsed.penaltyCount = 0;
  char* penalties = fields[9][0] != '\0' ? fields[9] : nullptr;
  while (penalties != nullptr && parsed.penaltyCount < MAX_PENALTIES) {
    char* item = nextField(penalties, ';');
    char* equals = strchr(item, '=');
    if (equals == nullptr) return false;
    *equals = '\0';
    Penalty& penalty = parsed.penalties[parsed.penaltyCount++];
    penalty.side = item[0];
    copyField(penalty.player, sizeof penalty.player, item[0] != '\0' ? item + 1 : item);
    copyField(penalty.clock, sizeof penalty.clock, equals + 1);
  }
  state = parsed;
  return true;
}

// The body of a reply line ("TDR,1,ok,toggle"): true if it is one; `accepted` tells ok from no.
inline bool parseReply(const char* body, bool& accepted) {
  if (strncmp(body, "TDR,1,", 6) != 0) return false;
  accepted = strncmp(body + 6, "ok,", 3) == 0;
  return true;
}

// Writes the command line for `command` (and `argument`, or nullptr) into `out`, LF included.
inline int commandLine(char* out, size_t size, const char* command, const char* argument) {
  char body[MAX_LINE];
  int length = argument != nullptr
                   ? snprintf(body, sizeof body, "TDC,1,%s,%s", command, argument)
                   : snprintf(body, sizeof body, "TDC,1,%s", command);
  if (length < 0 || length >= (int)sizeof body) return -1;
  return snprintf(out, size, "$%s*%04X\n", body, (unsigned)crc16(body, (size_t)length));
}

}  // namespace timerd
