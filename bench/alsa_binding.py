"""Does an ALSA binding keep the interpreter's lock while the sound device opens or plays?
(issue 46 item 7): `python -m bench.alsa_binding` (needs strace, and pyalsaaudio: `pip install
pyalsaaudio`, which builds against Debian's libasound2-dev).

timerd's speaker calls libasound through ctypes (timerd.adapters.audio.AlsaPcm), whose foreign
calls release the lock, so a device that is slow to open holds only the playback thread, never
the event loop that times the buzzer. pyalsaaudio is the field's maintained binding; this
measures both on the same slow device.

The slow device: ALSA's file plugin, whose capture file strace (`inject=openat:delay_exit`)
takes `HOLD_S` to open, as a USB sound card that takes its time to answer. In a fresh process
per binding (ALSA reads its configuration once), the main thread runs an asyncio loop that
wakes every millisecond; a thread opens the device and writes half a second of silence. The
figure that matters: the loop's longest time without a wake-up while the device opened. Prints
JSON, one object per binding.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: How long the device takes to open.
HOLD_S = 0.2

PROBE = r"""
import asyncio, json, sys, threading, time

binding = sys.argv[1]
RATE, SILENCE = 44100, bytes(4 * 44100 // 2)  # half a second, 16-bit stereo


def play():
    if binding == "ctypes":
        from timerd.adapters.audio import AlsaPcm
        pcm = AlsaPcm("default")
        began = time.monotonic()
        pcm.open(2, RATE)
        opened = time.monotonic()
        frames, done = len(SILENCE) // 4, 0
        while done < frames:
            done += pcm.write(SILENCE[4 * done:], frames - done)
        pcm.close()
    else:
        import alsaaudio
        began = time.monotonic()
        pcm = alsaaudio.PCM(alsaaudio.PCM_PLAYBACK, device="default", channels=2, rate=RATE,
                            format=alsaaudio.PCM_FORMAT_S16_LE, periodsize=1024)
        opened = time.monotonic()
        pcm.write(SILENCE)
        pcm.close()
    times.update(began=began, opened=opened, ended=time.monotonic())


async def main():
    player = threading.Thread(target=play)
    player.start()
    while player.is_alive():
        await asyncio.sleep(0.001)
        woke.append(time.monotonic())
    player.join()


def longest_gap(start, end):  # the loop's longest time without a wake-up across [start, end]
    after = next((w for w in woke if w > end), end)
    edges = [start, *(w for w in woke if start < w <= end), after]
    return round(max(b - a for a, b in zip(edges, edges[1:])) * 1e3, 1)


times, woke = {}, []
asyncio.run(main())
print(json.dumps({
    "binding": binding,
    "open_ms": round((times["opened"] - times["began"]) * 1e3, 1),
    "loop_wakeups_during_open": sum(times["began"] < w <= times["opened"] for w in woke),
    "loop_longest_gap_during_open_ms": longest_gap(times["began"], times["opened"]),
    "write_ms": round((times["ended"] - times["opened"]) * 1e3, 1),
    "loop_longest_gap_during_write_ms": longest_gap(times["opened"], times["ended"]),
}))
"""


def measure(binding: str, home: Path) -> dict[str, object]:
    capture = home / f"{binding}.raw"
    conf = home / f"{binding}.conf"
    conf.write_text(f'pcm.!default {{ type file; slave.pcm {{ type null }}; file "{capture}"; '
                    'format "raw" }\n')
    env = {**os.environ, "ALSA_CONFIG_PATH": str(conf)}
    # strace holds every open of the capture file for HOLD_S before it returns: the device is
    # slow to open, in whichever call of the binding opens it.
    strace = ["strace", "-f", "-qq", "--seccomp-bpf", "-o", "/dev/null", "-P", str(capture),
              "-e", "trace=openat", "-e", f"inject=openat:delay_exit={round(HOLD_S * 1e6)}"]
    done = subprocess.run([*strace, sys.executable, "-c", PROBE, binding], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        return {"binding": binding, "error": done.stderr.strip()[-800:]}
    result: dict[str, object] = json.loads(done.stdout)
    return result


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for binding in ("ctypes", "pyalsaaudio"):
            print(json.dumps(measure(binding, Path(tmp))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
