"""The hall board (`timerd hall board`) in Debian's headless chromium, against real tables on a
real mosquitto, and 40 tables' retained states for the layout.

Every wait is on a condition in the page with a timeout; nothing sleeps to let time pass. How
fast a change reaches the screen is measured by bench/hall_skew.py, not asserted here: a
loaded 2-core machine would make a 200 ms assertion flaky.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.adapters.web_harness import (
    alpha,
    browser_fixture,  # noqa: F401 (the `browser` fixture)
)
from tests.hall_rig import ROOT, Broker, Observer, running_tables, wait_until
from timerd.i18n import Messages
from timerd.tools.hall_board import BOARD_VERSION

#: Real processes, a broker or a browser, and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e


def page_of(browser: Browser, width: int, height: int) -> Page:
    page = browser.new_page(viewport={"width": width, "height": height})
    page.on("pageerror", lambda exc: pytest.fail(f"script error in the board: {exc}"))
    return page


class BoardProcess:
    """`timerd hall board` as a process, on a free loopback port."""

    def __init__(self, broker: Broker, directory: Path, hall: str = "hall",
                 *overrides: str) -> None:
        log = (directory / f"board-{hall}.log").open("wb")
        # Any free port, the one it took read from its line: a port picked free here and
        # bound by the board a second later could be another process's by then.
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "timerd", "hall", "board", "--port", "0",
             "-o", f"hall.port={broker.port}", "-o", 'hall.host="127.0.0.1"',
             "-o", "hall.allow_anonymous=true",
             "-o", f'hall.hall="{hall}"', *(a for o in overrides for a in ("-o", o))],
            cwd=ROOT, stdout=log, stderr=log)
        log.close()
        self.log = directory / f"board-{hall}.log"
        self.port = int(wait_until(self.bound, 30, "the board's HTTP port"))
        self.url = f"http://127.0.0.1:{self.port}"

    def bound(self) -> str | None:
        """The port of the URL the board says it serves on (its line speaks the desk's
        language, issue 46; the URL is the same in each), once it serves."""
        if self.proc.poll() is not None:
            raise RuntimeError(f"the board exited: {self.log.read_text()}")
        said = re.search(r"http://127\.0\.0\.1:(\d+)/", self.log.read_text(errors="replace"))
        return said[1] if said else None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


def desk(broker: Broker, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "timerd", "hall", *args, "-o", f"hall.port={broker.port}",
         "-o", 'hall.host="127.0.0.1"',
         "-o", "hall.allow_anonymous=true"], cwd=ROOT, capture_output=True, text=True, timeout=60,
        check=False)


def test_the_board_shows_real_tables_and_follows_them(
        mosquitto: Broker, tmp_path: Path, browser: Browser) -> None:
    schedule = tmp_path / "round.csv"
    schedule.write_text("round,table,home,away\nR1,a1,Åsa Müller,Jiří Novák\n"
                        "R1,a2,Łukasz Żółw,Søren Ødegård\n", encoding="utf-8")
    with running_tables(mosquitto, tmp_path, ("a1", "a2"), period_s=60, lead_s=0.3):
        board = BoardProcess(mosquitto, tmp_path)
        page = page_of(browser, 1280, 720)
        try:
            page.goto(f"{board.url}/")
            expect(page.locator("#link")).to_have_text("live")
            cards = page.locator(".card")
            expect(cards).to_have_count(2)
            a1 = page.locator('.card[data-table="a1"]')
            expect(a1.locator(".c-label")).to_have_text("ready")
            expect(a1.locator(".c-clock")).to_have_text("1:00")  # the table's clock face
            expect(a1.locator(".c-warn")).to_contain_text("clock sync unknown")

            assert desk(mosquitto, "round", "load", str(schedule)).returncode == 0
            expect(a1.locator(".c-home")).to_have_text("Åsa Müller")
            expect(page.locator('.card[data-table="a2"] .c-away')).to_have_text("Søren Ødegård")

            assert desk(mosquitto, "start-round", "--in", "1s").returncode == 0
            expect(a1.locator(".c-label")).to_have_text("running", timeout=15_000)
            expect(a1).to_have_attribute("data-phase", "running")  # the colour, too
            expect(a1.locator(".c-clock")).to_have_text(re.compile(r"^0:5\d$"))
            expect(a1.locator(".c-seen")).to_contain_text("R1")

            assert desk(mosquitto, "pause").returncode == 0
            expect(a1.locator(".c-label")).to_have_text("paused")
            expect(a1).to_have_attribute("data-phase", "paused")
            document = json.loads(page.evaluate("fetch('/api/board').then(r => r.text())"))
            assert document["version"] == BOARD_VERSION
            assert [t["table"] for t in document["tables"]] == ["a1", "a2"]
        finally:
            page.close()
            board.stop()
    # The tables are gone (a clean stop says "offline"): a new board shows them as such.
    board = BoardProcess(mosquitto, tmp_path)
    page = page_of(browser, 1280, 720)
    try:
        page.goto(f"{board.url}/")
        expect(page.locator('.card[data-table="a1"] .c-label')).to_have_text("OFFLINE")
    finally:
        page.close()
        board.stop()


def retained_table(observer: Observer, hall: str, name: str, phase: str) -> None:
    """A table's retained status and state, as a table publishes them (a running match)."""
    base = f"timerd/{hall}/tables/{name}"
    observer.client.publish(f"{base}/status", b"online", qos=1, retain=True)
    state: dict[str, Any] = {
        "phase": phase, "wall": time.time(), "score": {"home": 3, "away": 12},
        "clock_face": {"kind": "countdown", "value_s": 187.0, "text": "3:07"},
        "teams": {"home": "Maximilian Oberhuber-Schwarzenbach", "away": "Åsa Müller"},
        "hall": {"round": "Semifinal 2", "clock": {"synced": False, "offset_ms": 31.5}}}
    observer.client.publish(f"{base}/state", json.dumps(state).encode(), qos=1,
                            retain=True).wait_for_publish(5)


