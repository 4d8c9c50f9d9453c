"""The config's sections as frozen dataclasses, with their defaults and checks.

Each section is what one part reads (`[gpio]` the pins, `[web]` the scoreboard, `[signals]`
how each signal sounds, ...); `Config` is all of them. Each value's check is in its section's
`problems()`, with the rule or the reason it guards; `timerd.config.layers` builds them from
TOML and reports every problem at once.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

import tomli_w

from timerd.config import profiles
from timerd.config.paths import runtime_dir, state_dir
from timerd.config.schema import NONE_WORDS, Problem, keyed, to_plain
from timerd.core import rules
from timerd.core.checks import HOUR_S, at_most, durations, pattern
from timerd.core.effects import SignalKind
from timerd.core.profile import Profile

#: Why an idle timeout is at most an hour: an idle connection holds one of the capped places.
#: The shortest `web.token` taken (issue 36: a token is a secret; the installer's are longer).
MIN_TOKEN = 16
IDLE_WHY = "an idle connection holds one of the places of max_connections"


@dataclass(frozen=True)
class MatchConfig:
    #: A built-in profile name (`timerd profiles`) or the path of a profile file.
    profile: str = "ithf"


@dataclass(frozen=True)
class GpioConfig:
    """BCM pin numbers and how the parts are wired; the wiring table is in hw/README.md.

    Buttons close to ground against the Pi's internal pull-up (pressed reads low). Buzzers and
    LEDs are driven active high unless `*_active_high` says otherwise. A part that is not
    fitted is written "none".
    """

    #: auto: gpiozero's order (lgpio, rpigpio, pigpio, native); mock: simulated pins.
    pin_factory: Literal["auto", "lgpio", "rpigpio", "pigpio", "native", "mock"] = "auto"
    #: The lgpio factory's GPIO chip: a number (/dev/gpiochipN) or the chip's label (e.g.
    #: "pinctrl-rp1"); "auto": gpiozero's pick (0, or 4 on a Pi 5).
    chip: int | str = "auto"
    #: Each button's BCM pin, written `NAME_pin` (`start_pause_pin = 17`): one key for
    #: every button the phase machine and the rule modules declare (`timerd.core.rules.buttons`),
    #: with its meaning and its default pin.
    buttons: Mapping[str, int | None] = keyed("{}_pin", lambda: {
        b.name: (b.pin, f"{b.meaning} {b.wiring}".strip())
        for b in rules.buttons()})
    #: The buzzers (driven together): every signal's pattern, the one output that cannot fail.
    buzzer_pins: tuple[int, ...] = (22,)
    #: false: the buzzers sound while their pins are low (an active-low driver board).
    buzzer_active_high: bool = True
    #: The green LED: the clock runs.
    led_running_pin: int | None = 5
    #: The yellow LED: paused.
    led_paused_pin: int | None = 6
    #: The red LED: the last 30 seconds (ITHF 4.4); it flashes while timerd cannot write
    #: what it must keep (hw/README.md).
    led_last_30_pin: int | None = 13
    #: The face-off guard LED: lit while a goal cannot count (ITHF 5.6).
    led_faceoff_guard_pin: int | None = 19
    #: The passive-play warning LED (ITHF 8.3).
    led_passive_pin: int | None = 4
    #: Ball hockey: the horn relay (a loud 12 V horn for period ends and the final signal,
    #: pulses from the profile's [horn]).
    horn_pin: int | None = 26
    #: false for a relay module that switches on while its input is low.
    horn_active_high: bool = True
    #: An edge is taken once the button has been still this long (contact bounce).
    debounce_ms: float = 30.0
    #: How long RESET or UNDO is held to act (a short touch does nothing).
    long_press_s: float = 2.0

    def pins(self) -> dict[str, int]:
        """Every fitted part's pin, by config key."""
        named = {k: getattr(self, k) for k in self.__dataclass_fields__ if k.endswith("_pin")}
        named.update({f"{name}_pin": pin for name, pin in self.buttons.items()})
        out = {k: v for k, v in named.items() if v is not None}
        out.update({f"buzzer_pins[{i}]": p for i, p in enumerate(self.buzzer_pins)})
        return out

    def problems(self) -> list[str]:
        out: list[str] = []
        seen: dict[int, str] = {}
        for key, pin in self.pins().items():
            if not 0 <= pin <= 27:
                out.append(Problem(f"{key} = {pin}", "config.pin_range"))
            elif pin in seen:
                out.append(Problem(f"{key} = {pin}", "config.pin_used", by=seen[pin]))
            seen.setdefault(pin, key)
        if isinstance(self.chip, int) and self.chip < 0:
            out.append(Problem(f"chip = {self.chip}", "config.chip"))
        if self.debounce_ms < 0:
            out.append(Problem(f"debounce_ms = {self.debounce_ms:g}", "config.not_negative"))
        out += at_most(200, "a press shorter than this is lost", " ms",
                       debounce_ms=self.debounce_ms)
        out += durations(long_press_s=self.long_press_s)
        out += at_most(10, "a RESET or UNDO held longer is not a gesture anyone waits for", " s",
                       long_press_s=self.long_press_s)
        return out


