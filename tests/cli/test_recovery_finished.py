"""A finished match survives a restart while it may still be corrected (issue 42 item 1;
ITHF 6.1 with 4.8, ISBHF 420 !1 with 411 and the profile's `reopen_within_s`).

Real processes (`python -m timerd run --simulate`), a real SIGKILL and SIGTERM, the real
journal and results file in temporary directories. Nothing waits on the clock: the tests wait
on the event stream and the status.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from daemon_process import WAIT_S, Daemon

pytestmark = pytest.mark.e2e

SPEED = 5.0
#: A play-off in miniature: 8 s of match time, a tie goes to a sudden-death overtime after a
#: 2 s break; a finished match may be reopened for 600 s of match time (two minutes of real
#: time at x5: the restart takes a few seconds).
OVERTIME_PROFILE = """\
name = "ot-test"
ithf_conformant = false
period_s = 8
pre_signal_lead_s = 1
reopen_within_s = 600
overtime = { break_s = 2, break_warning_s = 1 }
"""


def golden_goal(home: Path, profile: Path) -> Daemon:
    """A daemon whose match ended by a golden goal for home (1:0 in overtime), its result
    on disk."""
    table = Daemon(home, "--profile", str(profile), speed=SPEED).ready()
    table.command("start")
    table.wait_signal("overtime_start")
    table.wait_status(lambda s: s["overtime_s"] >= 1.0, "a second of overtime")
    table.command("goal", "home")  # the golden goal (the profile has no faceoff guard)
    table.wait_event(lambda e: e["type"] == "state" and e["state"] == "finished")
    return table


def polled(done: Callable[[], bool]) -> None:
    """Wait until `done()` (a file the daemon's disk thread writes), at most WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while not done() and time.monotonic() < deadline:
        time.sleep(0.05)


def results(home: Path, at_least: int = 0) -> list[dict]:
    """The results file's lines, once it holds `at_least` (polled: its write is fsynced on
    the daemon's disk thread, a moment after the end)."""
    path = home / "state" / "results.jsonl"

    def lines() -> list[str]:
        return path.read_text().splitlines() if path.exists() else []

    polled(lambda: len(lines()) >= at_least)
    return [json.loads(line) for line in lines()]


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["kill", "term"])
def test_a_restart_after_a_golden_goal_keeps_the_match_correctable(
        tmp_path: Path, signum: int) -> None:
    """Old code: the restarted daemon was idle, `match_id` null, and `undo` refused ("there
    is no goal entry to remove"), though the window was open."""
    profile = tmp_path / "ot-test.toml"
    profile.write_text(OVERTIME_PROFILE)
    with golden_goal(tmp_path, profile) as first:
        ended = first.wait_status(lambda s: s["phase"] == "finished", "the end")
        results(tmp_path, at_least=1)
        first.command("correct", "1", "17")  # the scorer put right after the end: revision 1
        results(tmp_path, at_least=2)
        first.stop(signum)
    assert [(r["revision"], r["winner"]) for r in results(tmp_path)] == [(0, "home"),
                                                                        (1, "home")]
    with Daemon(tmp_path, "--profile", str(profile), speed=SPEED).ready() as second:
        status = second.command("status")
        assert status["phase"] == "finished", "".join(first.log + second.log)
        assert status["match_id"] == ended["match_id"]
        assert status["score"] == {"home": 1, "away": 0}
        assert status["result"]["winner"] == "home"
        assert status["result"]["revision"] == 1  # the correction came back with the match
        assert status["goals"][0]["scorer"] == "17"
        assert status["recovery"]["outcome"] == "finished"
        assert "can still be corrected" in status["recovery"]["message"]
        second.command("correct", "1", "18")  # revision 2: `finished` is still the end's
        reopened = second.command("undo")  # the golden goal was no goal (ITHF 6.1)
        assert reopened["phase"] == "paused"
        assert reopened["overtime"]
        assert reopened["score"] == {"home": 0, "away": 0}
        assert reopened["match_id"] == ended["match_id"]
        second.command("resume")
        second.command("goal", "away")  # the overtime decided again
        second.wait_event(lambda e: e["type"] == "state" and e["state"] == "finished")
        second.wait_status(lambda s: s["phase"] == "finished", "the end")
        lines = results(tmp_path, at_least=5)  # before the daemon is killed
    assert [(r["match_id"], r["revision"], r["state"], r["winner"]) for r in lines] == [
        (ended["match_id"], 0, "final", "home"), (ended["match_id"], 1, "final", "home"),
        (ended["match_id"], 2, "final", "home"), (ended["match_id"], 3, "reopened", None),
        (ended["match_id"], 4, "final", "away")]
    # Issue 42 item 5: a correction keeps the match's end, across the restart too.
    assert lines[1]["finished"] == lines[2]["finished"] == lines[0]["finished"]
    assert lines[4]["finished"] > lines[0]["finished"]  # ended again, later
    assert [r["goals"][0]["scorer"] for r in lines[:3]] == [None, "17", "18"]


