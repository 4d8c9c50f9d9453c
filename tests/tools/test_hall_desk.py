"""The tournament desk, `timerd hall ...`: its arguments, its status table, and the whole
round (start, hall-wide pause and resume, results) against real daemons on a real mosquitto.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import wired
from tests.hall_rig import ROOT, Broker, Table, link_is, running_tables, wait_until
from timerd.adapters.hall.link import HallLink, Outbox
from timerd.config import HallConfig, profiles
from timerd.core.match import Match
from timerd.service import Service
from timerd.tools import hall_desk
from timerd.tools.hall_desk import Hall, parse_duration, render_status, start_instant

#: Real processes, a broker or a browser, and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e


def desk(broker: Broker, *args: str, timeout_s: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "timerd", "hall", *args, "-o", f"hall.port={broker.port}",
         "-o", 'hall.host="127.0.0.1"',
         "-o", "hall.allow_anonymous=true"], cwd=ROOT, capture_output=True, text=True,
        timeout=timeout_s, check=False)


# -- arguments -------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "seconds"), [("60", 60), ("60s", 60), ("2m", 120),
                                               ("1m30s", 90), ("0.5s", 0.5)])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "1h", "m", "-5s"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(text)


def test_start_at_a_clock_time_today_and_not_in_the_past() -> None:
    now = dt.datetime(2024, 3, 14, 10, 0, 0).timestamp()
    assert start_instant(None, "10:01:30", now) == now + 90
    assert start_instant("45s", None, now) == now + 45
    with pytest.raises(ValueError, match="has passed today"):
        start_instant(None, "09:59", now)
    with pytest.raises(ValueError, match="HH:MM:SS"):
        start_instant(None, "ten", now)


def state_payload(state: dict[str, object], clock: dict[str, object], round_id: str) -> bytes:
    return json.dumps({**state, "hall": {"round": round_id, "clock": clock}}).encode()


def test_the_status_table_extrapolates_the_clock_and_warns_about_clock_sync() -> None:
    hall = Hall("hall")
    now = 1000.0
    clock_ok = {"synced": True, "offset_ms": 0.4}
    for table, state, clock in (
            ("t1", {"phase": "running", "remaining_s": 200.0, "wall": now - 2,
                    "version": "0.1.0"}, clock_ok),
            ("t2", {"phase": "scheduled", "start_in_s": 40.0, "wall": now - 1},
             {"synced": False, "offset_ms": 900.0}),
            ("t3", {"phase": "idle", "remaining_s": 300.0, "wall": now - 30},
             {"synced": None, "detail": "chronyc: No such file or directory"}),
            ("t4", {"phase": "paused", "remaining_s": 61.0, "wall": now, "score": {"h": 2,
                                                                                 "a": 1}},
             {"synced": True, "offset_ms": 35.0})):
        hall.take(f"timerd/hall/tables/{table}/status", b"online")
        hall.take(f"timerd/hall/tables/{table}/state",
                  state_payload(state, clock, round_id="R2"))
    hall.take("timerd/other/tables/t9/status", b"online")  # another hall: not shown
    lines, warnings = render_status(hall, now, HallConfig())
    assert lines[0].split() == ["TABLE", "LINK", "PHASE", "CLOCK", "SCORE", "ROUND", "SEEN",
                                "CLOCK", "SYNC", "VERSION"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert rows["t1"].endswith(" 0.1.0")  # issue 17: the desk sees which timerd each runs
    assert rows["t2"].endswith(" -")
    assert set(rows) == {"t1", "t2", "t3", "t4"}
    assert "3:18" in rows["t1"]  # 200 s left, sent 2 s ago, running
    assert "start in 0:39" in rows["t2"]  # m:ss, as the table shows it
    assert "1:01" in rows["t4"]  # paused: not extrapolated
    assert "2:1" in rows["t4"]
    assert "NOT SYNCED" in rows["t2"]
    assert warnings == ["t2: clock not synchronised",
                        "t3: not heard from for 30 s",
                        "t3: clock sync unknown (chronyc: No such file or directory)",
                        "t4: clock off by +35.0 ms"]
    assert hall.current_round() == "R2"


def test_the_desk_bounds_what_it_takes_from_the_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hall_desk, "MAX_TABLES", 3)
    hall = Hall("hall")
    big = json.dumps({"phase": "running", "pad": "x" * hall_desk.MAX_PAYLOAD_BYTES}).encode()
    hall.take("timerd/hall/tables/t1/state", big)
    hall.take("timerd/hall/tables/t1/state", b"[" * 100 + b"]" * 100)
    assert hall.tables["t1"].state is None  # too big, too deep: not parsed, not kept
    for number in range(100):
        hall.take("timerd/hall/tables/t1/events", json.dumps(
            {"type": "reply", "id": f"c{number}", "ok": True}).encode())
    assert list(hall.tables["t1"].replies) == [f"c{n}" for n in range(68, 100)]
    for name in ("t2", "t3"):
        hall.take(f"timerd/hall/tables/{name}/state", state_payload(
            {"phase": "idle", "wall": 1000.0}, {"synced": True}, "R1"))
    for name in ("t4", "t5", "t6"):
        hall.take(f"timerd/hall/tables/{name}/status", b"online")
    # At most 3 followed: the tables with a valid state keep their place; an id without
    # one (t1's state was refused) gives its place to the newest (issue 41 item 5).
    assert sorted(hall.tables) == ["t2", "t3", "t6"]
    assert hall.ignored == {"t1", "t4", "t5"}
    hall.take("timerd/hall/tables/t7/state", state_payload(
        {"phase": "idle", "wall": 1000.0}, {"synced": True}, "R1"))
    assert sorted(hall.tables) == ["t2", "t3", "t7"]


# -- a whole round against real tables -------------------------------------------------------

@pytest.fixture
def two_tables(mosquitto: Broker, tmp_path: Path) -> Iterator[tuple[Broker, list[Table]]]:
    with running_tables(mosquitto, tmp_path, ("a1", "a2"), period_s=60, lead_s=0.3) as (
            _, tables):
        yield mosquitto, tables


def test_a_round_from_the_desk_start_pause_resume_status(
        two_tables: tuple[Broker, list[Table]]) -> None:
    broker, tables = two_tables
    started = desk(broker, "start-round", "--in", "1s", "--round", "R1")
    assert started.returncode == 0, started.stdout + started.stderr
    assert "round R1: start signal at" in started.stdout
    for name in ("a1", "a2"):
        assert f"{name}" in started.stdout
    assert started.stdout.count(" ok ") == 2
    # Every table is without chrony here: the desk warns before it starts the round.
    assert "a1: clock sync unknown" in started.stdout
    for table in tables:
        table.wait_event(lambda e: e.get("signal") == "start", 10, "start")

    paused = desk(broker, "pause")
    assert paused.returncode == 0, paused.stdout + paused.stderr
    assert paused.stdout.count("ok       paused") == 2
    for table in tables:
        table.wait_event(lambda e: e.get("state") == "paused", 5, "paused")
    again = desk(broker, "pause")  # nothing is running now: every table says why
    assert again.returncode == 1
    assert again.stdout.count("REFUSED  pause refused: the match is paused") == 2

    shown = desk(broker, "status", "--once")
    assert shown.returncode == 0, shown.stderr
    assert "2 of 2 tables online" in shown.stdout
    rows = [line for line in shown.stdout.splitlines() if line.startswith("a")]
    assert len(rows) == 2
    assert all("online" in r and "paused" in r and "R1" in r for r in rows)

    resumed = desk(broker, "resume", "--table", "a2")
    assert resumed.returncode == 0
    assert "a2           ok       running" in resumed.stdout
    assert "a1           -        not asked" in resumed.stdout  # every table is listed
    tables[1].wait_event(lambda e: e.get("state") == "running" and e.get("previous") ==
                         "paused", 5, "resumed")
    assert not any(e.get("previous") == "paused" for e in tables[0].events())


def test_results_are_collected_and_missing_tables_named(mosquitto: Broker,
                                                        tmp_path: Path) -> None:
    """Two in-process tables (the real link and service): one has a result, one has not."""

    async def tables() -> None:
        links = []
        for name in ("b1", "b2"):
            config = HallConfig(enabled=True, host="127.0.0.1", port=mosquitto.port, table=name,
                                chronyc="none")
            link = wired(HallLink(config, Service(Match(profiles.load("ithf"))),
                                  Outbox(tmp_path / name)))
            await link.__aenter__()
            link.service.execute(link.service.parse("teams", "", "", "R3"))
            links.append(link)
        links[0].publish_result(RECORD)
        deadline = time.monotonic() + 10
        while links[0].outbox.pending() or not all(link.connected for link in links):
            assert time.monotonic() < deadline, "results not acknowledged"
            await asyncio.sleep(0.01)
        await asyncio.to_thread(check_desk)
        for link in links:
            await link.__aexit__(None, None, None)

    def check_desk() -> None:
        out = desk(mosquitto, "results", "--timeout", "0.2")
        assert out.returncode == 1, out.stdout + out.stderr
        assert out.stdout.splitlines() == [
            "round R3: 1 of 2 results",
            "TABLE  HOME        AWAY        SCORE  ENDED     OVERTIME  DURATION",
            "b1     Åsa Müller  Jiří Novák  5:2    overtime  0:31      5:48",
            "missing: b2"]

    asyncio.run(tables())


#: A result record as the results file writes it (timerd.adapters.results.file), trimmed.
RECORD = {"match_id": "20240314T100000Z-abc123", "profile": "ithf-playoff",
          "teams": {"home": "Åsa Müller", "away": "Jiří Novák"}, "round": "R3",
          "started": "2024-03-14T10:00:00.000+00:00", "finished": "2024-03-14T10:05:48.250+00:00",
          "score": {"home": 5, "away": 2}, "how": "overtime", "winner": "home", "side": None,
          "played_s": 331.0, "overtime_s": 31.0, "replays": 0, "goals": []}


def test_the_desk_says_when_the_broker_cannot_be_reached(mosquitto: Broker) -> None:
    mosquitto.stop()
    out = desk(mosquitto, "status", "--once")
    assert out.returncode == 2
    assert f"broker 127.0.0.1:{mosquitto.port}" in out.stderr
    assert "refused" in out.stderr.lower()


# -- a round from the schedule to the results, without walking -------------------------------

SCHEDULE = """round,table,home,away
R1,a1,Åsa Müller,Jiří Novák
R1,a2,Łukasz Żółw,Søren Ødegård
R2,a1,Åsa Müller,Łukasz Żółw
"""


@pytest.fixture
def short_tables(mosquitto: Broker, tmp_path: Path) -> Iterator[tuple[Broker, list[Table]]]:
    """Three tables whose matches last 1.5 s: a1 and a2 play, a3 goes offline."""
    with running_tables(mosquitto, tmp_path, ("a1", "a2", "a3"), period_s=1.5,
                        lead_s=0.3) as (observer, tables):
        tables[2].stop()  # a clean stop: retained "offline"
        observer.wait_for(lambda _: link_is(observer, "a3", b"offline"), 20, "a3 offline")
        yield mosquitto, tables[:2]


def lines_of(out: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """The outcome line per table of a desk command's output."""
    return {line.split()[0]: line for line in out.stdout.splitlines()
            if line[:2] in ("a1", "a2", "a3", "a9")}