@dataclass(frozen=True)
class KeypadConfig:
    """Buttons without soldering: a USB numeric keypad, presenter or game controller (an
    evdev input device), its keys mapped to the header's buttons (hw/README.md, "A USB
    keypad"). Off while `device` is empty. Each button is a list of key names as the kernel
    calls them (KEY_KPENTER, BTN_SOUTH: `evtest` shows what a key sends); an empty list leaves
    the button off. The keys follow `[gpio] debounce_ms` and `long_press_s`, and RESET with a
    GOAL key is the forfeit chord, as on the header.
    """

    #: The input device: its path (/dev/input/by-id/usb-...-event-kbd stays the same in any
    #: USB socket) or its name as the kernel gives it (`timerd doctor` lists them); empty: no
    #: keypad.
    device: str = ""
    #: While the device is missing (unplugged), look for it this often.
    retry_s: float = 1.0
    #: Each button's keys, written as the button's name (`start_pause = ["KEY_KPENTER"]`):
    #: one key for every button the phase machine and the rule modules declare
    #: (`timerd.core.rules.buttons`), with its meaning and its default keys.
    buttons: Mapping[str, tuple[str, ...]] = keyed("{}", lambda: {
        b.name: (b.keys, f"Keys for {b.meaning[:1].lower()}{b.meaning[1:]}")
        for b in rules.buttons()})

    def keys(self) -> dict[str, tuple[str, ...]]:
        """Each button that has keys, with its keys' names."""
        return {name: keys for name, keys in self.buttons.items() if keys}

    def key_names(self) -> list[str]:
        """Every key name the buttons have."""
        return [key for keys in self.keys().values() for key in keys]

    def problems(self) -> list[str]:
        out: list[str] = []
        codes = _evdev_codes() if self.device else None
        seen: dict[str, str] = {}
        for name, keys in self.keys().items():
            for i, key in enumerate(keys):
                where = f"{name}[{i}] = {key!r}"
                if not KEY_NAME.fullmatch(key):
                    out.append(Problem(where, "config.key_name"))
                elif codes is not None and key not in codes:
                    out.append(Problem(where, "config.no_such_key", suggest=_close(key, codes)))
                elif key in seen:
                    out.append(Problem(where, "config.key_used", by=seen[key]))
                seen.setdefault(key, name)
        out += durations(retry_s=self.retry_s)
        out += at_most(60, "a keypad plugged back in acts within a minute", " s",
                       retry_s=self.retry_s)
        return out


KEY_NAME = re.compile(r"(KEY|BTN)_[A-Z0-9_]+")


def _evdev_codes() -> frozenset[str] | None:
    """The key names python-evdev knows (None without it: the keypad says so when it starts)."""
    try:
        from evdev import ecodes  # noqa: PLC0415 (only with a keypad configured)
    except ImportError:
        return None
    return frozenset(name for name in dir(ecodes) if name.startswith(("KEY_", "BTN_")))


