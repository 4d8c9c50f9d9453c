"""The speaker: signal sounds through ALSA beside the GPIO buzzer (ITHF 4.3, 4.4).

Wiring: a powered speaker or a small amplifier on whatever ALSA calls its "default" device:
the Pi's 3.5 mm jack, HDMI audio, or a USB sound card (choose it with `/etc/asound.conf` or
`~/.asoundrc`, see docs/sound.md). Nothing is wired to the GPIO header for it.

The buzzer stays the signal that cannot fail. The speaker adds what a buzzer cannot: the
pre-signal jingle, the horn, the last-30-seconds music. So it is built to never get in the
match's way:

- Every sound is read, checked and volume-scaled once at startup (`SoundBank.load`); a user WAV
  that cannot be used is logged with its key path and the built-in plays instead. A built-in
  sound at full volume is mapped from its file rather than copied into the daemon's memory
  (`read_wav(mapped=True)`): its pages are the page cache's, shared and dropped under memory
  pressure, and only the sounds that play are ever paged in, by the playback thread (it
  reads the buffer there, never on the event loop). The kinds whose sound is repeated on
  the loop (`COUNTED`) and a user's WAV (rewriting a mapped file in place would crash the
  daemon with SIGBUS) are copied into memory as before.
- The device is owned by one playback thread for the daemon's life (`AlsaPlayer`): it opens
  ALSA's PCM at startup and keeps it open, and is handed each sound. Its ALSA calls go through
  ctypes, which releases the interpreter's lock, so an open that parses ALSA's configuration,
  a retry, or a write waiting for the card never holds the event loop: no buzzer edge waits
  for the speaker (issue 33; chosen by measurement against a helper process, docs/sound.md).
- One voice: a new sound cuts the one still playing, as on the buzzer, so the device never needs
  to mix two streams.
- A failing device (no card, unplugged mid-match) is logged once; the match and the buzzer go on,
  the playback thread tries the device again every `retry_s` and it is logged when it is back.
- The last-30 music starts where it must to end exactly at 0:00, from the match status's
  `remaining_s`; it stops on a pause and goes on from the same sample on resume (ITHF 10.2).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import mmap
import threading
import time
import wave
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from timerd.config import Config, SignalOutput, SpeakerConfig
from timerd.core.effects import Phase, PhaseChanged, Signal, SignalKind
from timerd.core.refused import CommandRefused
from timerd.core.settings import PLACEABLE
from timerd.core.status import Status
from timerd.limits import RateLimitedLog
from timerd.ports import Buzzer, Control, Dispatch, ExtraCommand

log = logging.getLogger("timerd.audio")

#: The built-in WAVs (sounds/ in the source tree, package data when installed), each named
#: after the signal kind it serves: a kind's default sound is the built-in of its own name.
BUILTIN_DIR = Path(__file__).resolve().parent.parent / "sounds"
MUSIC = "last_30_music"
SAMPLE_BYTES = 2  # 16-bit PCM only: what every ALSA device and simpleaudio take as is
RATES_HZ = (8000, 192000)
#: Kinds whose signal may sound N times over (`Signal.beeps`): the placed signals (ITHF 4.4,
#: as many beeps as minutes left) and the line change (ISBHF 404b, beeps = the stage). Their
#: N-fold sound is made on the event loop when it first sounds, so their PCM is kept in
#: memory: never a read from the file (a page fault) on the loop.
COUNTED = PLACEABLE | {SignalKind.LINE_CHANGE}


class SoundError(Exception):
    """A WAV file that cannot be played; the message says why, for the operator."""


@dataclass(frozen=True)
class Sound:
    """Signed 16-bit little-endian PCM, ready to hand to ALSA; `times` > 1 for N beeps.

    `pcm` is bytes, or a read-only view of a mapped WAV file's data (`read_wav(mapped=True)`).
    """

    name: str
    source: str  # for logs: "built-in final.wav" or the user's path
    pcm: bytes | memoryview
    channels: int
    rate_hz: int
    times: int = 1

    @property
    def frame_bytes(self) -> int:
        return self.channels * SAMPLE_BYTES

    @property
    def frames(self) -> int:
        return len(self.pcm) // self.frame_bytes

    @property
    def duration_s(self) -> float:
        return self.frames / self.rate_hz

    def from_frame(self, frame: int) -> memoryview:
        """The PCM from `frame` on, without copying it."""
        return memoryview(self.pcm)[frame * self.frame_bytes:]

    def scaled(self, volume: float) -> Sound:
        """The sound at `volume`, sample by sample into one new array: no list of every
        sample on the way (the 30 s music at half volume: peak RSS +8 MB, not +49 MB)."""
        if volume == 1:
            return self
        samples = array("h")
        samples.frombytes(self.pcm)  # array("h", view) would take each byte as a sample
        return replace(self, pcm=array("h", (round(s * volume) for s in samples)).tobytes())

    def repeated(self, times: int) -> Sound:
        """The sound `times` over, back to back: ITHF 4.4's N beeps for N minutes left."""
        return replace(self, pcm=bytes(self.pcm) * times, times=times) if times > 1 else self


