"""End to end: the daemon as a subprocess, scored with `timerctl`, writing its results file."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from queue import Empty, Queue
from typing import IO, Any

import pytest

from tests.hall_rig import wait_until
from timerd import cli

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 10.0


class Lines:
    """Reads a pipe in a thread so the test can wait for a line with a timeout."""

    def __init__(self, pipe: IO[str]) -> None:
        self.queue: Queue[str] = Queue()
        threading.Thread(target=self._pump, args=(pipe,), daemon=True).start()

    def _pump(self, pipe: IO[str]) -> None:
        for line in pipe:
            self.queue.put(line)

    def wait_for(self, text: str) -> str:
        while True:
            try:
                line = self.queue.get(timeout=TIMEOUT_S)
            except Empty:
                pytest.fail(f"no line with {text!r} within {TIMEOUT_S} s")
            if text in line:
                return line


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[Path, Path, Lines, Lines]]:
    sock, results = tmp_path / "control.sock", tmp_path / "results.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "timerd", "run", "--simulate", "--speed", "100",
         "--events", "-", "--control", str(sock), "--profile", "ithf",
         "-o", f'results.path="{results}"', "-o", "web.host=127.0.0.1", "-o", "web.port=0"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        text=True)
    assert proc.stdout is not None
    assert proc.stderr is not None
    events, log = Lines(proc.stdout), Lines(proc.stderr)
    try:
        log.wait_for("timerd ready")
        yield sock, results, events, log
    finally:
        proc.terminate()
        proc.wait(timeout=TIMEOUT_S)


def ctl(sock: Path, *words: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.timerctl(["--socket", str(sock), *words])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_timerctl_scores_a_match_and_the_result_is_written(
        daemon: tuple[Path, Path, Lines, Lines], capsys: pytest.CaptureFixture[str]) -> None:
    sock, results, events, _ = daemon
    assert ctl(sock, "start", capsys=capsys)[0] == 0
    events.wait_for('"signal": "start"')
    assert ctl(sock, "pause", capsys=capsys)[0] == 0
    code, out = ctl(sock, "goal", "home", capsys=capsys)  # ITHF 10.3: not while paused
    assert code == cli.EXIT_NOT_COUNTED  # taken, not counted: said first (issue 30 item 11)
    # What the command did, in one line (issue 46 item 6), and the verdict on stderr.
    line, = (s for s in out.splitlines() if not s.startswith("timerctl:"))
    assert line.startswith("goal Home NOT counted: match interrupted (ITHF 10.3) - paused ")
    assert line.endswith(", Home 0:0 Away")
    assert "timerctl: no goal: match interrupted (ITHF 10.3)" in out
    goal: dict[str, Any] = json.loads(events.wait_for('"type": "goal"'))
    assert (goal["side"], goal["counted"], goal["reason"]) == ("home", False, "interruption")
    code, out = ctl(sock, "forfeit", "away", "now", capsys=capsys)
    assert code == cli.EXIT_REFUSED
    assert "forfeit refused: it takes <home|away>, got 2" in out
    assert ctl(sock, "resume", "faceoff", capsys=capsys)[0] == 0
    code, out = ctl(sock, "walkout", "away", capsys=capsys)
    assert code == 0
    assert out.count("\n") == 1
    assert "Home 5:0 Away" in out
    assert out.endswith("Home 5:0 Away, walkout, winner Home\n")  # ITHF 4.7: away walked out
    events.wait_for('"state": "finished"')
    # Written on the disk writer's thread behind the walk-out's journal line (issue 13).
    line = wait_until(lambda: (results.exists() and results.read_text()) or None, 10,
                      "the result")
    record = json.loads(line)
    assert (record["how"], record["side"], record["score"]) == (
        "walkout", "away", {"home": 5, "away": 0})
    assert len(record["interruptions"]) == 1
