"""Every test has its own deadline (issue 44 item 2): a test that waits on a pty or a socket
that never answers fails at it (pytest-timeout, `timeout` in pyproject.toml) instead of
hanging the suite until CI's own limit, the other tests untried."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]

SILENT_PTY = '''
import os
import pty


def test_waits_on_a_pty_nobody_writes() -> None:
    master, _ = pty.openpty()
    os.read(master, 1)
'''


def test_the_suite_gives_every_test_a_deadline(pytestconfig: pytest.Config) -> None:
    options = tomllib.loads((PROJECT / "pyproject.toml").read_text())["tool"]["pytest"]
    assert 0 < float(options["ini_options"]["timeout"]) <= 900
    assert pytestconfig.pluginmanager.hasplugin("timeout")


def test_a_test_waiting_on_a_silent_pty_fails_at_its_deadline(tmp_path: Path) -> None:
    """The planted breach: a test that reads a pty nobody writes, run under the project's
    own pytest configuration with its deadline cut to 2 s. Fails on the old code, where it
    hung (here: past the 120 s this test waits for it)."""
    config = (PROJECT / "pyproject.toml").read_text()
    config, cut = re.subn(r"(?m)^timeout = .*$", "timeout = 2", config)
    assert cut == 1
    (tmp_path / "pyproject.toml").write_text(config)
    (tmp_path / "test_silent.py").write_text(SILENT_PTY)
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                          "test_silent.py"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, check=False)
    assert run.returncode == 1, run.stdout
    assert "Timeout" in run.stdout, run.stdout
    assert "1 failed" in run.stdout
