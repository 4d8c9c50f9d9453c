"""The daemon carries an optional adapter's library only when the config switches it on
(issue 16: peak RSS; timerd/app.py). aiohttp alone adds some 15 MB to the daemon."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_the_composition_root_imports_no_optional_library() -> None:
    probe = ("import sys, timerd.app, timerd.cli; "
             "print(' '.join(m for m in ('aiohttp', 'aiomqtt', 'paho', 'serial', 'termios') "
             "if m in sys.modules))")
    found = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.split()
    assert found == []
