"""The speaker adapter on the real service and virtual time, behind a recording player.

The player interface is the seam: these tests record what the speaker asked to play, when, and
from which sample; tests/adapters/test_audio_alsa.py plays through the real player and ALSA.
"""

from __future__ import annotations

import itertools
import logging
import mmap
import wave
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Recorder, dispatch, play, wired
from timerd import config as config_mod
from timerd.adapters.audio import COUNTED, Sound, SoundBank, Speaker, builtin
from timerd.adapters.gpio import GpioBoard
from timerd.config import Config, SignalOutput, SpeakerConfig, profiles
from timerd.config.schema import SchemaError
from timerd.core.effects import Signal, SignalKind
from timerd.core.plan import signal_plan
from timerd.core.pulses import pulses
from timerd.service import Service
from timerd.wire import REPLY_FORMAT

RATE = 44100
MUSIC_FRAMES = 30 * RATE
DEFAULTS = Config()
MUSIC = Config(speaker=SpeakerConfig(last_30="music"))
NO_CARD = "No such device"


@dataclass
class Recording:
    """A sound the recording player was asked for; it plays for the sound's length."""

    end: float
    clock: Callable[[], float]
    stopped: bool = False

    def is_playing(self) -> bool:
        return not self.stopped and self.clock() < self.end

    def stop(self) -> None:
        self.stopped = True


@dataclass
class RecordingPlayer:
    """Keeps (t, sound, times, start frame) for every play it is handed; `fail` and `back`
    say what a player's thread reports about its device."""

    clock: Callable[[], float]
    t0: float
    plays: list[tuple[float, str, int, int]] = field(default_factory=list)
    report: Callable[[str | None], None] | None = None
    closed: bool = False

    def open(self, report: Callable[[str | None], None]) -> None:
        self.report = report
        report(None)

    def play(self, sound: Sound, start_frame: int = 0) -> Recording:
        now = self.clock()
        self.plays.append((round(now - self.t0, 6), sound.name, sound.times, start_frame))
        return Recording(now + (sound.frames - start_frame) / sound.rate_hz, self.clock)

    def close(self) -> None:
        self.closed = True

    def fail(self) -> None:
        assert self.report is not None
        self.report(NO_CARD)  # what ALSA says when the card is not there

    def back(self) -> None:
        assert self.report is not None
        self.report(None)


@dataclass
class Rig:
    """What a scripted match left behind: effects, plays, and the service's extras."""

    recorder: Recorder
    player: RecordingPlayer
    speaker: Speaker
    notes: dict[float, dict[str, Any]]


Callback = Callable[[Service, Speaker, RecordingPlayer], Any]


def match_with_speaker(script: list[tuple[float, str]], until: float, *,
                       profile: str = "ithf", config: Config = DEFAULTS,
                       at: tuple[tuple[float, Callback], ...] = (), factory: Any = None) -> Rig:
    """Run `script` on virtual time with the speaker (and, given a pin factory, the GPIO board).

    `at` runs callbacks at given times; whatever they return is kept in `notes` by time.
    """
    holder: dict[str, Any] = {}
    notes: dict[float, dict[str, Any]] = {}

    def setup(service: Service) -> None:
        loop = service.loop
        player = RecordingPlayer(loop.time, loop.time())
        buzzers = None
        if factory is not None:
            board = GpioBoard(config.gpio, config.signals, service, factory)
            service.sound_outputs.append(board.buzzers)
            service.outputs.append(board.leds)
            buzzers = board.buzzers
            holder["board"] = board
        speaker = wired(Speaker.for_service(config, service, buzzers, player), service)
        holder.update(player=player, speaker=speaker)
        for t, callback in at:
            loop.call_at(player.t0 + t, lambda t=t, cb=callback: notes.__setitem__(
                t, cb(service, speaker, player)))

    recorder = play(profile, script, until, setup)
    if "board" in holder:
        holder["board"].close()
    return Rig(recorder, holder["player"], holder["speaker"], notes)