def _close(key: str, known: frozenset[str]) -> str | Problem:
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.8)
    return Problem("", "config.did_you_mean_key", name=close[0]) if close else ""


@dataclass(frozen=True)
class SignalOutput:
    """How one signal sounds on the buzzer and the speaker.

    `pattern_s` is one beep: on, off, on, ... in seconds. A signal with N beeps (ITHF 4.4: as
    many as minutes are left) repeats it N times, `gap_s` apart.
    """

    #: Sound this signal on the buzzers.
    buzzer: bool = True
    #: One beep: on, off, on, ... seconds.
    pattern_s: tuple[float, ...] = (0.25,)
    #: The pause between the beeps of a signal with several.
    gap_s: float = 0.35
    #: Also play a WAV on the speaker ([speaker], docs/sound.md).
    speaker: bool = True
    #: A built-in sound's name (`interval`, `final`, ...) or a WAV file's path; empty: the
    #: built-in named like the signal. A file that cannot be used is logged at startup and the
    #: built-in plays instead.
    sound: str = ""
    #: Speaker loudness of this signal, 0 to 1 (applied once, when the sounds are loaded).
    volume: float = 1.0

    def problems(self) -> list[str]:
        out = pattern("pattern_s", self.pattern_s)
        if self.gap_s < 0:
            out.append(Problem(f"gap_s = {self.gap_s:g}", "config.not_negative"))
        out += at_most(10, "the pause between the beeps of one signal", " s", gap_s=self.gap_s)
        if not 0 <= self.volume <= 1:
            out.append(Problem(f"volume = {self.volume:g}", "config.volume"))
        return out


def _default_signals() -> Mapping[SignalKind, SignalOutput]:
    # Distinct by ear: acknowledgements are 50 ms chirps, counted beeps are 250 ms, the start
    # is one long 1 s tone and the final a 2.5 s one (ITHF 4.4: "clear, unmistakable").
    k = SignalKind
    return MappingProxyType({
        k.PRE_SIGNAL: SignalOutput(pattern_s=(0.15, 0.1, 0.15, 0.1, 0.6)),
        k.START: SignalOutput(pattern_s=(1.0,)),
        k.INTERVAL: SignalOutput(pattern_s=(0.25,), gap_s=0.35),
        k.LAST_30: SignalOutput(pattern_s=(0.1, 0.08, 0.1, 0.08, 0.1)),
        k.PERIOD_END: SignalOutput(pattern_s=(1.5,)),
        k.FINAL: SignalOutput(pattern_s=(2.5,)),
        k.PAUSE: SignalOutput(pattern_s=(0.05,)),
        k.RESUME: SignalOutput(pattern_s=(0.05, 0.08, 0.05)),
        # A counted goal is a quick rising "da-daa"; "no goal" two long flat tones, so the
        # two cannot be mistaken (ITHF 5.6, 6.5, 10.3).
        k.GOAL: SignalOutput(pattern_s=(0.08, 0.06, 0.3)),
        k.GOAL_REJECTED: SignalOutput(pattern_s=(0.6, 0.15, 0.6)),
        k.PASSIVE_WARNING: SignalOutput(pattern_s=(0.08, 0.08, 0.08, 0.08, 0.08, 0.08, 0.08)),
        k.BREAK_WARNING: SignalOutput(pattern_s=(0.15, 0.1, 0.15, 0.1, 0.6)),
        k.OVERTIME_START: SignalOutput(pattern_s=(1.0,)),
        k.INTERMISSION_END: SignalOutput(pattern_s=(1.5,)),
        # Four quick chirps: "I restarted; the match is restored and paused" (ITHF 10.2).
        k.RECOVERED: SignalOutput(pattern_s=(0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05)),
        # Ball hockey: the end of a timeout or a penalty is a double tone, a line-change stage
        # short beeps counted by stage (ISBHF 404b), half-time and the goalie's time long tones.
        k.TIMEOUT_END: SignalOutput(pattern_s=(0.5, 0.15, 0.5)),
        k.PENALTY_END: SignalOutput(pattern_s=(0.3, 0.1, 0.3)),
        k.LINE_CHANGE: SignalOutput(pattern_s=(0.15,), gap_s=0.2),
        k.HALF_PERIOD: SignalOutput(pattern_s=(1.0,)),
        k.GOALIE_CHANGE_END: SignalOutput(pattern_s=(1.0, 0.2, 1.0)),
    })


