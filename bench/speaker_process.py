"""The speaker in a helper process: the candidate that issue 33 measured against the playback
thread (docs/sound.md, "Latency"), for `bench.play --speaker process`.

The helper is a second Python process that runs timerd's own `AlsaPlayer` and `SoundBank`
(the same sounds, loaded from the same config), so its device work is outside the daemon's
interpreter lock altogether. The daemon hands it a sound as one short line on a pipe
(`play NAME TIMES FRAME`, or `stop`): the only cost left on the event loop is that write. The
helper answers with `up` or `down WHY` lines, read by a thread of the daemon and reported to the
speaker as the thread player's are.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable

from timerd.adapters.audio import Report, Sound

HELPER = r"""
import sys
from timerd.adapters.audio import MUSIC, AlsaPlayer, SoundBank
from timerd.config import Config
from timerd.core.effects import SignalKind

config = Config()
bank = SoundBank.load(config.signals, config.speaker)
player = AlsaPlayer(float(sys.argv[1]))
player.open(lambda why: print("up" if why is None else f"down {why}", flush=True))
current = None
for line in sys.stdin:
    words = line.split()
    if current is not None:
        current.stop()
        current = None
    if words[0] == "play":
        name, times, frame = words[1], int(words[2]), int(words[3])
        sound = bank.music if name == MUSIC else bank.sound(SignalKind(name), times)
        if sound is not None:
            current = player.play(sound, frame)
player.close()
"""


class ProcessPlayback:
    """A sound handed to the helper; it is taken as playing for its length."""

    def __init__(self, player: ProcessPlayer, sound: Sound, start_frame: int) -> None:
        self.player = player
        self.ends = player.clock() + (sound.frames - start_frame) / sound.rate_hz
        self.stopped = False

    def is_playing(self) -> bool:
        return not self.stopped and self.player.clock() < self.ends

    def stop(self) -> None:
        if not self.stopped and self.is_playing():
            self.player.send("stop")
        self.stopped = True


class ProcessPlayer:
    """The `Player` port on a helper process (see the module's docstring)."""

    def __init__(self, retry_s: float, clock: Callable[[], float]) -> None:
        self.retry_s = retry_s
        self.clock = clock
        self._proc: subprocess.Popen[str] | None = None

    def open(self, report: Report) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-c", HELPER, str(self.retry_s)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)
        assert self._proc.stdout is not None
        out = self._proc.stdout

        def read() -> None:
            for line in out:
                word, _, why = line.strip().partition(" ")
                report(None if word == "up" else why)

        threading.Thread(target=read, name="speaker-helper", daemon=True).start()

    def send(self, line: str) -> None:
        assert self._proc is not None
        assert self._proc.stdin is not None
        os.write(self._proc.stdin.fileno(), f"{line}\n".encode())

    def play(self, sound: Sound, start_frame: int = 0) -> ProcessPlayback:
        self.send(f"play {sound.name} {sound.times} {start_frame}")
        return ProcessPlayback(self, sound, start_frame)

    def close(self) -> None:
        if self._proc is not None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
