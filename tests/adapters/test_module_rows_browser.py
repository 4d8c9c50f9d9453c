"""A new sport touches no view (issue 44 item 5), in chromium: the status document of a match
whose profile lists a rule module only the tests have (tests/laps_module.py) is pushed to the
scoreboard and the desk, and each shows the module's rows, labelled in the page's language and
their values as their kinds say, though no line of either page names the module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, WebSocketRoute, expect
from test_web_browser import daemon, fake_stream, page, push  # noqa: F401 (fixtures)
from web_harness import Daemon, browser_fixture  # noqa: F401 (the `browser` fixture)

from tests.laps_module import laps_document, register

pytestmark = pytest.mark.e2e


def test_the_scoreboard_shows_a_modules_rows(page: Page, fake_stream: WebSocketRoute,  # noqa: F811 (fixtures)
                                             monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    """Fails on the old code: the page showed the keys it named and no other."""
    register(monkeypatch)
    push(fake_stream, laps_document(tmp_path))
    rows = page.locator(".module-rows")
    expect(rows).to_be_visible()
    expect(rows.locator("dt")).to_have_text(["Laps", "Since the lap"])
    expect(rows.locator("dd")).to_have_text(["2", "1:05"])
    page.select_option("#language", "sl")
    expect(rows.locator("dt")).to_have_text(["Krogi", "Od kroga"])
    push(fake_stream, {**laps_document(tmp_path), "display": []})  # a profile without it
    expect(rows).to_be_hidden()


def test_the_desk_shows_a_modules_rows(page: Page, daemon: Daemon,  # noqa: F811 (fixtures)
                                       monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    register(monkeypatch)
    routes: list[WebSocketRoute] = []
    page.route_web_socket(re.compile(r"/api/stream$"), lambda r: routes.append(r))  # noqa: PLW0108
    page.goto(f"{daemon.url}/control")
    expect(page.locator("#link")).to_have_text("live")
    push(routes[0], laps_document(tmp_path))
    expect(page.locator(".module-rows dd")).to_have_text(["2", "1:05"])