def command(*words: str) -> Callback:
    name, *args = words
    return lambda service, _s, _p: service.command({"command": name, "args": list(args)})


# -- the sounds of a match ------------------------------------------------------------------

@pytest.mark.parametrize("profile", ["ithf", "ithf-thirds"])
def test_cue_mode_plays_the_signal_plan_in_order(profile: str) -> None:
    rules = profiles.load(profile)
    lead = rules.pre_signal_lead_s
    rig = match_with_speaker([(0, "start")], lead + rules.period_s + 5, profile=profile)
    expected = [(0.0, "pre_signal", 1, 0), (lead, "start", 1, 0)]
    expected += [(lead + p.at_elapsed_s, p.kind.value, p.beeps, 0)
                 for p in signal_plan(rules, 1)]
    assert rig.player.plays == expected
    signals = [(e.kind.value, e.beeps) for _, e, _ in rig.recorder.seen if isinstance(e, Signal)]
    assert [(name, times) for _, name, times, _ in rig.player.plays] == signals


def test_music_ends_at_zero_and_goes_on_from_the_same_sample_after_a_pause() -> None:
    # ITHF: start at 0, the clock runs from 20 s; 0:30 left at 290; pause at 301.3 with
    # 18.7 s left; resume at 312 (ITHF 10.2: 10.7 s added); 0:00 at 330.7.
    rig = match_with_speaker([(0, "start"), (301.3, "pause"), (312, "resume")], 340,
                             config=MUSIC)
    resumed = MUSIC_FRAMES - round(18.7 * RATE)
    assert rig.player.plays == [
        (0.0, "pre_signal", 1, 0), (20.0, "start", 1, 0),
        (80.0, "interval", 4, 0), (140.0, "interval", 3, 0), (200.0, "interval", 2, 0),
        (260.0, "interval", 1, 0), (290.0, "last_30_music", 1, 0), (301.3, "pause", 1, 0),
        (312.0, "last_30_music", 1, resumed), (330.7, "final", 1, 0),
    ]
    assert resumed == 498330
    # From the resume on, the rest of the music lasts exactly until the final signal.
    assert 312.0 + (MUSIC_FRAMES - resumed) / RATE == pytest.approx(330.7, abs=1 / RATE)


def test_music_comes_back_at_the_right_sample_after_a_signal_cuts_it() -> None:
    # A signal inside the last 30 s (a rejected goal, say) cuts the music for its own length;
    # then the music goes on where the clock is, not where it was cut.
    def other_signal(service: Service, speaker: Speaker, _p: RecordingPlayer) -> None:
        interval = Signal(SignalKind.INTERVAL, service.now())
        speaker.signal(interval, dispatch(service.status(), interval))

    rig = match_with_speaker([(0, "start")], 330, config=MUSIC, at=((305, other_signal),))
    interval_s = builtin("interval").duration_s
    assert rig.player.plays[-4:] == [
        (290.0, "last_30_music", 1, 0), (305.0, "interval", 1, 0),
        (305.0 + interval_s, "last_30_music", 1, round((15 + interval_s) * RATE)),
        (320.0, "final", 1, 0),
    ]


def test_a_restarted_speaker_knows_from_the_clock_that_the_music_is_on() -> None:
    # The daemon restarted while paused at 0:20 left (the service restores the match): its new
    # speaker never heard the last-30 signal, and still resumes the music at the right sample.
    def restart(service: Service, old: Speaker, player: RecordingPlayer) -> None:
        wired(Speaker.for_service(MUSIC, service, None, player), service)
        service.outputs.remove(old)
        service.sound_outputs.remove(old)

    rig = match_with_speaker([(0, "start"), (300, "pause"), (310, "resume")], 340,
                             config=MUSIC, at=((305, restart),))
    assert rig.player.plays[-4:] == [
        (290.0, "last_30_music", 1, 0), (300.0, "pause", 1, 0),
        (310.0, "last_30_music", 1, 10 * RATE), (330.0, "final", 1, 0),
    ]


