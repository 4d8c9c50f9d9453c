"""Names go with the match (issue 41 item 1), on the table's real parts at virtual time: names
a finished match takes for the next round are journalled with the match its reset begins,
so a restart in that match restores them. (The hall, end to end: test_hall_next_round.py.)
"""

from __future__ import annotations

from pathlib import Path

from tests.service.test_match_id import run_table
from timerd.adapters.journal.format import JOURNAL_NAME, parse_journal, recover
from timerd.core.score import Side

# ITHF: the start signal 20 s after START, the final signal 300 s later (t=320).


def test_names_taken_after_the_end_are_the_next_matchs_first_journal_line(
        tmp_path: Path) -> None:
    """Old code: the next match's journal began with the reset and the start; a restart
    restored it without names."""
    run_table(tmp_path, [(0, "teams Ann Bob R1"), (1, "start"), (330, "teams Cid Dan R2"),
                         (340, "reset"), (350, "start")], until=400)
    records, warnings = parse_journal((tmp_path / "state" / JOURNAL_NAME).read_bytes())
    assert warnings == []
    commands = [(r["command"], r["args"]) for r in records if r["type"] == "command"]
    assert commands == [("teams", ["Cid", "Dan", "R2"]), ("reset", []), ("start", [])]
    restored = recover(records, None, now=1000.0, wall_now=records[-1]["wall"] + 1, run="x",
                       resume_within_s=7200.0)
    assert restored.match is not None
    assert restored.match.teams == {Side.HOME: "Cid", Side.AWAY: "Dan"}
    assert restored.match.round == "R2"


def test_a_match_named_by_its_first_command_has_one_teams_line(tmp_path: Path) -> None:
    run_table(tmp_path, [(0, "teams Ann Bob R1"), (1, "start")], until=100)
    records, _ = parse_journal((tmp_path / "state" / JOURNAL_NAME).read_bytes())
    assert [r["command"] for r in records if r["type"] == "command"] == ["teams", "start"]