@dataclass(frozen=True)
class SpeakerConfig:
    """The speaker beside the buzzer: ALSA's default device, through libasound (issue 33).

    The buzzer stays the signal that cannot fail; the speaker adds the jingle, the horn and the
    last-30-seconds music (ITHF 4.4). Which signals it plays is `signals.<kind>.speaker`.
    """

    #: false: no speaker (the buzzer alone signals).
    enabled: bool = True
    #: Start with the speaker muted (`timerctl mute off` unmutes).
    muted: bool = False
    #: Start with the buzzer muted (`timerctl mute buzzer off` unmutes).
    buzzer_muted: bool = False
    #: The last 30 seconds (ITHF 4.4): "cue" plays the last_30 sound once; "music" plays
    #: `music` so that it ends exactly at 0:00, stopping on a pause and going on from the same
    #: place on resume (ITHF 10.2).
    last_30: Literal["cue", "music"] = "cue"
    #: The music: a built-in sound's name or a WAV file's path, at least 30 s long (a longer
    #: one plays its last 30 s). Its volume is `signals.last_30.volume`.
    music: str = "last_30_music"
    #: While the sound device fails, try it again this often, in the background.
    retry_s: float = 5.0

    def problems(self) -> list[str]:
        return durations(retry_s=self.retry_s) + at_most(
            60, "the sound comes back within a minute of the device", " s", retry_s=self.retry_s)


#: Commands one client may have applied (`[control]` and `[web]`): a burst, then a steady rate
#: (issue 42). A scorekeeper sends a few a second; a tool catching a match up, a burst.
COMMANDS_PER_S = 10.0
COMMAND_BURST = 60


def command_rate_problems(per_s: float, burst: int) -> list[str]:
    out: list[str] = [] if per_s > 0 else [
        Problem(f"commands_per_s = {per_s:g}", "config.positive")]
    return out + ([] if burst >= 1 else [Problem(f"command_burst = {burst}",
                                                 "config.at_least_1")])


@dataclass(frozen=True)
class ControlConfig:
    """The control socket for timerctl and tools (limits: docs/service.md)."""

    #: Unix socket for timerctl; empty: control.sock in the runtime directory.
    socket: str = ""
    #: Tools connected at once; a new one over the cap hangs up on the one that waited
    #: longest for its next request, or is refused if every one is busy.
    max_connections: int = 32
    #: A connection that sends no complete request line for this long is closed.
    idle_timeout_s: float = 60.0
    #: Commands one user's tools may have applied: `command_burst` at once, then this many a
    #: second; more are refused, not applied (asking for the status is not counted).
    commands_per_s: float = COMMANDS_PER_S
    #: Commands one user's tools may have applied at once, before `commands_per_s` holds.
    command_burst: int = COMMAND_BURST

    def problems(self) -> list[str]:
        out = durations(idle_timeout_s=self.idle_timeout_s) + at_most(
            HOUR_S, IDLE_WHY, " s", idle_timeout_s=self.idle_timeout_s)
        if self.max_connections < 1:
            out.append(Problem(f"max_connections = {self.max_connections}", "config.at_least_1"))
        return out + command_rate_problems(self.commands_per_s, self.command_burst)


@dataclass(frozen=True)
class ResultsConfig:
    #: The results file, one JSON line per finished match; empty: results.jsonl in the state
    #: directory (systemd's StateDirectory, else ~/.local/state/timerd); "none": not written.
    path: str = ""


