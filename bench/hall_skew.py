#!/usr/bin/env python3
"""Hall-mode start skew: how closely do N tables give their start signal at one instant?

Starts a throwaway mosquitto on loopback and N timerd daemons in hall mode (real processes,
`python -m timerd run --simulate`), all on this machine. For each of R rounds it publishes one
`start_round` for a few seconds ahead, as the desk does, and reads every table's start-signal
event from the broker. Each event carries `wall`, the table's clock read in the same dispatch
that switches its buzzer on; the processes share this machine's clock, so the figures are the
skew timerd itself adds (message delivery, the epoch-to-monotonic conversion, the sleep until
the instant, CPU contention when every table wakes at once). A real hall adds each Pi's NTP
offset on top, which the desk shows (chrony).

Figures (milliseconds):
- `start_error_ms`: each table's start minus the commanded instant, over all tables and rounds;
- `skew_ms`: each table's start minus that round's median start (how far tables are apart);
- `round_spread_ms`: per round, the latest start minus the earliest;
- `loop_late_ms`: how late each table's loop woke for its start, on its own monotonic clock
  (`late_ms` in the event): the part of `start_error_ms` that is the table's own sleeping.

Run from the repository root: `python bench/hall_skew.py [--tables 50] [--rounds 5]
[--out FILE]`. It prints the JSON (and writes it to FILE). Needs Debian's mosquitto.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.hall_rig import Broker, Observer, Table, stop_all, write_profile  # noqa: E402
from timerd.cli import request  # noqa: E402

LEAD_S = 2.0  # pre-signal lead of the bench profile
AHEAD_S = 5.0  # start_round is sent this long before the start instant


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of `values`."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def summary(values_s: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values_s]
    absolute = [abs(v) for v in ms]
    return {"p50": round(percentile(absolute, 50), 3), "p99": round(percentile(absolute, 99), 3),
            "max": round(max(absolute), 3), "mean": round(statistics.fmean(ms), 3)}


def start_events(observer: Observer, tables: list[Table], round_id: str,
                 ) -> dict[str, dict[str, Any]]:
    """Each table's start-signal event in round `round_id` (its Nth start event)."""
    def starts() -> dict[str, dict[str, Any]] | None:
        found = {}
        for table in tables:
            events = [e for e in observer.events(table.name)
                      if e["type"] == "signal" and e["signal"] == "start"]
            if len(events) >= int(round_id):
                found[table.name] = events[int(round_id) - 1]
        return found if len(found) == len(tables) else None

    return observer.wait_for(lambda _: starts(), AHEAD_S + 30, f"round {round_id} starts")


def run(tables_n: int, rounds: int, directory: Path) -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    broker = Broker(directory)
    broker.start()
    profile = write_profile(directory / "bench.toml", period_s=600, lead_s=LEAD_S)
    tables = [Table(directory, f"t{i:02d}", broker.port, profile,
                    options=("-o", "hall.heartbeat_s=5", "-o", "log.level=\"warning\""))
              for i in range(1, tables_n + 1)]
    observer = Observer(broker.port)
    try:
        for table in tables:
            table.start()
        for table in tables:
            observer.wait_for(lambda _, t=table: (m := observer.last(t.name, "status"))
                              is not None and m.payload == b"online", 120, f"{table.name}")
        errors: list[float] = []
        skews: list[float] = []
        spreads: list[float] = []
        late: list[float] = []
        for n in range(1, rounds + 1):
            at = time.time() + AHEAD_S
            observer.publish("timerd/hall/cmd", {"command": "start_round", "at": at,
                                                 "round": str(n)})
            events = start_events(observer, tables, str(n))
            late += [e["late_ms"] / 1000 for e in events.values()]
            walls = {name: e["wall"] for name, e in events.items()}
            median = statistics.median(walls.values())
            errors += [w - at for w in walls.values()]
            skews += [w - median for w in walls.values()]
            spreads.append(max(walls.values()) - min(walls.values()))
            for table in tables:  # back to idle for the next round
                request(table.socket, "pause", [])
                request(table.socket, "reset", [])
        return {
            "benchmark": "hall_skew", "tables": tables_n, "rounds": rounds,
            "samples": len(errors), "lead_s": LEAD_S, "sent_ahead_s": AHEAD_S,
            "cpus": os.cpu_count(), "python": platform.python_version(),
            "machine": platform.machine(),
            # Other work on the machine shows up as lateness: say how busy it was.
            "loadavg_1min": {"before": round(load_before, 2),
                             "after": round(os.getloadavg()[0], 2)},
            "start_error_ms": summary(errors),
            "skew_ms": summary(skews), "loop_late_ms": summary(late),
            "round_spread_ms": [round(s * 1000, 3) for s in spreads],
        }
    finally:
        observer.close()
        stop_all(tables)
        broker.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hall-skew-") as tmp:
        result = run(args.tables, args.rounds, Path(tmp))
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
