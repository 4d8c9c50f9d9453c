"""Several tables as real daemon processes on a real mosquitto: a synchronised start, the
broker going away mid-match, a late start_round, and the last will.

The start instants are compared on the wall clock each table stamps on its events (`wall`,
taken in the same dispatch that switches the buzzer on); all processes share this machine's
clock, so the differences are the tables' real skew. The daemons' own event files (`t` on each
daemon's clock) show the match itself went on as planned.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hall_rig import START_AHEAD_S, Broker, Observer, Table, stop_all, write_profile

#: Real processes, a broker or a browser, and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e

#: The start signals of tables on one machine must agree to within this, once each table's
#: own lateness in waking (`late_ms`: CPU contention, measured by bench/hall_skew.py) is taken
#: out: that is the part the hall link decides (delivery ahead of time, the one conversion of
#: the instant to the loop's clock). Measured: ~1 ms; generous for a loaded CI machine.
SKEW_LIMIT_S = 0.05
#: Including the lateness: 3 daemons waking at one instant on 2 cores shared with other work
#: (bench/hall_skew.py: 8 ms at 10 tables on a loaded machine, 571 ms in its busiest round).
LOADED_SKEW_LIMIT_S = 1.0


@pytest.fixture
def hall(mosquitto: Broker, tmp_path: Path) -> Iterator[tuple[Broker, Observer, list[Table]]]:
    observer = Observer(mosquitto.port)
    tables: list[Table] = []
    yield mosquitto, observer, tables
    stop_all(tables)
    observer.close()


def start_tables(observer: Observer, tables: list[Table], new: list[Table]) -> None:
    tables.extend(new)
    for table in new:
        table.start()
    for table in new:
        observer.wait_for(lambda _, t=table: (m := observer.last(t.name, "status")) is not None
                          and m.payload == b"online", 20, f"{table.name} online")


def wall_of(observer: Observer, table: str, signal_kind: str) -> float | None:
    return next((e["wall"] for e in observer.events(table)
                 if e["type"] == "signal" and e["signal"] == signal_kind), None)


def planned_wall_of(observer: Observer, table: str, signal_kind: str) -> float | None:
    """When the table meant to give the signal, on its wall clock: the signal's `wall` less
    how late its loop woke for it (`late_ms`)."""
    return next((e["wall"] - e["late_ms"] / 1000 for e in observer.events(table)
                 if e["type"] == "signal" and e["signal"] == signal_kind), None)


def reply(observer: Observer, table: str, command_id: str) -> dict[str, Any] | None:
    return next((e for e in observer.events(table)
                 if e["type"] == "reply" and e.get("id") == command_id), None)


def test_tables_give_their_start_signal_at_the_same_instant(
        hall: tuple[Broker, Observer, list[Table]], tmp_path: Path) -> None:
    broker, observer, tables = hall
    profile = write_profile(tmp_path / "drill.toml", period_s=30, lead_s=0.5)
    start_tables(observer, tables, [Table(tmp_path, f"t{i}", broker.port, profile)
                                    for i in range(1, 4)])
    at = time.time() + START_AHEAD_S
    observer.publish("timerd/hall/cmd", {"command": "start_round", "at": at, "round": "R1",
                                         "id": "go"})
    starts = {t.name: observer.wait_for(lambda _, t=t: wall_of(observer, t.name, "start"),
                                        20, f"{t.name} start signal") for t in tables}
    assert max(starts.values()) - min(starts.values()) < LOADED_SKEW_LIMIT_S, starts
    planned = {t.name: observer.wait_for(lambda _, t=t: planned_wall_of(
        observer, t.name, "start"), 5, "start event") for t in tables}
    assert max(planned.values()) - min(planned.values()) < SKEW_LIMIT_S, planned
    for name, wall in planned.items():
        assert abs(wall - at) < SKEW_LIMIT_S, (name, wall - at)
    for table in tables:
        # The pre-signal 0.5 s before the start (the lead), as the table planned them: each
        # file line is stamped when dispatched, and a loop that woke 50 ms later for the
        # start (three tables waking at one instant on 2 cores) failed a check on those.
        pre_at = observer.wait_for(lambda _, t=table: planned_wall_of(
            observer, t.name, "pre_signal"), 5, "pre-signal event")
        assert planned[table.name] - pre_at == pytest.approx(0.5, abs=SKEW_LIMIT_S)
        # On the table's own clock: scheduled, then the pre-signal, then the start.
        events = table.wait_event(lambda e: e.get("signal") == "start", 5, "start in file")
        pre = next(e for e in table.events() if e.get("signal") == "pre_signal")
        assert pre["t"] < events["t"]
        assert any(e.get("state") == "scheduled" for e in table.events())
        answered = reply(observer, table.name, "go")
        assert answered is not None
        assert answered["ok"] is True


def test_the_broker_stops_mid_match_the_matches_go_on_and_report_when_it_is_back(
        hall: tuple[Broker, Observer, list[Table]], tmp_path: Path) -> None:
    broker, observer, tables = hall
    profile = write_profile(tmp_path / "short.toml", period_s=1, lead_s=0.3)
    start_tables(observer, tables, [Table(tmp_path, f"t{i}", broker.port, profile)
                                    for i in (1, 2)])
    observer.publish("timerd/hall/cmd", {"command": "start_round",
                                         "at": time.time() + START_AHEAD_S})
    for table in tables:
        observer.wait_for(lambda _, t=table: wall_of(observer, t.name, "start"), 20,
                          f"{table.name} started")
    broker.stop()
    down_at = time.time()
    for table in tables:  # the match runs out without the broker
        final = table.wait_event(lambda e: e.get("signal") == "final", 10, "final signal")
        start = next(e for e in table.events() if e.get("signal") == "start")
        assert start["t"] < final["t"]
    broker.start()
    for table in tables:
        # The retained state says finished, and the events kept while away arrive, stamped
        # with when they happened.
        observer.wait_for(lambda _, t=table: (m := observer.last(t.name, "state")) is not None
                          and m.json()["phase"] == "finished", 15, f"{table.name} finished")
        final_wall = observer.wait_for(lambda _, t=table: wall_of(observer, t.name, "final"),
                                       15, f"{table.name} final event")
        assert final_wall > down_at
        # 1.0 s of play, as the table planned it (each line of its file is stamped when
        # dispatched, the start or the final maybe late on a loaded machine).
        start_at, final_at = (planned_wall_of(observer, table.name, kind)
                              for kind in ("start", "final"))
        assert start_at is not None
        assert final_at is not None
        assert final_at - start_at == pytest.approx(1.0, abs=SKEW_LIMIT_S)
        # The result of the match, written while the broker was down, reaches the desk.
        result = observer.wait_for(lambda _, t=table: observer.last(t.name, "results"), 15,
                                   f"{table.name} result")
        record = result.json()
        assert record["table"] == table.name
        assert record["result"]["how"] == "regular"
        assert record["result"]["score"] == {"home": 0, "away": 0}
        table.check_alive()
    assert "retrying" in tables[0].stderr()


def test_a_late_start_round_shortens_the_pre_signal_or_is_refused(
        hall: tuple[Broker, Observer, list[Table]], tmp_path: Path) -> None:
    """ITHF profile (20 s lead, at least 15 s) at --speed 2: 1 real second is 2 s.

    The kept start is asked for 19.9 s ahead: it stays a shortened (not a refused) pre-signal
    unless the command takes over 2.4 real seconds to arrive, a margin a loaded 2-core
    machine keeps (it had 150 ms at --speed 20, and failed under load).
    """
    broker, observer, tables = hall
    start_tables(observer, tables, [
        Table(tmp_path, name, broker.port, "ithf", speed=2) for name in ("late", "too-late")])
    now = time.time()
    observer.publish("timerd/hall/tables/too-late/cmd",
                     {"command": "start_round", "at": now + 2.5, "id": "a"})  # 5 s: refused
    observer.publish("timerd/hall/tables/late/cmd",
                     {"command": "start_round", "at": now + 9.95, "id": "b"})  # 19.9 s: kept
    refused = observer.wait_for(lambda _: reply(observer, "too-late", "a"), 20, "refusal")
    assert refused["ok"] is False
    assert "too late for the 15 s pre-signal ITHF 4.4" in refused["error"]
    started = observer.wait_for(lambda _: planned_wall_of(observer, "late", "start"), 25,
                                "late start")
    assert abs(started - (now + 9.95)) < SKEW_LIMIT_S
    late = tables[0]
    start = late.wait_event(lambda e: e.get("signal") == "start", 5, "start in file")
    pre = next(e for e in late.events() if e.get("signal") == "pre_signal")
    assert 15.0 <= start["t"] - pre["t"] < 19.9  # shortened lead, on the table's own clock
    assert any("late start" in e.get("message", "") for e in late.events())
    assert not any(e["type"] == "signal" for e in tables[1].events())
    assert observer.last("too-late", "state").json()["phase"] == "idle"  # type: ignore[union-attr]


def test_a_table_that_dies_is_reported_offline_by_its_last_will(
        hall: tuple[Broker, Observer, list[Table]], tmp_path: Path) -> None:
    broker, observer, tables = hall
    table = Table(tmp_path, "t9", broker.port, "ithf")
    start_tables(observer, tables, [table])
    table.stop(signal.SIGKILL)
    observer.wait_for(lambda _: (m := observer.last("t9", "status")) is not None
                      and m.payload == b"offline", 10, "the last will")
