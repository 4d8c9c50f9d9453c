#!/usr/bin/env python3
"""Synthesise timerd's signal sounds, bit for bit the same on every machine.

    python sounds/make_sounds.py            # rewrite the WAVs beside this script
    python sounds/make_sounds.py OUTDIR     # write them somewhere else (the test compares)

Each WAV is named after the signal kind it serves (`interval.wav` for SignalKind.INTERVAL), so a
kind's default speaker sound is the built-in of the same name. All are mono 16-bit PCM at
44.1 kHz, peak-normalised to the same level, with fundamentals between 110 Hz and 1 kHz and
soft harmonics: loud and distinct without being shrill (ITHF 4.4, "clear, unmistakable").

Why so careful about arithmetic: the test suite regenerates every file and compares bytes. libm's
`sin`/`exp`/`pow` may differ in the last bit between C libraries and CPUs, which after rounding
to 16 bits can flip a sample. So this script uses only +, -, *, / and integer operations, which
IEEE 754 and Python define exactly: the sine comes from a Taylor polynomial into a table, phases
are 32-bit integer accumulators, envelopes are polynomials, noise is a xorshift generator.
Only the standard library is used.
"""

from __future__ import annotations

import math
import sys
import wave
from array import array
from collections.abc import Callable
from pathlib import Path

RATE = 44100
PEAK = 29000  # about -1 dBFS: loud, with headroom for a resampling mixer
TABLE_BITS = 13
TABLE_SIZE = 1 << TABLE_BITS
PHASE_SHIFT = 32 - TABLE_BITS

Samples = list[float]
Table = list[float]


# -- exact building blocks ------------------------------------------------------------------

def _sin_quarter(x: float) -> float:
    """sin(x) for 0 <= x <= pi/2 by its Taylor series to x**17 (error below 1e-13)."""
    coeffs = [(-1) ** k / math.factorial(2 * k + 1) for k in range(9)]
    x2 = x * x
    acc = 0.0
    for c in reversed(coeffs):
        acc = acc * x2 + c
    return acc * x


def _sine_table() -> Table:
    quarter = TABLE_SIZE // 4
    first = [_sin_quarter(2.0 * math.pi * i / TABLE_SIZE) for i in range(quarter + 1)]
    table = [0.0] * TABLE_SIZE
    for i in range(TABLE_SIZE):
        q, r = divmod(i, quarter)
        value = first[r] if q % 2 == 0 else first[quarter - r]
        table[i] = value if q < 2 else -value
    return table


SINE = _sine_table()


def wavetable(harmonics: list[tuple[int, float]]) -> Table:
    """One cycle with the given (harmonic number, amplitude) partials, peak 1."""
    table = [0.0] * TABLE_SIZE
    for n, amp in harmonics:
        for i in range(TABLE_SIZE):
            table[i] += amp * SINE[(n * i) % TABLE_SIZE]
    peak = max(abs(v) for v in table)
    return [v / peak for v in table]


#: Timbres. Partials fall off fast enough that nothing is shrill.
PURE = SINE
BELL = wavetable([(1, 1.0), (2, 0.45), (3, 0.22), (4, 0.12), (6, 0.05)])
REED = wavetable([(1, 1.0), (3, 0.33), (5, 0.16), (7, 0.08), (9, 0.04)])  # soft square
BRASS = wavetable([(n, 1.0 / n) for n in range(1, 13)])  # band-limited saw: a horn
BASS = wavetable([(1, 1.0), (2, 0.5), (3, 0.33), (4, 0.2), (5, 0.1)])


def _increment(freq_hz: float) -> int:
    return round(freq_hz * 4294967296.0 / RATE)


def oscillator(table: Table, freq_hz: float, n: int) -> Samples:
    """`n` samples of `table` at `freq_hz`, from phase 0."""
    inc = _increment(freq_hz)
    mask = TABLE_SIZE - 1
    return [table[((i * inc) >> PHASE_SHIFT) & mask] for i in range(n)]


