"""The scoreboard and control pages in Debian's headless chromium, against a real daemon.

Playwright drives /usr/bin/chromium (nothing is downloaded). Every wait is on a condition in
the page, with a timeout; the daemon runs `--speed 20`, so a minute of match time passes in
three real seconds.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import require
from playwright.sync_api import Browser, Page, WebSocketRoute, expect, sync_playwright
from web_harness import CHROMIUM, CHROMIUM_ARGS, CLOCK_S, SPEED, Daemon, wait_clock_at_most

from timerd.core.display import shown_clock


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    require(CHROMIUM.exists(), "Debian's chromium (/usr/bin/chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser profile (no token stored); a script error in the page fails the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == []


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(tmp_path_factory.mktemp("web-browser"), speed=SPEED).start()
    yield d
    d.stop()


def test_page_counts_down_shows_pause_and_recovers_after_a_restart(
        page: Page, tmp_path: Path) -> None:
    daemon = Daemon(tmp_path, speed=SPEED).start()
    try:
        clock, phase, link = page.locator("#clock"), page.locator("#phase"), page.locator("#link")
        page.goto(f"{daemon.url}/")
        expect(link).to_have_text("live")
        expect(clock).to_have_text("5:00")
        expect(phase).to_have_text("Ready")

        daemon.command("start")
        page.wait_for_function(
            "document.getElementById('phase').textContent.startsWith('Start in')",
            polling="raf")
        expect(phase).to_have_text("Running")
        wait_clock_at_most(page, 290)
        wait_clock_at_most(page, 280)  # and on: it counts down

        daemon.command("pause")
        expect(phase).to_have_text(re.compile(r"^Paused 0:0[2-9]"))  # the interruption counts
        frozen = clock.text_content()
        assert frozen == shown_clock(daemon.state()["remaining_s"])
        expect(phase).to_have_text(re.compile(r"^Paused 0:[1-9]\d"))  # ten more seconds
        assert clock.text_content() == frozen  # while the clock stood still
        expect(clock).to_have_class(re.compile(r"\bpaused\b"))

        daemon.stop()
        expect(link).to_have_text(re.compile("offline"))
        daemon.start()  # the same port: a restart after a crash or an update
        expect(link).to_have_text("live", timeout=10_000)
        # The restarted daemon restores the match, paused where it stood (docs/service.md),
        # and the page shows it without a reload.
        expect(phase).to_have_text(re.compile(r"^Paused"))
        expect(clock).to_have_text(frozen or "")
    finally:
        daemon.stop()


def test_kiosk_mode_hides_the_controls(page: Page, daemon: Daemon) -> None:
    page.goto(f"{daemon.url}/?kiosk=1")
    expect(page.locator("#clock")).to_have_text("5:00")
    expect(page.locator("#controls")).to_be_hidden()
    page.goto(f"{daemon.url}/")
    expect(page.locator("#clock")).to_have_text("5:00")
    expect(page.locator("#controls")).to_be_visible()


def test_page_clock_reads_like_timerd_display(page: Page, daemon: Daemon) -> None:
    """The page's shownClock and timerd.core.display.shown_clock agree on every value."""
    rng = random.Random(6)
    values = [i / 1000 for i in range(20_001)] + [i / 100 for i in range(36_001)]
    values += [n + d for n in range(700) for d in (-1e-7, -1e-9, 0, 1e-9, 1e-7)]
    values += [rng.uniform(0, 700) for _ in range(5000)] + [-1.0, -1e-9]
    page.goto(f"{daemon.url}/?kiosk=1")
    shown = page.evaluate("values => values.map(timerd.shownClock)", values)
    mismatches = [(v, s, shown_clock(v)) for v, s in zip(values, shown, strict=True)
                  if s != shown_clock(v)]
    assert mismatches == []


def push(route: WebSocketRoute, state: dict[str, Any], rate: float = 1.0) -> None:
    route.send(json.dumps({"type": "state", "state": state, "rate": rate}))


BASE_STATE: dict[str, Any] = {
    "profile": "isbhf", "phase": "paused", "period": 2, "periods": 3, "clock_running": False,
    "period_s": 900.0, "remaining_s": 421.3, "elapsed_s": 478.7, "start_in_s": None,
    "interruption_s": 3.0, "interruptions": 4, "paused_total_s": 60.0,
    "last_signal": "period_end", "last_signal_remaining_s": 0.0,
}


