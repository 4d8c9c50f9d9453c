"""The debug-mode run of the service and adapter tests fails a test whose loop was blocked
(issue 44 item 4, tests/loop_debug.py): the planted breach is a callback that sleeps."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.loop_debug import SLOW_S

PROJECT = Path(__file__).resolve().parents[1]

BLOCKED = f'''
import asyncio
import time


def test_a_callback_blocks_the_loop() -> None:
    async def main() -> None:
        asyncio.get_running_loop().call_soon(time.sleep, {SLOW_S * 2})
        await asyncio.sleep(0.01)

    asyncio.run(main())


def test_a_quick_loop() -> None:
    asyncio.run(asyncio.sleep(0.01))
'''


def run(tmp_path: Path, debug: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_blocked.py").write_text(BLOCKED)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(PROJECT / "pyproject.toml"),
         "-p", "tests.loop_debug", "-p", "no:cacheprovider", str(tmp_path / "test_blocked.py")],
        cwd=PROJECT, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "TIMERD_LOOP_DEBUG": debug, "PYTHONPATH": str(PROJECT)})


def test_a_blocked_loop_fails_its_test_in_the_debug_run(tmp_path: Path) -> None:
    """Fails on the old code: nothing watched the loop, and both tests passed."""
    debug = run(tmp_path, "1")
    assert debug.returncode == 1, debug.stdout
    # Failed at its teardown (an error of that test), once its loop has told.
    assert "ERROR ::test_a_callback_blocks_the_loop - Failed: the loop was blocked" \
        in debug.stdout, debug.stdout
    assert "2 passed, 1 error" in debug.stdout
    ordinary = run(tmp_path, "0")  # the ordinary run does not watch
    assert (ordinary.returncode, "2 passed in" in ordinary.stdout) == (0, True), ordinary.stdout
