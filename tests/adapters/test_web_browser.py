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
from playwright.sync_api import Browser, Page, WebSocketRoute, expect
from web_harness import (
    CLOCK_S,
    SPEED,
    Daemon,
    browser_fixture,  # noqa: F401 (the `browser` fixture)
    wait_clock_at_most,
)

from timerd import __version__
from timerd.config import profiles
from timerd.core.display import shown_clock
from timerd.core.match import Match
from timerd.i18n import LANGUAGES, Messages

#: Real processes, a broker or a browser, and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e


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
        wait_paused_at_least(page, 2)  # the interruption counts
        frozen = clock.text_content()
        assert frozen == shown_clock(daemon.state()["remaining_s"])
        wait_paused_at_least(page, 10)  # ten more seconds
        assert clock.text_content() == frozen  # while the clock stood still
        expect(clock).to_have_class(re.compile(r"\bpaused\b"))

        daemon.stop()
        expect(link).to_have_text(re.compile("offline"))
        daemon.start()  # the same port: a restart after a crash or an update
        expect(link).to_have_text("live", timeout=10_000)
        # The restarted daemon restores the match, paused where it stood (docs/service.md),
        # and the page shows it without a reload.
        expect(phase).to_have_text(re.compile(r"^PAUSED"))
        expect(clock).to_have_text(frozen or "")
    finally:
        daemon.stop()


#: The interruption's seconds that #phase shows ("PAUSED 0:12" -> 12), or null.
PAUSED_S = """() => {
  const m = /^PAUSED (\\d+):(\\d\\d)$/.exec(document.getElementById("phase").textContent);
  return m ? 60 * Number(m[1]) + Number(m[2]) : null;
}"""


def wait_paused_at_least(page: Page, seconds: float) -> None:
    """#phase reads PAUSED with the interruption at `seconds` or more, looked at in every
    frame: at 20x a window as narrow as PAUSED 0:02-0:09 (0.35 real seconds) was missed by
    expect's polls when the page stalled for half a second."""
    page.wait_for_function(f"(s => s !== null && s >= {seconds})(({PAUSED_S})())",
                           polling="raf")


def test_kiosk_mode_hides_the_controls(page: Page, daemon: Daemon) -> None:
    page.goto(f"{daemon.url}/?kiosk=1")
    expect(page.locator("#clock")).to_have_text("5:00")
    expect(page.locator("#controls")).to_be_hidden()
    page.goto(f"{daemon.url}/")
    expect(page.locator("#clock")).to_have_text("5:00")
    expect(page.locator("#controls")).to_be_visible()


def test_the_scoreboard_and_the_desk_say_which_version_runs(page: Page, daemon: Daemon) -> None:
    """Issue 17: a club (and the hall's desk) can see which timerd a table runs."""
    for path in ("/", "/control"):
        page.goto(f"{daemon.url}{path}")
        expect(page.locator("#version")).to_have_text(f"timerd {__version__}")


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


def golden_notices() -> list[tuple[str, dict[str, Any]]]:
    """Every notice and refusal the golden traces hold, as the event stream sends them."""
    found = []
    for trace in sorted((Path(__file__).parents[1] / "golden").glob("*.txt")):
        for line in trace.read_text().splitlines():
            m = re.search(r' notice +code="([^"]+)" params=(\{.*\})$', line)
            if m:
                found.append((m.group(1), json.loads(m.group(2))))
    return found


def test_the_page_says_a_notice_as_the_catalogue_does(page: Page, daemon: Daemon) -> None:
    """Issue 32: the core hands numbers over (120.0 s, {"home": 1, "away": 0}, "17") and the
    catalogue alone shows them: the page's `said` and `Messages.notice` give the same words
    for every notice of the golden traces, in every language (a refusal is its reason alone
    on the page, which says the refused button itself)."""
    told = [
        *golden_notices(),
        ("refused.early_too_soon", {"command": "early-intermission", "left": 200.5,
                                    "within": 180.0}),
        ("refused.forfeit_played", {"command": "forfeit", "side": "home",
                                    "evidence": "goal", "at": 75.25, "word": "home"}),
        ("notice.penalty_waiting", {"number": 3, "side": "away", "player": None,
                                    "kind": "major", "time": 300.0}),
        ("notice.corrected", {"number": 2, "side": "home", "scorer": "17",
                              "assists": ["5", "9"]}),
        ("notice.corrected", {"number": 2, "side": "home", "scorer": None, "assists": []}),
        ("notice.hold_reset", {"s": 1.5})]
    assert {code for code, _ in told} >= {"notice.penalty_running", "notice.undo",
                                          "refused.forfeit_too_soon", "notice.shot_scored"}
    page.goto(f"{daemon.url}/?kiosk=1")
    # The catalogue comes from GET /api/i18n after the page loads: ask once it is there (a CI
    # run asked before and met the fallback, the key itself).
    page.evaluate("timerd.loadTexts()")
    for language in LANGUAGES:
        shown = page.evaluate("([language, told]) => { timerd.i18n.language = language;"
                              " return told.map(([c, p]) => timerd.said(c, p)); }",
                              [language, told])
        for (code, params), text in zip(told, shown, strict=True):
            said = Messages(language).notice(code, params)
            assert text in said if code.startswith("refused.") else text == said, \
                (language, code, text, said)
            assert not re.search(r"\{\w+\}|undefined|null|\[object", text), text


