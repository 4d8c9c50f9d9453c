"""Replies that say what changed (issue 46 item 6): a `timerctl` action prints what it did in
one line, with the teams' names (the whole status with `status` or `--json`), from the reply's
`events`; the old `start_in` still reads as `start-in`. Against a real daemon process."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon_process import Daemon
from timerd.cli import request, timerctl

HOME, AWAY = "HC Olimpija Ljubljana", "HK Poprad"


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Daemon]:
    with Daemon(tmp_path, "--profile", "isbhf-playoff", speed=1.0).ready() as daemon:
        yield daemon


def ctl(table: Daemon, capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert timerctl(["--socket", str(table.socket), *argv]) == 0
    return capsys.readouterr().out


def test_an_action_says_what_it_did_in_one_line_with_the_teams_names(
        table: Daemon, capsys: pytest.CaptureFixture[str]) -> None:
    assert ctl(table, capsys, "teams", HOME, AWAY) == (
        f"teams: {HOME} - {AWAY} - idle 15:00, {HOME} 0:0 {AWAY}\n")
    assert ctl(table, capsys, "start").startswith("start - ")
    ctl(table, capsys, "faceoff")
    said = ctl(table, capsys, "goal", "home", "17", "4")
    assert said.startswith(f"goal {HOME}: 1:0 - running ")
    assert said.endswith(f", {HOME} 1:0 {AWAY}\n")
    # A correction says what it corrected (before: the whole status, the same as before it).
    said = ctl(table, capsys, "correct", "1", "19", "4", "5")
    assert said.startswith(f"goal 1 ({HOME}): scorer 19, assists 4, 5 (ISBHF 420 !3) - ")
    assert said.count("\n") == 1
    # The whole status is one command away, and --json stays the status document.
    assert len(ctl(table, capsys, "status").splitlines()) > 5
    assert json.loads(ctl(table, capsys, "--json", "pause"))["phase"] == "paused"


def test_a_reply_carries_the_event_records_of_what_the_command_did(table: Daemon) -> None:
    request(table.socket, "start", [])
    request(table.socket, "faceoff", [])
    reply = request(table.socket, "goal", ["away"])
    goals = [e for e in reply["events"] if e["type"] == "goal"]
    assert [(g["side"], g["counted"], g["score"]) for g in goals] == [
        ("away", True, {"home": 0, "away": 1})]
    assert "events" not in request(table.socket, "status", [])


def test_the_old_spelling_start_in_still_schedules_a_start(
        table: Daemon, capsys: pytest.CaptureFixture[str]) -> None:
    said = ctl(table, capsys, "start_in", "600")
    assert said.startswith("start_in - scheduled"), said
    assert request(table.socket, "status", [])["status"]["phase"] == "scheduled"
