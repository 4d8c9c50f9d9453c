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
from typing import Any

import pytest
from playwright.sync_api import Page, Route, WebSocketRoute, expect
from test_web_browser import daemon, fake_stream, page, push  # noqa: F401 (fixtures)
from web_harness import Daemon, browser_fixture  # noqa: F401 (the `browser` fixture)

from tests.laps_module import laps_document, register
from tests.reviews_module import TEXTS, PlacedReviews, reviews_document, reviews_match
from tests.reviews_module import register as register_reviews
from timerd.config import profiles
from timerd.core.match import Match
from timerd.i18n import LANGUAGES, Messages
from timerd.wire import status_document

pytestmark = pytest.mark.e2e

#: A state's rate (daemon seconds per real second) at which its times stand still on the
#: page while a test reads them: a review's 1:00 stays 1:00 (they run on: `runs`).
STILL = 1e-6


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


def open_streamed(page: Page, url: str, *, texts: bool = False,  # noqa: F811 (a page)
                  link: bool = True) -> WebSocketRoute:
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
    if link:
        expect(page.locator("#link")).to_have_text("live")
    else:  # a stream overlay shows no badge
        expect(page.locator("body")).to_have_attribute("data-link", "up")
    return routes[0]


def test_the_desk_shows_a_modules_rows(page: Page, daemon: Daemon,  # noqa: F811 (fixtures)
                                       monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    register(monkeypatch)
    push(open_streamed(page, f"{daemon.url}/control"), laps_document(tmp_path))
    expect(page.locator(".module-rows dd")).to_have_text(["2", "1:05"])


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
    push(open_streamed(page, f"{daemon.url}{path}", texts=True), document, rate=STILL)
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


def built_in_states() -> list[dict[str, Any]]:
    """Status documents of the built-in modules with values of parts: an ISBHF stoppage
    with running and waiting penalties (a player or none), a running timeout and one left,
    the line change and a goalie change, with the teams' names and without; ITHF passive
    play counting for one side and warned for the other (ITHF 8.1-8.2), and none."""
    rink = Match(profiles.load("isbhf"))
    rink.handle(rink.parse("start"), 0.0)
    rink.poll(0.0)
    rink.handle(rink.parse("stop"), 60.0)
    for at, words in enumerate([("home", "minor", "17"), ("home", "major", "4"),
                                ("home", "minor"), ("away", "minor", "9")]):
        rink.handle(rink.parse("penalty", *words), 61.0 + at)
    rink.handle(rink.parse("timeout", "away"), 70.0)
    rink.handle(rink.parse("goalie-change", "home"), 71.0)
    rink.handle(rink.parse("linechange"), 72.0)
    states = [rink.status(75.0)]
    rink.handle(rink.parse("teams", "HC Košice", "Jana"), 76.0)
    states.append(rink.status(76.5))
    table = Match(profiles.load("ithf"))
    states.append(table.status(0.0))
    table.handle(table.parse("start"), 0.0)
    table.poll(25.0)  # the start signal at 20 s (ITHF 4.4)
    table.handle(table.parse("passive", "away"), 30.0)
    table.poll(36.0)  # the warning at 35 s (ITHF 8.2)
    table.handle(table.parse("passive", "home"), 40.0)
    states.append(table.status(41.5))
    return [status_document(status, [{}]) for status in states]


def test_the_page_shows_a_modules_parts_as_messages_shown_does(
        page: Page, daemon: Daemon, monkeypatch: pytest.MonkeyPatch,  # noqa: F811 (fixtures)
        tmp_path: Path) -> None:
    """The page's `timerd.shown` and `Messages.shown` give the same rows and lines for every
    built-in module with a value of parts and the test-only reviews module, in every
    language, and `timerd.brief` (the overlay's tags) what `Messages.brief` gives the
    terminal's status line: one catalogue, one declaration, two renderers that agree."""
    register_reviews(monkeypatch)
    states = [*built_in_states(), reviews_document(tmp_path),
              status_document(reviews_match(tmp_path).status(95.0), [{}])]
    open_streamed(page, f"{daemon.url}/?kiosk=1", texts=True)
    page.evaluate("timerd.loadTexts()")
    kinds = {entry["kind"] for state in states for entry in state["display"]}
    assert {"sides", "entries", "entry"} <= kinds
    for language in LANGUAGES:
        shown = page.evaluate("([language, states]) => { timerd.i18n.language = language;"
                              " return states.map((s) => [timerd.shown(s), timerd.brief(s)]);"
                              " }", [language, states])
        for state, (got, brief) in zip(states, shown, strict=True):
            rows, lines = Messages(language).shown(state)
            assert (got["rows"], got["lines"]) == ([list(row) for row in rows], lines), \
                (language, got)
            assert brief == Messages(language).brief(state), (language, brief)
    assert [Messages("en").shown(state) != ([], []) for state in states] == [
        True, True, False, True, True, True]  # only the ITHF match before its start is empty


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_overlay_tags_a_modules_parts_as_the_terminal_says_them(
        page: Page, daemon: Daemon, monkeypatch: pytest.MonkeyPatch,  # noqa: F811 (fixtures)
        tmp_path: Path, language: str) -> None:
    """The stream overlay's bug tags what a new module's parts have on in play, in the words
    of the terminal's status line (`brief`: each review and its time; the challenges have
    no brief and are not on it), in each language the overlay is asked for (`lang=`).
    Fails on the old code: the overlay showed no module's slice."""
    register_reviews(monkeypatch)
    match = reviews_match(tmp_path)
    match.handle(match.parse("start"), 0.0)
    match.poll(25.0)  # the start signal at 20 s (ITHF 4.4)
    document = status_document(match.status(40.0), [{}])
    assert Messages("en").brief(document) == ["review 1:00", "review 2:00"]
    push(open_streamed(page, f"{daemon.url}/overlay?lang={language}", link=False, texts=True),
         document, rate=STILL)
    expect(page.locator("#tags .module")).to_have_text(Messages(language).brief(document))


def test_a_modules_times_run_on_between_pushes_as_declared(
        page: Page, daemon: Daemon, monkeypatch: pytest.MonkeyPatch,  # noqa: F811 (fixtures)
        tmp_path: Path) -> None:
    """Between two pushes the page runs a module's times as its declaration says (`runs`):
    a review's time counts down in real time though the match clock stands, the
    challenges left stay; ITHF passive play counts down in play time while the clock runs
    (ITHF 8.1), and not while the clock stands.
    Fails on the old code: the page ran only the times of the keys it named."""
    register_reviews(monkeypatch)
    route = open_streamed(page, f"{daemon.url}/", texts=True)
    push(route, reviews_document(tmp_path), rate=30)
    lines = page.locator(".module-rows dd")
    expect(lines.nth(1)).to_have_text(re.compile(r"^video review Peter 0:[0-4]\d$"))
    expect(lines.nth(0)).to_have_text("Peter 2 left")
    passive = built_in_states()[3]
    assert passive["clock_running"]
    assert Messages("en").shown(passive)[1] == ["passive Home 3.5 s"]
    # The clock stands: a review runs (time passes on the page), the passive count does not.
    reviews = reviews_document(tmp_path)
    push(route, {**passive, "clock_running": False, "reviews": reviews["reviews"],
                 "display": [*passive["display"], *reviews["display"]]}, rate=30)
    expect(lines.nth(1)).to_have_text(re.compile(r"^video review Away 0:[0-4]\d$"))
    expect(lines.nth(0)).to_have_text("passive Home 3.5 s")
    push(route, passive, rate=1)
    expect(lines).to_have_text([re.compile(r"^passive Home [0-2]\.\d s$")])


@pytest.mark.parametrize("path", ["/", "/control"])
def test_a_module_places_its_parts_on_the_rink_board_by_declaration(
        page: Page, daemon: Daemon, monkeypatch: pytest.MonkeyPatch,  # noqa: F811 (fixtures)
        tmp_path: Path, path: str) -> None:
    """A module that declares how a rink's board shows its parts (`board`) has them in its
    teams' boxes on the scoreboard, in that text; the desk, which has no board, shows them
    with its other rows. What it declares as a line of its own (`banner`) is under the
    scoreboard's clock and in the desk's head. Neither is among the other rows. The goalie
    change (ISBHF 408) and the line change (404b) are drawn so too. Fails on the old code:
    the boxes and the line held what the page named and nothing else."""
    register_reviews(monkeypatch, PlacedReviews)
    document = reviews_document(tmp_path)
    push(open_streamed(page, f"{daemon.url}{path}", texts=True), document, rate=STILL)
    rows = page.locator(".module-rows dd")
    if path == "/control":
        expect(page.locator("#situation")).to_have_text("Challenges: Peter 2")
        expect(page.locator("#situation")).to_be_visible()
        expect(rows).to_have_text(["video review Peter 1:00", "video review Jana 2:00"])
        return
    expect(page.locator("#away-box")).to_have_text("Review 1:00")
    expect(page.locator("#home-box")).to_have_text("Review 2:00")
    expect(page.locator("#line-change")).to_have_text("Challenges: Peter 2")
    expect(page.locator(".module-rows")).to_be_hidden()
    page.select_option("#language", "sk")
    expect(page.locator("#away-box")).to_have_text("Video 1:00")
    expect(page.locator("#line-change")).to_have_text("Výzvy: Peter 2")