def test_a_round_from_the_schedule_to_the_results_without_walking(
        short_tables: tuple[Broker, list[Table]], tmp_path: Path) -> None:
    broker, tables = short_tables
    schedule = tmp_path / "schedule.csv"
    schedule.write_text(SCHEDULE, encoding="utf-8")
    several = desk(broker, "round", "load", str(schedule))
    assert several.returncode == 2
    assert "holds 2 rounds (R1, R2); say which with --round" in several.stderr

    loaded = desk(broker, "round", "load", str(schedule), "--round", "R1")
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    rows = lines_of(loaded)
    assert rows["a1"].split(None, 2)[1:] == ["ok", "Åsa Müller - Jiří Novák, round R1"]
    assert "ok       Łukasz Żółw - Søren Ødegård, round R1" in rows["a2"]
    assert rows["a3"] == "a3           -        no match in round R1"

    started = desk(broker, "start-round", "--in", "1s")  # the round loaded: R1
    assert "round R1: start signal at" in started.stdout
    assert started.returncode == 1  # a3 is offline, and said so
    rows = lines_of(started)
    assert rows["a3"] == "a3           OFFLINE  last state idle"
    assert "ok       scheduled: start signal in" in rows["a1"]
    for table in tables:
        table.wait_event(lambda e: e.get("state") == "finished", 20, "finished")

    again = desk(broker, "start-round", "--in", "2s", "--round", "R2", "--table", "a1",
                 "--table", "a2")
    # Both results are stored and acknowledged, so both tables reset themselves.
    assert again.returncode == 0, again.stdout + again.stderr
    assert "a1: result stored and acknowledged" in again.stdout
    assert "ok       reset (result acknowledged), scheduled" in lines_of(again)["a2"]
    assert "a3           -        not asked" in again.stdout
    busy = desk(broker, "start-round", "--in", "5s", "--table", "a1")
    assert busy.returncode == 1
    assert "REFUSED  start refused:" in lines_of(busy)["a1"]

    export_csv, export_json = tmp_path / "r1.csv", tmp_path / "r1.json"
    got = desk(broker, "results", "--round", "R1", "--csv", str(export_csv),
               "--json", str(export_json))
    # From the desk's store; the schedule's R1 has a1 and a2 (a3 has no match in it).
    assert "round R1: 2 of 2 results" in got.stdout
    table = got.stdout.splitlines()
    assert table[1].split() == ["TABLE", "HOME", "AWAY", "SCORE", "ENDED", "OVERTIME",
                                "DURATION"]
    assert table[2].startswith("a1     Åsa Müller   Jiří Novák     0:0    regular time  -")
    assert "missing" not in got.stdout
    assert got.returncode == 0, got.stdout + got.stderr
    check_export_against_the_docs(export_csv.read_text(encoding="utf-8"),
                                  json.loads(export_json.read_text(encoding="utf-8")))

    for table in tables:  # round 2 over, its results not collected: reset from the desk
        wait_until(lambda t=table: sum(e.get("state") == "finished" for e in t.events()) == 2,
                   20, f"{table.name}: round 2 finished")
    reset = desk(broker, "reset", "--all-finished")
    assert reset.returncode == 1  # a3 is offline
    assert "ok       idle (result " in lines_of(reset)["a1"]
    assert "not acknowledged: it stays in the outbox" in lines_of(reset)["a2"]
    assert lines_of(reset)["a3"].startswith("a3           OFFLINE")


