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
- `broker_cpu`: mosquitto's CPU time (from /proc) while the tables only send heartbeats, and
  over the rounds, as a share of one core;
- `desk_status_s`: how long `timerd hall status --once --json` takes, from its start to its
  output listing every table (a new process: Python's start-up, the connection, the retained
  burst);
- `board_all_shown_s`: from opening the hall board (`timerd hall board`, headless chromium) to
  a card for every table; `board_update_ms`: from a table sending its new state (pause; the
  state's `wall`, this machine's clock) through the broker and the board to the card saying
  `paused` in the browser (needs playwright and /usr/bin/chromium; left out without them).

Run from the repository root: `python bench/hall_skew.py [--tables 10,50,100] [--rounds 5]
[--out FILE]`. It prints the JSON (and writes it to FILE). Needs Debian's mosquitto.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))  # the browser harness imports the tests' conftest

from bench.analysis import report  # noqa: E402
from tests.hall_rig import (  # noqa: E402
    Broker,
    Observer,
    Table,
    free_port,
    link_is,
    stop_all,
    wait_until,
    write_profile,
)
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


def cpu_s(pid: int) -> float:
    """A process's CPU time so far (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def desk_args(broker: Broker, *args: str) -> list[str]:
    return [sys.executable, "-m", "timerd", "hall", *args, "-o", f"hall.port={broker.port}",
            "-o", 'hall.host="127.0.0.1"', "-o", "hall.allow_anonymous=true"]


def desk_status_s(broker: Broker, tables_n: int) -> float:
    """How long a new `hall status --once --json` takes to list every table."""
    began = time.monotonic()
    out = subprocess.run(desk_args(broker, "status", "--once", "--json", "--wait", "30"),
                         cwd=ROOT, capture_output=True, text=True, check=True, timeout=120)
    took = time.monotonic() - began
    shown = json.loads(out.stdout)
    if len(shown) != tables_n:
        raise RuntimeError(f"hall status listed {len(shown)} of {tables_n} tables")
    return round(took, 3)


def board_figures(broker: Broker, observer: Observer, tables: list[Table],
                  directory: Path) -> dict[str, Any]:
    """The hall board: how long until every table is shown, and how fast a change arrives."""
    try:
        from playwright.sync_api import sync_playwright  # noqa: PLC0415 (optional)

        from tests.adapters.web_harness import CHROMIUM, CHROMIUM_ARGS  # noqa: PLC0415
    except ImportError as exc:
        return {"skipped": f"no playwright: {exc}"}
    if not CHROMIUM.exists():
        return {"skipped": f"no {CHROMIUM}"}
    port = free_port()
    log = (directory / "board.log").open("wb")
    board = subprocess.Popen(desk_args(broker, "board", "--port", str(port)), cwd=ROOT,
                             stdout=log, stderr=log)
    log.close()
    try:
        wait_until(lambda: "hall board of" in (directory / "board.log").read_text(), 60,
                   "the board")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                                 args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            began = time.monotonic()
            page.goto(f"http://127.0.0.1:{port}/?kiosk=1")
            page.wait_for_function(f"document.querySelectorAll('.card').length == {len(tables)}",
                                   timeout=120_000)
            all_shown = time.monotonic() - began
            updates = []
            for table in tables[:5]:
                card = f'.card[data-table="{table.name}"] .c-label'
                page.evaluate("""(selector) => { window.changedAt = null;
                    const label = document.querySelector(selector);
                    new MutationObserver(() => { if (label.textContent === 'paused')
                        window.changedAt = Date.now() / 1000; })
                      .observe(label, {childList: true, characterData: true, subtree: true}); }""",
                              card)
                request(table.socket, "pause", [])
                page.wait_for_function("window.changedAt !== null", timeout=30_000)
                shown_at = page.evaluate("window.changedAt")
                sent = observer.wait_for(lambda ms, t=table: next(
                    (m.json()["wall"] for m in reversed(ms)
                     if m.topic.endswith(f"/{t.name}/state")
                     and m.json()["phase"] == "paused"), None), 30, "paused state")
                updates.append((shown_at - sent) * 1000)
                request(table.socket, "resume", [])
            browser.close()
        return {"board_all_shown_s": round(all_shown, 3),
                "board_update_ms": [round(u, 1) for u in updates]}
    finally:
        board.terminate()
        board.wait(10)


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
            observer.wait_for(lambda _, t=table: link_is(observer, t.name, b"online"), 300,
                              f"{table.name}")
        assert broker.proc is not None
        idle_cpu, idle_began = cpu_s(broker.proc.pid), time.monotonic()
        observer.wait_for(lambda _: None if time.monotonic() - idle_began < 10 else True, 20,
                          "10 s of heartbeats")
        idle_share = (cpu_s(broker.proc.pid) - idle_cpu) / (time.monotonic() - idle_began)
        rounds_cpu, rounds_began = cpu_s(broker.proc.pid), time.monotonic()
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
        rounds_share = (cpu_s(broker.proc.pid) - rounds_cpu) / (time.monotonic() - rounds_began)
        status_s = desk_status_s(broker, tables_n)
        for table in tables:  # the board's update is timed on a running table
            request(table.socket, "start", [])
        board = board_figures(broker, observer, tables, directory)
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
            "round_spread_p99_ms": round(percentile(spreads, 99) * 1000, 3),
            "round_spread_max_ms": round(max(spreads) * 1000, 3),
            "broker_cpu": {"heartbeats_share_of_a_core": round(idle_share, 4),
                           "rounds_share_of_a_core": round(rounds_share, 4)},
            "desk_status_s": status_s, **board,
        }
    finally:
        observer.close()
        stop_all(tables)
        broker.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", default="50",
                        help="how many tables; several runs: 10,50,100")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    results = []
    for tables_n in (int(n) for n in args.tables.split(",")):
        with tempfile.TemporaryDirectory(prefix="hall-skew-") as tmp:
            results.append(run(tables_n, args.rounds, Path(tmp)))
    report(results[0] if len(results) == 1 else results, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
