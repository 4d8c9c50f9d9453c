"""A table restarted mid-round keeps its round, and the desk's acknowledgement of its result
survives a restart too (issue 30 item 1); a scheduled table refuses the next round's names
(issue 30 item 2, the table's side). Real daemons on a real mosquitto, the real desk
(`timerd hall ...` processes), SIGKILL between.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.hall_rig import (
    ROOT,
    Broker,
    Observer,
    Table,
    link_is,
    stop_all,
    wait_until,
    write_profile,
)
from timerd.cli import request

#: Real processes, a broker and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e


def desk(broker: Broker, store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "timerd", "hall", *args, "--store", str(store),
         "-o", f"hall.port={broker.port}", "-o", 'hall.host="127.0.0.1"',
         "-o", "hall.allow_anonymous=true"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)


def online(observer: Observer, table: Table) -> dict[str, Any]:
    """Wait until the table's daemon answers on its control socket and its link says it is
    connected (the broker's retained `online` may be the killed run's); its status."""
    def answers() -> dict[str, Any] | None:
        table.check_alive()
        try:
            status: dict[str, Any] = request(table.socket, "status", [])["status"]
        except OSError:
            return None
        return status if status.get("hall", {}).get("connected") else None

    status = wait_until(answers, 30, f"{table.name} answering and connected")
    observer.wait_for(lambda _: link_is(observer, table.name, b"online"), 30,
                      f"{table.name} online")
    return status


def test_a_table_killed_mid_round_keeps_its_round_and_its_acknowledged_result(
        mosquitto: Broker, tmp_path: Path) -> None:
    """Fails on the old code: after the restart the result went out with `round: null`, the
    desk said `missing: t3` for round R2, and after a second restart the table refused the
    next round's start when its match was still finished (the desk's acknowledgement was
    kept in its memory only: its status said no result)."""
    profile = write_profile(tmp_path / "short.toml", period_s=6, lead_s=1)
    store = tmp_path / "desk"
    table = Table(tmp_path, "t3", mosquitto.port, profile)
    observer = Observer(mosquitto.port)
    try:
        table.start()
        online(observer, table)
        started = desk(mosquitto, store, "start-round", "--in", "2s", "--round", "R2",
                       "--table", "t3")
        assert started.returncode == 0, started.stdout + started.stderr
        table.wait_event(lambda e: e.get("signal") == "start", 20, "the start signal")
        assert table.stop(signal.SIGKILL) == -signal.SIGKILL  # mid-round
        table.start()
        status = online(observer, table)
        assert (status["phase"], status["round"], status["hall"]["round"]) == (
            "paused", "R2", "R2")  # restored paused (ITHF 10.1), in its round
        resumed = desk(mosquitto, store, "resume", "--table", "t3")
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        table.wait_event(lambda e: e.get("state") == "finished", 30, "the match finished")
        observer.wait_for(lambda _: (m := observer.last("t3", "results")) is not None
                          and m.json()["round"] == "R2", 20, "the result, in round R2")

        results = desk(mosquitto, store, "results", "--round", "R2")
        assert results.returncode == 0, results.stdout + results.stderr
        assert "round R2: 1 of 1 results" in results.stdout
        assert "missing" not in results.stdout
        observer.wait_for(lambda _: any(e["type"] == "reply" and e["command"] == "ack"
                                        and e["ok"] for e in observer.events("t3")),
                          20, "the acknowledgement taken")

        assert table.stop(signal.SIGKILL) == -signal.SIGKILL  # after the desk has the result
        table.start()
        online(observer, table)
        kept = request(table.socket, "status", [])["status"]["hall"]["result"]
        assert (kept["round"], kept["acked"]) == ("R2", True)  # the desk has it: no reset
        again = desk(mosquitto, store, "start-round", "--in", "30s", "--round", "R3",
                     "--table", "t3")
        assert again.returncode == 0, again.stdout + again.stderr
        # Issue 42: the finished match came back with the restart (correctable within its
        # window); its result acknowledged, the round's start resets it and schedules.
        assert "t3           ok       reset (result acknowledged), scheduled" in again.stdout

        # Issue 30 item 2: R4's names while R3 is scheduled here are refused, per table.
        schedule = tmp_path / "r4.csv"
        schedule.write_text("round,table,home,away\nR4,t3,Ana,Bor\n", encoding="utf-8")
        early = desk(mosquitto, store, "round", "load", str(schedule))
        assert early.returncode == 1, early.stdout + early.stderr
        row = next(line for line in early.stdout.splitlines() if line.startswith("t3"))
        assert "REFUSED" in row, early.stdout
        assert "the match of round R3 is scheduled; names for round R4 after it" in row, row
        status = request(table.socket, "status", [])["status"]
        assert (status["phase"], status["round"], status["teams"]) == (
            "scheduled", "R3", {"home": "", "away": ""})
    finally:
        observer.close()
        stop_all([table])