def test_a_restart_past_the_window_leaves_the_result_and_starts_idle(tmp_path: Path) -> None:
    """Past `reopen_within_s` the journal has let go of the match: a restart starts idle."""
    profile = tmp_path / "ot-test.toml"
    profile.write_text(OVERTIME_PROFILE.replace("reopen_within_s = 600", "reopen_within_s = 5"))
    with golden_goal(tmp_path, profile) as first:
        first.wait_log("no longer correctable (window)")
        journal = tmp_path / "state" / "match-journal.jsonl"
        polled(lambda: journal.read_bytes() == b"")  # the compaction on disk, then the kill
        first.stop(signal.SIGKILL)
    with Daemon(tmp_path, "--profile", str(profile), speed=SPEED).ready() as second:
        status = second.command("status")
        assert (status["phase"], status["match_id"]) == ("idle", None)
    assert [r["revision"] for r in results(tmp_path)] == [0]


# -- issue 42 item 2: a reopened match has no winner; RESET of it abandons it -----------------


def web_url(table: Daemon) -> str:
    line = next(line for line in table.log if "web scoreboard at" in line)
    return line.split("web scoreboard at ", 1)[1].split()[0].rstrip("/")


def api_results(table: Daemon) -> list[dict]:
    with urllib.request.urlopen(f"{web_url(table)}/api/results", timeout=WAIT_S) as reply:
        found: list[dict] = json.loads(reply.read())
        return found


def timerd_results(home: Path) -> str:
    return subprocess.run(
        [sys.executable, "-m", "timerd", "results", "--file",
         str(home / "state" / "results.jsonl")],
        capture_output=True, text=True, check=True, timeout=WAIT_S).stdout


def test_a_reopened_match_has_no_winner_and_reset_abandons_it(tmp_path: Path) -> None:
    """Old code: after golden goal, `undo`, `reset` the results file, `timerd results` and
    `GET /api/results` kept revision 0 (1:0, home wins); during the reopened overtime the API
    said home had won too."""
    profile = tmp_path / "ot-test.toml"
    profile.write_text(OVERTIME_PROFILE)
    with golden_goal(tmp_path, profile) as table:
        match_id = table.wait_status(lambda s: s["phase"] == "finished", "the end")["match_id"]
        results(tmp_path, at_least=1)
        table.command("undo")
        assert table.wait_event(lambda e: e["type"] == "reopened")["in_play"] is True
        reopened = results(tmp_path, at_least=2)[-1]
        assert (reopened["revision"], reopened["state"], reopened["winner"]) == (
            1, "reopened", None)
        assert reopened["score"] == {"home": 0, "away": 0}
        shown = [r for r in api_results(table) if r["match_id"] == match_id]
        assert [(r["revision"], r["state"], r["winner"]) for r in shown] == [
            (1, "reopened", None)]
        table.command("reset")
        told = table.wait_event(lambda e: e["type"] == "result_abandoned")
        assert (told["match_id"], told["revision"], told["winner"]) == (match_id, 2, None)
        assert told["score"] == {"home": 0, "away": 0}
        abandoned = results(tmp_path, at_least=3)[-1]
        assert (abandoned["match_id"], abandoned["revision"], abandoned["supersedes"]) == (
            match_id, 2, 1)
        assert (abandoned["state"], abandoned["winner"], abandoned["how"]) == (
            "abandoned", None, None)
        assert abandoned["score"] == {"home": 0, "away": 0}
        assert abandoned["finished"] is None
        assert abandoned["corrected_at"] is not None
        shown = [r for r in api_results(table) if r["match_id"] == match_id]
        assert [(r["revision"], r["state"], r["winner"]) for r in shown] == [
            (2, "abandoned", None)]
    table_text = timerd_results(tmp_path)
    assert "abandoned, no winner" in table_text
    assert match_id in table_text