def test_a_reset_in_the_last_30_seconds_ends_the_music_for_good() -> None:
    # Paused in the last 30 s, then reset: the next match has no music until its own 0:30.
    script = [(0, "start"), (295, "pause"), (296, "reset"), (300, "start"), (400, "pause"),
              (410, "resume")]
    rig = match_with_speaker(script, 640, config=MUSIC)
    assert rig.player.plays[6:] == [
        (290.0, "last_30_music", 1, 0), (295.0, "pause", 1, 0),
        (300.0, "pre_signal", 1, 0), (320.0, "start", 1, 0), (380.0, "interval", 4, 0),
        (400.0, "pause", 1, 0), (410.0, "resume", 1, 0), (450.0, "interval", 3, 0),
        (510.0, "interval", 2, 0), (570.0, "interval", 1, 0), (600.0, "last_30_music", 1, 0),
        (630.0, "final", 1, 0),
    ]


# -- mute -----------------------------------------------------------------------------------

def test_mute_silences_the_speaker_and_the_buzzer_separately_but_not_the_leds(
        mock_factory: Any) -> None:
    script = [(0, "start")]
    at = ((100, command("mute", "on")), (101, command("mute", "buzzer", "on")),
          (150, command("status")), (298, command("mute", "buzzer", "off")),
          (300, command("mute", "off")))
    rig = match_with_speaker(script, 330, config=MUSIC, at=at, factory=mock_factory)
    assert rig.player.plays == [
        (0.0, "pre_signal", 1, 0), (20.0, "start", 1, 0), (80.0, "interval", 4, 0),
        # muted from 100 to 300: unmuted in the last 30 s, the music joins where the clock is
        (300.0, "last_30_music", 1, 10 * RATE), (320.0, "final", 1, 0),
    ]
    muted = rig.notes[150]["status"]
    assert (muted["speaker"], muted["speaker_muted"], muted["buzzer_muted"]) == ("ok", True, True)
    assert rig.notes[300]["status"]["speaker_muted"] is False
    # Buzzer: every signal but those from 101 to 298 (the intervals at 140, 200, 260 and the
    # last-30 cue at 290); the final sounds again.
    patterns = Config().signals
    kept = [(SignalKind.PRE_SIGNAL, 1), (SignalKind.START, 1), (SignalKind.INTERVAL, 4),
            (SignalKind.FINAL, 1)]
    wanted = sum(len(pulses(patterns[k].pattern_s, n, patterns[k].gap_s)) for k, n in kept)
    assert _rising_edges(mock_factory.pin(22)) == wanted
    # The status and the LEDs still show every signal: the last-30 LED lit while muted.
    assert _rising_edges(mock_factory.pin(13)) == 1
    assert [e["signal"] for e in rig.recorder.events("signal")].count("interval") == 4


def _rising_edges(pin: Any) -> int:
    states = [s.state for s in pin.states]
    return sum(1 for a, b in itertools.pairwise(states) if b and not a)


def test_mute_defaults_from_config_and_bad_words_are_refused() -> None:
    config = Config(speaker=SpeakerConfig(muted=True))
    rig = match_with_speaker([(0, "start")], 30, config=config, at=(
        (1, command("mute", "loud")), (2, command("mute", "buzzer", "on")),
        (3, command("mute")), (4, command("mute", "speaker", "off"))))
    assert rig.notes[1] == {"format": REPLY_FORMAT, "ok": False,
                            "error": "mute refused: it takes on|off, or speaker|buzzer|all on|off",
                            "code": "refused.mute_how", "params": {"command": "mute"}}
    assert rig.notes[2]["error"] == "mute refused: no buzzer is fitted"
    assert rig.notes[3]["ok"] is False
    assert rig.notes[4]["status"]["speaker_muted"] is False
    assert rig.player.plays == [(20.0, "start", 1, 0)]  # muted at the pre-signal


# -- a device that fails --------------------------------------------------------------------