def read_wav(path: Path, name: str, *, mapped: bool = False) -> Sound:
    """A 16-bit PCM WAV (mono or stereo) from `path`; SoundError says what is wrong with it.

    `mapped`: the PCM is a view of the file mapped read-only, not a copy: its pages are read
    when something reads them. Only for files that are replaced, never rewritten in place (the
    built-ins, replaced by an upgrade): a mapped file cut short under the daemon is a SIGBUS.
    The mapping keeps a descriptor of the file open (one per mapped sound, some 20).
    """
    try:
        with path.open("rb") as file, wave.open(file) as w:
            channels, width, rate = w.getnchannels(), w.getsampwidth(), w.getframerate()
            if mapped:
                # wave.open has read the headers up to the data chunk's: its data starts here.
                start = file.tell()
                data = memoryview(mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ))
                pcm: bytes | memoryview = data[start:start + w.getnframes() * width * channels]
            else:
                pcm = w.readframes(w.getnframes())
    except FileNotFoundError:
        raise SoundError("no such file") from None
    except OSError as exc:
        raise SoundError(f"cannot read it ({exc.strerror or exc})") from None
    except (wave.Error, EOFError) as exc:
        raise SoundError(f"not a PCM WAV file ({exc})") from None
    if width != SAMPLE_BYTES:
        raise SoundError(f"{8 * width}-bit samples; timerd plays 16-bit PCM "
                         "(convert it: sox IN.wav -b 16 OUT.wav)")
    if channels not in (1, 2):
        raise SoundError(f"{channels} channels; timerd plays mono or stereo")
    if not RATES_HZ[0] <= rate <= RATES_HZ[1]:
        raise SoundError(f"sample rate {rate} Hz; timerd plays {RATES_HZ[0]} to {RATES_HZ[1]} Hz")
    if len(pcm) < channels * SAMPLE_BYTES:
        raise SoundError("no audio in it")
    return Sound(name, str(path), pcm, channels, rate)


def builtin_names() -> list[str]:
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.wav"))


def builtin(name: str, *, mapped: bool = False) -> Sound:
    sound = read_wav(BUILTIN_DIR / f"{name}.wav", name, mapped=mapped)
    return replace(sound, source=f"built-in {name}.wav")


def _is_path(spec: str) -> bool:
    return "/" in spec or spec.lower().endswith(".wav")


def resolve(spec: str, default: str, key: str, *, mapped: bool = False
            ) -> tuple[Sound | None, str | None]:
    """The sound `spec` (a built-in name or a path; empty: `default`) and a problem, if any.

    A sound that cannot be used falls back to the built-in `default` (the buzzer sounds
    anyway, and the speaker should not go silent over a typo); the problem names the key path
    and what plays instead, for the startup log. `mapped`: a built-in is mapped from its file
    (`read_wav`); a user's file is always read into memory.
    """
    builtins = builtin_names()
    wanted = spec or default
    try:
        if _is_path(wanted):
            sound = read_wav(Path(wanted).expanduser(), default)
        elif wanted in builtins:
            sound = builtin(wanted, mapped=mapped)
        elif not spec:
            return None, (f"{key}: no built-in sound named {default!r}; the speaker stays "
                          "silent for it (the buzzer still sounds)")
        else:
            import difflib  # noqa: PLC0415 (only to name a close match in a typo's message)

            close = difflib.get_close_matches(wanted, builtins, n=1)
            hint = f" (did you mean `{close[0]}`?)" if close else ""
            raise SoundError(f"no built-in sound of that name{hint} and not a path "
                             f"(built-ins: {', '.join(builtins)})")
    except SoundError as exc:
        try:
            fallback: Sound | None = builtin(default, mapped=mapped)
            instead = f"the built-in {default}.wav plays instead"
        except SoundError:
            fallback, instead = None, "the speaker stays silent for it (the buzzer still sounds)"
        return fallback, f"{key} = {wanted!r}: {exc}; {instead}"
    return replace(sound, name=default), None


