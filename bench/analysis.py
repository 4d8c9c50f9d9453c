"""From press and pin instants to errors: the ideal instant of every signal, and percentiles.

The ideal match is computed from the operator's presses alone, as a referee with a perfect
stopwatch would: the start signal is due `pre_signal_lead_s` after the START press (ITHF 4.4), a
signal placed at `remaining_s` is due `period_s - remaining_s` of play later, and every pause
moves everything after it by the time from the pause press to the resume press (ITHF 10.2).
So a player's error includes everything between the finger and the buzzer pin: its reaction to
the presses, its sleeping, its bookkeeping.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from timerd.core.profile import Profile

#: The signals a timer sounds by itself, at planned instants (the others answer a press).
TIMED = ("start", "interval", "last_30", "final")


def timed_points(profile: Profile) -> list[tuple[str, float, float]]:
    """(signal, remaining_s, elapsed_s) of every timed signal of a one-period profile."""
    length = profile.period_s
    points = [("start", length, 0.0), ("final", 0.0, length)]
    points += [(s.signal.value, s.remaining_s, length - s.remaining_s) for s in profile.signals]
    return sorted(points, key=lambda p: p[2])


def ideal_instants(profile: Profile, presses_ns: list[int]) -> dict[tuple[str, float], int]:
    """The ideal instant (ns) of each timed signal, keyed by (signal, remaining_s).

    `presses_ns`: START first, then pause, resume, pause, resume, ... A pause with no resume
    stops the match: later signals have no ideal instant and are left out.
    """
    if not presses_ns:
        return {}
    start_ns = presses_ns[0] + round(profile.pre_signal_lead_s * 1e9)
    pauses: list[tuple[float, int]] = []  # (elapsed_s at the pause, its length in ns)
    shift_ns = 0
    toggles = presses_ns[1:]
    for pause_ns, resume_ns in zip(toggles[::2], toggles[1::2], strict=False):
        pauses.append(((pause_ns - start_ns - shift_ns) / 1e9, resume_ns - pause_ns))
        shift_ns += resume_ns - pause_ns
    stopped_at = math.inf
    if len(toggles) % 2:
        stopped_at = (toggles[-1] - start_ns - shift_ns) / 1e9
    out = {}
    for signal, remaining_s, elapsed_s in timed_points(profile):
        if elapsed_s > stopped_at:
            continue
        moved_ns = sum(length for at_s, length in pauses if at_s < elapsed_s)
        out[signal, remaining_s] = start_ns + round(elapsed_s * 1e9) + moved_ns
    return out


def onset_errors(profile: Profile, played: dict[str, Any]) -> dict[str, Any]:
    """Each timed signal's error (ms, + is late) at the buzzer pin, and the ones never heard.

    Where the player says when it planned a signal (timerd's `due`, fixed by the presses as it
    handled them), `to_plan_ms` is the onset's lateness against that plan alone: how well it
    slept. `start_press_ms` is START press to the pre-signal's onset: the reaction that every
    later ideal instant hangs on.
    """
    presses = played["presses_ns"]
    ideal = ideal_instants(profile, presses)
    heard: dict[tuple[str, float], dict[str, Any]] = {}
    for record in played["signals"]:
        key = (record["signal"], float(record["remaining_s"]))
        if key in ideal and key not in heard and record["onset_ns"] is not None:
            heard[key] = record
    errors = []
    for key, ideal_ns in ideal.items():
        if key in heard:
            record = heard[key]
            error = {"signal": key[0], "remaining_s": key[1],
                     "error_ms": (record["onset_ns"] - ideal_ns) / 1e6}
            if "due_ns" in record:
                error["to_plan_ms"] = (record["onset_ns"] - record["due_ns"]) / 1e6
            errors.append(error)
    missed = [f"{s} at {r:g} s left" for (s, r) in ideal if (s, r) not in heard]
    pre = [r for r in played["signals"] if r["signal"] == "pre_signal" and r["onset_ns"]]
    start_press = (pre[0]["onset_ns"] - presses[0]) / 1e6 if pre and presses else None
    return {"errors": errors, "missed": missed, "start_press_ms": start_press}


def reaction_latencies(played: dict[str, Any]) -> dict[str, Any]:
    """Press to buzzer pin, and press to the instant the clock stood still, in ms.

    The presses after START alternate pause and resume; each is answered by one acknowledgement
    signal (`pause` or `resume`) whose `due` is the instant timerd handled it, so the pause's
    `due` is the instant the match clock stopped.
    """
    toggles = played["presses_ns"][1:]
    acks = [s for s in played["signals"] if s["signal"] in ("pause", "resume")]
    buzzer, clock_stop = [], []
    for press_ns, ack in zip(toggles, acks, strict=False):
        if ack["onset_ns"] is not None:
            buzzer.append((ack["onset_ns"] - press_ns) / 1e6)
        if ack["signal"] == "pause":
            clock_stop.append((ack["due_ns"] - press_ns) / 1e6)
    return {"buzzer_ms": buzzer, "clock_stop_ms": clock_stop,
            "unanswered": len(toggles) - len(buzzer)}


def pulse_errors(played: dict[str, Any]) -> dict[str, Any]:
    """Every buzzer pulse's length at the pin against its signal's pattern, in ms (+ longer).

    A signal's edges run from its own first edge to the next signal's. A leading falling edge
    there is the previous signal being cut (a new signal silences the one still sounding, by
    design); a last rising edge without its fall is this one being cut. Both leave whole pulses
    only, and each whole pulse is the pattern's pulse of the same index. `cut` counts signals
    cut before their last pulse; `start_ms` is each later pulse's start against the pattern,
    from the signal's first edge.
    """
    edges = played.get("buzzer_edges", [])
    signals = played["signals"]
    lengths: list[float] = []
    starts: list[float] = []
    worst: dict[str, Any] | None = None
    cut = 0
    for i, record in enumerate(signals):
        expected = record.get("pulses_s", [])
        if not expected or record["onset_ns"] is None:
            continue
        end = signals[i + 1]["first_edge"] if i + 1 < len(signals) else len(edges)
        own = edges[record["first_edge"]:end]
        while own and not own[0][1]:
            own = own[1:]
        whole = [(own[k][0], own[k + 1][0]) for k in range(0, len(own) - 1, 2)
                 if own[k][1] and not own[k + 1][1]]
        cut += len(whole) < len(expected)
        for (rise, fall), (on_s, off_s) in zip(whole, expected, strict=False):
            error = (fall - rise) / 1e6 - (off_s - on_s) * 1e3
            lengths.append(error)
            if on_s > 0:
                starts.append((rise - whole[0][0]) / 1e6 - on_s * 1e3)
            if worst is None or abs(error) > abs(worst["error_ms"]):
                worst = {"signal": record["signal"], "length_ms": (off_s - on_s) * 1e3,
                         "error_ms": error}
    return {"length": summary(lengths), "start": summary(starts), "cut": cut, "worst": worst}


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile: below 100 values, p99 is the largest one."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


def summary(values: list[float]) -> dict[str, Any]:
    """n, p50, p99 and max of the magnitudes, and the signed mean, in the values' unit."""
    if not values:
        return {"n": 0}
    size = [abs(v) for v in values]
    return {"n": len(values), "p50": percentile(size, 50), "p99": percentile(size, 99),
            "max": max(size), "mean_signed": sum(values) / len(values)}


def report(result: Any, out: Path | None) -> None:
    """A stand-alone benchmark's result: printed as JSON, and written to `out` if given."""
    text = json.dumps(result, indent=1)
    print(text)
    if out is not None:
        out.write_text(text + "\n")
