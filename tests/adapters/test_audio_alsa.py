"""Real playback: the speaker's playback thread into libasound, captured by ALSA's file plugin,
with no sound card.

ALSA reads `ALSA_CONFIG_PATH` when the library initialises, so every playback runs in a fresh
`python` with that variable set. The file plugin writes exactly the PCM that was played, one
sound after another into one file (the device stays open); the null sink behind it is not
paced, so these tests prove what was played, not when (timing is bench/'s job).
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import wave
from array import array
from pathlib import Path
from typing import Any

from tests.conftest import require
from timerd.adapters.audio import ALSA_LIBRARY, BUILTIN_DIR
from timerd.config import Config
from timerd.core.effects import SignalKind
from timerd.core.pulses import pulses

ROOT = Path(__file__).resolve().parents[2]
RATE = 44100
#: The default device is a sound card that is not there: every open fails, as on a Pi whose
#: USB sound card is unplugged. ALSA prints a line to stderr for each failed open.
NO_CARD = '{ type hw; card "unplugged" }'

# Plays every signal kind through the Speaker adapter and the real player, one at a time, and
# keeps a copy of what ALSA captured for each (the part of the capture it added).
PLAY_EVERY_SIGNAL = r"""
import asyncio, dataclasses, sys, time
from pathlib import Path
from timerd import config
from timerd.adapters.audio import AlsaPlayer, SoundBank, Speaker
from timerd.core.effects import Phase, Signal, SignalKind
from timerd.core.match import Match
from timerd.ports import Dispatch

capture, out = Path(sys.argv[1]), Path(sys.argv[2])
cfg = config.load(None, sys.argv[3:])

async def main():
    loop = asyncio.get_running_loop()
    match = Match(cfg.profile())
    status = match.status(loop.time())
    speaker = Speaker(SoundBank.load(cfg.signals, cfg.speaker), AlsaPlayer(5.0), loop,
                      lambda: status)
    await speaker.settled()

    def sound(name, kind, **changes):
        at = dataclasses.replace(status, **changes)
        before = capture.stat().st_size
        signal = Signal(kind, loop.time(), beeps=changes.pop("beeps", 1))
        speaker.signal(signal, Dispatch((signal,), lambda: at, loop.time()))
        deadline = time.monotonic() + 10
        while speaker.playing() and time.monotonic() < deadline:
            time.sleep(0.005)
        (out / f"{name}.raw").write_bytes(capture.read_bytes()[before:])

    if cfg.speaker.last_30 == "music":
        running = dict(phase=Phase.RUNNING, clock_running=True)
        sound("music", SignalKind.LAST_30, remaining_s=30.0, **running)
        sound("pause", SignalKind.PAUSE, phase=Phase.PAUSED, remaining_s=12.5)
        sound("music_resumed", SignalKind.RESUME, remaining_s=12.5, **running)
    else:
        for kind in SignalKind:
            sound(kind.value, kind)
    await speaker.__aexit__(None, None, None)
    print("played", flush=True)

asyncio.run(main())
"""

# A whole match on virtual time with simulated GPIO pins and the real player, whose default
# device is a sound card that is not there; its thread retries it every 10 ms, and goes on
# retrying for 0.3 s after the match.
MATCH_WITHOUT_CARD = r"""
import asyncio, json, logging, time
from gpiozero.pins.mock import MockFactory
from timerd.adapters.audio import Speaker
from timerd.adapters.gpio import GpioBoard
from timerd.app import attach
from timerd.config import Config, SpeakerConfig
from timerd.core.effects import Signal
from timerd.core.match import Match
from timerd.config import profiles
from timerd.app import attach
from timerd.service import Service
from timerd.timebase import virtual_loop

records = []
logging.basicConfig(level=logging.INFO, handlers=[logging.Handler()])
logging.getLogger().handlers[0].emit = records.append

async def main():
    factory = MockFactory()
    config = Config(speaker=SpeakerConfig(retry_s=0.01))
    service = Service(Match(profiles.load("ithf")))
    signals = []
    class Keep:
        def notify(self, dispatch):
            signals.extend([s.kind.value, s.beeps] for s in dispatch.signals)
    async with GpioBoard(config.gpio, config.signals, service, factory) as board:
        attach(service, board)
        service.sound_outputs.append(board.buzzers)
        service.outputs += [board.leds, Keep()]
        async with Speaker.for_service(config, service, board.buzzers) as speaker:
            service.sound_outputs.append(speaker)
            service.outputs.append(speaker)
            attach(service, speaker)
            # The thread's first open takes real time (long on a loaded machine), and
            # settled() waits in the loop's time, which is virtual here: wait in real time.
            for _ in range(400):
                if speaker._heard.is_set():
                    break
                await asyncio.to_thread(time.sleep, 0.05)
            task = asyncio.create_task(service.run())
            service.execute(service.parse("start"))
            await asyncio.sleep(330)
            task.cancel()
            status = service.status_dict()
            await asyncio.to_thread(time.sleep, 0.3)
        states = [s.state for s in factory.pin(22).states]
    print(json.dumps({
        "signals": signals, "phase": status["phase"], "speaker": status["speaker"],
        "buzzer_rising_edges": sum(1 for a, b in zip(states, states[1:]) if b and not a),
        "log": [(r.levelname, r.name, r.getMessage()) for r in records],
    }))

with asyncio.Runner(loop_factory=virtual_loop) as runner:
    runner.run(main())