@dataclass
class SoundBank:
    """Every sound the speaker may play, loaded and volume-scaled once, at startup; the
    built-ins at full volume mapped from their files, except the `COUNTED` kinds'."""

    sounds: dict[str, Sound] = field(default_factory=dict)  # by signal kind value
    music: Sound | None = None  # only in last-30 "music" mode
    problems: list[str] = field(default_factory=list)
    _repeats: dict[tuple[str, int], Sound] = field(default_factory=dict)

    @classmethod
    def load(cls, signals: Mapping[SignalKind, SignalOutput], speaker: SpeakerConfig) -> SoundBank:
        bank = cls()
        for kind in SignalKind:
            out = signals.get(kind, SignalOutput())
            if not out.speaker:
                continue
            sound, problem = resolve(out.sound, kind.value, f"signals.{kind.value}.sound",
                                     mapped=kind not in COUNTED)
            if problem:
                bank.problems.append(problem)
            if sound is not None:
                bank.sounds[kind.value] = sound.scaled(out.volume)
        last_30 = signals.get(SignalKind.LAST_30, SignalOutput())
        if speaker.last_30 == "music" and last_30.speaker:
            music, problem = resolve(speaker.music, MUSIC, "speaker.music", mapped=True)
            if problem:
                bank.problems.append(problem)
            if music is not None:
                bank.music = replace(music, name=MUSIC).scaled(last_30.volume)
        return bank

    def sound(self, kind: SignalKind, beeps: int = 1) -> Sound | None:
        base = self.sounds.get(kind.value)
        if base is None or beeps <= 1:
            return base
        key = (kind.value, beeps)
        if key not in self._repeats:
            self._repeats[key] = base.repeated(beeps)
        return self._repeats[key]


# -- players --------------------------------------------------------------------------------

class Playback(Protocol):
    def is_playing(self) -> bool: ...
    def stop(self) -> None: ...


#: A player's word on its device, called on the event loop: None when it works (opened, or
#: back), else why it fails.
Report = Callable[[str | None], None]


class Player(Protocol):
    def open(self, report: Report) -> None:
        """Start owning the device (off the loop) and `report` how it goes, on the loop."""

    def play(self, sound: Sound, start_frame: int = 0) -> Playback:
        """Hand `sound` over to play from `start_frame`, cutting the one playing; return at
        once, never touching the device on the caller's thread."""

    def close(self) -> None:
        """Stop playing, close the device and end the player's thread (at shutdown)."""


#: The ALSA library, by its soname (libasound2 on Debian and Raspberry Pi OS).
ALSA_LIBRARY = "libasound.so.2"
SND_PCM_STREAM_PLAYBACK = 0
SND_PCM_FORMAT_S16_LE = 2
SND_PCM_ACCESS_RW_INTERLEAVED = 3
#: ALSA's buffer: what a cut or a new sound waits for at most, and what the device holds.
LATENCY_US = 50_000
#: A sound that starts later than this after it was asked for starts at the sample it would
#: have reached (the music still ends at 0:00; ITHF 4.4); on time, it plays whole.
LATE_S = 0.05


class AlsaError(Exception):
    """A libasound call failed; the message is ALSA's (snd_strerror)."""


#: The error handler that keeps ALSA's own lines off stderr, made once and installed by the
#: first `AlsaPcm`: libasound prints every failed open there ("ALSA lib confmisc.c:855:
#: (parse_card) cannot find card '0'", eight lines on a machine without a sound card) before
#: timerd's one clear warning, into the terminal display and the journal. They go to the debug
#: log instead (where the function and the format say what failed), and timerd reports the
#: failure itself with snd_strerror's words. libasound has one handler per process, which
#: outlives the player that installed it: a handler owned by a player was freed with it, still
#: installed, and the next ALSA error (another player's failed open) called freed memory: a
#: segmentation fault (tests/test_app_build.py, three tables built in one process).
_HANDLER: list[Any] = []


def _debug_log(file: bytes | None, line: int, function: bytes | None, _err: int,
               fmt: bytes | None) -> None:
    log.debug("ALSA %s:%d (%s): %s", (file or b"?").decode(errors="replace"), line,
              (function or b"?").decode(errors="replace"),
              (fmt or b"").decode(errors="replace"))