@dataclass(frozen=True)
class WebConfig:
    """The web scoreboard and HTTP/WebSocket API (docs/api.md).

    The host is 0.0.0.0 so that phones and tournament screens on the hall's network see the
    scoreboard; what is open is read-only, and control needs `token` (empty: HTTP control is
    off). Write 127.0.0.1 to serve only a browser on the Pi itself (the HDMI screen).
    """

    #: false: no scoreboard page and no HTTP API.
    enabled: bool = True
    #: The address to listen on: 0.0.0.0 every interface, 127.0.0.1 only the Pi itself.
    host: str = "0.0.0.0"
    #: The TCP port; 0: any free port (it is logged).
    port: int = 8080
    #: The bearer token for POST /api/command; the config file is root:timerd 0640.
    token: str = ""
    #: Where the control page and POST /api/command are served: empty, on host:port with
    #: the scoreboard; "HOST:PORT", on a listener of their own (e.g. "127.0.0.1:8081": only
    #: on the Pi), and host:port is then read-only (docs/api.md, "Choosing where control is").
    control: str = ""
    #: Connections at once per listener; a new one over the cap takes the place of the one
    #: idle longest, or gets a 503 if every one is busy (a WebSocket is always busy).
    max_connections: int = 256
    #: A connection must send a whole request's headers within this many seconds of
    #: connecting or of its previous response, else it is closed (slowloris, idle sockets).
    idle_timeout_s: float = 15.0
    #: Addresses of reverse proxies (the TLS proxy of docs/api.md) whose X-Forwarded-For is
    #: believed: a request through one counts as from the client it names, for the
    #: wrong-token lockout and the WebSocket caps. Empty: the header is ignored.
    trusted_proxies: tuple[str, ...] = ()
    #: Who may show the scoreboard (`/`) in a frame, as CSP `frame-ancestors` sources (e.g.
    #: "'self' http://192.168.1.20:8000" for a stream overlay). Empty: nobody. The control
    #: page and the API are never framable.
    scoreboard_frame_ancestors: str = ""
    #: Commands one address may have applied through POST /api/command: `command_burst` at
    #: once, then this many a second; more get 429, not applied.
    commands_per_s: float = COMMANDS_PER_S
    #: Commands one address may have applied at once, before `commands_per_s` holds.
    command_burst: int = COMMAND_BURST

    def control_address(self) -> tuple[str, int] | None:
        """`control` as (host, port), or None when control shares the scoreboard's port."""
        if not self.control:
            return None
        host, _, port = self.control.rpartition(":")
        return host.strip("[]"), int(port)

    def problems(self) -> list[str]:
        out = durations(idle_timeout_s=self.idle_timeout_s) + at_most(
            HOUR_S, IDLE_WHY, " s", idle_timeout_s=self.idle_timeout_s)
        if self.max_connections < 1:
            out.append(Problem(f"max_connections = {self.max_connections}", "config.at_least_1"))
        out += command_rate_problems(self.commands_per_s, self.command_burst)
        host, _, port = self.control.rpartition(":")
        if self.control and not (host and port.isdigit() and 0 <= int(port) <= 65535):
            out.append(Problem(f"control = {self.control!r}", "config.control"))
        if not 0 <= self.port <= 65535:
            out.append(Problem(f"port = {self.port}", "config.web_port"))
        if not self.host:
            out.append(Problem("host", "config.host"))
        if any(not 33 <= ord(c) <= 126 for c in self.token):
            out.append(Problem("token", "config.token_ascii"))
        elif self.token and len(self.token) < MIN_TOKEN:
            out.append(Problem("token", "config.token_short", n=len(self.token),
                               least=MIN_TOKEN))
        for proxy in self.trusted_proxies:
            try:
                ipaddress.ip_address(proxy)
            except ValueError:
                out.append(Problem("trusted_proxies", "config.not_ip", proxy=repr(proxy)))
        if any(c in self.scoreboard_frame_ancestors for c in ";,\r\n"):
            out.append(Problem("scoreboard_frame_ancestors", "config.frame_ancestors"))
        return out