def card_boxes(page: Page) -> list[dict[str, float]]:
    result: list[dict[str, float]] = page.evaluate("""() => [...document.querySelectorAll('.card')]
        .map((c) => { const r = c.getBoundingClientRect();
                      const clock = c.querySelector('.c-clock');
                      return {left: r.left, top: r.top, right: r.right, bottom: r.bottom,
                              width: r.width,
                              clock_px: parseFloat(getComputedStyle(clock).fontSize),
                              overflow: c.scrollHeight > c.clientHeight + 1
                                        || clock.scrollWidth > clock.clientWidth + 1}; })""")
    return result


@pytest.mark.parametrize(("hall", "tables"), [("big", 40), ("small", 4)])
def test_the_board_fits_the_hall_on_a_1920x1080_screen(
        mosquitto: Broker, tmp_path: Path, browser: Browser, hall: str, tables: int) -> None:
    observer = Observer(mosquitto.port)
    for number in range(1, tables + 1):
        retained_table(observer, hall, f"{number:02}", "running" if number % 3 else "paused")
    board = BoardProcess(mosquitto, tmp_path, hall)
    page = page_of(browser, 1920, 1080)
    try:
        page.goto(f"{board.url}/?kiosk=1")
        expect(page.locator(".card")).to_have_count(tables)
        expect(page.locator("header")).to_be_hidden()  # kiosk: the cards only
        page.wait_for_function("document.querySelector('#tables').style"
                               ".getPropertyValue('--cols') !== ''")
        boxes = card_boxes(page)
        assert all(b["left"] >= 0 and b["top"] >= 0 and b["right"] <= 1920
                   and b["bottom"] <= 1080 for b in boxes), "a card is off the screen"
        assert not [b for b in boxes if b["overflow"]], "a card's content does not fit"
        assert page.evaluate("document.documentElement.scrollHeight") <= 1080
        # Fewer tables reflow into bigger cards: readable from across the hall either way.
        width = min(b["width"] for b in boxes)
        assert width > (200 if tables == 40 else 800), width
        assert min(b["clock_px"] for b in boxes) >= (36 if tables == 40 else 120)
        expect(page.locator('.card[data-table="03"] .c-label')).to_have_text("paused")
        expect(page.locator('.card[data-table="01"] .c-warn')).to_have_text(
            "clock not synchronised")
    finally:
        page.close()
        board.stop()
        observer.close()


