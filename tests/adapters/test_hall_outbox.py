"""One hall outbox per table (issue 41 item 4): tables on one machine, each with its own
`state.directory` as the daemon's refusal advises, keep their results and the desk's
acknowledgements apart; a second daemon refuses an outbox another holds. Real daemons on a
real mosquitto, the real desk.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.hall_rig import ROOT, START_AHEAD_S, Broker, running_tables, wait_until

#: Real processes, a broker and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e


def test_each_table_keeps_its_own_outbox_and_a_second_daemon_refuses_a_held_one(
        mosquitto: Broker, tmp_path: Path) -> None:
    """Fails on the old code: the three tables (no `hall.outbox` set) shared one outbox
    outside their state directories, raced on its `latest-result`, and a fourth daemon
    given t1's outbox started and used it."""
    names = ("t1", "t2", "t3")
    with running_tables(mosquitto, tmp_path, names, period_s=1, lead_s=0.2) as (
            observer, tables):
        observer.publish("timerd/hall/cmd", {"command": "start_round", "round": "R1",
                                             "at": time.time() + START_AHEAD_S})
        for table in tables:
            table.wait_event(lambda e: e.get("state") == "finished", 30, "its match's end")
        results = subprocess.run(
            [sys.executable, "-m", "timerd", "hall", "results", "--round", "R1", "--store",
             str(tmp_path / "desk"), "-o", f"hall.port={mosquitto.port}",
             "-o", 'hall.host="127.0.0.1"', "-o", "hall.allow_anonymous=true"],
            cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
        assert results.returncode == 0, results.stdout + results.stderr

        def kept(table_name: str) -> dict[str, object] | None:
            path = tmp_path / table_name / "state" / "hall-outbox" / "latest-result"
            try:
                latest: dict[str, object] = json.loads(path.read_bytes())
            except (FileNotFoundError, ValueError):
                return None
            return latest if latest.get("acked") else None

        for table in tables:  # each table's acknowledgement in its own state directory
            latest = wait_until(lambda t=table: kept(t.name), 20,
                                f"{table.name}'s acknowledged result in its own outbox")
            assert latest["round"] == "R1"
            others = [kept(other) for other in names if other != table.name]
            assert latest["id"] not in [o and o["id"] for o in others]

        intruder = subprocess.run(
            [*tables[0].args[:-1], "web.enabled=false",
             "-o", f'state.directory="{tmp_path / "intruder"}"',
             "-o", f'state.runtime_directory="{tmp_path / "intruder-run"}"',
             "-o", f'hall.outbox="{tables[0].outbox}"',
             "-o", 'hall.table="t9"', "--control", str(tmp_path / "intruder.sock")],
            cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
        assert intruder.returncode != 0, intruder.stderr
        assert f"another timerd uses the hall outbox {tables[0].outbox}" in intruder.stderr
        tables[0].check_alive()  # t1 goes on