def sweep(table: Table, start_hz: float, end_hz: float, n: int) -> Samples:
    """`n` samples whose pitch glides linearly from `start_hz` to `end_hz` (a drum's drop)."""
    inc0, inc1 = _increment(start_hz), _increment(end_hz)
    mask = TABLE_SIZE - 1
    phase = 0
    out = []
    for i in range(n):
        out.append(table[(phase >> PHASE_SHIFT) & mask])
        phase = (phase + inc0 + (inc1 - inc0) * i // n) & 0xFFFFFFFF
    return out


def noise(n: int, seed: int) -> Samples:
    """White noise in [-1, 1) from xorshift32, differenced to tilt it bright (hats, snare)."""
    state = seed or 1
    out = []
    prev = 0.0
    for _ in range(n):
        state ^= (state << 13) & 0xFFFFFFFF
        state ^= state >> 17
        state ^= (state << 5) & 0xFFFFFFFF
        value = state / 2147483648.0 - 1.0
        out.append((value - prev) * 0.5)
        prev = value
    return out


def envelope(n: int, attack_s: float, release_s: float, decay_power: int = 0) -> Samples:
    """Gain per sample: a linear attack, a body, and a linear release.

    With `decay_power` k > 0 the body falls as (1 - t)**k instead of holding (bells, drums).
    """
    attack = max(1, int(attack_s * RATE))
    release = max(1, int(release_s * RATE))
    out = []
    for i in range(n):
        gain = 1.0
        if i < attack:
            gain = i / attack
        if decay_power:
            rest = 1.0 - i / n
            body = 1.0
            for _ in range(decay_power):
                body *= rest
            gain *= body
        if i >= n - release:
            gain *= (n - i) / release
        out.append(gain)
    return out


def note(table: Table, freq_hz: float, dur_s: float, *, attack_s: float = 0.005,
         release_s: float = 0.02, decay_power: int = 0, level: float = 1.0,
         detune: float = 0.0) -> Samples:
    """One shaped note; `detune` adds two partners that far apart (a fraction) for a chorus."""
    n = int(dur_s * RATE)
    voices = [oscillator(table, freq_hz, n)]
    if detune:
        voices += [oscillator(table, freq_hz * (1.0 + detune), n),
                   oscillator(table, freq_hz * (1.0 - detune), n)]
    env = envelope(n, attack_s, release_s, decay_power)
    scale = level / len(voices)
    return [sum(vs) * e * scale for *vs, e in zip(*voices, env, strict=True)]


def silence(dur_s: float) -> Samples:
    return [0.0] * int(dur_s * RATE)


def mix(into: Samples, part: Samples, at_s: float, level: float = 1.0) -> None:
    """Add `part` into `into` from `at_s` on (cut at the end of `into`)."""
    start = round(at_s * RATE)
    end = min(len(into), start + len(part))
    for i in range(start, end):
        into[i] += part[i - start] * level


def track(dur_s: float, parts: list[tuple[float, Samples]]) -> Samples:
    out = silence(dur_s)
    for at_s, part in parts:
        mix(out, part, at_s)
    return out


def saturate(samples: Samples, drive: float) -> Samples:
    """Soft-clip (a cubic curve) after `drive` times gain: a horn's loudness without its peaks."""
    peak = max(abs(v) for v in samples) or 1.0
    out = []
    for v in samples:
        x = max(-1.0, min(1.0, v / peak * drive))
        out.append(1.5 * x - 0.5 * x * x * x)
    return out


def to_pcm(samples: Samples) -> bytes:
    """Normalise to PEAK and round to 16-bit little-endian."""
    peak = max(abs(v) for v in samples) or 1.0
    scale = PEAK / peak
    pcm = array("h", [round(v * scale) for v in samples])
    if sys.byteorder == "big":
        pcm.byteswap()
    return pcm.tobytes()


# -- the signals ----------------------------------------------------------------------------

# Equal-tempered pitches (A4 = 440 Hz), written out so no pow() is needed.
A2, D3, FS3, A3, C4, CS4, E4 = 110.0, 146.83, 185.0, 220.0, 261.63, 277.18, 329.63
G4, A4, B4, C5, D5, E5, F5 = 392.0, 440.0, 493.88, 523.25, 587.33, 659.26, 698.46
G5, GS5, B5, C6 = 783.99, 830.61, 987.77, 1046.5
F2, G2, C3 = 87.31, 98.0, 130.81


def pre_signal() -> Samples:
    """A rising bell jingle that rings out on a major chord: 'the match is about to start'."""
    parts = [(0.18 * i, note(BELL, f, 0.5, decay_power=2)) for i, f in enumerate((G4, C5, E5, G5))]
    parts += [(0.8, note(BELL, f, 1.6, decay_power=2, level=0.7)) for f in (C5, E5, G5, C6)]
    return track(2.4, parts)


def start() -> Samples:
    """A rising fifth, short then held, on a reed tone: 'go' (ITHF 5.1, the first faceoff)."""
    return track(1.0, [(0.0, note(REED, C5, 0.14)),
                       (0.16, note(REED, G5, 0.84, detune=0.003)),
                       (0.16, note(REED, C5, 0.84, level=0.5))])


def interval() -> Samples:
    """One 250 ms beep with 350 ms of silence after it: repeated N times it counts the minutes
    left (ITHF 4.4), at the buzzer's own rhythm."""
    return track(0.6, [(0.0, note(REED, A4, 0.25, detune=0.002)),
                       (0.0, note(REED, A4 * 2, 0.25, level=0.3))])


def last_30() -> Samples:
    """Three quick rising notes and a ringing top: 'thirty seconds left' (ITHF 4.4)."""
    parts = [(0.14 * i, note(REED, f, 0.11)) for i, f in enumerate((E5, GS5, B5))]
    parts.append((0.42, note(BELL, B5, 0.5, decay_power=2)))
    return track(0.95, parts)


def _horn(chord: tuple[float, ...], dur_s: float) -> Samples:
    return saturate(track(dur_s, [(0.0, note(BRASS, f, dur_s, attack_s=0.04, release_s=0.15,
                                              detune=0.004)) for f in chord]), 2.5)


def period_end() -> Samples:
    """A 1.5 s horn on D major: a period is over, the match is not."""
    return _horn((D3, FS3, A3), 1.5)


def final() -> Samples:
    """The long, low 2.5 s horn on A major: the match is over (ITHF 4.4, the final signal)."""
    return _horn((A2, A3, CS4, E4), 2.5)


def pause() -> Samples:
    """Two falling notes: the clock stopped (ITHF 10.1)."""
    return track(0.25, [(0.0, note(PURE, G5, 0.1)), (0.12, note(PURE, C5, 0.12))])


def resume() -> Samples:
    """Two rising notes: the clock runs again."""
    return track(0.25, [(0.0, note(PURE, C5, 0.1)), (0.12, note(PURE, G5, 0.12))])


def goal_rejected() -> Samples:
    """Two low, rough 'ehh-ehh' blasts in the buzzer's rhythm (0.6 s, 0.15 s apart): the goal
    does not count (ITHF 5.6, 6.5, 10.3)."""
    blast = track(0.6, [(0.0, note(REED, 155.0, 0.6, release_s=0.04)),
                        (0.0, note(REED, 164.0, 0.6, release_s=0.04))])
    return track(1.35, [(0.0, blast), (0.75, blast)])


def goal() -> Samples:
    """A bright rising 'ta-da' on a bell: the goal counts."""
    return track(1.0, [(0.0, note(BELL, C5, 0.3, decay_power=2)),
                       (0.12, note(BELL, E5, 0.3, decay_power=2)),
                       (0.24, note(BELL, G5, 0.7, decay_power=2))])


def passive_warning() -> Samples:
    """Two short, equal, high reed taps: 'passive play' after 5 s on the puck (ITHF 8.3)."""
    return track(0.45, [(0.0, note(REED, B5, 0.12)), (0.25, note(REED, B5, 0.12))])


def break_warning() -> Samples:
    """Three soft falling bells: the break before overtime ends soon (ITHF 4.8)."""
    return track(1.2, [(0.25 * i, note(BELL, f, 0.5, decay_power=2, level=0.8))
                       for i, f in enumerate((G5, E5, C5))])


def intermission_end() -> Samples:
    """A short 1 s horn on C major: the intermission is over, teams back (ISBHF 410)."""
    return _horn((C3, G4, C5), 1.0)


def overtime_start() -> Samples:
    """The start's rising fifth, a fourth higher and doubled: sudden death begins (ITHF 4.8,
    ISBHF 411)."""
    return track(1.2, [(0.0, note(REED, F5, 0.14)), (0.16, note(REED, C6, 0.14)),
                       (0.32, note(REED, F5, 0.88, detune=0.003)),
                       (0.32, note(REED, C6, 0.88, level=0.6))])


def timeout_end() -> Samples:
    """Two level reed tones, half a second each: the 30-s timeout is over (ISBHF 412)."""
    tone = note(REED, E5, 0.5, detune=0.002)
    return track(1.25, [(0.0, tone), (0.65, tone)])


def penalty_end() -> Samples:
    """A falling bell pair, then the low one again: a penalty has run out, the player is back
    (ISBHF penalties)."""
    return track(1.1, [(0.0, note(BELL, G5, 0.4, decay_power=2)),
                       (0.3, note(BELL, D5, 0.4, decay_power=2)),
                       (0.6, note(BELL, D5, 0.5, decay_power=2))])


def line_change() -> Samples:
    """One short, dry tick per stage (counted by the beeps): the 5-s stage is over
    (ISBHF 404b)."""
    return track(0.35, [(0.0, note(PURE, A4 * 2, 0.15, release_s=0.02))])


def half_period() -> Samples:
    """A 1 s horn on G major: half-time of the period, switch ends (ISBHF 407 !3)."""
    return _horn((G2, D3, G4), 1.0)


def goalie_change_end() -> Samples:
    """Two long horns: the time to dress a new goalie is over (ISBHF 408)."""
    blast = _horn((E4, B4), 1.0)
    return track(2.3, [(0.0, blast), (1.2, blast)])


def recovered() -> Samples:
    """A calm falling 'ding-dong': timerd restarted and took the match up where it stood."""
    return track(1.2, [(0.0, note(BELL, E5, 0.7, decay_power=2)),
                       (0.45, note(BELL, C5, 0.75, decay_power=2))])


def last_30_music() -> Samples:
    """30 s at 120 beats a minute (15 bars of 4/4) that ends on the beat of 0:00.

    Kick on every beat, snare on 2 and 4, hats between, a bass in eighths over A minor, F, C, G,
    an arpeggio from bar 5, a tick on each of the last five seconds, and a snare roll over the
    last two bars that runs into 0:00, where the final horn takes over (ITHF 4.4).
    """
    beat = 0.5
    out = silence(30.0)
    kick = [v * e for v, e in zip(sweep(PURE, 150.0, 45.0, int(0.16 * RATE)),
                                  envelope(int(0.16 * RATE), 0.002, 0.01, 2), strict=True)]
    hat = [v * e for v, e in zip(noise(int(0.04 * RATE), 7), envelope(int(0.04 * RATE), 0.001,
                                                                       0.005, 3), strict=True)]
    snare_n = int(0.12 * RATE)
    snare_env = envelope(snare_n, 0.001, 0.01, 2)
    snare = [(0.7 * v + 0.3 * t) * e for v, t, e in zip(
        noise(snare_n, 99), oscillator(PURE, 190.0, snare_n), snare_env, strict=True)]
    chords = [(A2, (A4, C5, E5)), (F2, (A4, C5, F5)), (C3, (G4, C5, E5)),
              (G2, (G4, B4, D5))]
    bass_notes = {root: note(BASS, root, 0.22, release_s=0.03) for root, _ in chords}
    arp_notes: dict[float, Samples] = {}
    for bar in range(15):
        t_bar = bar * 4 * beat
        root, arp = chords[bar % 4]
        for b in range(4):
            t = t_bar + b * beat
            mix(out, kick, t, 0.9)
            mix(out, hat, t + beat / 2, 0.25)
            if b % 2 == 1 and bar < 13:
                mix(out, snare, t, 0.5)
        if bar < 14:
            for e in range(8):
                mix(out, bass_notes[root], t_bar + e * beat / 2, 0.5 if e % 2 else 0.6)
        if 4 <= bar < 14:
            for e in range(8):
                f = arp[e % 3] if e % 4 != 3 else arp[1] * 2
                if f not in arp_notes:
                    arp_notes[f] = note(BELL, f, 0.2, decay_power=2)
                mix(out, arp_notes[f], t_bar + e * beat / 2, 0.22)
    # The last two bars: a roll in eighths, then sixteenths, growing louder into 0:00.
    steps = [26.0 + i * 0.25 for i in range(8)] + [28.0 + i * 0.125 for i in range(16)]
    for i, t in enumerate(steps):
        mix(out, snare, t, 0.3 + 0.5 * i / len(steps))
    for k, t in enumerate((25.0, 26.0, 27.0, 28.0, 29.0)):  # 5, 4, 3, 2, 1 seconds left
        mix(out, note(BELL, (C5, D5, E5, G5, C6)[k], 0.25, decay_power=2), t, 0.5)
    fade = int(0.01 * RATE)  # no click at the very end
    for i in range(fade):
        out[len(out) - fade + i] *= (fade - i) / fade
    return out


SOUNDS: dict[str, Callable[[], Samples]] = {
    "pre_signal": pre_signal,
    "start": start,
    "interval": interval,
    "last_30": last_30,
    "period_end": period_end,
    "final": final,
    "pause": pause,
    "resume": resume,
    "goal": goal,
    "goal_rejected": goal_rejected,
    "passive_warning": passive_warning,
    "break_warning": break_warning,
    "intermission_end": intermission_end,
    "overtime_start": overtime_start,
    "timeout_end": timeout_end,
    "penalty_end": penalty_end,
    "line_change": line_change,
    "half_period": half_period,
    "goalie_change_end": goalie_change_end,
    "recovered": recovered,
    "last_30_music": last_30_music,
}


def write_all(outdir: Path) -> list[Path]:
    """Write every sound as `<name>.wav` in `outdir`; returns the paths."""
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, make in SOUNDS.items():
        path = outdir / f"{name}.wav"
        with wave.open(str(path), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(RATE)
            w.writeframes(to_pcm(make()))
        paths.append(path)
    return paths


def main(argv: list[str]) -> int:
    outdir = Path(argv[0]) if argv else Path(__file__).resolve().parent
    for path in write_all(outdir):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