def fail(_s: Service, _sp: Speaker, player: RecordingPlayer) -> None:
    player.fail()


def back(_s: Service, _sp: Speaker, player: RecordingPlayer) -> None:
    player.back()


def test_a_failing_device_is_logged_once_and_back_in_time_for_the_music(
        caplog: pytest.LogCaptureFixture) -> None:
    # The player's thread reports its device (it retries it there, off the loop): failing
    # from the start, failing again (no second warning), back at 300 s in the last 30 s.
    caplog.set_level(logging.INFO, logger="timerd.audio")
    rig = match_with_speaker(
        [(0.001, "start")], 330, config=MUSIC,
        at=((0, fail), (50, fail), (100, command("status")), (300, back)))
    assert rig.player.plays == [(300.0, "last_30_music", 1, round(9.999 * RATE)),
                                (320.001, "final", 1, 0)]
    assert rig.notes[100]["status"]["speaker"] == "down"
    messages = [r.getMessage() for r in caplog.records if r.name == "timerd.audio"]
    assert [m for m in messages if "fails" in m] == [
        f"speaker: the sound device fails: {NO_CARD}. The match and the buzzer go on without "
        "the speaker; trying it again every 5 s"]
    assert messages.count("speaker: the sound device works again") == 1
    # The match itself never noticed.
    assert [e["signal"] for e in rig.recorder.events("signal")][-1] == "final"


# -- loading sounds -------------------------------------------------------------------------

def _write_wav(path: Path, samples: list[int], width: int = 2, channels: int = 1) -> Path:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(RATE)
        w.writeframes(b"".join(s.to_bytes(width, "little", signed=True) for s in samples))
    return path


def test_every_signal_kind_defaults_to_the_builtin_of_its_own_name() -> None:
    # Even kinds missing from [signals]: a kind someone adds gets its sound from its name.
    bank = SoundBank.load({}, SpeakerConfig())
    assert {k: s.source for k, s in bank.sounds.items()} == {
        k.value: f"built-in {k.value}.wav" for k in SignalKind}
    assert bank.problems == []
    assert bank.sound(SignalKind.INTERVAL, 3).pcm == builtin("interval").pcm * 3


def test_a_user_wav_is_used_with_its_volume_applied_once(tmp_path: Path) -> None:
    horn = _write_wav(tmp_path / "horn.wav", [1000, -1000, 32767, -32768, 3])
    signals = {SignalKind.FINAL: SignalOutput(sound=str(horn), volume=0.5)}
    bank = SoundBank.load(signals, SpeakerConfig())
    final = bank.sounds["final"]
    assert (final.source, final.channels, final.rate_hz) == (str(horn), 1, RATE)
    assert array("h", final.pcm).tolist() == [500, -500, 16384, -16384, 2]


def test_builtins_are_mapped_from_their_files_counted_kinds_and_user_wavs_copied(
        tmp_path: Path) -> None:
    # Issue 16, memory: a built-in's PCM is the file's pages, not a copy. The kinds repeated
    # on the loop (N beeps) and a user's file (rewritten in place, a mapping is a SIGBUS) are
    # read into memory.
    horn = _write_wav(tmp_path / "horn.wav", [1000, -1000, 3])
    bank = SoundBank.load({SignalKind.FINAL: SignalOutput(sound=str(horn))},
                          SpeakerConfig(last_30="music"))
    mapped = {k for k, s in bank.sounds.items() if isinstance(s.pcm, memoryview)
              and isinstance(s.pcm.obj, mmap.mmap)}
    assert mapped == {k.value for k in SignalKind} - {k.value for k in COUNTED} - {"final"}
    assert all(isinstance(bank.sounds[k.value].pcm, bytes) for k in COUNTED)
    assert isinstance(bank.sounds["final"].pcm, bytes)
    assert bank.music is not None
    assert isinstance(bank.music.pcm, memoryview)
    assert bank.sounds["start"].pcm == builtin("start").pcm
    assert bank.sound(SignalKind.START, 2).pcm == builtin("start").pcm * 2


