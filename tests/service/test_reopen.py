"""A match reopened by `undo` of the entry that ended it (issue 28; ITHF 6.1 with 4.8), on the
table's real parts (`test_match_id.run_table`: the journal, the results file, hall mode's
outbox) on virtual time: the result already written stays, the correction is a new line with
the next `revision`, every reader shows the latest, and a restart in between keeps the reopen.
Each test fails on the code before issue 28 (the undo was refused, one line only).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from tests.conftest import run_virtual, wired
from tests.service.test_match_id import HALL, hall_messages, results_lines, run_table
from timerd.adapters.hall.link import HallLink, Outbox
from timerd.adapters.results.file import ResultsFile
from timerd.adapters.results.format import recent_results
from timerd.cli import format_results
from timerd.config import profiles
from timerd.core.match import Match
from timerd.disk import DiskWriter
from timerd.service import Service
from timerd.tools.hall_desk import render_results
from timerd.tools.hall_round import match_row

# ITHF: the start signal 20 s after START, the final signal 300 s later (t=320).


def test_ithf_6_1_a_corrected_regular_result_is_a_new_revision_and_readers_show_it(
        tmp_path: Path) -> None:
    run_table(tmp_path, [(0, "start"), (100, "goal home"), (310, "goal home"),
                         (330, "undo")], until=400)
    first, second = results_lines(tmp_path)  # append-only: the first line stays
    assert first["match_id"] == second["match_id"]
    assert (first["revision"], second["revision"], second["supersedes"]) == (0, 1, 0)
    assert first["score"] == {"home": 2, "away": 0}
    assert second["score"] == {"home": 1, "away": 0}
    assert second["goals"][0]["wall_time"] is not None  # the goal keeps its wall time
    [latest] = recent_results(tmp_path / "results.jsonl")
    assert latest == second
    assert "corrected (revision 1)" in format_results([latest])
    assert [m["result"]["revision"] for m in hall_messages(tmp_path)] == [0, 1]


def test_ithf_6_1_4_8_a_reopened_overtime_survives_a_restart_and_ends_as_revision_2(
        tmp_path: Path) -> None:
    # 1:1 at the final signal, overtime from t=350; the golden goal at 370 bounced out.
    run_table(tmp_path, [(0, "start"), (100, "goal home"), (200, "goal away"),
                         (370, "goal home"), (380, "undo")], until=390,
              profile="ithf-playoff")
    first, reopened = results_lines(tmp_path)
    assert first["winner"] == "home"
    # Issue 42 item 2: revision 1 says the match is in play again, no winner.
    assert (reopened["revision"], reopened["state"], reopened["winner"]) == (1, "reopened", None)
    assert reopened["score"] == {"home": 1, "away": 1}
    run_table(tmp_path, [(1, "resume faceoff"), (10, "goal away")], until=20,
              profile="ithf-playoff")  # restored paused in overtime, the same match
    first_again, reopened_again, second = results_lines(tmp_path)
    assert (first_again, reopened_again) == (first, reopened)
    assert second["match_id"] == first["match_id"]
    assert (second["revision"], second["winner"], second["how"]) == (2, "away", "overtime")
    assert (second["state"], second["supersedes"]) == ("final", 1)
    assert second["score"] == {"home": 1, "away": 2}


def test_the_desk_exports_the_corrected_revision_and_says_so(tmp_path: Path) -> None:
    """The superseding result goes out through the outbox like any result; the desk's row
    carries its revision and `timerd hall results` says it was corrected."""
    run_table(tmp_path, [(0, "start"), (100, "goal home"), (310, "goal home"),
                         (330, "undo")], until=400)
    first, second = hall_messages(tmp_path)
    assert (first["revision"], second["revision"]) == (0, 1)
    assert first["id"] == second["id"]  # one match: its latest revision wins at the desk
    row = match_row(second)
    assert (row["revision"], row["home_goals"]) == (1, 1)
    assert "corrected (revision 1)" in render_results([row])[-1]


def test_an_ack_of_the_first_revision_does_not_acknowledge_the_correction(
        tmp_path: Path) -> None:
    run_table(tmp_path, [(0, "start"), (100, "goal home"), (310, "goal home"),
                         (330, "undo")], until=400)
    first, second = (m["result"] for m in hall_messages(tmp_path))

    async def acks() -> tuple[bool, bool]:
        writer = DiskWriter(inline=True)
        hall = HallLink(HALL, Service(Match(profiles.load("ithf"))),
                        Outbox(tmp_path / "outbox2", writer))
        hall.publish_result(first)
        hall.publish_result(second)
        assert hall.result is not None
        hall._ack({"result": first["match_id"], "revision": 0})
        late = bool(hall.result["acked"])
        hall._ack({"result": first["match_id"], "revision": 1})
        return late, bool(hall.result["acked"])

    assert run_virtual(acks) == (False, True)


def test_a_correction_keeps_the_match_end_and_stamps_its_own_time(tmp_path: Path) -> None:
    """Issue 42 item 5 (old code: each `correct` moved `finished`, and the desk's
    `duration_s`, to the instant of the correction)."""
    wall0 = 1_800_000_000.0

    async def main() -> None:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        service = Service(Match(profiles.load("ithf")))
        wired(ResultsFile(tmp_path / "results.jsonl", wall=lambda: wall0 + loop.time() - t0),
              service)
        for t, words in [(0, "start"), (100, "goal home 7"), (400, "correct 1 8"),
                         (500, "correct 1 9")]:
            command, *args = words.split()
            loop.call_at(t0 + t, service.command, {"command": command, "args": args})
        task = asyncio.create_task(service.run())
        await asyncio.sleep(600)
        task.cancel()

    run_virtual(main)
    lines = results_lines(tmp_path)
    assert [line["revision"] for line in lines] == [0, 1, 2]
    end = datetime.fromtimestamp(wall0 + 320.0, UTC).isoformat(timespec="milliseconds")
    assert [line["finished"] for line in lines] == [end] * 3  # the final signal at t=320
    assert [line["corrected_at"] for line in lines] == [None] + [
        datetime.fromtimestamp(wall0 + t, UTC).isoformat(timespec="milliseconds")
        for t in (400.0, 500.0)]
    assert [line["goals"][0]["scorer"] for line in lines] == ["7", "8", "9"]
    assert match_row({"result": lines[-1]})["duration_s"] == 300.0  # start signal to end


def test_a_reopened_match_reset_reaches_every_reader_abandoned(tmp_path: Path) -> None:
    """Issue 42 item 2 (old code: revision 0, home wins, stayed everywhere): golden goal,
    `undo`, RESET; the results file, `timerd results` and the desk's message and row say
    abandoned, no winner."""
    run_table(tmp_path, [(0, "start"), (100, "goal home"), (200, "goal away"),
                         (370, "goal home"), (380, "undo"), (390, "reset")], until=400,
              profile="ithf-playoff")
    lines = results_lines(tmp_path)
    assert [(r["revision"], r["state"], r["winner"]) for r in lines] == [
        (0, "final", "home"), (1, "reopened", None), (2, "abandoned", None)]
    assert lines[2]["score"] == {"home": 1, "away": 1}  # as it stood: the golden goal gone
    [latest] = recent_results(tmp_path / "results.jsonl")
    assert latest == lines[2]
    assert "abandoned, no winner" in format_results([latest])
    messages = hall_messages(tmp_path)
    # The reopen reaches the desk as the hall link's withdrawal (issue 41 item 2), never as
    # a result; the end as the abandoned revision, which the desk's row shows as such.
    assert [(m["revision"], m["result"]["state"]) for m in messages
            if m.get("result") is not None] == [(0, "final"), (2, "abandoned")]
    row = match_row(messages[-1])
    assert (row["revision"], row["winner"], row["how"]) == (2, None, "abandoned")
