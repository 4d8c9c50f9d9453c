"""A result the desk holds follows its table (issue 41 items 2 and 3): a reopened match
withdraws it at once, its next end replaces the withdrawal, and no revision can be forged
past, jumped or made to crash the desk. A real daemon, the real desk (`timerd hall ...`) and
a real mosquitto; forged messages are published as any client of the broker could.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.test_hall_restart import desk, online
from tests.hall_rig import Broker, Observer, Table, stop_all
from tests.tools.test_hall_desk_input import RECORD, STATE, publish, result_message, run
from timerd.adapters.hall.protocol import (
    CHAIN_LENGTH,
    REOPENED,
    chain_proof,
    match_seed,
    proof_follows,
    proof_position,
)
from timerd.cli import request
from timerd.tools.hall_round import revision_of

#: Real processes, a broker and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e

#: A play-off training profile: a tie after 1.5 s goes to golden-goal overtime (ITHF 4.8)
#: after a half-second break; a goal counts right after the faceoff (no ITHF 5.6 guard).
PLAYOFF = """extends = "ithf-playoff"
name = "short-playoff"
ithf_conformant = false
period_s = 1.5
pre_signal_lead_s = 0.3
faceoff_guard_s = "none"
signals = []

[overtime]
break_s = 0.5
break_warning_s = "none"
"""


def results_message(observer: Observer, table: str) -> dict[str, Any] | None:
    found = observer.last(table, "results")
    return None if found is None or not found.payload else found.json()


def rows_of(csv_text: str) -> list[list[str]]:
    return [line.split(",") for line in csv_text.splitlines()[1:]]


def check_withdrawn(code: int, out: str, rows: list[list[str]],
                    document: dict[str, Any]) -> None:
    """`hall results` of t1 whose result is withdrawn: not counted, not exported, exit 1."""
    assert code == 1, out  # no final result for t1 now
    assert "round R1: 0 of 1 results" in out
    assert "withdrawn: t1 (reopened, in play)" in out
    assert "1:0" not in out
    assert rows == []  # the taken-back win is not exported
    assert (document["matches"], document["missing"], document["withdrawn"]) == (
        [], ["t1"], ["t1"])


def test_a_reopened_result_is_withdrawn_at_the_desk_and_the_new_end_replaces_it(
        mosquitto: Broker, tmp_path: Path) -> None:
    """ITHF 4.8, 6.1: the golden goal the desk stored is taken back at the table. Old code:
    `hall results` still said "1 of 1 results", exported 1:0 and exited 0 while the table
    played overtime again."""
    profile = tmp_path / "short-playoff.toml"
    profile.write_text(PLAYOFF)
    store = tmp_path / "desk"
    table = Table(tmp_path, "t1", mosquitto.port, profile)
    observer = Observer(mosquitto.port)
    export_csv, export_json = tmp_path / "r1.csv", tmp_path / "r1.json"

    def results() -> tuple[int, str, list[list[str]], dict[str, Any]]:
        got = desk(mosquitto, store, "results", "--round", "R1", "--timeout", "5",
                   "--csv", str(export_csv), "--json", str(export_json))
        return (got.returncode, got.stdout + got.stderr, rows_of(export_csv.read_text()),
                json.loads(export_json.read_text()))

    try:
        table.start()
        online(observer, table)
        started = desk(mosquitto, store, "start-round", "--in", "1s", "--round", "R1")
        assert started.returncode == 0, started.stdout + started.stderr
        table.wait_event(lambda e: e.get("signal") == "overtime_start", 30, "overtime")
        assert request(table.socket, "goal", ["home"])["ok"]  # the golden goal
        observer.wait_for(lambda _: (m := results_message(observer, "t1")) is not None
                          and m.get("result") is not None, 20, "the result")
        code, out, rows, _ = results()
        assert code == 0, out
        assert "round R1: 1 of 1 results" in out
        assert rows[0][4:6] == ["1", "0"]

        reopened = request(table.socket, "undo", [])  # the goal bounced out: reopened
        assert reopened["ok"], reopened
        assert reopened["status"]["phase"] == "paused"
        withdrawal = observer.wait_for(
            lambda _: (m := results_message(observer, "t1")) is not None
            and m.get("withdrawn") == REOPENED and m, 20, "the withdrawal")
        assert (withdrawal["revision"], withdrawal["result"]) == (1, None)
        check_withdrawn(*results())
        # A table killed while its match is reopened comes back reopened: still withdrawn.
        assert table.stop(signal.SIGKILL) == -signal.SIGKILL
        table.start()
        online(observer, table)
        check_withdrawn(*results())

        assert request(table.socket, "resume", ["faceoff"])["ok"]
        # The new end: revision 2 (1 was the reopen itself, issue 42's `reopened` line).
        assert request(table.socket, "goal", ["away"])["ok"]
        observer.wait_for(lambda _: (m := results_message(observer, "t1")) is not None
                          and m.get("result") is not None and m["revision"] == 2, 20,
                          "revision 2")
        code, out, [row], document = results()
        assert code == 0, out
        assert "round R1: 1 of 1 results" in out
        assert "corrected (revision 2)" in out
        assert "withdrawn" not in out
        assert (row[4:6], row[-1]) == (["0", "1"], "2")
        assert document["withdrawn"] == []
    finally:
        observer.close()
        stop_all([table])


# -- issue 41 item 3: revisions cannot be forged past, jumped, nor crash the desk -----------

SECRET = b"s" * 32


def proven(message: dict[str, Any], secret: bytes = SECRET, **changes: Any) -> dict[str, Any]:
    """`message` (a `result_message`) as a table with `secret` sends it: with its proof."""
    out = {**message, **changes, "version": 2}
    position = proof_position(revision_of(out), "withdrawn" in out)
    out["proof"] = chain_proof(match_seed(secret, out["id"]), position)
    return out


def test_forged_jumped_and_absurd_revisions_are_held_and_genuine_corrections_win(
        mosquitto: Broker, tmp_path: Path) -> None:
    """Old code: a retained revision 1e308 made every `hall results` die (OSError: File
    name too long); a revision 10**9 with 9:0 was exported as "corrected", and the table's
    own later revisions 1 and 2 never won over it."""
    store = tmp_path / "store"
    schedule = tmp_path / "schedule.csv"
    schedule.write_text("round,table,home,away\nR1,t1,Åsa Müller,Jiří Novák\n")
    run(mosquitto, "round", "load", str(schedule), "--store", str(store), "--timeout", "0.2")
    observer = Observer(mosquitto.port)
    topic = "timerd/hall/tables/t1/results"

    def results_after(message: dict[str, Any], code: int, exported: list[str],
                      said: str = "") -> None:
        """Publish `message`, run `hall results`: its exit code, the CSV row's score and
        revision, and what it says."""
        publish(observer, topic, message)
        got, out, err = run(mosquitto, "results", "--round", "R1", "--store", str(store),
                            "--timeout", "0.3", "--csv", str(tmp_path / "r1.csv"))
        assert got == code, out + err
        assert said in out + err
        [row] = rows_of((tmp_path / "r1.csv").read_text())
        assert [*row[4:6], row[-1]] == exported

    try:
        results_after(proven(result_message("t1")), 0, ["5", "2", "0"])
        absurd = {**result_message("t1", score=(9, 0)), "revision": 1e308}
        results_after(absurd, 1, ["5", "2", "0"],
                      "revision: out of bounds: 0 to 100, got 1e+308")
        results_after({**absurd, "revision": 10**9}, 1, ["5", "2", "0"],
                      "revision: out of bounds")
        # The table's own login, without the table's secret: a jump to revision 7 with 9:0.
        forged = proven(result_message("t1", score=(9, 0), revision=7), secret=b"f" * 32)
        results_after(forged, 1, ["5", "2", "0"],
                      "set aside, not acknowledged: its proof does not follow that of "
                      "revision 0, which the desk has")
        # Revision 0's proof replayed with another score: held, not taken.
        replayed = {**proven(result_message("t1")), "result": {
            **result_message("t1", score=(9, 0))["result"]}}
        results_after(replayed, 1, ["5", "2", "0"], "it differs from the result")

        # The table's genuine corrections supersede: revision 1, then 3 (2 never reached
        # the desk): each proof hashes to the one before.
        results_after(proven(result_message("t1", score=(4, 2), revision=1)), 0,
                      ["4", "2", "1"])
        results_after(proven(result_message("t1", score=(3, 2), revision=3)), 0,
                      ["3", "2", "3"])
        # An older revision replayed changes nothing.
        results_after(proven(result_message("t1", score=(4, 2), revision=1)), 0,
                      ["3", "2", "3"])
        # Without a proof, after revisions that had one: held.
        results_after(result_message("t1", score=(9, 0), revision=4), 1, ["3", "2", "3"],
                      "it carries no proof")
    finally:
        observer.close()
    assert len(list(store.glob(f"{RECORD['match_id']}*.json"))) == 3  # 0, 1, 3: nothing else


def test_a_revision_past_the_chain_is_never_proven() -> None:
    """The chain ends at CHAIN_LENGTH: no proof exists past it, and a later proof hashes to
    every earlier one, never the other way round."""
    seed = match_seed(SECRET, RECORD["match_id"])
    first, last = chain_proof(seed, 0), chain_proof(seed, CHAIN_LENGTH)
    assert proof_follows(last, CHAIN_LENGTH, first)
    assert not proof_follows(first, CHAIN_LENGTH, last)
    assert not proof_follows(last, CHAIN_LENGTH + 1, first)
    assert not proof_follows("zz", 0, "zz")


def test_a_start_round_at_an_instant_no_float_holds_is_refused_cleanly(
        mosquitto: Broker, tmp_path: Path) -> None:
    """Old code: `"at": 10**400` was "internal error" with a traceback in the table's log."""
    profile = tmp_path / "p.toml"
    profile.write_text(PLAYOFF)
    table = Table(tmp_path, "t1", mosquitto.port, profile)
    observer = Observer(mosquitto.port)
    try:
        table.start()
        online(observer, table)
        observer.publish("timerd/hall/tables/t1/cmd", b'{"command": "start_round", "at": 1'
                         + b"0" * 400 + b', "id": "big"}')
        reply = observer.wait_for(lambda _: next((e for e in observer.events("t1")
                                                  if e.get("id") == "big"), None), 20,
                                  "the reply")
        assert reply["ok"] is False
        assert reply["code"] == "refused.start_round_at", reply
        assert "internal error" not in reply["error"]
        assert request(table.socket, "status", [])["status"]["phase"] == "idle"
        assert "Traceback" not in table.stderr()  # logged before the reply, if at all
    finally:
        observer.close()
        stop_all([table])


