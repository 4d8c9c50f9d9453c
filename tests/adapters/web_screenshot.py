"""Take docs/scoreboard.png: the real scoreboard of a real daemon, in headless chromium.

    python tests/adapters/web_screenshot.py docs/scoreboard.png

Runs a simulated ITHF match at ten times speed and shoots the kiosk page (as on a hall TV,
720p) in the last 30 seconds, about half a minute after the start.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright
from web_harness import CHROMIUM, CHROMIUM_ARGS, Daemon, wait_clock_at_most


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        daemon = Daemon(Path(tmp), speed=10).start()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                                     args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                page.goto(f"{daemon.url}/?kiosk=1")
                daemon.command("start")
                wait_clock_at_most(page, 28, timeout_ms=60_000)
                page.wait_for_function("!document.body.classList.contains('flash')")
                page.screenshot(path=str(out))
                browser.close()
        finally:
            daemon.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
