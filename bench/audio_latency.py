#!/usr/bin/env python3
"""How long from "a signal is due" to its first sample handed to ALSA, on this machine.

    python bench/audio_latency.py                  # no sound card needed; prints JSON
    python bench/audio_latency.py --json out.json  # also writes the figures to a file
    python bench/audio_latency.py --device default # the machine's real sound device (a Pi)

It runs the real service on a real event loop with a training profile that places an interval
signal every `--spacing` seconds, the speaker adapter as the output, and its playback thread
(`AlsaPlayer`) as the player. For every signal it takes four instants on the monotonic clock
(the loop's own clock):

- due: when the match planned the signal;
- notified: when the service handed it to the outputs (its wake-up lateness);
- returned: when the player's `play` returned: the sound handed to the playback thread, which
  keeps the device open; this is how long the event loop was held;
- first bytes: when the first PCM bytes came out of ALSA. Without `--device`, ALSA's default
  device is the file plugin writing into a FIFO that a separate process reads, with a null
  sink behind it: the first read is the instant the playback thread handed ALSA its first
  period.
  A real sound card adds its own buffer after that point, which cannot be seen from here.

It reports p50, p99 and max of each gap in milliseconds, as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout as is

from timerd.adapters.audio import AlsaPlayer, Report, Sound, SoundBank, Speaker
from timerd.config import Config
from timerd.core.effects import Signal, SignalKind
from timerd.core.match import Match
from timerd.core.profile import PlacedSignal, Profile
from timerd.ports import Dispatch
from timerd.service import Service


@dataclass
class Timings:
    due: list[float] = field(default_factory=list)
    notified: list[float] = field(default_factory=list)
    called: list[float] = field(default_factory=list)
    returned: list[float] = field(default_factory=list)
    chunks: list[float] = field(default_factory=list)  # each chunk ALSA wrote, as it arrived


class SignalClock:
    """A sound output placed before the speaker: notes when each signal was due and handed over."""

    def __init__(self, timings: Timings) -> None:
        self.timings = timings

    def signal(self, signal: Signal, dispatch: Dispatch) -> None:
        self.timings.due.append(signal.due)
        self.timings.notified.append(time.monotonic())


class TimedPlayer:
    """The real player, with the instants around each `play` call noted."""

    def __init__(self, timings: Timings) -> None:
        self.inner = AlsaPlayer(5.0)
        self.timings = timings

    def open(self, report: Report) -> None:
        self.inner.open(report)

    def close(self) -> None:
        self.inner.close()

    def play(self, sound: Sound, start_frame: int = 0) -> Any:
        self.timings.called.append(time.monotonic())
        playback = self.inner.play(sound, start_frame)
        self.timings.returned.append(time.monotonic())
        return playback



# Runs in its own process, so that noting an arrival never waits for this process's GIL.
FIFO_READER = r"""
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)  # read-write: no end-of-file between two plays
out = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
print("ready", flush=True)
while True:
    if os.read(fd, 1 << 16):
        os.write(out, b"%.9f\n" % time.monotonic())
"""


def start_fifo_reader(fifo: Path, arrivals: Path) -> subprocess.Popen[str]:
    """A process that notes (on the shared monotonic clock) each chunk ALSA writes."""
    reader = subprocess.Popen([sys.executable, "-c", FIFO_READER, str(fifo), str(arrivals)],
                              stdout=subprocess.PIPE, text=True)
    assert reader.stdout is not None
    if reader.stdout.readline().strip() != "ready":
        raise RuntimeError("the FIFO reader did not start")
    return reader


def capture_device(tmp: Path) -> Path:
    """Make ALSA's default device a file plugin writing into a FIFO, with a null sink."""
    fifo = tmp / "pcm.fifo"
    os.mkfifo(fifo)
    conf = tmp / "asound.conf"
    conf.write_text('pcm.!default { type file; slave.pcm { type null }; '
                    f'file "{fifo}"; format "raw" }}\n')
    os.environ["ALSA_CONFIG_PATH"] = str(conf)  # read by ALSA at its first open, below
    return fifo