@pytest.fixture
def fake_stream(page: Page, daemon: Daemon) -> WebSocketRoute:
    """The scoreboard with its stream served by the test (states with keys later features add)."""
    routes: list[WebSocketRoute] = []
    # A lambda, as playwright cannot wrap a builtin such as list.append as a handler.
    page.route_web_socket(re.compile(r"/api/stream$"), lambda r: routes.append(r))  # noqa: PLW0108
    page.goto(f"{daemon.url}/")
    expect(page.locator("#link")).to_have_text("live")
    assert len(routes) == 1
    return routes[0]


def test_score_period_penalties_timeouts_and_overtime_are_shown(
        page: Page, fake_stream: WebSocketRoute) -> None:
    push(fake_stream, {**BASE_STATE, "score": {"home": 3, "away": 1}, "overtime": True,
                       "penalties": [{"side": "home", "kind": "minor", "remaining_s": 95.2,
                                      "player": 7}],
                       "timeouts": {"home": 1, "away": 0}})
    expect(page.locator("#home")).to_have_text("3")
    expect(page.locator("#away")).to_have_text("1")
    expect(page.locator("#period")).to_have_text("Period 2/3")
    expect(page.locator("#overtime")).to_be_visible()
    expect(page.locator("#penalties")).to_have_text("home #7  minor  1:36")
    expect(page.locator("#timeouts")).to_have_text("Timeouts: home 1 · away 0")
    expect(page.locator("#clock")).to_have_text("7:02")
    expect(page.locator("#last-signal")).to_have_text("Last signal: period end at 0:00")

    push(fake_stream, {**BASE_STATE, "periods": 1})  # a profile without those keys
    for hidden in ("#score", "#period", "#overtime", "#penalties", "#timeouts"):
        expect(page.locator(hidden)).to_be_hidden()


def test_clock_runs_locally_between_pushes_and_resyncs_on_each(
        page: Page, fake_stream: WebSocketRoute) -> None:
    # One push, then silence: the page must count down by itself (rate 30: 30 s per second).
    running = {**BASE_STATE, "phase": "running", "clock_running": True, "remaining_s": 45.0,
               "interruption_s": None,
               "penalties": [{"side": "away", "kind": "minor", "remaining_s": 120.0}]}
    push(fake_stream, running, rate=30)
    phase = page.locator("#phase")
    expect(phase).to_have_text("Running")
    wait_clock_at_most(page, 30)
    expect(phase).to_have_text("Last 30 s")  # the last 30 s are highlighted
    expect(page.locator("#clock")).to_have_class(re.compile(r"\blast30\b"))
    expect(page.locator("#penalties")).not_to_have_text(re.compile("2:00"))  # penalties run too
    page.wait_for_function(f"({CLOCK_S})() < 10", polling="raf")
    expect(page.locator("#clock")).to_have_text(re.compile(r"^\d\.\d$"))  # tenths in the last 10 s
    expect(page.locator("#clock")).to_have_text("0:00")  # and it stops at zero

    push(fake_stream, {**BASE_STATE, "remaining_s": 200.0, "interruption_s": 0.0})
    expect(page.locator("#clock")).to_have_text("3:20")  # re-synced to the push
    expect(phase).to_have_text(re.compile(r"^Paused 0:0\d"))

    push(fake_stream, {**BASE_STATE, "phase": "finished", "remaining_s": 0.0,
                       "interruption_s": None, "last_signal": "final"})
    expect(phase).to_have_text("Finished")
    expect(page.locator("#clock")).to_have_class(re.compile(r"\bfinished\b"))


def test_control_page_needs_the_token_once_and_asks_before_a_reset(
        page: Page, daemon: Daemon) -> None:
    page.goto(f"{daemon.url}/control")
    start = page.locator("button[data-command=start]")
    reply, phase = page.locator("#reply"), page.locator("#phase")
    start.click()
    expect(reply).to_contain_text("Enter the token")
    assert daemon.state()["phase"] == "idle"

    page.fill("#token", daemon.token)
    page.click("#token-form button")
    start.click()
    expect(reply).to_have_text("start: done")
    expect(phase).to_have_text("Running")
    page.click("button[data-command=pause]")
    expect(phase).to_have_text(re.compile("^Paused"))

    reset = page.locator("button[data-command=reset]")
    reset.click()
    expect(reset).to_have_text("tap again to reset")
    assert daemon.state()["phase"] == "paused"  # one tap does nothing
    reset.click()
    expect(phase).to_have_text("Ready")
    assert daemon.state()["phase"] == "idle"

    page.reload()  # the token is kept in this browser
    expect(page.locator("#token")).to_have_value(daemon.token)