def _log_handler(ctypes: Any) -> Any:
    if not _HANDLER:
        handler = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                   ctypes.c_int, ctypes.c_char_p)
        _HANDLER.append(handler(_debug_log))
    return _HANDLER[0]


class AlsaPcm:
    """ALSA's PCM through libasound with ctypes, whose calls release the interpreter's lock:
    an open that parses ALSA's configuration, or a write that waits for the device, runs beside
    the event loop, never in its way. Used only on `AlsaPlayer`'s thread."""

    def __init__(self, device: str = "default") -> None:
        import ctypes  # noqa: PLC0415 (only a daemon with the speaker on carries ctypes)

        self._c = ctypes
        self.device = device
        lib: Any = ctypes.CDLL(ALSA_LIBRARY)
        lib.snd_strerror.restype = ctypes.c_char_p
        lib.snd_pcm_writei.restype = ctypes.c_long
        lib.snd_pcm_writei.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong]
        for name in ("snd_pcm_drop", "snd_pcm_drain", "snd_pcm_prepare", "snd_pcm_close",
                     "snd_pcm_delay", "snd_pcm_recover", "snd_pcm_set_params",
                     "snd_pcm_get_params"):
            getattr(lib, name).argtypes = None
        self._lib = lib
        lib.snd_lib_error_set_handler(_log_handler(ctypes))
        self._pcm: Any = None
        self.format: tuple[int, int] | None = None  # (channels, rate) while open
        self.period_frames = 0

    def _check(self, result: int) -> int:
        if result < 0:
            raise AlsaError(self._lib.snd_strerror(result).decode(errors="replace"))
        return result

    def open(self, channels: int, rate_hz: int) -> None:
        c = self._c
        pcm = c.c_void_p()
        self._check(self._lib.snd_pcm_open(c.byref(pcm), self.device.encode(),
                                           SND_PCM_STREAM_PLAYBACK, 0))
        try:
            self._check(self._lib.snd_pcm_set_params(
                pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, c.c_uint(channels),
                c.c_uint(rate_hz), 1, c.c_uint(LATENCY_US)))
            buffer, period = c.c_ulong(), c.c_ulong()
            self._check(self._lib.snd_pcm_get_params(pcm, c.byref(buffer), c.byref(period)))
        except AlsaError:
            self._lib.snd_pcm_close(pcm)
            raise
        self._pcm, self.format = pcm, (channels, rate_hz)
        self.period_frames = max(period.value, 64)

    def write(self, chunk: bytes, frames: int) -> int:
        """Write up to `frames` frames, waiting for room; an underrun is recovered."""
        written = self._lib.snd_pcm_writei(self._pcm, chunk, frames)
        if written < 0:
            self._check(self._lib.snd_pcm_recover(self._pcm, int(written), 1))
            return 0
        return int(written)

    def delay_frames(self) -> int:
        frames = self._c.c_long()
        if self._lib.snd_pcm_delay(self._pcm, self._c.byref(frames)) < 0:
            return 0
        return max(frames.value, 0)

    def drop(self) -> None:
        """Throw away what the device still holds and be ready for the next sound."""
        self._lib.snd_pcm_drop(self._pcm)
        self._check(self._lib.snd_pcm_prepare(self._pcm))

    def close(self) -> None:
        if self._pcm is not None:
            self._lib.snd_pcm_close(self._pcm)
        self._pcm, self.format = None, None


class ThreadPlayback:
    """One sound handed to `AlsaPlayer`; the player's thread marks it done."""

    def __init__(self, player: AlsaPlayer, sound: Sound, start_frame: int, asked: float) -> None:
        self.player = player
        self.sound = sound
        self.start_frame = start_frame
        self.asked = asked
        self.done = False

    def is_playing(self) -> bool:
        return not self.done

    def stop(self) -> None:
        self.player.cut(self)