def test_numbers_no_float_holds_set_a_message_aside_and_every_desk_command_goes_on(
        mosquitto: Broker, tmp_path: Path) -> None:
    """A retained state whose `wall` is 10**400 and a result whose `played_s` is: old code
    raised OverflowError while checking them, which ended the desk's reader (`hall status`
    and `hall results` failed for the whole hall)."""
    store = tmp_path / "store"
    observer = Observer(mosquitto.port)
    huge = b"1" + b"0" * 400
    try:
        publish(observer, "timerd/hall/tables/t1/status", b"online")
        publish(observer, "timerd/hall/tables/t1/state", json.dumps(
            {**STATE, "wall": 0}).encode().replace(b'"wall": 0', b'"wall": ' + huge))
        publish(observer, "timerd/hall/tables/t2/results", json.dumps(
            result_message("t2")).encode().replace(b'"played_s": 331.0',
                                                   b'"played_s": ' + huge))
        code, out, err = run(mosquitto, "status", "--once")
        assert code == 0, out + err
        assert "warning: t1: state unreadable: wall: out of bounds: -1e+10 to 1e+10" in out
        code, out, err = run(mosquitto, "results", "--round", "R1", "--store", str(store),
                             "--timeout", "0.3")
        assert "result.played_s: out of bounds" in out + err
        assert code == 1, out + err
    finally:
        for kind in ("t1/status", "t1/state", "t2/results"):
            publish(observer, f"timerd/hall/tables/{kind}", b"")
        observer.close()