@dataclass(frozen=True)
class SerialConfig:
    """A serial LED display or scoreboard (docs/serial-protocol.md, wiring in hw/display/).

    Off while `port` is empty. A stable name such as /dev/serial/by-id/usb-... survives
    replugging into another USB socket; /dev/ttyUSB0 or /dev/ttyACM0 may change.
    """

    #: The display's serial device (/dev/serial/by-id/... is stable); empty: no display.
    port: str = ""
    #: The line speed, as the display's firmware sets it.
    baud: int = 115200
    #: The frame format on the wire, as printed in the display's manual (8N1 is the default
    #: of every Arduino and of most scoreboards).
    data_bits: Literal[5, 6, 7, 8] = 8
    #: The frame's parity bit.
    parity: Literal["none", "even", "odd"] = "none"
    #: The frame's stop bits.
    stop_bits: Literal[1, 2] = 1
    #: The whole state is sent again at least this often, so a display can tell a dead link.
    keepalive_s: float = 1.0
    #: Retries to open a missing port back off from 0.5 s up to this.
    retry_max_s: float = 5.0

    def problems(self) -> list[str]:
        out: list[str] = []
        if self.baud <= 0:
            out.append(Problem(f"baud = {self.baud}", "config.baud"))
        out += at_most(4_000_000, "no USB serial adapter goes faster", baud=self.baud)
        out += durations(keepalive_s=self.keepalive_s)
        out += at_most(60, "the display tells a dead link by the keepalive", " s",
                       keepalive_s=self.keepalive_s)
        if self.retry_max_s < 0.5:
            out.append(Problem(f"retry_max_s = {self.retry_max_s:g}", "config.retry_max"))
        return out + at_most(60, "a display plugged back in shows the match within a minute",
                             " s", retry_max_s=self.retry_max_s)


@dataclass(frozen=True)
class StateConfig:
    """Crash-safe match state (docs/service.md): a journal on disk, a heartbeat in RAM."""

    #: The match journal's directory; empty: systemd's StateDirectory, else the user's.
    directory: str = ""
    #: The heartbeat's directory (keep it in RAM); empty: the runtime directory.
    runtime_directory: str = ""
    #: A match last seen longer ago than this is closed as abandoned, not resumed.
    resume_within_s: float = 7200.0

    def problems(self) -> list[str]:
        return durations(resume_within_s=self.resume_within_s) + at_most(
            7 * 86400, "a match a week old is not resumed", " s",
            resume_within_s=self.resume_within_s)


@dataclass(frozen=True)
class TableConfig:
    #: This table's label on the scoreboard, the control page and the hall desk ("Table 3");
    #: empty: none shown. Hall mode names the table by `hall.table` on the broker.
    name: str = ""

    def problems(self) -> list[str]:
        if len(self.name) > 40 or not self.name.isprintable():
            return [Problem(f"name = {self.name!r}", "config.table_name")]
        return []


@dataclass(frozen=True)
class UiConfig:
    """What people read: the scoreboard, the control page, the terminal, `timerctl`."""

    #: en, sl or sk; "auto": the web page follows the browser's languages, the terminal and
    #: timerctl (its replies, errors and help), `timerd hall`, and the help, usage errors and
    #: config errors of `timerd` the locale (LC_ALL, LC_MESSAGES, LANG). Texts come from
    #: timerd/i18n/ (timerd.i18n). `timerd`'s help and config errors take it from
    #: /etc/timerd/timerd.toml when that file is valid, else from the locale.
    language: Literal["auto", "en", "sl", "sk"] = "auto"


@dataclass(frozen=True)
class LogConfig:
    #: The least important log lines written (to the journal, or stderr by hand).
    level: Literal["debug", "info", "warning", "error"] = "info"


#: Characters MQTT gives a meaning in topic names; a hall or table name must not contain them.
TOPIC_SPECIAL = "/+#"


