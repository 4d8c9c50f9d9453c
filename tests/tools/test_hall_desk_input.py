"""The desk against what anyone on the broker may publish (issue 36 item 2, issue 34 items 2
and 4): retained messages of every wrong type and shape, more fake tables than it follows,
forged and conflicting results, text made to fool a terminal or a spreadsheet. Each runs the
real `timerd hall ...` command line against a real mosquitto on loopback.
"""

from __future__ import annotations

import contextlib
import copy
import csv
import io
import json
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.hall_rig import Broker, Observer, Table, running_tables
from tests.tools.test_hall_desk import RECORD, desk
from timerd import cli
from timerd.config import HallConfig
from timerd.tools.hall_board import Board
from timerd.tools.hall_desk import MAX_TABLES, Desk

#: Real processes, a broker and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e

#: A table's state as a table sends it, trimmed to what the desk reads.
STATE: dict[str, Any] = {
    "phase": "idle", "remaining_s": 60.0, "start_in_s": None, "version": "0.1.0",
    "clock_face": {"kind": "countdown", "value_s": 60.0, "text": "1:00"},
    "score": {"home": 0, "away": 0}, "teams": {"home": "Åsa Müller", "away": "Jiří Novák"},
    "hall": {"round": "R1", "clock": {"synced": True, "offset_ms": 0.2, "detail": "ok"},
             "result": {"id": RECORD["match_id"], "round": "R1", "acked": False}}}
RESULT: dict[str, Any] = {"version": 1, "id": RECORD["match_id"], "hall": "hall",
                          "table": "zz", "round": "R1", "wall": 1710410790.1,
                          "result": {**RECORD, "round": "R1"}}
REPLY: dict[str, Any] = {"type": "reply", "command": "pause", "id": "c0ffee", "ok": True,
                         "detail": "paused", "wall": 1710410790.1}


def publish(observer: Observer, topic: str, payload: bytes | dict[str, Any]) -> None:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    observer.client.publish(topic, data, qos=1, retain=True).wait_for_publish(5)


def run(broker: Broker, *args: str) -> tuple[int, str, str]:
    """`timerd hall ARGS` in this process (the same entry point as the command line): its
    exit code, standard output and standard error. A traceback fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["hall", *args, "-o", f"hall.port={broker.port}",
                         "-o", 'hall.host="127.0.0.1"', "-o", "hall.allow_anonymous=true"])
    for text in (out.getvalue(), err.getvalue()):
        text.encode()  # a terminal or a file takes it: no lone surrogate
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def table_a1(mosquitto: Broker, tmp_path: Path) -> Iterator[tuple[Observer, Table]]:
    with running_tables(mosquitto, tmp_path, ("a1",), period_s=60, lead_s=0.3) as (
            observer, tables):
        yield observer, tables[0]


# -- issue 36 item 2: the desk survives any retained message ------------------------------

def test_a_poisoned_retained_state_makes_its_row_unreadable_and_the_desk_goes_on(
        mosquitto: Broker, table_a1: tuple[Observer, Table]) -> None:
    """Old code: `hall status`, `start-round` and `board` died with a traceback on every run
    (float('yesterday'), abs('x')) until the topic was cleared by hand."""
    observer, _ = table_a1
    publish(observer, "timerd/hall/tables/zz/status", b"online")
    publish(observer, "timerd/hall/tables/zz/state", {"wall": "yesterday"})
    publish(observer, "timerd/hall/tables/zy/state",
            {**STATE, "wall": time.time(), "hall": {"clock": {"synced": True,
                                                               "offset_ms": "x"}}})
    shown = desk(mosquitto, "status", "--once")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    rows = {line.split()[0]: line for line in shown.stdout.splitlines()[2:]
            if not line.startswith("warning")}
    assert "online" in rows["a1"]
    assert rows["zz"].split()[1:3] == ["online", "unreadable"]
    assert "unreadable" in rows["zy"]
    assert ("warning: zz: state unreadable: wall: a finite number expected, got 'yesterday'"
            in shown.stdout)
    assert "warning: zy: state unreadable: hall.clock.offset_ms" in shown.stdout
    started = desk(mosquitto, "start-round", "--in", "30s", "--table", "a1")
    assert started.returncode == 0, started.stdout + started.stderr
    assert "ok       scheduled: start signal in" in started.stdout
    board = board_document(mosquitto)
    assert {t["table"]: t["phase"] for t in board["tables"]}["zz"] == "unreadable"


def board_document(broker: Broker) -> dict[str, Any]:
    """The hall board's document (`GET /api/board`), built by the board's own code from the
    broker's retained messages."""

    async def fetch() -> dict[str, Any]:
        config = HallConfig(host="127.0.0.1", port=broker.port)
        async with Desk(config) as connected:
            await connected.gather(2.0)
            document: dict[str, Any] = Board(connected, config).document(time.time())
            json.dumps(document)  # what the page gets
            return document

    import asyncio  # noqa: PLC0415 (only here: the rest of the file drives the command line)

    return asyncio.run(fetch())


