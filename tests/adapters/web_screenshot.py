"""Take the scoreboard screenshots in docs/: the real page of a real daemon, in headless chromium.

    python tests/adapters/web_screenshot.py docs/scoreboard.png \
        --desk docs/desk-phone.png --paused docs/scoreboard-paused.png
    python tests/adapters/web_screenshot.py --isbhf docs/scoreboard-isbhf.png \
        --desk docs/desk-isbhf-phone.png --paused docs/scoreboard-isbhf-paused.png
    python tests/adapters/web_screenshot.py --overlay docs/overlay
    python tests/adapters/web_screenshot.py --hall-overlay docs/hall-overlay-grid.png

Both shoot the kiosk page as a hall TV shows it (720p); `--desk` the score desk on a 360x640
phone in the same state, `--paused` the TV and the phone's scoreboard (`-phone` added to the
name) after a pause (in ball hockey the whistle's stop). The first runs a simulated ITHF match
at ten times speed, with goals entered, and shoots it in the last 30 seconds. The second runs
ISBHF ball hockey at a hundred times speed through the first period and the intermission, then
stops the second period's clock to enter goals, penalties (two running for home and a third
one waiting) and the away team's timeout, and shoots the second period running again.

The third shoots the stream overlay (`/overlay`) on a transparent 1080p frame, each part cut
to its box with room for its shadow: `-third.png` (ball hockey before the start), `-bug.png`
(after a goal and a minor: the power play), `-bar.png` (the same as a bar, short names, in the
top-right corner), `-card.png` (table hockey's result card after a regular match at a hundred
times speed).

The fourth shoots `timerd hall board`'s round on stream as a grid in the top-right corner,
six tables' retained states (running, paused, finished, a scheduled start) on a real
mosquitto.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # web_harness takes tests/conftest
from web_harness import CHROMIUM, CHROMIUM_ARGS, Daemon, wait_clock_at_most

#: A stopped clock's label: PAUSED (ITHF 10.1), or TIME STOPPED under net time (ISBHF 407).
STOPPED = re.compile("^(PAUSED|TIME STOPPED) ")
#: How long the ball hockey scene may take to reach the second period (real seconds).
ISBHF_TIMEOUT_MS = 60_000


def command(daemon: Daemon, *args: str) -> None:
    status, reply = daemon.command(*args)
    if status != 200:
        raise SystemExit(f"{' '.join(args)}: {reply}")


def ithf_scene(page: Page, daemon: Daemon) -> None:
    """ITHF 4.4: the last 30 s highlighted; goals entered a while apart (5.6: not within 3 s
    of a faceoff)."""
    command(daemon, "start")
    for side, at_most_s in (("home", 280), ("away", 240), ("home", 150)):
        wait_clock_at_most(page, at_most_s, timeout_ms=60_000)
        command(daemon, "goal", side)
    wait_clock_at_most(page, 28, timeout_ms=60_000)


def isbhf_scene(page: Page, daemon: Daemon) -> None:
    """ISBHF: the second period (ends switched, 401) with penalties running and waiting."""
    command(daemon, "start")
    expect(page.locator("#phase")).to_have_text("Intermission", timeout=ISBHF_TIMEOUT_MS)
    expect(page.locator("#phase")).to_have_text("Ready", timeout=ISBHF_TIMEOUT_MS)
    command(daemon, "start")  # the faceoff of the second period
    wait_clock_at_most(page, 14 * 60 + 50)
    # The whistle; goals count in the stoppage (ISBHF 407), penalties wait for the faceoff.
    for args in (["stop"], ["goal", "home", "17", "4"], ["goal", "away", "22"],
                 ["goal", "home", "9"], ["penalty", "home", "minor", "17"],
                 ["penalty", "home", "minor", "4"], ["penalty", "away", "major", "22"],
                 ["penalty", "home", "minor", "9"], ["timeout", "away"], ["start"]):
        command(daemon, *args)
    wait_clock_at_most(page, 14 * 60 + 20)


def shoot_part(page: Page, selector: str, out: Path) -> None:
    """`selector`'s box (and its shadow) on a transparent background, as a stream gets it."""
    page.wait_for_function("(selector) => { const el = document.querySelector(selector);"
                           " return el && !el.hidden && !el.getAnimations({ subtree: true })"
                           ".some((a) => a.playState === 'running'); }", arg=selector)
    box = page.locator(selector).bounding_box()
    assert box is not None
    pad = 30
    page.screenshot(path=str(out), omit_background=True, clip={
        "x": max(0, box["x"] - pad), "y": max(0, box["y"] - pad),
        "width": box["width"] + 2 * pad, "height": box["height"] + 2 * pad})


def overlay_shots(stem: Path) -> None:
    """The overlay's parts (see the module's docstring), each as `stem`-part.png."""
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        daemon = Daemon(Path(tmp) / "isbhf", speed=20, profile="isbhf",
                        extra_config='[table]\nname = "Table 3"\n')
        daemon.tmp.mkdir()
        daemon.start()
        try:
            command(daemon, "teams", "HK Olimpija Ljubljana", "HC Košice", "Final")
            page.goto(f"{daemon.url}/overlay")
            shoot_part(page, "#third", stem.with_name(f"{stem.name}-third.png"))
            for args in (["start"], ["stop"], ["goal", "home", "17"],
                         ["penalty", "away", "minor", "22"], ["start"]):
                command(daemon, *args)
            expect(page.locator("#tags .power")).to_be_visible()
            wait_clock_at_most(page, 14 * 60 + 52)
            expect(page.locator("#goal")).to_be_hidden()  # the goal's strip has gone
            shoot_part(page, "#bug", stem.with_name(f"{stem.name}-bug.png"))
            page.goto(f"{daemon.url}/overlay?layout=bar&corner=tr&names=short")
            shoot_part(page, "#bug", stem.with_name(f"{stem.name}-bar.png"))
        finally:
            daemon.stop()
        daemon = Daemon(Path(tmp) / "ithf", speed=100, profile="ithf")
        daemon.tmp.mkdir()
        daemon.start()
        try:
            command(daemon, "teams", "Jana Novak", "Peter Horvat", "QF 1")
            page.goto(f"{daemon.url}/overlay")
            command(daemon, "start")
            for side, at_most_s in (("home", 250), ("away", 200), ("home", 100)):
                wait_clock_at_most(page, at_most_s, timeout_ms=60_000)
                command(daemon, "goal", side)
            expect(page.locator("#card")).to_be_visible(timeout=60_000)
            shoot_part(page, "#card", stem.with_name(f"{stem.name}-card.png"))
        finally:
            daemon.stop()
        browser.close()


