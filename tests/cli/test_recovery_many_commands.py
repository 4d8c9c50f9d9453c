"""A match of many commands survives a SIGKILL (issue 42 item 4): a control client pushed a
running match's journal past 4 MB with 42,342 pauses, resumes and `teams`, and after a
SIGKILL the journal was set aside as `.big` and the match lost. The journal now compacts
into a snapshot and the lines after it, so a real daemon fed 26,000 commands restarts with
its match as it stood.

The state directory is on tmpfs (/dev/shm, where there is one): each command's line is
fsynced before its reply, and 26,000 fsyncs of a disk would time the disk, not timerd.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemon_process import SHORT_PROFILE, Daemon

from timerd.adapters.journal.format import JOURNAL_NAME
from timerd.adapters.journal.writer import COMPACT_LINES

pytestmark = pytest.mark.e2e

#: 4000 resumes and pauses in a row, and `teams` with the longest names (40 characters, about
#: 220 bytes a journal line): 26,000 commands, 4.6 MB of journal lines uncompacted.
PAIRS = 4000
TEAMS = 18_000
NAME = "N" * 40
UNLIMITED = ("-o", "control.commands_per_s=1000000", "-o", "control.command_burst=1000000")


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    shm = Path("/dev/shm")
    if not shm.is_dir():
        yield tmp_path
        return
    place = Path(tempfile.mkdtemp(prefix="timerd-test-", dir=shm))
    try:
        yield place
    finally:
        shutil.rmtree(place, ignore_errors=True)


def flood(path: Path, words: list[list[str]]) -> list[dict[str, Any]]:
    """Send every command on one connection, pipelined, and read every reply (a thread reads
    while this one writes: neither side's buffer fills)."""
    replies: list[dict[str, Any]] = []
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(path))
        stream = sock.makefile("rb")

        def read() -> None:
            replies.extend(json.loads(stream.readline()) for _ in words)

        reader = threading.Thread(target=read)
        reader.start()
        sock.sendall(b"".join(json.dumps({"command": w[0], "args": w[1:]}).encode() + b"\n"
                              for w in words))
        reader.join(timeout=600)
    return replies


def floods(path: Path, connections: list[list[list[str]]]) -> list[dict[str, Any]]:
    """`flood` on several connections at once: each waits for its fsynced replies, the
    daemon takes the others' commands meanwhile."""
    replies: list[list[dict[str, Any]]] = [[] for _ in connections]
    threads = [threading.Thread(target=lambda i=i, w=words: replies[i].extend(flood(path, w)))
               for i, words in enumerate(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    return [reply for some in replies for reply in some]


def test_a_match_of_26000_commands_is_restored_after_a_sigkill(home: Path) -> None:
    """Fails on the old code: the journal grew past 4 MB, was set aside as `.big` and the
    restarted daemon was idle. The resumes and pauses go in a row on one connection (so that
    each finds the clock as it expects), the `teams` on three others; in real time, a 600 s
    period: the match is still on at the kill."""
    profile = home / "long.toml"
    profile.write_text(SHORT_PROFILE.replace("period_s = 34", "period_s = 600"))
    with Daemon(home, "--profile", str(profile), *UNLIMITED, speed=1.0).ready() as daemon:
        daemon.command("start")
        daemon.wait_signal("start")
        daemon.command("goal", "home", "9")
        daemon.command("pause")
        pairs = [["resume"], ["pause"]] * PAIRS
        teams = [["teams", f"{NAME[:-5]}{n:05d}", NAME, NAME] for n in range(TEAMS)]
        replies = floods(daemon.socket, [pairs, *(teams[i::3] for i in range(3))])
        assert len(replies) == 2 * PAIRS + TEAMS
        assert all(r["ok"] for r in replies), next(r for r in replies if not r["ok"])
        before = daemon.command("status")
        journal = home / "state" / JOURNAL_NAME
        kinds = [json.loads(line)["type"] for line in journal.read_bytes().splitlines()]
        daemon.stop(signal.SIGKILL)
    with Daemon(home, *UNLIMITED).ready() as daemon:
        after = daemon.command("status")
    assert not (home / "state" / (JOURNAL_NAME + ".big")).exists()
    assert after["recovery"]["outcome"] == "restored"
    for key in ("phase", "score", "remaining_s", "interruptions", "teams", "match_id"):
        assert after[key] == before[key], key
    assert before["phase"] == "paused"
    assert before["interruptions"] >= PAIRS
    assert kinds[:2] == ["match", "snapshot"]
    assert len(kinds) < 2 * COMPACT_LINES
