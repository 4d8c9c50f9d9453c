"""The results file: one durable JSON line per finished match, read back by `timerd results`."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import play
from timerd import cli
from timerd.adapters.results.file import ResultsFile
from timerd.adapters.results.format import recent_results
from timerd.service import Service
from timerd.wire import new_match_id

WALL0 = 1_780_000_000.0  # 2026-05-28, a fixed wall clock: each read is 1 s after the last


def results_setup(path: Path, listened: list[dict[str, Any]]) -> Any:
    def setup(service: Service) -> None:
        ticks = itertools.count()
        results = ResultsFile(path, wall=lambda: WALL0 + next(ticks))
        results.listeners.append(listened.append)
        service.mint_id = lambda: new_match_id(WALL0)  # the service gives the match its id
        service.outputs.append(results)
        service.status_extras.append(results.status_extra)
    return setup


def test_a_finished_match_appends_one_complete_line(tmp_path: Path) -> None:
    path = tmp_path / "state" / "results.jsonl"
    listened: list[dict[str, Any]] = []
    play("ithf", [
        (0, "start"), (21, "goal home"), (40, "goal home"), (60, "pause"), (75, "resume"),
        (80, "goal away"), (130, "pause"), (131, "goal away"), (140, "resume faceoff"),
    ], until=400, setup=results_setup(path, listened))
    lines = path.read_text().splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert listened == [record]
    assert record["profile"] == "ithf"
    assert record["match_id"].startswith("20260528T")
    assert record["started"] == "2026-05-28T20:26:40.000+00:00"  # the 1st wall read
    assert record["score"] == {"home": 1, "away": 1}
    assert (record["how"], record["winner"], record["overtime_s"]) == ("regular", None, None)
    assert record["played_s"] == 300.0
    assert record["interruptions"] == [{"period": 1, "start_s": 40.0, "length_s": 15.0},
                                       {"period": 1, "start_s": 95.0, "length_s": 10.0}]
    assert [(g["side"], g["match_time_s"], g["counted"], g["reason"])
            for g in record["goals"]] == [
        ("home", 1.0, False, "faceoff_guard"), ("home", 20.0, True, None),
        ("away", 45.0, True, None), ("away", 95.0, False, "interruption")]
    walls = [g["wall_time"] for g in record["goals"]]
    assert all(w is not None and w.startswith("2026-05-28T") for w in walls)
    assert walls == sorted(walls)


def test_overtime_and_walkout_results(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    listened: list[dict[str, Any]] = []
    play("ithf-playoff", [(0, "start"), (360, "goal away")], until=400,
         setup=results_setup(path, listened))
    play("ithf", [(0, "start"), (30, "goal home"), (60, "walkout home")], until=100,
         setup=results_setup(path, listened))
    overtime, walkout = recent_results(path, 5)
    assert (overtime["how"], overtime["winner"], overtime["overtime_s"]) == (
        "overtime", "away", 10.0)
    assert (overtime["points"], overtime["shootout"]) == (None, None)  # not in ITHF
    assert (walkout["how"], walkout["side"], walkout["score"]) == (
        "walkout", "home", {"home": 0, "away": 5})
    awarded = [g for g in walkout["goals"] if g["reason"] == "walkout_award"]
    assert len(awarded) == 5
    assert all(g["wall_time"] is not None for g in awarded)


def test_status_shows_goal_wall_times_and_the_match_id(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def setup(service: Service) -> None:
        results_setup(tmp_path / "r.jsonl", [])(service)
        service.loop.call_later(30, lambda: seen.append(service.status_dict()))

    play("ithf", [(0, "start"), (25, "goal home")], until=31, setup=setup)
    assert seen[0]["match_id"].startswith("20260528T")
    assert len(seen[0]["goal_wall_times"]) == len(seen[0]["goals"]) == 1
    assert seen[0]["goal_wall_times"][0].startswith("2026-05-28T")
    assert "wall_time" not in seen[0]["goals"][0]  # the core's entry, as the core gave it


def test_recent_results_skips_a_torn_line_and_keeps_the_last_n(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    lines = [json.dumps({"match_id": str(i)}) for i in range(5)]
    path.write_text("\n".join(lines[:3]) + '\n{"match_id": "torn\n' + "\n".join(lines[3:]) + "\n")
    assert [r["match_id"] for r in recent_results(path, 3)] == ["2", "3", "4"]
    assert recent_results(tmp_path / "missing.jsonl", 3) == []


def test_timerd_results_prints_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "results.jsonl"
    play("ithf", [(0, "start"), (21, "goal home"), (40, "goal away"), (51, "forfeit home")],
         until=60, setup=results_setup(path, []))
    assert cli.main(["results", "--file", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["started", "round", "home", "away", "match", "profile", "score",
                              "how", "goals", "paused"]
    assert len(out) == 2
    row = out[1].split()
    assert row[2:5] == ["-", "-", "-"]  # no round, no names given
    assert row[6:8] == ["ithf", "0:5"]
    assert row[8:10] == ["forfeit", "(home)"]
    assert cli.main(["results", "--file", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["how"] == "forfeit"


def test_timerd_results_shows_the_round_and_the_names(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 30 item 14: the round and both sides' names, as the match had them (fails on the
    old code: neither was shown)."""
    path = tmp_path / "results.jsonl"
    play("ithf", [(0, "teams Åsa_Müller Jiří_Novák R3"), (1, "start"), (22, "goal away"),
                  (51, "forfeit home")], until=60, setup=results_setup(path, []))
    assert cli.main(["results", "--file", str(path)]) == 0
    row = capsys.readouterr().out.splitlines()[1].split()
    assert row[2:5] == ["R3", "Åsa_Müller", "Jiří_Novák"]


def test_results_path_from_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from timerd import config as config_mod  # noqa: PLC0415

    monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path))
    assert config_mod.load(None, []).results_path() == tmp_path / "results.jsonl"
    assert config_mod.load(None, ['results.path="none"']).results_path() is None
    assert config_mod.load(None, ['results.path="/x/r.jsonl"']).results_path() == Path(
        "/x/r.jsonl")


def test_two_entries_at_the_same_match_time_keep_their_own_wall_times(tmp_path: Path) -> None:
    """Goals entered in one stoppage have the same match time (ISBHF 420: they count while
    the clock is stopped): each keeps its own wall time, as the core numbers the entries.
    Keyed by (side, match time), the second overwrote the first's."""
    seen: list[dict[str, Any]] = []

    def setup(service: Service) -> None:
        ticks = itertools.count()
        results = ResultsFile(tmp_path / "r.jsonl", wall=lambda: WALL0 + 60 * next(ticks))
        service.outputs.append(results)
        service.status_extras.append(results.status_extra)
        service.loop.call_later(70, lambda: seen.append(service.status_dict()))

    play("isbhf", [(0, "start"), (50, "stop"), (55, "goal home"), (65, "goal home")],
         until=71, setup=setup)
    first, second = seen[0]["goals"]
    assert (first["number"], second["number"]) == (1, 2)
    assert first["match_time_s"] == second["match_time_s"] == 50.0
    first_wall, second_wall = seen[0]["goal_wall_times"]
    assert first_wall != second_wall