@pytest.mark.parametrize(("make", "why"), [
    (lambda d: d / "missing.wav", "no such file"),
    (lambda d: d, "cannot read it (Is a directory)"),
    (lambda d: (d / "notes.wav").write_text("not audio") and d / "notes.wav",
     "not a PCM WAV file (file does not start with RIFF id)"),
    (lambda d: _write_wav(d / "deep.wav", [1, 2, 3], width=3),
     "24-bit samples; timerd plays 16-bit PCM (convert it: sox IN.wav -b 16 OUT.wav)"),
    (lambda d: _write_wav(d / "three.wav", [1, 2, 3], channels=3), "3 channels; timerd plays "
     "mono or stereo"),
    (lambda d: _write_wav(d / "empty.wav", []), "no audio in it"),
])
def test_a_user_wav_that_cannot_be_used_is_reported_and_the_builtin_plays(
        tmp_path: Path, make: Callable[[Path], Path], why: str) -> None:
    path = make(tmp_path)
    bank = SoundBank.load({SignalKind.FINAL: SignalOutput(sound=str(path))}, SpeakerConfig())
    assert bank.problems == [
        f"signals.final.sound = '{path}': {why}; the built-in final.wav plays instead"]
    assert bank.sounds["final"].pcm == builtin("final").pcm


def test_an_unknown_builtin_name_suggests_the_close_one_and_music_falls_back() -> None:
    bank = SoundBank.load({SignalKind.START: SignalOutput(sound="strat")},
                          SpeakerConfig(last_30="music", music="/no/such/music.wav"))
    assert bank.problems[0].startswith(
        "signals.start.sound = 'strat': no built-in sound of that name (did you mean `start`?)")
    assert bank.problems[0].endswith("the built-in start.wav plays instead")
    assert bank.problems[1] == ("speaker.music = '/no/such/music.wav': no such file; the "
                                "built-in last_30_music.wav plays instead")
    assert bank.music is not None
    assert bank.music.frames == MUSIC_FRAMES


def test_the_speaker_skips_signals_it_is_not_configured_for() -> None:
    signals = {SignalKind.INTERVAL: SignalOutput(speaker=False)}
    bank = SoundBank.load(signals, SpeakerConfig(last_30="cue"))
    assert "interval" not in bank.sounds
    assert "final" in bank.sounds
    assert bank.music is None


@pytest.mark.parametrize(("option", "problem"), [
    ("signals.final.volume=1.5", "signals.final.volume = 1.5: must be between 0 and 1"),
    ('speaker.last_30="muzak"', "speaker.last_30: 'muzak' is not one of 'cue', 'music'"),
    ("speaker.retry_s=0", "speaker.retry_s = 0: must be longer than 0 s"),
    ("speaker.mutd=true", "speaker.mutd: unknown key `mutd`; did you mean `muted`?"),
])
def test_bad_speaker_config_is_an_error_with_its_key_path(option: str, problem: str) -> None:
    with pytest.raises(SchemaError) as err:
        config_mod.load(None, [option])
    assert err.value.problems == [problem]


def test_a_flapping_device_is_logged_once_per_interval_with_a_count(
        caplog: pytest.LogCaptureFixture) -> None:
    # A device that opens and then fails at every write (a loose USB cable): failing at 1, 11,
    # 21 and 41 s, back in between. The first failure is logged at once; at the interval's
    # end (31 s) the last one left out is, with the count of the others (timerd.limits.
    # RateLimitedLog); the one at 41 s waits for the next interval's end.
    caplog.set_level(logging.INFO, logger="timerd.audio")
    at = tuple((t, fail) for t in (1, 11, 21, 41)) + tuple((t, back) for t in (5, 15, 25))
    match_with_speaker([(0, "start")], 60, at=at)
    fails = [r.getMessage() for r in caplog.records if "fails" in r.getMessage()]
    assert len(fails) == 2
    assert fails[1].endswith("[1 more like this since the last such line]")