def counting_table(observer: Observer, name: str, phase: str, start_in_s: float) -> None:
    """A table's retained state while it counts down to its start signal."""
    state = {"phase": phase, "wall": time.time(), "start_in_s": start_in_s,
             "score": {"home": 0, "away": 0}, "remaining_s": 300.0,
             "clock_face": {"kind": "countdown", "value_s": 300.0, "text": "5:00"},
             "teams": {"home": "Maximilian Oberhuber-Schwarzenbach", "away": "Åsa Müller"},
             "hall": {"round": "Semifinal 2", "clock": {"synced": True, "offset_ms": 0.3}}}
    base = f"timerd/count/tables/{name}"
    observer.client.publish(f"{base}/status", b"online", qos=1, retain=True)
    observer.client.publish(f"{base}/state", json.dumps(state).encode(), qos=1,
                            retain=True).wait_for_publish(5)


def clocks_fit(page: Page) -> list[str]:
    """Each card whose clock line is wider than the card, or whose content is taller."""
    result: list[str] = page.evaluate("""() => [...document.querySelectorAll('.card')]
        .filter((c) => { const face = c.querySelector('.c-face'), r = c.getBoundingClientRect(),
                                clock = c.querySelector('.c-clock').getBoundingClientRect();
                         return face.scrollWidth > face.clientWidth + 1
                           || clock.right > r.right + 1 || clock.left < r.left - 1
                           || c.scrollHeight > c.clientHeight + 1; })
        .map((c) => `${c.dataset.table}: ${c.querySelector('.c-clock').textContent}`)""")
    return result


def test_the_start_countdown_reads_m_ss_and_fits_its_card_at_every_card_size(
        mosquitto: Broker, tmp_path: Path, browser: Browser) -> None:
    """Issue 30 item 6. Old code: the card's big clock said "start in 754 s", wider than
    the card once the cards were small."""
    observer = Observer(mosquitto.port)
    counting_table(observer, "01", "scheduled", 754.2)
    board = BoardProcess(mosquitto, tmp_path, "count")
    page = page_of(browser, 1920, 1080)
    try:
        page.goto(f"{board.url}/?kiosk=1")
        expect(page.locator('.card[data-table="01"] .c-clock')).to_have_text(
            re.compile(r"^1[12]:\d\d$"), timeout=20_000)  # 754 s, less the start-up
        tables = 1
        for count in (2, 3, 4, 6, 9, 16, 25, 40, 64):
            for number in range(tables + 1, count + 1):
                counting_table(observer, f"{number:02}", "pre_signal" if number % 2 else
                               "scheduled", 9.46 if number % 2 else 600.0 + number)
            tables = count
            expect(page.locator(".card")).to_have_count(count, timeout=20_000)
            for width, height in ((1920, 1080), (1280, 720), (1024, 600), (800, 480)):
                page.set_viewport_size({"width": width, "height": height})
                page.wait_for_function("document.querySelector('#tables').style"
                                       ".getPropertyValue('--cols') !== ''")
                assert clocks_fit(page) == [], (count, width, height)
        texts = page.locator(".c-clock").all_text_contents()
        assert all(re.fullmatch(r"\d+:\d\d|\d\.\d", text) for text in texts), texts
    finally:
        page.close()
        board.stop()
        observer.close()


