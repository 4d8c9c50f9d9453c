"""The daemon carries an optional adapter's library only when the config switches it on
(issue 16: peak RSS; timerd/app.py). aiohttp, which the web adapter used before h11 and
wsproto, alone added some 13 MB to the daemon; no part of the daemon imports it now."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: Libraries only some adapters need, and the adapter that needs each.
OPTIONAL = {"h11": "web", "wsproto": "web", "orjson": "web", "aiohttp": "web", "aiomqtt": "hall",
            "paho": "hall", "serial": "serial", "termios": "terminal", "ctypes": "speaker",
            "evdev": "keypad"}
#: Builds the daemon as `timerd run --simulate` does (app.build, gpiozero's mock pins) with the
#: config file argv[1] and the `-o` overrides after it, then names every module imported. The
#: state and runtime directories come from the test's environment (conftest).
BUILD = """
import asyncio, contextlib, sys
from pathlib import Path
from timerd import app, config
cfg = config.load(Path(sys.argv[1]), sys.argv[2:])
async def build():
    async with contextlib.AsyncExitStack() as stack:
        options = app.RunOptions(simulate=True, control=Path(sys.argv[1]).with_name("c.sock"))
        await app.build(cfg, options, app.open_pins("mock"), stack)
asyncio.run(build())
print(" ".join(sys.modules))
"""


def test_the_composition_root_imports_no_optional_library() -> None:
    probe = ("import sys, timerd.app, timerd.cli; "
             f"print(' '.join(m for m in {list(OPTIONAL)!r} if m in sys.modules))")
    found = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.split()
    assert found == []


@pytest.mark.parametrize(("switched_on", "expected"), [
    ((), []),
    (("speaker",), ["ctypes"]),
])
def test_a_built_daemon_imports_an_optional_library_only_for_an_adapter_switched_on(
        tmp_path: Path, switched_on: tuple[str, ...], expected: list[str]) -> None:
    config = tmp_path / "timerd.toml"
    config.write_text("")
    switches = [f"{part}.enabled={'true' if part in switched_on else 'false'}"
                for part in ("speaker", "web", "hall")]
    imported = subprocess.run([sys.executable, "-c", BUILD, str(config), *switches], cwd=REPO,
                              capture_output=True, text=True, check=True).stdout.split()
    assert [m for m in OPTIONAL if m in imported] == expected
