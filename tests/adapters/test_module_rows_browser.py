"""A new sport touches no view (issue 44 item 5), in chromium: the status document of a match
whose profile lists a rule module only the tests have is pushed to the scoreboard and the desk,
and each shows the module's rows, labelled in the page's language and their values as their
kinds say, though no line of either page names the module: a lap counter's plain values
(tests/laps_module.py) and video reviews, a value made of parts, a list and one per side
(tests/reviews_module.py), in the words `timerctl status` says them (`Messages.shown`) in
every language the page offers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, WebSocketRoute, expect
from test_web_browser import daemon, fake_stream, page, push  # noqa: F401 (fixtures)
from web_harness import Daemon, browser_fixture  # noqa: F401 (the `browser` fixture)

from tests.laps_module import laps_document, register
from tests.reviews_module import TEXTS, reviews_document
from tests.reviews_module import register as register_reviews
from timerd.i18n import LANGUAGES, Messages

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


def open_streamed(page: Page, url: str, *, texts: bool = False) -> WebSocketRoute:  # noqa: F811 (a page)
    """`url` with its state stream served by the test, live; with `texts`, the catalogues the
    page loads (`GET /api/i18n`) hold the test module's texts, as the daemon's would if the
    module were one of its own."""
    if texts:
        def with_texts(route: Route) -> None:
            response = route.fetch()
            reply = response.json()
            for language, own in TEXTS.items():
                reply["texts"][language].update(own)
            route.fulfill(response=response, json=reply)
        page.route(re.compile(r"/api/i18n$"), with_texts)
    routes: list[WebSocketRoute] = []
    page.route_web_socket(re.compile(r"/api/stream$"), lambda r: routes.append(r))  # noqa: PLW0108
    page.goto(url)
    expect(page.locator("#link")).to_have_text("live")
    return routes[0]


def test_the_desk_shows_a_modules_rows(page: Page, daemon: Daemon,  # noqa: F811 (fixtures)
                                       monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    register(monkeypatch)
    push(open_streamed(page, f"{daemon.url}/control"), laps_document(tmp_path))
    expect(page.locator(".module-rows dd")).to_have_text(["2", "1:05"])


@pytest.mark.xfail(strict=True, reason="the pages skip a value of parts (the next commit)")
@pytest.mark.parametrize("path", ["/", "/control"])
def test_the_pages_show_a_modules_parts_as_timerctl_status_says_them(
        page: Page, daemon: Daemon, monkeypatch: pytest.MonkeyPatch,  # noqa: F811 (fixtures)
        tmp_path: Path, path: str) -> None:
    """The scoreboard and the desk show a new module's value of parts (each review on a
    line, the challenges left per side in a row of their label) in the words of
    `Messages.shown`, in every language the page offers. Fails on the old code: the pages
    skipped every value of parts."""
    register_reviews(monkeypatch)
    document = reviews_document(tmp_path)
    push(open_streamed(page, f"{daemon.url}{path}", texts=True), document)
    rows = page.locator(".module-rows")
    expect(rows.locator("dt")).to_have_text(["Challenges"])
    expect(rows.locator("dd")).to_have_text(
        ["Peter 2 left", "video review Peter 1:00", "video review Jana 2:00"])
    offered = page.locator("#language option").evaluate_all("os => os.map((o) => o.value)")
    assert sorted(offered) == sorted(["auto", *LANGUAGES])
    for language in LANGUAGES:
        page.select_option("#language", language)
        labelled, lines = Messages(language).shown(document)
        expect(rows.locator("dt")).to_have_text([label for label, _ in labelled])
        expect(rows.locator("dd")).to_have_text([text for _, text in labelled] + lines)