@pytest.mark.parametrize(("lang", "words"), [
    ("en", ("ready", "1 of 1 tables online", "clock not synchronised")),
    ("sl", ("pripravljeno", "povezanih miz: 1 od 1", "ura ni usklajena")),
    ("sk", ("pripravené", "pripojené stoly: 1 z 1", "hodiny nie sú zosynchronizované")),
])
def test_the_board_speaks_the_scoreboards_languages(
        mosquitto: Broker, tmp_path: Path, browser: Browser, lang: str,
        words: tuple[str, str, str]) -> None:
    """Issue 30 item 6. Old code: every word on the board was English."""
    ready, count, warning = words
    observer = Observer(mosquitto.port)
    retained_table(observer, "words", "01", "idle")
    board = BoardProcess(mosquitto, tmp_path, "words")
    page = page_of(browser, 1280, 720)
    try:
        page.goto(f"{board.url}/?lang={lang}")
        card = page.locator('.card[data-table="01"]')
        expect(card.locator(".c-label")).to_have_text(ready)
        expect(page.locator("#count")).to_have_text(count)
        expect(card.locator(".c-warn")).to_have_text(warning)
        assert page.evaluate("document.documentElement.lang") == lang
    finally:
        page.close()
        board.stop()
        observer.close()


#: In the round overlay: the box around everything of the round (the label, every table's
#: item), in CSS pixels.
ROUND_BOXES = """() => [...document.querySelectorAll("#round, #round *")]
  .map((el) => el.getBoundingClientRect()).filter((r) => r.width > 0 && r.height > 0)
  .reduce((box, r) => ({ left: Math.min(box.left, r.left), top: Math.min(box.top, r.top),
    right: Math.max(box.right, r.right), bottom: Math.max(box.bottom, r.bottom) }),
    { left: Infinity, top: Infinity, right: -Infinity, bottom: -Infinity })"""


def test_the_round_on_stream_shows_every_table_over_a_transparent_page(
        mosquitto: Broker, tmp_path: Path, browser: Browser) -> None:
    """Issue 45 item 2: `timerd hall board`'s /overlay, a ticker along the bottom (or a grid in
    a corner) with every table's names, goals and clock, the round's name, and nothing else
    painted: the screenshot's pixels outside it have alpha 0."""
    observer = Observer(mosquitto.port)
    for number in range(1, 5):
        retained_table(observer, "stream", f"{number:02}", "paused" if number == 2 else "running")
    board = BoardProcess(mosquitto, tmp_path, "stream")
    page = page_of(browser, 1920, 1080)
    try:
        page.goto(f"{board.url}/overlay?lang=sk")
        items = page.locator(".r-item")
        expect(items).to_have_count(4)
        first = page.locator('.r-item[data-table="01"]')
        expect(first.locator(".r-table")).to_have_text("01")
        expect(first.locator(".home .r-goals")).to_have_text("3")
        expect(first.locator(".away .r-goals")).to_have_text("12")
        expect(first.locator(".away .r-name")).to_have_text("Åsa Müller")
        expect(first.locator(".r-clock")).to_have_text(re.compile(r"^3:0\d$"))
        expect(page.locator('.r-item[data-table="02"]')).to_have_class(re.compile(r"\br-paused\b"))
        expect(page.locator("#round-label")).to_have_text("Kolo Semifinal 2")  # Slovak
        ticker = page.locator("#round").bounding_box()
        assert ticker is not None
        assert ticker["y"] + ticker["height"] > 1080 * 0.9, ticker  # along the bottom edge
        assert ticker["width"] > 1920 * 0.8, ticker
        # Four tables of long names are wider than the screen: the ticker crawls.
        expect(page.locator("#round-tables")).to_have_class(re.compile(r"\bcrawl\b"))
        inner = {"left": ticker["x"] + 2, "top": ticker["y"] + 2,
                 "right": ticker["x"] + ticker["width"] - 2,
                 "bottom": ticker["y"] + ticker["height"] - 2}
        # Everything the round paints (a crawling ticker's items beyond the screen too), with
        # a pixel for the anti-aliased edges.
        seen = alpha(browser, page.screenshot(omit_background=True),
                     page.evaluate(ROUND_BOXES), inner, margin=1)
        assert seen["outside"] == 0, (seen, ticker)  # the camera picture shows around it
        assert seen["opaque"] >= 0.9, seen  # and the ticker covers it where it is

        page.goto(f"{board.url}/overlay?layout=grid&corner=top-left")
        expect(items).to_have_count(4)
        grid = page.evaluate(ROUND_BOXES)
        assert grid["left"] < 1920 * 0.1, grid
        assert grid["top"] < 1080 * 0.1, grid
        assert grid["right"] < 1920 * 0.6, grid  # a corner, not the whole width
        rows = page.evaluate("[...document.querySelectorAll('.r-item')].map((el) => "
                             "el.querySelector('.away .r-goals').getBoundingClientRect().left)")
        assert max(rows) - min(rows) < 1, rows  # one column of goals down the grid
    finally:
        page.close()
        board.stop()
        observer.close()