def hall_overlay_shot(out: Path) -> None:
    """The hall board's /overlay, a grid of six tables (see the module's docstring)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.hall_rig import Broker, Observer  # noqa: PLC0415 (the hall's rig, here only)
    from tests.tools.test_hall_board import BoardProcess  # noqa: PLC0415

    sides = [("Jana Novak", "Peter Horvat"), ("Åsa Müller", "Jiří Novák"),
             ("Luka Kranjc", "Marek Hudák"), ("Tina Zupan", "Eva Kováčová"),
             ("Nina Oberhuber", "Ivan Petrov"), ("Ana Kos", "Mia Bor")]
    phases = ["running", "paused", "running", "finished", "scheduled", "running"]
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        broker = Broker(Path(tmp))
        broker.start()
        observer = Observer(broker.port)
        for number, ((home, away), phase) in enumerate(zip(sides, phases, strict=True), 1):
            state = {"phase": phase, "wall": time.time(),
                     "score": {"home": number % 4, "away": number * 7 % 5},
                     "clock_face": {"kind": "countdown", "value_s": 187.0 - 20 * number},
                     "start_in_s": 65.0 if phase == "scheduled" else None,
                     "teams": {"home": home, "away": away}, "hall": {"round": "QF"}}
            base = f"timerd/hall/tables/T{number}"
            observer.client.publish(f"{base}/status", b"online", qos=1, retain=True)
            observer.client.publish(f"{base}/state", json.dumps(state).encode(), qos=1,
                                    retain=True).wait_for_publish(5)
        board = BoardProcess(broker, Path(tmp))
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            page.goto(f"{board.url}/overlay?layout=grid&corner=tr")
            expect(page.locator(".r-item")).to_have_count(len(sides))
            shoot_part(page, "#round", out)
        finally:
            browser.close()
            board.stop()
            observer.close()
            broker.stop()


PHONE = {"width": 360, "height": 640}
TV = {"width": 1280, "height": 720}


def shoot(page: Page, out: Path) -> None:
    """A screenshot once the signal's flash is over, taken again if a signal flashed while
    it was taken (at a hundred times speed the signals come fast)."""
    flashing = "document.body.classList.contains('flash')"
    for _ in range(10):
        page.wait_for_function(f"!{flashing}")
        page.screenshot(path=str(out))
        if not page.evaluate(flashing):
            return


def main(out: Path, isbhf: bool, desk: Path | None, paused: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        daemon = Daemon(Path(tmp), speed=100 if isbhf else 10,
                        profile="isbhf" if isbhf else "ithf").start()
        try:
            command(daemon, "teams", *(("HK Olimpija", "HC Košice", "2")
                                       if isbhf else ("Jana Novak", "Peter Horvat", "QF 1")))
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                                     args=CHROMIUM_ARGS)
                page = browser.new_page(viewport=TV)
                page.goto(f"{daemon.url}/?kiosk=1")
                (isbhf_scene if isbhf else ithf_scene)(page, daemon)
                command(daemon, "pause" if not isbhf else "stop")
                expect(page.locator("#phase")).to_have_text(STOPPED)
                if paused is not None:
                    shoot(page, paused)
                    phone = browser.new_page(viewport=PHONE)
                    phone.goto(f"{daemon.url}/")
                    expect(phone.locator("#phase")).to_have_text(STOPPED)
                    shoot(phone, paused.with_name(f"{paused.stem}-phone.png"))
                command(daemon, "start")
                expect(page.locator("#phase")).not_to_have_text(STOPPED)
                shoot(page, out)
                if desk is not None:
                    context = browser.new_context(viewport=PHONE)
                    context.add_init_script(
                        f"localStorage.setItem('timerd.token', '{daemon.token}')")
                    phone = context.new_page()
                    phone.goto(f"{daemon.url}/control")
                    expect(phone.locator("button[data-command=toggle]")).to_be_visible()
                    shoot(phone, desk)
                browser.close()
        finally:
            daemon.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--isbhf", action="store_true", help="the ball hockey scene")
    parser.add_argument("--desk", type=Path, help="the score desk on a phone, here")
    parser.add_argument("--paused", type=Path, help="the scoreboard paused, here")
    parser.add_argument("--overlay", action="store_true",
                        help="the stream overlay's parts, as OUT-third.png, OUT-bug.png...")
    parser.add_argument("--hall-overlay", action="store_true",
                        help="the hall board's round on stream, as a grid")
    parser.add_argument("out", type=Path)
    options = parser.parse_args()
    if options.hall_overlay:
        hall_overlay_shot(options.out)
    elif options.overlay:
        overlay_shots(options.out)
    else:
        main(options.out, options.isbhf, options.desk, options.paused)
