"""A ball hockey play-off in the results file: periods, penalties, timeouts, scorers and the
shootout attempts, all in the one line of the match."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import play
from tests.service.test_ithf_results import results_setup


def test_isbhf_playoff_results_line_holds_periods_penalties_timeouts_and_shootout(
        tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    listened: list[dict[str, Any]] = []
    play("isbhf-playoff", [
        (0, "start"), (100, "stop"), (101, "goal home 17 4"), (102, "penalty away minor 8"),
        (103, "timeout away"), (140, "start"),
        (1640, "start"), (2000, "stop"), (2001, "goal away 9"), (2010, "start"),
        (3150, "start"),
        (4650, "start"),  # overtime: nobody scores in 10:00
        (5300, "shot home scored"), (5301, "shot away scored"), (5302, "shot home missed"),
        (5303, "shot away missed"), (5304, "shot home missed"), (5305, "shot away missed"),
        (5306, "shot home missed"), (5307, "shot away missed"), (5308, "shot home missed"),
        (5309, "shot away missed"), (5310, "shot home scored"), (5311, "shot away missed"),
    ], until=5400, setup=results_setup(path, listened))
    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    assert (record["how"], record["winner"], record["score"]) == (
        "shootout", "home", {"home": 1, "away": 1})
    assert [(p["period"], p["overtime"], p["played_s"], p["goals"]) for p in record["periods"]] \
        == [(1, False, 900.0, {"home": 1, "away": 0}), (2, False, 900.0, {"home": 0, "away": 1}),
            (3, False, 900.0, {"home": 0, "away": 0}), (4, True, 600.0, {"home": 0, "away": 0})]
    assert [(g["scorer"], g["assists"]) for g in record["goals"]] == [("17", ["4"]), ("9", [])]
    assert [(p["side"], p["kind"], p["player"], p["started_s"], p["ended_s"], p["end"])
            for p in record["penalties"]] == [("away", "minor", "8", 100.0, 220.0, "expired")]
    assert record["timeouts"] == [{"side": "away", "period": 1, "match_time_s": 100.0,
                                   "lasted_s": 30.0}]
    attempts = record["shootout"]["attempts"]
    assert (len(attempts["home"]), len(attempts["away"])) == (6, 6)  # decided in round 6
    assert listened == [record]
