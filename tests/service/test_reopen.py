"""A match reopened by `undo` of the entry that ended it (issue 28; ITHF 6.1 with 4.8), on the
table's real parts (`test_match_id.run_table`: the journal, the results file, hall mode's
outbox) on virtual time: the result already written stays, the correction is a new line with
the next `revision`, every reader shows the latest, and a restart in between keeps the reopen.
Each test fails on the code before issue 28 (the undo was refused, one line only).
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_virtual
from tests.service.test_match_id import HALL, hall_messages, results_lines, run_table
from timerd.adapters.hall.link import HallLink, Outbox
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


def test_ithf_6_1_4_8_a_reopened_overtime_survives_a_restart_and_ends_as_revision_1(
        tmp_path: Path) -> None:
    # 1:1 at the final signal, overtime from t=350; the golden goal at 370 bounced out.
    run_table(tmp_path, [(0, "start"), (100, "goal home"), (200, "goal away"),
                         (370, "goal home"), (380, "undo")], until=390,
              profile="ithf-playoff")
    [first] = results_lines(tmp_path)
    assert first["winner"] == "home"
    run_table(tmp_path, [(1, "resume faceoff"), (10, "goal away")], until=20,
              profile="ithf-playoff")  # restored paused in overtime, the same match
    first_again, second = results_lines(tmp_path)
    assert first_again == first
    assert second["match_id"] == first["match_id"]
    assert (second["revision"], second["winner"], second["how"]) == (1, "away", "overtime")
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