#: U+2007 FIGURE SPACE, as wide as a digit: pads a penalty's player so the times line up.
FIGURE = "\u2007"


def push(route: WebSocketRoute, state: dict[str, Any], rate: float = 1.0) -> None:
    route.send(json.dumps({"type": "state", "state": state, "rate": rate}))


BASE_STATE: dict[str, Any] = {
    "profile": "isbhf", "phase": "paused", "period": 2, "periods": 3, "clock_running": False,
    "period_s": 900.0, "remaining_s": 421.3, "elapsed_s": 478.7, "start_in_s": None,
    "interruption_s": 3.0, "interruptions": 4, "paused_total_s": 60.0,
    "last_signal": "period_end", "last_signal_remaining_s": 0.0,
    # How ball hockey's rule modules are shown, and which of their times run (issue 44 item
    # 5), as the daemon sends it with every state.
    "display": json.loads(json.dumps(Match(profiles.load("isbhf")).status(0.0).display)),
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
    # Shapes as `timerctl status --json` gives them under --profile isbhf-playoff.
    push(fake_stream, {**BASE_STATE, "score": {"home": 3, "away": 1}, "overtime": True,
                       "ends_switched": True,
                       "penalties": [{"number": 1, "side": "home", "kind": "minor",
                                      "player": "7", "remaining_s": 95.2, "running": True},
                                     {"number": 2, "side": "away", "kind": "major",
                                      "player": None, "remaining_s": 300.0, "running": True}],
                       "timeouts": {"home": {"left": 1, "remaining_s": None},
                                    "away": {"left": 0, "remaining_s": None}}})
    expect(page.locator("#home")).to_have_text("3")
    expect(page.locator("#away")).to_have_text("1")
    expect(page.locator("#period")).to_be_hidden()  # overtime is period 4 of 3
    expect(page.locator("#overtime")).to_be_visible()
    expect(page.locator("#ends")).to_have_text("Ends switched")
    expect(page.locator("#home-box")).to_have_text(f"#7{FIGURE * 2} 1:36  minor")
    expect(page.locator("#away-box")).to_have_text(f"{FIGURE * 4} 5:00  major")
    expect(page.locator("#timeout")).to_be_hidden()
    expect(page.locator("#timeouts-left")).to_have_text("Timeout left: Home")
    expect(page.locator("#clock")).to_have_text("7:02")
    expect(page.locator("#last-signal")).to_have_text("Last signal: PERIOD END at 0:00")

    push(fake_stream, {**BASE_STATE, "overtime": False})
    expect(page.locator("#period")).to_have_text("Period 2/3")

    push(fake_stream, {**BASE_STATE, "periods": 1})  # a profile without those keys
    for hidden in ("#score", "#period", "#overtime", "#ends", "#boxes", "#timeout",
                   "#timeouts-left", "#line-change"):
        expect(page.locator(hidden)).to_be_hidden()


def test_shootout_line_change_goalie_change_and_the_winner_are_shown(
        page: Page, fake_stream: WebSocketRoute) -> None:
    shootout = {"rounds": 5, "attempts": {"home": [True, False, True], "away": [False, True]},
                "goals": {"home": 2, "away": 1}, "winner": None}
    tied = {**BASE_STATE, "score": {"home": 2, "away": 2}, "overtime": True,
            "remaining_s": 0.0, "interruption_s": None}
    push(fake_stream, {**tied, "phase": "shootout", "shootout": shootout,
                       "clock_face": {"kind": "shootout", "value_s": 0.0, "text": "2-1"}})
    expect(page.locator("#clock")).to_have_text("2 – 1")  # ISBHF 414b: the tally, big
    expect(page.locator("#phase")).to_have_text("Shootout")
    expect(page.locator("#home-box")).to_have_text("Shootout 2  ● ✕ ●")
    expect(page.locator("#away-box")).to_have_text("Shootout 1  ✕ ●")

    push(fake_stream, {**tied, "phase": "finished", "shootout": {**shootout, "winner": "home"},
                       "result": {"winner": "home", "how": "shootout"}})
    expect(page.locator("#phase")).to_have_text("Finished: Home wins")
    expect(page.locator("#home-box")).to_have_text("Shootout 2  ● ✕ ●")  # still on the board

    push(fake_stream, {**BASE_STATE, "goalie_change": {"away": 512.0},
                       "line_change": {"stage": "visitors", "number": 1, "stages": 3,
                                       "remaining_s": 4.5}}, rate=1)
    expect(page.locator("#away-box")).to_have_text("Goalie change 8:32")
    expect(page.locator("#line-change")).to_have_text("Line change: visitors 4.5 (1/3)")
    # Both count in real time while the clock stands still (ISBHF 404b, 408).
    expect(page.locator("#line-change")).to_have_text(re.compile(r"visitors [0-3]\.\d"))
    expect(page.locator("#away-box")).to_have_text(re.compile(r"8:(2\d|30)"))


def test_a_count_up_overtime_counts_up(page: Page, fake_stream: WebSocketRoute) -> None:
    """ITHF 4.8: sudden death; the clock shows the time played, not the 0:00 left."""
    push(fake_stream, {**BASE_STATE, "profile": "ithf-playoff", "periods": 1, "period": 2,
                       "phase": "running", "clock_running": True, "interruption_s": None,
                       "overtime": True, "count_up": True, "remaining_s": 0.0,
                       "overtime_s": 58.0,
                       "clock_face": {"kind": "count_up", "value_s": 58.0, "text": "0:58"}},
         rate=10)
    expect(page.locator("#phase")).to_have_text("Golden goal")
    expect(page.locator("#clock")).to_have_text(re.compile(r"^1:[0-5]\d$"))  # counting up


def test_clock_runs_locally_between_pushes_and_resyncs_on_each(
        page: Page, fake_stream: WebSocketRoute) -> None:
    # One push, then silence: the page must count down by itself (rate 5: 5 s per second,
    # so each reading below lasts 2 real seconds or more; at rate 30 "Running" lasted 0.5 s
    # and the tenths 0.33 s, narrower than a stall of the page on a loaded machine).
    running = {**BASE_STATE, "phase": "running", "clock_running": True, "remaining_s": 45.0,
               "interruption_s": None,
               "penalties": [{"number": 1, "side": "away", "kind": "minor", "player": None,
                              "remaining_s": 120.0, "running": True}]}
    push(fake_stream, running, rate=5)
    phase = page.locator("#phase")
    expect(phase).to_have_text("Running")
    wait_clock_at_most(page, 30)
    expect(phase).to_have_text("LAST 30 S")  # the last 30 s are highlighted
    expect(page.locator("#clock")).to_have_class(re.compile(r"\blast30\b"))
    expect(page.locator("#away-box")).not_to_have_text(re.compile("2:00"))  # penalties run too
    page.wait_for_function(f"({CLOCK_S})() < 10", polling="raf")
    expect(page.locator("#clock")).to_have_text(re.compile(r"^\d\.\d$"))  # tenths in the last 10 s
    expect(page.locator("#clock")).to_have_text("0:00")  # and it stops at zero

    push(fake_stream, {**BASE_STATE, "remaining_s": 200.0, "interruption_s": 0.0})
    expect(page.locator("#clock")).to_have_text("3:20")  # re-synced to the push
    expect(phase).to_have_text(re.compile(r"^PAUSED 0:0\d"))

    push(fake_stream, {**BASE_STATE, "phase": "finished", "remaining_s": 0.0,
                       "interruption_s": None, "last_signal": "final"})
    expect(phase).to_have_text("Finished")
    expect(page.locator("#clock")).to_have_class(re.compile(r"\bfinished\b"))


def test_control_page_needs_the_token_once_and_asks_before_a_reset(
        page: Page, daemon: Daemon) -> None:
    page.goto(f"{daemon.url}/control")
    toggle = page.locator("button[data-command=toggle]")
    reply, phase = page.locator("#reply"), page.locator("#phase")
    expect(page.locator("#token-form")).to_be_visible()  # no token in this browser yet
    expect(toggle).to_have_text("START")
    toggle.click()
    expect(reply).to_have_text(Messages("en")("ctl.need_token"))  # no HTTP words (issue 31)
    assert daemon.state()["phase"] == "idle"

    page.fill("#token", daemon.token)
    page.click("#token-form button")
    expect(page.locator("#token-form")).to_be_hidden()  # entered once
    toggle.click()
    expect(reply).to_have_text("START: done")
    expect(phase).to_have_text("Running")
    expect(toggle).to_have_text("PAUSE")
    toggle.click()
    expect(phase).to_have_text(re.compile("^PAUSED"))

    reset = page.locator("button[data-command=reset]")
    reset.click()
    expect(reset).to_have_text("Tap again: RESET")
    assert daemon.state()["phase"] == "paused"  # one tap does nothing
    reset.click()
    expect(phase).to_have_text("Ready")
    assert daemon.state()["phase"] == "idle"

    page.reload()  # the token is kept in this browser (its storage, not the form)
    assert page.evaluate("localStorage.getItem('timerd.token')") == daemon.token
    expect(page.locator("#token-form")).to_be_hidden()
    expect(page.locator("#token")).to_have_value("")


class StreamRelay:
    """The page's stream passed through from the real daemon, with states that can be held.

    While held, state pushes stop reaching the page (the newest is kept), as when the network
    or a busy Pi delays them: the page must run the clocks on by itself, each as its rules say.
    """

    def __init__(self, page: Page) -> None:
        self.route: WebSocketRoute | None = None
        self.held = False
        self._latest: str | None = None
        page.route_web_socket(re.compile(r"/api/stream$"), self._connect)

    def _connect(self, route: WebSocketRoute) -> None:
        self.route = route
        route.connect_to_server().on_message(self._from_daemon)

    def _from_daemon(self, message: str | bytes) -> None:
        assert self.route is not None
        if self.held and isinstance(message, str) and json.loads(message)["type"] == "state":
            self._latest = message
        else:
            self.route.send(message)

    def hold(self) -> None:
        self.held = True

    def release(self) -> None:
        """Pass states again, starting with the newest one held back."""
        self.held = False
        if self._latest is not None and self.route is not None:
            self.route.send(self._latest)
            self._latest = None


#: Seconds on a penalty row of the home box whose player is `player` (null if none).
PENALTY_S = """player => {
  for (const row of document.querySelectorAll("#home-box > div")) {
    const m = row.textContent.match(/^#(\\w+)\\s+(\\d+):(\\d\\d)\\s/);
    if (m && m[1] === player) return 60 * Number(m[2]) + Number(m[3]);
  }
  return null;
}"""


#: Seconds on the timeout's clock ("Timeout Away 0:17" -> 17, "... 9.1" -> 9.1), or null.
TIMEOUT_S = """() => {
  const text = document.getElementById("timeout").textContent || "";
  const m = text.match(/(\\d+):(\\d\\d)$|(\\d+\\.\\d)$/);
  if (!m) return null;
  return m[3] !== undefined ? Number(m[3]) : 60 * Number(m[1]) + Number(m[2]);
}"""


def home_rows(page: Page) -> list[tuple[str, str]]:
    """The home box's rows as (class, text with runs of spaces folded)."""
    return [(row.get_attribute("class") or "", " ".join(row.text_content().split()))
            for row in page.locator("#home-box > div").all()]


def test_ball_hockey_penalties_and_a_timeout_on_a_real_isbhf_daemon(
        page: Page, tmp_path: Path) -> None:
    """ISBHF: a timeout counts down in the stoppage (412); penalties stand still while the
    clock is stopped; once it runs, the running penalties count down and a waiting one (a
    third for a team already two short) does not."""
    # Speed 5: the 30 s timeout lasts 6 real seconds, and "0:3x-0:2x" 2 of them (at 20x, half
    # a second: a page or a test stalled that long on a loaded machine saw it end instead).
    daemon = Daemon(tmp_path, speed=5, profile="isbhf").start()
    try:
        relay = StreamRelay(page)
        page.goto(f"{daemon.url}/?kiosk=1")
        expect(page.locator("#link")).to_have_text("live")
        expect(page.locator("#clock")).to_have_text("15:00")
        for command in (["start"], ["stop"], ["penalty", "home", "minor", "17"],
                        ["penalty", "home", "minor", "4"], ["penalty", "home", "minor", "9"],
                        ["timeout", "away"]):
            status, reply = daemon.command(*command)
            assert status == 200, reply
        waiting = [p for p in daemon.state()["penalties"] if not p["running"]]
        assert [p["player"] for p in waiting] == ["9"]

        timeout = page.locator("#timeout")
        expect(timeout).to_have_text(re.compile(r"^Timeout Away 0:[23]\d$"))
        expect(page.locator("#timeouts-left")).to_have_text("Timeout left: Home")
        assert home_rows(page) == [("penalty", "#17 2:00 minor"), ("penalty", "#4 2:00 minor"),
                                   ("penalty waiting", "#9 2:00 waiting")]
        relay.hold()  # from here the page counts the timeout down by itself
        # Below 0:20 (at 5x a second of real time is 5 s of the timeout: a loaded machine
        # may skip past any narrower window between two looks).
        page.wait_for_function(f"(t => t !== null && t < 20)(({TIMEOUT_S})())", polling="raf")
        # Real time passed, game time did not: every penalty still reads 2:00.
        assert [text for _, text in home_rows(page)] == [
            "#17 2:00 minor", "#4 2:00 minor", "#9 2:00 waiting"]
        relay.release()
        expect(timeout).to_be_hidden()  # over (timeout_end) after its 30 s
        expect(page.locator("#timeouts-left")).to_have_text("Timeout left: Home")

        daemon.command("start")  # the faceoff
        expect(page.locator("#phase")).to_have_text("Running")
        relay.hold()  # the page runs the penalty clocks by itself
        page.wait_for_function(f"({PENALTY_S})('17') <= 110", polling="raf")
        rows = home_rows(page)
        assert rows[2] == ("penalty waiting", "#9 2:00 waiting"), rows
        assert page.evaluate(f"({PENALTY_S})('4')") <= 110
        relay.release()
        page.wait_for_function(f"({PENALTY_S})('17') <= 100", polling="raf")
        assert home_rows(page)[2] == ("penalty waiting", "#9 2:00 waiting")
    finally:
        daemon.stop()


#: A training profile for ball hockey: three periods of 20 s with 10-s intermissions.
TRAINING_PROFILE = """\
name = "isbhf-training"
description = "ball hockey training: 3 x 0:20, 0:10 intermissions"
rules = ["intermission", "timeouts"]
ithf_conformant = false
clock = "stop"
periods = 3
period_s = 20
pre_signal_lead_s = 0
signals = []
faceoff_guard_s = "none"
goals_count_while_stopped = true
passive_play_s = "none"
switch_ends = true

[intermission]
length_s = 10
warning_s = 3

[timeouts]
per_team = 1
length_s = 30
"""


def test_the_intermission_counts_down_between_periods(page: Page, tmp_path: Path) -> None:
    """ISBHF 410: after the period's end the big clock counts the intermission down; then
    the next period waits for its faceoff, with the teams on switched ends (401)."""
    profile = tmp_path / "isbhf-training.toml"
    profile.write_text(TRAINING_PROFILE)
    # Speed 2: the 10 s intermission lasts 5 real seconds, for the four looks at it below (at
    # 5x its 2 s could end between the page's "Intermission" and the daemon's break_kind).
    daemon = Daemon(tmp_path, speed=2, profile=str(profile)).start()
    try:
        clock, phase = page.locator("#clock"), page.locator("#phase")
        page.goto(f"{daemon.url}/?kiosk=1")
        expect(clock).to_have_text("0:20")
        expect(page.locator("#period")).to_have_text("Period 1/3")
        expect(page.locator("#ends")).to_be_hidden()
        daemon.command("start")
        expect(phase).to_have_text("Intermission", timeout=30_000)  # 10 real seconds of play
        expect(clock).to_have_class(re.compile(r"\bbreak\b"))
        assert daemon.state()["break_kind"] == "intermission"
        wait_clock_at_most(page, 9.5)  # it counts down from 0:10
        wait_clock_at_most(page, 5)
        expect(page.locator("#period")).to_have_text("Period 2/3")
        expect(page.locator("#ends")).to_be_visible()
        expect(phase).to_have_text("Ready")  # the intermission is over; the faceoff is next
        expect(clock).to_have_text("0:20")
        assert daemon.state()["last_signal"] == "intermission_end"
    finally:
        daemon.stop()