class AlsaPlayer:
    """ALSA's default device, owned for the daemon's life by one playback thread.

    The thread opens the device at startup and keeps it open; between sounds it is left
    prepared and stopped (no silence is fed: that would wake the thread every period for
    nothing, issue 16's CPU budget). `play` only hands the sound over: the event loop never
    opens, retries or writes to the device. A device that fails to open, or fails under a
    write (a card unplugged), is closed and tried again every `retry_s` on the thread, quietly
    after the first failure; each change is reported once. `clock` is the loop's clock.
    """

    def __init__(self, retry_s: float, clock: Callable[[], float] = time.monotonic,
                 pcm: AlsaPcm | None = None) -> None:
        self.retry_s = retry_s
        self.clock = clock
        self.pcm = pcm or AlsaPcm()
        self._cond = threading.Condition()
        self._next: ThreadPlayback | None = None  # handed over, not yet taken by the thread
        self._playing: ThreadPlayback | None = None
        self._closing = False
        self._thread: threading.Thread | None = None
        self._report: Report = lambda _why: None

    def open(self, report: Report) -> None:
        self._report = report
        self._thread = threading.Thread(target=self._run, name="speaker", daemon=True)
        self._thread.start()

    def play(self, sound: Sound, start_frame: int = 0) -> ThreadPlayback:
        playback = ThreadPlayback(self, sound, start_frame, self.clock())
        with self._cond:
            if self._next is not None:
                self._next.done = True  # superseded before it started: one voice
            self._next = playback
            self._cond.notify()
        return playback

    def cut(self, playback: ThreadPlayback) -> None:
        with self._cond:
            if self._next is playback:
                self._next = None
            playback.done = True
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(timeout=2.0)

    # -- the playback thread ---------------------------------------------------------------

    def _run(self) -> None:
        down: str | None = None  # why the device failed, while it does
        opened = False  # reported working at least once
        fmt = (1, 44100)  # every built-in's; a sound in another format reopens the device
        try:
            while not self._closing:
                if self.pcm.format is None:
                    try:
                        self.pcm.open(*fmt)
                    except AlsaError as exc:
                        self._drop_pending()  # a cue is not played late; the music rejoins
                        if down is None:
                            down = str(exc)
                            self._report(down)
                        self._wait(self.retry_s)
                        continue
                    if down is not None or not opened:
                        down, opened = None, True
                        self._report(None)
                playback = self._take()
                if playback is None:
                    continue
                sound = playback.sound
                if (sound.channels, sound.rate_hz) != self.pcm.format:
                    fmt = (sound.channels, sound.rate_hz)
                    self.pcm.close()
                    self._put_back(playback)
                    continue
                try:
                    self._play(playback)
                except AlsaError as exc:
                    playback.done = True
                    self.pcm.close()
                    down = str(exc)
                    self._report(down)
                    self._wait(self.retry_s)
        except Exception as exc:  # a defect, or the library raising what it never documented
            log.exception("speaker: the playback thread failed; the speaker stays down until "
                          "timerd restarts (the buzzer sounds on)")
            self._report(f"the playback thread failed: {exc}")
        finally:
            self.pcm.close()

    def _wait(self, seconds: float | None) -> None:
        with self._cond:
            if not self._closing:
                self._cond.wait(seconds)

    def _take(self) -> ThreadPlayback | None:
        with self._cond:
            while self._next is None and not self._closing:
                self._cond.wait()
            playback, self._next = self._next, None
            self._playing = playback
            return playback

    def _drop_pending(self) -> None:
        with self._cond:
            if self._next is not None:
                self._next.done = True
                self._next = None

    def _put_back(self, playback: ThreadPlayback) -> None:
        with self._cond:
            if self._next is None and not playback.done:
                self._next = playback

    def _interrupted(self, playback: ThreadPlayback) -> bool:
        return playback.done or self._next is not None or self._closing

    def _play(self, playback: ThreadPlayback) -> None:
        sound = playback.sound
        frame = playback.start_frame
        late = self.clock() - playback.asked
        if late > LATE_S:
            frame += round(late * sound.rate_hz)
        pcm, step = self.pcm, self.pcm.period_frames
        try:
            while frame < sound.frames and not self._interrupted(playback):
                count = min(step, sound.frames - frame)
                chunk = bytes(sound.from_frame(frame)[:count * sound.frame_bytes])
                frame += pcm.write(chunk, count)
            if not self._interrupted(playback):
                # Let the device play what it still holds, unless something cuts it short.
                with self._cond:
                    self._cond.wait_for(lambda: self._interrupted(playback),
                                        pcm.delay_frames() / sound.rate_hz)
        finally:
            pcm.drop()
            playback.done = True


# -- the speaker output ---------------------------------------------------------------------