async def run_match(signals: int, spacing_s: float, timings: Timings) -> None:
    # The pre-signal, the start, `signals - 3` intervals and the final, `spacing_s` apart.
    intervals = signals - 3
    period_s = spacing_s * (intervals + 1)
    profile = Profile(
        name="bench", ithf_conformant=False, period_s=period_s, pre_signal_lead_s=spacing_s,
        signals=tuple(PlacedSignal(SignalKind.INTERVAL, period_s - spacing_s * (i + 1))
                      for i in range(intervals)))
    config = Config()
    service = Service(Match(profile))
    speaker = Speaker(SoundBank.load(config.signals, config.speaker), TimedPlayer(timings),
                      service.loop, service.status)
    service.sound_outputs += [SignalClock(timings), speaker]
    service.outputs.append(speaker)
    await speaker.settled()
    task = asyncio.create_task(service.run())
    service.execute("start")
    await asyncio.sleep(spacing_s * signals + 1.0)
    task.cancel()
    await speaker.__aexit__(None, None, None)


def summary(gaps_s: list[float]) -> dict[str, float]:
    ms = sorted(g * 1000 for g in gaps_s)
    cuts = statistics.quantiles(ms, n=100, method="inclusive")
    return {"p50_ms": round(statistics.median(ms), 3), "p99_ms": round(cuts[98], 3),
            "max_ms": round(ms[-1], 3)}


def first_chunks(timings: Timings) -> list[float]:
    """For each play, the first chunk that arrived after its call (and before the next one)."""
    out = []
    bounds = [*timings.called[1:], float("inf")]
    for start, end in zip(timings.called, bounds, strict=True):
        arrived = [t for t in timings.chunks if start <= t < end]
        if arrived:
            out.append(arrived[0])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signals", type=int, default=120, help="signals to time (120)")
    parser.add_argument("--spacing", type=float, default=0.25, metavar="S",
                        help="seconds between signals (0.25)")
    parser.add_argument("--device", choices=["capture", "default"], default="capture",
                        help="capture: ALSA's file plugin into a FIFO (no card needed); "
                        "default: the machine's own default device")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the JSON here")
    args = parser.parse_args(argv)
    if args.signals < 3:
        parser.error("--signals must be at least 3 (pre-signal, start, final)")

    timings = Timings()
    with tempfile.TemporaryDirectory() as tmp:
        reader = None
        if args.device == "capture":
            arrivals = Path(tmp) / "arrivals"
            reader = start_fifo_reader(capture_device(Path(tmp)), arrivals)
        try:
            asyncio.run(run_match(args.signals, args.spacing, timings))
        finally:
            if reader is not None:
                reader.kill()
                reader.wait()
        if reader is not None:
            timings.chunks = [float(t) for t in arrivals.read_text().split()]

    n = min(len(timings.due), len(timings.returned))
    if n < len(timings.due):  # the speaker logged why it stopped playing
        print(f"audio_latency: the device played {n} of {len(timings.due)} signals",
              file=sys.stderr)
        return 1
    due, notified = timings.due[:n], timings.notified[:n]
    result: dict[str, Any] = {
        "benchmark": "audio_latency",
        "what": "signal due -> first PCM handed to ALSA, through timerd's speaker adapter",
        "machine": {"platform": platform.platform(), "machine": platform.machine(),
                    "python": platform.python_version(), "cpus": os.cpu_count()},
        "device": ("ALSA file plugin into a FIFO, null sink (no sound card)"
                   if args.device == "capture" else "ALSA default device"),
        "signals": n,
        "spacing_s": args.spacing,
        "due_to_notified": summary([b - a for a, b in zip(due, notified, strict=True)]),
        "play_call": summary([b - a for a, b in zip(
            timings.called[:n], timings.returned[:n], strict=True)]),
        "due_to_play_returned": summary(
            [b - a for a, b in zip(due, timings.returned[:n], strict=True)]),
    }
    if args.device == "capture":
        firsts = first_chunks(timings)
        if len(firsts) == n:
            result["due_to_first_bytes_out_of_alsa"] = summary(
                [b - a for a, b in zip(due, firsts, strict=True)])
        else:
            result["error"] = f"first bytes seen for {len(firsts)} of {n} signals"
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0 if "error" not in result else 1


if __name__ == "__main__":
    sys.exit(main())
