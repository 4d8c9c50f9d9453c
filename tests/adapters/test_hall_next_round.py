"""Names go with the match (issue 41 item 1): the next round's names, loaded onto a table that
finished the round before, are journalled with the match `start-round` then begins, so a
table killed and restarted in that round still has them, and the desk fills in (and says so)
the names of a result that came without them. Real daemons on a real mosquitto, the real desk,
SIGKILL between.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.adapters.test_hall_restart import desk, online
from tests.hall_rig import Broker, Observer, Table, stop_all, write_profile
from tests.tools.test_hall_desk_input import publish, result_message, run
from timerd.cli import request

#: Real processes, a broker and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e

SCHEDULE = """round,table,home,away
R1,t1,Åsa Müller,Jiří Novák
R2,t1,Łukasz Żółw,Søren Ødegård
"""


def test_names_loaded_onto_a_finished_table_survive_a_kill_in_the_next_round(
        mosquitto: Broker, tmp_path: Path) -> None:
    """The documented day: `round load` R2 reaches the table that finished R1, `start-round`
    resets it, and it is killed mid-match. Old code: it came back with empty names (the
    new match's journal had no `teams` line) and the desk exported `R2,t1,,,...` with
    exit 0."""
    profile = write_profile(tmp_path / "short.toml", period_s=4, lead_s=0.3)
    store = tmp_path / "desk"
    schedule = tmp_path / "rounds.csv"
    schedule.write_text(SCHEDULE, encoding="utf-8")
    table = Table(tmp_path, "t1", mosquitto.port, profile)
    observer = Observer(mosquitto.port)
    r2 = tmp_path / "r2.csv"
    try:
        table.start()
        online(observer, table)
        assert desk(mosquitto, store, "round", "load", str(schedule), "--round",
                    "R1").returncode == 0
        assert desk(mosquitto, store, "start-round", "--in", "1s").returncode == 0
        table.wait_event(lambda e: e.get("state") == "finished", 30, "R1 finished")

        loaded = desk(mosquitto, store, "round", "load", str(schedule), "--round", "R2")
        assert loaded.returncode == 0, loaded.stdout + loaded.stderr
        started = desk(mosquitto, store, "start-round", "--in", "1s")
        assert started.returncode == 0, started.stdout + started.stderr
        assert "ok       reset (result acknowledged), scheduled" in started.stdout
        second(table, "signal", "start")
        assert table.stop(signal.SIGKILL) == -signal.SIGKILL  # mid-match, in R2
        table.start()
        status = online(observer, table)
        assert (status["phase"], status["round"]) == ("paused", "R2")
        assert status["teams"] == {"home": "Łukasz Żółw", "away": "Søren Ødegård"}

        assert request(table.socket, "resume", [])["ok"]
        second(table, "state", "finished")  # the events file goes on over the restart
        observer.wait_for(lambda _: (m := observer.last("t1", "results")) is not None
                          and m.json()["round"] == "R2", 20, "the R2 result")
        got = desk(mosquitto, store, "results", "--round", "R2", "--csv", str(r2))
        assert got.returncode == 0, got.stdout + got.stderr
        assert "t1     Łukasz Żółw  Søren Ødegård" in got.stdout
        assert "came without names" not in got.stdout  # the table's own names
        assert r2.read_text(encoding="utf-8").splitlines()[1].startswith(
            "R2,t1,Łukasz Żółw,Søren Ødegård,")
    finally:
        observer.close()
        stop_all([table])


def second(table: Table, key: str, value: str) -> None:
    """Until the table's events show the second with `key` = `value`: R2's."""
    table.wait_event(lambda _: sum(e.get(key) == value for e in table.events()) >= 2,
                     30, f"R2's {value}")


def test_the_desk_fills_in_the_names_of_a_result_without_them_and_says_so(
        mosquitto: Broker, tmp_path: Path) -> None:
    """A result without names (a table of the old code after a restart) for a table the
    schedule names: the schedule's names are exported, with a warning. Old code: `R2,t1,,,`
    and no word of it."""
    store = tmp_path / "store"
    schedule = tmp_path / "rounds.csv"
    schedule.write_text(SCHEDULE, encoding="utf-8")
    code, out, err = run(mosquitto, "round", "load", str(schedule), "--round", "R2",
                         "--store", str(store), "--timeout", "0.2")
    assert "matches from" in out, out + err
    observer = Observer(mosquitto.port)
    try:
        publish(observer, "timerd/hall/tables/t1/results",
                result_message("t1", "R2", home="", away=""))
        code, out, err = run(mosquitto, "results", "--round", "R2", "--store", str(store),
                             "--timeout", "0.3", "--csv", "-")
    finally:
        observer.close()
    assert code == 0, out + err
    assert out.splitlines()[1].startswith("R2,t1,Łukasz Żółw,Søren Ødegård,5,2,")
    assert ("warning: t1: its result came without names; the schedule's (Łukasz Żółw - "
            "Søren Ødegård) are exported") in err
