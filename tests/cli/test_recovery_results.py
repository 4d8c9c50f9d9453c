"""A power cut at the end of a match never loses a result the desk was told is safe (issue 36
item 1, docs/service.md "A match survives a crash, a hang, a restart and a power cut").

A real daemon (`python -m timerd run --simulate`) ends a match with a walk-out (ITHF 4.7), and
its reply says the command is durable. It is then killed with SIGKILL at a point around the
match's end: its results write held back (strace delays the results file's open), the results
file's fsync failed once (strace injects EIO), or right after the reply. The runtime directory
(RAM, lost in a power cut) is wiped, a new daemon starts on the same state directory, and the
results file holds the match's result exactly once; a third start adds no second one.

On the old code the first two lose the result: the journal was compacted whatever became of
the results line, which waited in RAM (`/run/timerd/results-pending/`) only.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import require
from daemon_process import SHORT_PROFILE, WAIT_S, Daemon

from tests.hall_rig import wait_until
from timerd.adapters.journal.format import HEARTBEAT_NAME, JOURNAL_NAME
from timerd.cli import request

#: Real processes, a broker or a browser, and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e

SPEED = 5.0


@dataclass(frozen=True)
class KillPoint:
    """Where the daemon dies: `strace` injects into the results file's system calls (None:
    no strace); `settle` is what the test waits for after the reply, before the kill."""

    name: str
    strace: tuple[str, ...] | None
    settle: str


POINTS = [
    # A slow card: the results file's open hangs for a minute; the power fails meanwhile.
    KillPoint("results-write-held-back", ("openat:delay_enter=60000000",), settle="held"),
    # One fsync of the results file fails: the line is cut back and retried 30 s later.
    KillPoint("results-fsync-failed-once", ("fsync:error=EIO:when=1",), settle="fault"),
    # No fault at all: the kill comes as soon as the reply is read.
    KillPoint("right-after-the-reply", None, settle="reply"),
]


def _strace(results: Path, injections: tuple[str, ...]) -> list[str]:
    require(shutil.which("strace") is not None, "strace")
    injected = [arg for spec in injections for arg in ("-e", f"inject={spec}")]
    calls = ",".join(spec.split(":")[0] for spec in injections)
    return ["strace", "-f", "-o", "/dev/null", "-P", str(results), "-e", f"trace={calls}",
            *injected]


def _ask(daemon: Daemon, name: str, *args: str) -> dict[str, Any]:
    reply: dict[str, Any] = request(daemon.socket, name, list(args))
    assert reply["ok"], reply
    return reply


def _kill(daemon: Daemon) -> None:
    """SIGKILL the daemon itself (under strace, the traced child: the heartbeat names it)."""
    _kill_traced(daemon.home)
    daemon.proc.kill()  # strace, which may sit out its injected delay first
    daemon.proc.wait(timeout=WAIT_S)


def _kill_traced(home: Path) -> None:
    """SIGKILL the daemon the heartbeat names, if it runs (strace leaves it behind)."""
    with contextlib.suppress(OSError, ValueError, KeyError):
        beat = json.loads((home / "run" / HEARTBEAT_NAME).read_text())
        os.kill(int(beat["pid"]), signal.SIGKILL)


def _results(state: Path) -> list[dict[str, Any]]:
    path = state / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _power_cut(daemon: Daemon) -> None:
    _kill(daemon)
    shutil.rmtree(daemon.home / "run")  # RAM: gone with the power


@pytest.mark.parametrize("point", POINTS, ids=lambda p: p.name)
def test_a_match_end_acknowledged_durable_gives_exactly_one_result_after_a_power_cut(
        tmp_path: Path, point: KillPoint) -> None:
    profile = tmp_path / "kill-test.toml"
    profile.write_text(SHORT_PROFILE)
    state = tmp_path / "state"
    wrapper = None if point.strace is None else _strace(state / "results.jsonl", point.strace)
    with Daemon(tmp_path, "--profile", str(profile), speed=SPEED, wrapper=wrapper) as table, \
            contextlib.ExitStack() as cleanup:
        cleanup.callback(_kill_traced, tmp_path)  # also when the test fails
        table.ready()
        _ask(table, "start")
        table.wait_status(lambda s: s["phase"] == "running", "the running match")
        _ask(table, "goal", "home")
        ended = _ask(table, "walkout", "away")  # ITHF 4.7: home wins
        assert ended["status"]["phase"] == "finished"
        assert "durable" not in ended, ended  # acknowledged as on disk
        match_id = ended["status"]["match_id"]
        if point.settle == "fault":
            table.wait_status(lambda s: "results" in s["storage"]["faults"],
                              "the failed results fsync")
        if point.settle == "held":
            # The results file's open hangs: it is in the kernel, no line can come.
            table.wait_status(lambda s: s["storage"]["pending_results"] == 1,
                              "the result waiting for the card")
        _power_cut(table)
    assert [r["match_id"] for r in _results(state)] in ([], [match_id])

    with Daemon(tmp_path, "--profile", str(profile), speed=SPEED).ready() as again:
        lines = wait_until(lambda: _results(state) or None, WAIT_S, "the result written")
        status = again.wait_status(lambda s: s["storage"]["pending_results"] == 0,
                                   "no result pending")
        # Still correctable (issue 42 item 1): the match comes back finished; the journal
        # keeps it until RESET (or the next match, or the end of `reopen_within_s`).
        assert (status["phase"], status["match_id"]) == ("finished", match_id)
        again.command("reset")
        wait_until(lambda: (state / JOURNAL_NAME).read_bytes() == b"", WAIT_S,
                   "the journal compacted at the reset, the result on disk")
        _power_cut(again)
    assert [r["match_id"] for r in lines] == [match_id]
    assert lines[0]["how"] == "walkout"
    assert lines[0]["winner"] == "home"

    # Nothing left over (a journal, a pending copy) writes it a second time.
    with Daemon(tmp_path, "--profile", str(profile), speed=SPEED).ready() as third:
        assert third.command("status")["storage"]["pending_results"] == 0
        assert third.stop() == 0
    assert [r["match_id"] for r in _results(state)] == [match_id]
    assert not list((state / "results-pending").glob("*.json"))