def docs_block(after: str) -> str:
    """The first fenced block after the line `after` in docs/hall.md."""
    text = (ROOT / "docs" / "hall.md").read_text(encoding="utf-8")
    rest = text[text.index(after):]
    start = rest.index("```")
    body = rest[rest.index("\n", start) + 1:]
    return body[:body.index("```")]


def check_export_against_the_docs(csv_text: str, document: dict[str, Any]) -> None:
    """docs/hall.md's examples have the columns and the types of the real export."""
    documented_csv = docs_block("Results for the tournament software").splitlines()
    real_csv = csv_text.splitlines()
    assert documented_csv[0] == real_csv[0]
    assert len(documented_csv[1].split(",")) == len(real_csv[1].split(","))
    documented = json.loads(docs_block("The same round as JSON"))
    assert documented.keys() == document.keys()
    assert documented["version"] == document["version"]
    assert documented["columns"] == document["columns"] == real_csv[0].split(",")
    real_row, documented_row = document["matches"][0], documented["matches"][0]
    assert list(documented_row) == list(real_row)
    for column, value in real_row.items():
        assert type(documented_row[column]) is type(value) or None in (
            value, documented_row[column]), column


# -- issue 30 item 2: the next round loaded early does not relabel the one about to start ----

NEXT_ROUND = """round,table,home,away
R3,a1,Åsa Müller,Jiří Novák
R3,a2,Cene Three,Dora Three
R4,a1,Łukasz Żółw,Søren Ødegård
R4,a2,Ema Four,Fran Four
"""


