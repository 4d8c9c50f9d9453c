"""A real daemon on a really full state directory (a 64 KiB tmpfs, mounted as root): replies
say the commands are not durable, the status says what fails, the match goes on, and the
result is written once there is room again (issue 13 item 6)."""

from __future__ import annotations

import contextlib
import errno
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import require
from daemon_process import SHORT_PROFILE, Daemon

from tests.hall_rig import wait_until
from timerd import cli
from timerd.cli import request

#: Real processes, a broker or a browser, and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e

#: Match seconds per real second: 34 s of match in about 7 s, time to fill the card mid-match.
SPEED = 5.0


@pytest.fixture
def tiny_state(tmp_path: Path) -> Iterator[Path]:
    state = tmp_path / "state"
    state.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "tmpfs",
                              str(state)], capture_output=True, check=False).returncode == 0
    require(mounted, "mounting a tmpfs (root)")
    try:
        yield state
    finally:
        subprocess.run(["umount", "-l", str(state)], check=False)


def _fill(directory: Path) -> Path:
    """Write a file in `directory` until the file system has no block left."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as out:
        with contextlib.suppress(OSError):
            while True:
                out.write(b"\0" * 4096)
        with pytest.raises(OSError, match="No space left") as full:
            out.write(b"\0")
    assert full.value.errno == errno.ENOSPC
    return filler


def _ask(daemon: Daemon, name: str, *args: str) -> dict[str, Any]:
    reply: dict[str, Any] = request(daemon.socket, name, list(args))
    return reply


def test_a_full_state_directory_is_reported_and_the_result_written_when_there_is_room(
        tmp_path: Path, tiny_state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Fails on main: every goal on the full card was acknowledged `ok` as if on disk, the
    status said nothing, and the result was neither written nor retried."""
    profile = tmp_path / "kill-test.toml"
    profile.write_text(SHORT_PROFILE)
    with Daemon(tmp_path, "--profile", str(profile), speed=SPEED).ready() as table:
        started = _ask(table, "start")
        assert started["ok"]
        assert "durable" not in started
        filler = _fill(tiny_state)
        # The journal's last block may still hold a few lines: goals until one needs a block.
        goals = []
        for _ in range(80):
            goals.append(_ask(table, "goal", "home"))
            if goals[-1].get("durable") is False:
                break
        refused = goals[-1]
        assert refused["ok"] is True
        assert refused["durable"] is False
        assert "ENOSPC" in refused["warning"]
        assert refused["status"]["storage"]["ok"] is False
        assert "journal" in refused["status"]["storage"]["faults"]
        capsys.readouterr()
        # Still in the pre-signal: the goal is taken but not counted (ITHF 5.1), which
        # timerctl says first and with exit 3 (issue 30 item 11).
        assert cli.timerctl(["--socket", str(table.socket), "goal", "away"]) == 3
        shown = capsys.readouterr()
        assert shown.err.startswith("timerctl: no goal: ")
        assert "timerctl: warning: not durable: No space left on device" in shown.err
        assert "STORAGE   journal cannot be written" in shown.out
        scored = _ask(table, "status")["status"]["score"]
        ended = table.wait_status(lambda s: s["phase"] == "finished"
                                  and "results" in s["storage"]["faults"],
                                  "the end, its result not written", timeout_s=30)
        assert ended["storage"]["pending_results"] == 1
        assert "results.jsonl (ENOSPC)" in ended["storage"]["faults"]["results"]
        assert not (tiny_state / "results.jsonl").exists() \
            or (tiny_state / "results.jsonl").read_text() == ""
        assert len(list((tmp_path / "run" / "results-pending").glob("*.json"))) == 1
        filler.unlink()  # room again: the retry (every 30 match s, 6 s here) writes it
        after = table.wait_status(lambda s: s["storage"]["pending_results"] == 0,
                                  "the result written", timeout_s=30)
        assert after["storage"] == {"ok": True, "faults": {}, "pending_results": 0}
        lines = wait_until(lambda: (tiny_state / "results.jsonl").read_text().splitlines()
                           or None, 10, "the results line")
        assert [json.loads(x)["score"] for x in lines] == [scored]
        assert table.stop() == 0
    assert not list((tmp_path / "run" / "results-pending").glob("*.json"))