def test_fake_tables_published_first_cannot_hide_a_table_of_the_schedule(
        mosquitto: Broker, tmp_path: Path) -> None:
    """Old code: 1000 retained fake tables before a real one made `hall status` say "1000 of
    1000 online" and never list the real table."""
    observer = Observer(mosquitto.port)
    try:
        for number in range(MAX_TABLES + 5):
            observer.client.publish(f"timerd/hall/tables/fake{number:04}/status", b"online",
                                    qos=1, retain=True)
        publish(observer, f"timerd/hall/tables/fake{MAX_TABLES + 4:04}/state",
                {"phase": "idle"})
        with running_tables(mosquitto, tmp_path, ("a1",), period_s=60, lead_s=0.3):
            schedule = tmp_path / "r1.csv"
            schedule.write_text("round,table,home,away\nR1,a1,Åsa Müller,Jiří Novák\n",
                                encoding="utf-8")
            loaded = desk(mosquitto, "round", "load", str(schedule), "--timeout", "10")
            assert "a1           ok       Åsa Müller - Jiří Novák, round R1" in loaded.stdout
            shown = desk(mosquitto, "status", "--once")
            assert shown.returncode == 0, shown.stderr
            lines = shown.stdout.splitlines()
            assert lines[2].startswith("a1 "), lines[:3]  # the schedule's tables first
            assert f"{MAX_TABLES + 1} of {MAX_TABLES + 1} tables online" in lines[0]
            assert (f"warning: the desk follows at most {MAX_TABLES} tables: 5 more table ids "
                    "on the broker are ignored") in shown.stdout
    finally:
        observer.close()


def test_fake_tables_published_first_cannot_hide_a_real_table_without_a_schedule(
        mosquitto: Broker, tmp_path: Path) -> None:
    """Issue 41 item 5. Fails on the old code: without a loaded schedule, 1000 retained fake
    ids (a status, no state) taken first left the real table out of `hall status` and the
    board (first come, first served)."""
    observer = Observer(mosquitto.port)
    try:
        sent = [observer.client.publish(f"timerd/hall/tables/fake{number:04}/status",
                                        b"online", qos=1, retain=True)
                for number in range(MAX_TABLES + 5)]
        sent[-1].wait_for_publish(30)  # all of them at the broker before the real table
        with running_tables(mosquitto, tmp_path, ("a1",), period_s=60, lead_s=0.3):
            shown = desk(mosquitto, "status", "--once", "--json")
            assert shown.returncode == 0, shown.stderr
            assert "a1" in json.loads(shown.stdout), shown.stdout[:300]
            assert "a1" in [row["table"] for row in board_document(mosquitto)["tables"]]
    finally:
        observer.close()


# A property: whatever is retained on a table's topics, every desk command still works.

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=30)
    | st.sampled_from(["\ud800", "\x1b[2J", "a\u202eb", "=1+1", "x" * 300]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)