def test_the_next_round_loaded_early_is_refused_per_table_and_taken_after_the_match(
        mosquitto: Broker, tmp_path: Path) -> None:
    """Both orders: R4's names during R3's countdown (a1 scheduled, a2 in its pre-signal)
    are refused by each table and the desk says so; after a2's R3 match has ended they are
    taken, and R4 starts under them while R3's result keeps R3's names. Old code: both tables
    answered `ok` and played R3 under R4's names and round."""
    schedule = tmp_path / "rounds.csv"
    schedule.write_text(NEXT_ROUND, encoding="utf-8")
    with running_tables(mosquitto, tmp_path, ("a1", "a2"), period_s=1.5, lead_s=10) as (
            observer, tables):
        loaded = desk(mosquitto, "round", "load", str(schedule), "--round", "R3")
        assert loaded.returncode == 0, loaded.stdout + loaded.stderr
        assert desk(mosquitto, "start-round", "--round", "R3", "--in", "60s", "--table",
                    "a1").returncode == 0
        assert desk(mosquitto, "start-round", "--round", "R3", "--in", "12s", "--table",
                    "a2").returncode == 0
        tables[1].wait_event(lambda e: e.get("state") == "pre_signal", 10, "pre-signal")

        early = desk(mosquitto, "round", "load", str(schedule), "--round", "R4")
        assert early.returncode == 1, early.stdout + early.stderr
        rows = lines_of(early)
        assert rows["a1"].split(None, 2)[1:] == [
            "REFUSED", "teams refused: the match of round R3 is scheduled; names for round R4 "
            "after it"]
        assert "the match of round R3 is pre-signal; names for round R4" in rows["a2"]
        assert ("the match before round R4 is not over on a1, a2: their names for round R4 "
                "were not taken; load round R4 again once it has ended") in early.stdout

        tables[1].wait_event(lambda e: e.get("state") == "finished", 30, "a2 finished")
        got = desk(mosquitto, "results", "--round", "R3", "--timeout", "5")
        assert "a2     Cene Three  Dora Three" in got.stdout, got.stdout + got.stderr
        assert "missing: a1" in got.stdout  # a1 is still counting down to its R3 start

        after = desk(mosquitto, "round", "load", str(schedule), "--round", "R4")
        rows = lines_of(after)
        assert rows["a2"].split(None, 2)[1:] == ["ok", "Ema Four - Fran Four, round R4"]
        assert "REFUSED" in rows["a1"]
        started = desk(mosquitto, "start-round", "--in", "30s", "--round", "R4", "--table",
                       "a2")
        assert started.returncode == 0, started.stdout + started.stderr
        assert "ok       reset (result acknowledged), scheduled" in lines_of(started)["a2"]

        def a2_state() -> dict[str, Any] | None:
            found = observer.last("a2", "state")
            state = None if found is None else found.json()
            return state if state and state["phase"] == "scheduled" else None

        state = wait_until(a2_state, 10, "a2 scheduled for R4")
        assert state["teams"] == {"home": "Ema Four", "away": "Fran Four"}
        assert state["hall"]["round"] == "R4"
        again = desk(mosquitto, "results", "--round", "R3", "--timeout", "0.3")
        assert "a2     Cene Three  Dora Three" in again.stdout  # R3's result keeps its names


def test_the_boards_goals_are_whole_numbers_from_the_wire_or_left_out() -> None:
    """Issue 45 item 2: the round on stream shows each side's goals apart (`goals` in the
    board's rows); what a table sent that is not a goal count is left out, never shown."""
    assert hall_desk.goals_of({"score": {"home": 3, "away": 12}}) == {"home": 3, "away": 12}
    assert hall_desk.goals_of({"score": {"home": 2.0, "away": True}}) == {"home": 2}
    assert hall_desk.goals_of({"score": {"home": "3", "away": -1, "extra": 4}}) == {}
    assert hall_desk.goals_of({"score": [1, 2]}) == {}
    assert hall_desk.goals_of({}) == {}