@dataclass(frozen=True)
class HallConfig:
    """Hall mode (docs/hall.md): this table on a tournament's MQTT broker. Needs aiomqtt (the
    `hall` extra).

    The desk (`timerd hall ...`) reads the same section for the broker and the hall name.
    """

    #: true: this table joins the hall (the desk sees it, results go to the broker).
    enabled: bool = False
    #: The MQTT broker's host name or address.
    host: str = "localhost"
    #: The broker's port (1883; 8883 is usual with TLS).
    port: int = 1883
    #: Talk to the broker over TLS (its certificate checked against `ca_file`).
    tls: bool = False
    #: CA bundle to check the broker's certificate with; empty: the system's CAs.
    ca_file: str = ""
    #: The broker's user name for this table; empty: none.
    username: str = ""
    #: That user's password (masked by `timerd config`); the config file is root:timerd 0640.
    password: str = ""
    #: true: a table or desk without a login (`username`) talks to an anonymous broker, whom
    #: anyone on the hall's network may command; false: refused, `timerd hall secure` makes
    #: the logins (docs/hall.md, issue 41 item 5).
    allow_anonymous: bool = False
    #: Every topic is under timerd/<hall>/.
    hall: str = "hall"
    #: This table's id in topics; empty: the machine's host name.
    table: str = ""
    #: The retained state is sent on every change and at least this often (the desk's
    #: "last seen").
    heartbeat_s: float = 5.0
    #: Reconnect backoff doubles from 1 s up to this.
    reconnect_max_s: float = 30.0
    #: Results waiting for the broker's acknowledgement; empty: hall-outbox in the table's
    #: state directory (`state.directory`, per `--instance`). Kept on disk so a result
    #: survives a restart of the daemon; one daemon's alone (a second refuses to start).
    outbox: str = ""
    #: How chrony is asked for the clock offset; "none": do not ask.
    chronyc: str = "chronyc"
    #: Where chrony is not installed, systemd-timesyncd is asked through this (Raspberry Pi
    #: OS's default); "none": do not ask.
    timedatectl: str = "timedatectl"
    #: How often the table's clock offset is asked for and reported to the desk.
    clock_check_s: float = 60.0
    #: The desk warns about a table whose clock is further off than this, or unsynchronised.
    max_offset_ms: float = 20.0

    def table_id(self) -> str:
        return self.table or socket.gethostname()

    def anonymous(self) -> Problem | None:
        """Why this table or desk may not talk to the broker as it is configured: no login,
        and `allow_anonymous` not set (None: it may)."""
        if self.username or self.allow_anonymous:
            return None
        return Problem("username = ''", "config.anonymous")

    def problems(self) -> list[str]:
        out = [] if not self.enabled or (why := self.anonymous()) is None else [why]
        for key in ("hall", "table"):
            value = getattr(self, key)
            if any(c in value for c in TOPIC_SPECIAL) or (key == "hall" and not value):
                out.append(Problem(f"{key} = {value!r}", "config.topic_level"))
        if not 0 < self.port < 65536:
            out.append(Problem(f"port = {self.port}", "config.port"))
        for key in ("heartbeat_s", "reconnect_max_s", "clock_check_s", "max_offset_ms"):
            if getattr(self, key) <= 0:
                out.append(Problem(f"{key} = {getattr(self, key):g}", "config.positive"))
        return out + at_most(
            HOUR_S, "the desk must hear from a table, and a table from the broker, hourly",
            " s", heartbeat_s=self.heartbeat_s, reconnect_max_s=self.reconnect_max_s,
            clock_check_s=self.clock_check_s) + at_most(
            1000, "a table clock a second off is of no use to a hall", " ms",
            max_offset_ms=self.max_offset_ms)


#: The largest PM QoS request the kernel takes (a signed 32-bit count of µs).
MAX_CPU_LATENCY_US = 2**31 - 1