class Speaker:
    """A match output that plays each signal's sound; also holds the speaker and buzzer mutes.

    `status` gives the match status now (`service.status`): the music's place is always computed
    from the clock's `remaining_s`, never counted.
    """

    def __init__(self, bank: SoundBank, player: Player | None, loop: asyncio.AbstractEventLoop,
                 status: Callable[[], Status], *, music_window_s: float = 30.0,
                 retry_s: float = 5.0, muted: bool = False, buzzers: Buzzer | None = None
                 ) -> None:
        self.bank = bank
        self.player = player
        self.loop = loop
        self.status = status
        self.music_window_s = music_window_s  # where the profile places the last-30 signal
        self.retry_s = retry_s
        self.muted = muted
        self.buzzers = buzzers  # for `mute buzzer on|off`
        self.down = False  # the device fails; the player tries it again on its thread
        self._current: Playback | None = None
        self._music_later: asyncio.TimerHandle | None = None
        self._heard = asyncio.Event()  # the player has said once how its device is
        #: A device that flaps (fails at each write, opens again) is logged once per
        #: LOG_EVERY_S (30 s), with a count of what was left out.
        self._log = RateLimitedLog(log, clock=loop.time)
        #: Commands beside the match's: `timerd.app` hands them to the service.
        self.commands = {"mute": ExtraCommand(self.mute, ("args...",))}
        if player is not None:
            player.open(self._from_player)

    @classmethod
    def for_service(cls, config: Config, service: Control, buzzers: Buzzer | None,
                    player: Player | None = None) -> Speaker:
        """The speaker from `[speaker]` and `[signals]`, with its `mute` command (in
        `commands`) and the mutes in its `status_extra`. `player` defaults to `AlsaPlayer`."""
        bank = SoundBank()
        if not config.speaker.enabled:
            player = None
        else:
            bank = SoundBank.load(config.signals, config.speaker)
            for problem in bank.problems:
                log.warning("%s", problem)
            try:
                player = player or AlsaPlayer(config.speaker.retry_s, service.loop.time)
            except OSError as exc:
                log.warning("speaker: the ALSA library %s cannot be loaded (%s; apt install "
                            "libasound2); the buzzer sounds alone", ALSA_LIBRARY, exc)
        window = max((p.remaining_s for p in service.profile.signals
                      if p.signal is SignalKind.LAST_30), default=0.0)
        speaker = cls(bank, player, service.loop, service.status, music_window_s=window,
                      retry_s=config.speaker.retry_s, muted=config.speaker.muted, buzzers=buzzers)
        if buzzers is not None:
            buzzers.muted = config.speaker.buzzer_muted
        if player is not None:
            log.info("speaker: %d sounds loaded%s", len(bank.sounds),
                     ", last 30 s with music" if bank.music else "")
        return speaker

    async def __aenter__(self) -> Speaker:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        self._cancel_music_later()
        self._stop()
        if self.player is not None:
            # Joins the playback thread, which may be in a write or an open: not on the loop.
            await asyncio.to_thread(self.player.close)

    async def settled(self, timeout_s: float = 5.0) -> None:
        """Wait until the player has said whether its device works (`timerd sound-test`)."""
        if self.player is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._heard.wait(), timeout_s)

    # -- match effects ---------------------------------------------------------------------

    def notify(self, dispatch: Dispatch) -> None:
        """A reset ends the match and its sounds; a replay's passage through idle (ITHF 4.5)
        ends those before it, not the signal that came after it (sounded already)."""
        effects = dispatch.effects
        for at, effect in enumerate(effects):
            if isinstance(effect, PhaseChanged) and effect.phase is Phase.IDLE:
                self._cancel_music_later()
                if not any(isinstance(later, Signal) for later in effects[at + 1:]):
                    self._stop()

    def signal(self, signal: Signal, dispatch: Dispatch) -> None:
        """A sound output (ports.py): the signal's sound, or the music it joins."""
        status = dispatch.status
        kind = signal.kind
        if kind is SignalKind.LAST_30 and self.bank.music is not None:
            self._join_music(status)  # ITHF 4.4: music marks the last 30 seconds
            return
        if kind is SignalKind.RESUME and self._music_due(status):
            self._join_music(status)  # the music going on is the resume's sound (ITHF 10.2)
            return
        sound = self.bank.sound(kind, signal.beeps)
        if sound is None:
            return
        self._play(sound)
        if self._music_due(status):
            # Another signal (a rejected goal) cut the music: it comes back after that sound.
            self._music_later = self.loop.call_later(sound.duration_s, self._music_now)

    def _music_due(self, status: Status) -> bool:
        """Whether the clock stands in the last-30 stretch that the music marks.

        Read from the status alone, so a restarted daemon (or one whose device just came
        back) knows as well as one that heard the last-30 signal. The last-30 signal itself
        starts the music without asking, so float rounding at its instant cannot matter.
        """
        return (self.bank.music is not None and status.phase is Phase.RUNNING
                and 0 < status.remaining_s <= self.music_window_s + 1e-6)

    def _join_music(self, status: Status) -> None:
        """Play the music from the sample that makes it end exactly at 0:00 (ITHF 4.4)."""
        self._cancel_music_later()
        music = self.bank.music
        if music is None:
            return
        frame = music.frames - round(status.remaining_s * music.rate_hz)
        if frame < 0:  # more time left than music: start it later
            self._music_later = self.loop.call_later(-frame / music.rate_hz, self._music_now)
        elif frame < music.frames:
            self._play(music, frame)

    def _music_now(self) -> None:
        self._music_later = None
        status = self.status()
        if self._music_due(status):
            self._join_music(status)

    def _cancel_music_later(self) -> None:
        if self._music_later is not None:
            self._music_later.cancel()
            self._music_later = None

    # -- playback --------------------------------------------------------------------------

    def _play(self, sound: Sound, start_frame: int = 0) -> bool:
        """Hand `sound` to the player, cutting the one playing; False if muted or the device
        fails. Never touches the device: the player's thread does."""
        self._cancel_music_later()
        if self.player is None or self.muted or self.down:
            return False
        self._stop()
        self._current = self.player.play(sound, start_frame)
        log.debug("speaker: %s from frame %d (%s)", sound.name, start_frame, sound.source)
        return True

    def _stop(self) -> None:
        current, self._current = self._current, None
        if current is not None:
            current.stop()

    def playing(self) -> bool:
        return self._current is not None and self._current.is_playing()

    def _from_player(self, why: str | None) -> None:
        """The player's report, from its thread: handled on the loop."""
        self.loop.call_soon_threadsafe(self._device, why)

    def _device(self, why: str | None) -> None:
        """The player's report, on the loop: each change logged once; back in the last 30 s,
        the music joins where the clock is."""
        self._heard.set()
        if why is not None:
            if not self.down:
                self.down = True
                self._current = None
                self._log.warning("fails", "speaker: the sound device fails: %s. The match and "
                                  "the buzzer go on without the speaker; trying it again "
                                  "every %g s", why, self.retry_s)
            return
        if self.down:
            self.down = False
            self._log.info("back", "speaker: the sound device works again")
            self._music_now()

    # -- mute and the sound test -----------------------------------------------------------

    def mute(self, *args: str) -> None:
        """`mute on|off` (the speaker), `mute buzzer on|off`, `mute all on|off`.

        For ceremonies and announcements. The status and the LEDs still show every signal.
        """
        words = [a.lower() for a in args]
        target = "speaker"
        if len(words) == 2 and words[0] in ("speaker", "buzzer", "all"):
            target = words.pop(0)
        if len(words) != 1 or words[0] not in ("on", "off"):
            raise CommandRefused("mute_how")
        on = words[0] == "on"
        if target in ("buzzer", "all"):
            if self.buzzers is None:
                raise CommandRefused("no_buzzer")
            self.buzzers.muted = on
            if on:
                self.buzzers.silence()
        if target in ("speaker", "all"):
            self.muted = on
            if on:
                self._cancel_music_later()
                self._stop()
            else:
                self._music_now()  # unmuted in the last 30 s: the music joins where it is
        log.info("mute %s %s", target, words[0])

    def status_extra(self) -> dict[str, Any]:
        state = "off" if self.player is None else "down" if self.down else "ok"
        return {"speaker": state, "speaker_muted": self.muted,
                "buzzer_muted": bool(self.buzzers is not None and self.buzzers.muted)}

    def test_sound(self, kind: SignalKind, beeps: int = 1) -> Sound | None:
        """Play `kind`'s sound now, mute or not (for `timerd sound-test`); the last-30 signal
        plays the whole music in music mode. None if nothing played."""
        music = self.bank.music if kind is SignalKind.LAST_30 else None
        sound = music or self.bank.sound(kind, beeps)
        muted, self.muted = self.muted, False
        try:
            played = sound is not None and self._play(sound)
        finally:
            self.muted = muted
        return sound if played else None