def _paths(value: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, member in value.items():
            paths += _paths(member, (*prefix, key))
    return paths


def _mutated(valid: dict[str, Any]) -> st.SearchStrategy[bytes]:
    """`valid` with one member (at any depth) replaced by any JSON value, or removed."""

    def mutate(path: tuple[str, ...], value: Any, remove: bool) -> bytes:
        message = copy.deepcopy(valid)
        inner = message
        for key in path[:-1]:
            inner = inner[key]
        if remove:
            del inner[path[-1]]
        else:
            inner[path[-1]] = value
        return json.dumps(message).encode()

    return st.builds(mutate, st.sampled_from(_paths(valid)), JSON, st.booleans())


POISON = st.one_of(
    st.tuples(st.sampled_from(["state", "results", "events"]), _mutated(STATE)),
    st.tuples(st.sampled_from(["results"]), _mutated(RESULT)),
    st.tuples(st.sampled_from(["events"]), _mutated(REPLY)),
    st.tuples(st.sampled_from(["state", "results", "events", "status"]),
              JSON.map(lambda v: json.dumps(v).encode())),
    st.tuples(st.sampled_from(["state", "results", "events", "status"]),
              st.binary(max_size=40)))


@settings(max_examples=12, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(poison=st.lists(st.tuples(st.sampled_from(["zz", "a1x", "t-9"]), POISON),
                       min_size=1, max_size=4))
def test_every_desk_command_works_whatever_is_retained(
        mosquitto: Broker, table_a1: tuple[Observer, Table], tmp_path: Path,
        poison: list[tuple[str, tuple[str, bytes]]]) -> None:
    observer, _ = table_a1
    topics = set()
    for table, (kind, payload) in poison:
        topic = f"timerd/hall/tables/{table}/{kind}"
        publish(observer, topic, payload)
        topics.add(topic)
    schedule = tmp_path / "r1.csv"
    schedule.write_text("round,table,home,away\nR1,a1,A,B\nR1,zz,C,D\n", encoding="utf-8")
    try:
        answered = ("ok", "REFUSED")
        for args in (("status", "--once"), ("status", "--json"),
                     ("round", "load", str(schedule), "--timeout", "10"),
                     ("start-round", "--in", "60s", "--table", "a1", "--timeout", "10"),
                     ("pause", "--timeout", "0.5"), ("resume", "--timeout", "0.5"),
                     ("reset", "a1", "--timeout", "10"),
                     ("results", "--round", "R1", "--timeout", "0.3", "--csv", "-",
                      "--json", str(tmp_path / "r1.json"))):
            code, out, err = run(mosquitto, *args)
            assert code in (0, 1), (args, code, out, err)
            if args[0] == "status":
                assert "a1" in out, (args, out)
            elif args[0] != "results":
                a1 = next(line for line in out.splitlines() if line.startswith("a1 "))
                assert a1.split()[1] in answered, (args, out)
            else:
                list(csv.reader(io.StringIO(out)))  # standard output holds only the CSV
                assert out.startswith("round,table,"), out
        assert math.isfinite(board_document(mosquitto)["wall"])
    finally:
        for topic in topics:
            observer.client.publish(topic, b"", qos=1, retain=True).wait_for_publish(5)


# -- issue 34 item 2: a result is trusted only from the table it names ----------------------

def result_message(table: str, round_id: str = "R1", *, match: str = RECORD["match_id"],
                   score: tuple[int, int] = (5, 2), revision: int | None = None,
                   wall: float = 1710410790.1, **names: str) -> dict[str, Any]:
    record = {**RECORD, "match_id": match, "round": round_id,
              "score": {"home": score[0], "away": score[1]},
              "teams": {**RECORD["teams"], **names}}
    if revision is not None:
        record["revision"] = revision
    return {"version": 1, "id": match, "hall": "hall", "table": table, "round": round_id,
            "wall": wall, "result": record}


def load_schedule(broker: Broker, tmp_path: Path, store: Path, text: str) -> None:
    """`round load` of `text` into `store` (its tables need not be online: the schedule is
    kept all the same)."""
    schedule = tmp_path / "schedule.csv"
    schedule.write_text(text, encoding="utf-8")
    _code, out, err = run(broker, "round", "load", str(schedule), "--store", str(store),
                         "--timeout", "0.2")
    assert "matches from" in out, out + err


def result_rows(out: str) -> dict[str, str]:
    return {line.split()[0]: line for line in out.splitlines() if line[:1] == "t"}


def test_a_result_counts_only_from_its_own_table_and_a_round_of_the_schedule(
        mosquitto: Broker, tmp_path: Path) -> None:
    """Old code: a result on t2's topic naming t1 was filed as t2's, and one for a table
    with no match in the round was stored as the round's."""
    store = tmp_path / "store"
    load_schedule(mosquitto, tmp_path, store,
                  "round,table,home,away\nR1,t1,Åsa Müller,Jiří Novák\nR1,t2,C,D\n")
    observer = Observer(mosquitto.port)
    try:
        publish(observer, "timerd/hall/tables/t1/results", result_message("t1"))
        publish(observer, "timerd/hall/tables/t2/results", result_message(
            "t1", match="20240314T100000Z-f0f0f0", score=(0, 9)))
        publish(observer, "timerd/hall/tables/t3/results", result_message(
            "t3", match="20240314T100000Z-0a0a0a"))
        code, out, err = run(mosquitto, "results", "--round", "R1", "--store", str(store),
                             "--timeout", "0.3")
        # t1's next result is of a round that is not in the schedule (R7): set aside too.
        publish(observer, "timerd/hall/tables/t1/results", result_message(
            "t1", "R7", match="20240314T100000Z-7a7a7a"))
        code7, out7, err7 = run(mosquitto, "results", "--round", "R7", "--store", str(store),
                                "--timeout", "0.3")
    finally:
        observer.close()
    assert "round R7 is not in the schedule loaded" in out7 + err7
    assert code7 == 1
    assert code == 1, out + err  # t2 has no result
    assert out.splitlines()[0] == "round R1: 1 of 2 results"
    assert "5:2" in result_rows(out)["t1"]
    assert "missing: t2" in out
    assert ("warning: t1: result 20240314T100000Z-f0f0f0 set aside, not acknowledged: it "
            "names table t1 (topic of t2)") in out
    assert ("warning: t3: result 20240314T100000Z-0a0a0a set aside, not acknowledged: table "
            "t3 has no match in round R1") in out
    aside = [json.loads(p.read_text()) for p in (store / "aside").glob("*.json")]
    assert sorted(a["message"]["id"][-6:] for a in aside) == ["0a0a0a", "7a7a7a", "f0f0f0"]


def test_results_follow_the_matchs_revision_and_arrival_not_the_senders_clock(
        mosquitto: Broker, tmp_path: Path) -> None:
    """Old code: the newest `wall` (the sender's own clock) won, so a correction sent by a
    table whose clock is behind was never shown, and anything could replace a result."""
    store = tmp_path / "store"
    load_schedule(mosquitto, tmp_path, store, "round,table,home,away\nR1,t1,A,B\n")
    observer = Observer(mosquitto.port)

    def results_after(message: dict[str, Any]) -> tuple[int, str]:
        publish(observer, "timerd/hall/tables/t1/results", message)
        code, out, err = run(mosquitto, "results", "--round", "R1", "--store", str(store),
                             "--timeout", "0.3")
        return code, out + err

    try:
        code, out = results_after(result_message("t1", wall=2000.0))
        assert code == 0, out
        assert "5:2" in result_rows(out)["t1"]
        # A correction (revision 1) from a table whose clock is behind: it wins.
        code, out = results_after(result_message("t1", score=(4, 2), revision=1, wall=1000.0))
        assert code == 0, out
        assert "4:2" in result_rows(out)["t1"]
        # The first revision again, with other goals and a later clock: reported, not taken.
        code, out = results_after(result_message("t1", score=(9, 9), wall=3000.0))
        assert "4:2" in result_rows(out)["t1"]
        assert (f"t1: result {RECORD['match_id']} set aside, not acknowledged: it differs "
                f"from the result {RECORD['match_id']} revision 0 the desk has") in out
        # Another match of t1 in the same round: a conflict, reported; the first is kept.
        code, out = results_after(result_message("t1", match="20240314T110000Z-bbbbbb",
                                                 score=(1, 0), wall=4000.0))
        assert code == 1, out
        assert "4:2" in result_rows(out)["t1"]
        assert ("warning: t1: a second match in round R1, 20240314T110000Z-bbbbbb, beside "
                f"{RECORD['match_id']}") in out
    finally:
        observer.close()


# -- issue 34 item 4 and issue 30 item 4: nothing raw into a spreadsheet or a terminal; ------
# -- exports a spreadsheet takes --------------------------------------------------------------

def test_text_from_the_wire_reaches_neither_a_terminal_nor_a_spreadsheet_raw(
        mosquitto: Broker, tmp_path: Path) -> None:
    """Old code: ESC sequences and a right-to-left override went to the terminal as they
    came, and `=HYPERLINK(...)` into the CSV as a formula."""
    observer = Observer(mosquitto.port)
    evil_home, evil_away = "=HYPERLINK(\"http://x\")", "@SUM(1+1)"
    try:
        publish(observer, "timerd/hall/tables/t1/status", b"online")
        publish(observer, "timerd/hall/tables/t1/state", {
            **STATE, "wall": time.time(),
            "teams": {"home": "\x1b[2J\x1b[31mRED", "away": "abc\u202edcba"},
            "hall": {"round": "R1\u202e\x1b[2J\x07", "clock": None, "result": None}})
        publish(observer, "timerd/hall/tables/t1/results", result_message(
            "t1", home=evil_home, away=evil_away))
        publish(observer, "timerd/hall/tables/t2/results", result_message(
            "t2", match="20240314T100000Z-cccccc", home="-2+3", away="\tTab\x1b[0m"))
        publish(observer, "timerd/hall/tables/t3/state", json.dumps(
            {**STATE, "wall": time.time(), "teams": {"home": "\ud800"}}).encode())
        for args in (("status", "--json"), ("status", "--once")):  # a real UTF-8 pipe
            shown = desk(mosquitto, *args)
            assert shown.returncode == 0, shown.stderr
            assert "\u202e" not in shown.stdout
        assert "warning: t3: state unreadable: teams.home: a text expected" in shown.stdout
        code, out, err = run(mosquitto, "status", "--once")
        assert code == 0, err
        assert "\x1b" not in out
        assert "\u202e" not in out
        assert "\x07" not in out
        assert "R1[2J" in out
        code, out, err = run(mosquitto, "results", "--round", "R1", "--timeout", "0.3",
                             "--csv", str(tmp_path / "r1.csv"))
        assert "\x1b" not in out
        assert "\t" not in out
        assert "Tab[0m" in out
        rows = list(csv.DictReader(io.StringIO((tmp_path / "r1.csv").read_text())))
        assert [(r["home"], r["away"]) for r in rows] == [
            ("'" + evil_home, "'" + evil_away), ("'-2+3", "'\tTab\x1b[0m")]
        assert rows[0]["home_goals"] == "5"  # numbers stay numbers
    finally:
        observer.close()


def test_an_export_to_standard_output_is_only_the_export(mosquitto: Broker) -> None:
    """Old code: the human table came first on standard output (`> round.csv` gave a broken
    CSV); there was no CSV for Excel; a round nobody played said "0 of 2 results"."""
    observer = Observer(mosquitto.port)
    try:
        publish(observer, "timerd/hall/tables/t1/results", result_message("t1"))
        code, out, err = run(mosquitto, "results", "--round", "R1", "--timeout", "0.3",
                             "--csv", "-")
        assert code == 0, err
        assert out.splitlines()[0].startswith("round,table,home,away,")
        assert out.splitlines()[1].startswith("R1,t1,Åsa Müller,Jiří Novák,5,2,")
        assert len(out.splitlines()) == 2
        assert "round R1: 1 of 1 results" in err  # the table for a person, on stderr
        code, out, err = run(mosquitto, "results", "--round", "R1", "--timeout", "0.3",
                             "--json", "-")
        assert json.loads(out)["matches"][0]["home"] == "Åsa Müller"
        assert "Åsa Müller" in out
        assert "\\u" not in out
        code, out, err = run(mosquitto, "results", "--round", "R1", "--timeout", "0.3",
                             "--csv", "-", "--excel", "-o", 'ui.language="sl"')
        assert out.startswith("\ufeffround;table;home;away;")
        assert "R1;t1;Åsa Müller;Jiří Novák;5;2;" in out
        code, out, err = run(mosquitto, "results", "--round", "R1", "--timeout", "0.3",
                             "--csv", "-", "--excel", "-o", 'ui.language="en"')
        assert out.startswith("\ufeffround,table,home,away,")
        code, out, err = run(mosquitto, "results", "--round", "R1 ", "--timeout", "0.3")
        assert code == 1
        assert ("no table has played round R1 , and the schedule has no such round "
                "(rounds known: R1)") in err
        assert out == ""
    finally:
        observer.close()