"""


def _libasound() -> bool:
    try:
        ctypes.CDLL(ALSA_LIBRARY)
    except OSError:
        return False
    return True


def _alsa_env(tmp_path: Path, pcm: str) -> dict[str, str]:
    conf = tmp_path / "asound.conf"
    conf.write_text(f"pcm.!default {pcm}\n")
    return {**os.environ, "ALSA_CONFIG_PATH": str(conf), "PYTHONPATH": str(ROOT)}


def _capture_env(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    capture = tmp_path / "capture.raw"
    # The slave must be written inline like this for the file plugin to accept it.
    pcm = f'{{ type file; slave.pcm {{ type null }}; file "{capture}"; format "raw" }}'
    return capture, _alsa_env(tmp_path, pcm)


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60, check=False)


def _frames(name: str) -> bytes:
    with wave.open(str(BUILTIN_DIR / f"{name}.wav"), "rb") as w:
        return w.readframes(w.getnframes())


def _play_all(tmp_path: Path, *options: str) -> Path:
    require(_libasound(), "libasound2 (apt install libasound2)")
    capture, env = _capture_env(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    done = _run(["-c", PLAY_EVERY_SIGNAL, str(capture), str(out), *options], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "played"
    return out


def test_every_signal_kind_plays_its_wav_through_alsa(tmp_path: Path) -> None:
    out = _play_all(tmp_path)
    for kind in SignalKind:
        captured = (out / f"{kind.value}.raw").read_bytes()
        assert len(captured) == len(_frames(kind.value)), kind
        assert captured == _frames(kind.value), kind


def test_music_and_its_resume_from_the_same_sample_through_alsa(tmp_path: Path) -> None:
    out = _play_all(tmp_path, 'speaker.last_30="music"')
    music = _frames("last_30_music")
    assert (out / "music.raw").read_bytes() == music
    assert (out / "pause.raw").read_bytes() == _frames("pause")
    # Resumed with 12.5 s left: the last 12.5 s of the track, from sample (30 - 12.5) * rate.
    resumed = (out / "music_resumed.raw").read_bytes()
    assert resumed == music[2 * round(17.5 * RATE):]
    assert len(resumed) == 2 * round(12.5 * RATE)


def test_volume_is_applied_to_what_alsa_gets(tmp_path: Path) -> None:
    out = _play_all(tmp_path, "signals.interval.volume=0.25", "signals.final.volume=0")
    want = array("h", [round(s * 0.25) for s in array("h", _frames("interval"))]).tobytes()
    assert (out / "interval.raw").read_bytes() == want
    assert (out / "final.raw").read_bytes() == bytes(len(_frames("final")))
    assert (out / "start.raw").read_bytes() == _frames("start")


def test_sound_test_command_plays_the_signal_on_speaker_and_buzzer(tmp_path: Path) -> None:
    require(_libasound(), "libasound2 (apt install libasound2)")
    capture, env = _capture_env(tmp_path)
    done = _run(["-m", "timerd", "sound-test", "pause", "--simulate"], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["pause: speaker plays built-in pause.wav (0.25 s)",
                                        "pause: buzzer on GPIO22 (0.05 s)"]
    assert capture.read_bytes() == _frames("pause")  # the device opened once, played once


def test_sound_test_without_a_sound_card_says_so_and_fails(tmp_path: Path) -> None:
    require(_libasound(), "libasound2 (apt install libasound2)")
    env = _alsa_env(tmp_path, NO_CARD)
    done = _run(["-m", "timerd", "sound-test", "resume", "--simulate"], env)
    assert done.returncode == 1
    assert done.stdout.splitlines() == ["resume: speaker did not play (see the messages above)",
                                        "resume: buzzer on GPIO22 (0.18 s)"]
    assert "speaker: the sound device fails: No such device" in done.stderr
    # timerd's own sentence alone: ALSA's raw lines never reach the terminal (issue 46 item 5)
    assert "ALSA lib" not in done.stderr, done.stderr


def test_a_match_without_a_sound_card_finishes_with_every_buzzer_signal(tmp_path: Path) -> None:
    require(_libasound(), "libasound2 (apt install libasound2)")
    env = _alsa_env(tmp_path, NO_CARD)
    done = _run(["-c", MATCH_WITHOUT_CARD], env)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["signals"] == [["pre_signal", 1], ["start", 1], ["interval", 4],
                                 ["interval", 3], ["interval", 2], ["interval", 1],
                                 ["last_30", 1], ["final", 1]]
    assert (result["phase"], result["speaker"]) == ("finished", "down")
    patterns = Config().signals
    assert result["buzzer_rising_edges"] == sum(
        len(pulses(patterns[SignalKind(k)].pattern_s, n, patterns[SignalKind(k)].gap_s))
        for k, n in result["signals"])
    audio = [(level, message) for level, name, message in result["log"] if name == "timerd.audio"]
    failures = [m for _, m in audio if "fails" in m]
    assert failures == ["speaker: the sound device fails: No such device. The match and the "
                        "buzzer go on without the speaker; trying it again every 0.01 s"]
    # Some 30 retries on the player's thread, none logged, and the device never came back.
    assert [level for level, _ in audio] == ["INFO", "WARNING"]
    assert not any("works again" in m for _, m in audio)
    # ALSA's own error lines never reach stderr, for the first failure or a retry (issue 46
    # item 5): timerd's warning above says it once.
    assert "ALSA lib" not in done.stderr, done.stderr