def test_the_tv_shows_the_rounds_other_tables_along_its_bottom(
        mosquitto: Broker, tmp_path: Path, browser: Browser) -> None:
    """Issue 45 item 3: in hall mode the table's TV (`/?kiosk=1&board=BOARD`) uses the room
    under its boxes for the round's other tables, the hall board's round on stream along the
    bottom, below everything of its own match."""
    from tests.adapters.web_harness import Daemon  # noqa: PLC0415 (a table's own daemon)

    observer = Observer(mosquitto.port)
    for number in range(1, 4):
        retained_table(observer, "tv", f"{number:02}", "running")
    board = BoardProcess(mosquitto, tmp_path, "tv")
    (tmp_path / "table").mkdir()
    table = Daemon(tmp_path / "table", speed=2, profile="isbhf").start()
    page = page_of(browser, 1920, 1080)
    try:
        for command in (["teams", "HC Olimpija Ljubljana", "HC Košice", "2"], ["start"],
                        ["stop"], ["penalty", "home", "minor", "17"],
                        ["penalty", "home", "minor", "4"], ["penalty", "away", "major", "22"],
                        ["timeout", "away"]):
            assert table.command(*command)[0] == 200, command
        page.goto(f"{table.url}/?kiosk=1&board={board.url}")
        round_ = page.frame_locator("#round")
        expect(round_.locator(".r-item")).to_have_count(3)
        expect(round_.locator('.r-item[data-table="02"] .away .r-goals')).to_have_text("12")
        expect(page.locator("#timeout")).to_be_visible()
        ticker = round_.locator("#round").bounding_box()
        assert ticker is not None
        assert ticker["y"] + ticker["height"] > 1080 * 0.9, ticker  # along the bottom
        assert ticker["height"] >= 1080 * 0.05, ticker  # read from across the hall
        own = page.evaluate("Math.max(...[...document.querySelectorAll('main *')]"
                            ".filter((el) => el.offsetParent && el.textContent.trim())"
                            ".map((el) => el.getBoundingClientRect().bottom))")
        assert own <= ticker["y"], (own, ticker)  # under everything of the table's own match
    finally:
        page.close()
        table.stop()
@pytest.mark.parametrize(("desk_language", "query", "shown"), [
    ("sl", "", "sl"),  # the desk's `[ui] language` over the TV's English
    ("sk", "?lang=en", "en"),  # the page's own choice over the desk's
])
def test_the_board_says_live_in_the_pages_language_whatever_the_browsers(
        mosquitto: Broker, tmp_path: Path, browser: Browser, *, desk_language: str,
        query: str, shown: str) -> None:
    """Issue 45 item 5. Old code: the link badge said "live" in the browser's language, then
    the desk's `[ui] language` translated the page again and put back its "connecting…", for
    good."""
    observer = Observer(mosquitto.port)
    retained_table(observer, "live", "01", "idle")
    board = BoardProcess(mosquitto, tmp_path, "live", f'ui.language="{desk_language}"')
    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.on("pageerror", lambda exc: pytest.fail(f"script error in the board: {exc}"))
    try:
        page.goto(f"{board.url}/{query}")
        expect(page.locator('.card[data-table="01"] .c-label')).to_have_text(
            Messages(shown)("hall.ready"))
        expect(page.locator("#link")).to_have_text(Messages(shown)("web.live"))
        expect(page.locator("#link")).to_have_class("link up")
        assert page.evaluate("document.documentElement.lang") == shown
        board.stop()  # the desk goes: said in the page's language too
        expect(page.locator("#link")).to_have_text(Messages(shown)("hall.desk_offline"))
    finally:
        context.close()
        board.stop()
        observer.close()