@dataclass(frozen=True)
class ServiceConfig:
    """How the event loop's thread is scheduled (`timerd.priority`, docs/service.md).

    `realtime` (the default) measured best on a busy machine: with CPU burners in timerd's own
    session, press to buzzer p99 fell from 6.4 to 0.9 ms and pulse length error p99 from 4.1 to
    1.6 ms (docs/BENCHMARKS.md); in a quick run the onset p99 fell from 4.3 to 0.4 ms.
    `cpu_latency_us = 0` (the default) keeps the CPUs out of slow idle states while the daemon
    runs: on an idle 2-core VM, press to buzzer p99 was 0.87 and 0.94 ms in two runs with it,
    2.13 and 1.15 ms without (docs/service.md).
    """

    #: off: as started; nice: nice value `nice`; realtime: SCHED_FIFO at `rt_priority`.
    priority: Literal["off", "nice", "realtime"] = "realtime"
    #: SCHED_FIFO priority, 1 to 99; the unit's LimitRTPRIO= must allow it.
    rt_priority: int = 10
    #: Nice value for `priority = "nice"`, -20 (most CPU) to 19; LimitNICE= must allow it.
    nice: int = -10
    #: The longest wake-up, in µs, that the CPUs' idle states may take while the daemon runs
    #: (the kernel's PM QoS, /dev/cpu_dma_latency); -1 leaves the idle states to the kernel.
    cpu_latency_us: int = 0

    def problems(self) -> list[str]:
        out: list[str] = []
        if not 1 <= self.rt_priority <= 99:
            out.append(Problem(f"rt_priority = {self.rt_priority}", "config.rt_priority"))
        if not -20 <= self.nice <= 19:
            out.append(Problem(f"nice = {self.nice}", "config.nice"))
        if not -1 <= self.cpu_latency_us <= MAX_CPU_LATENCY_US:
            out.append(Problem(f"cpu_latency_us = {self.cpu_latency_us}", "config.cpu_latency",
                               most=MAX_CPU_LATENCY_US))
        return out


@dataclass(frozen=True)
class Config:
    match: MatchConfig = MatchConfig()
    table: TableConfig = TableConfig()
    gpio: GpioConfig = field(default_factory=GpioConfig)  # its buttons: the registry's now
    keypad: KeypadConfig = field(default_factory=KeypadConfig)
    signals: Mapping[SignalKind, SignalOutput] = field(default_factory=_default_signals)
    speaker: SpeakerConfig = SpeakerConfig()
    control: ControlConfig = ControlConfig()
    web: WebConfig = WebConfig()
    ui: UiConfig = UiConfig()
    state: StateConfig = StateConfig()
    serial: SerialConfig = SerialConfig()
    log: LogConfig = LogConfig()
    results: ResultsConfig = ResultsConfig()
    hall: HallConfig = HallConfig()
    service: ServiceConfig = ServiceConfig()

    def profile(self) -> Profile:
        return profiles.load(self.match.profile)

    def control_socket(self) -> Path:
        """`control.socket`, else control.sock in the runtime directory (which
        `state.runtime_directory` moves, as `timerd doctor` says)."""
        return Path(self.control.socket) if self.control.socket \
            else self.runtime_directory() / "control.sock"

    def state_directory(self) -> Path:
        return Path(self.state.directory) if self.state.directory else state_dir()

    def runtime_directory(self) -> Path:
        return Path(self.state.runtime_directory) if self.state.runtime_directory \
            else runtime_dir()

    def results_path(self) -> Path | None:
        if self.results.path.lower() in NONE_WORDS:
            return None if self.results.path else self.state_directory() / "results.jsonl"
        return Path(self.results.path)

    def to_toml(self, *, secrets: bool = False) -> str:
        """The config as TOML; the secrets (`web.token`, `hall.password`) masked unless
        `secrets`, so that `timerd config` can be pasted into a forum post or a bug report."""
        plain = to_plain(self)
        if not secrets:
            for section, key in SECRETS:
                if plain[section][key]:
                    plain[section][key] = MASK
        return tomli_w.dumps(plain)


#: Config keys that hold a secret, and what `timerd config` shows for one that is set.
SECRETS = (("web", "token"), ("hall", "password"))
MASK = "********"


def hall_outbox(config: Config) -> Path:
    """Where hall mode keeps results not yet acknowledged: `hall.outbox`, else in the table's
    state directory (`state.directory`, else systemd's StateDirectory or the instance's XDG
    one), so that tables on one machine, each with its own, never share it (issue 41 item 4)."""
    if config.hall.outbox:
        return Path(config.hall.outbox)
    return config.state_directory() / "hall-outbox"
