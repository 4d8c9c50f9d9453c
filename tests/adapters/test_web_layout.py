"""Issue 18: the score desk and the TV scoreboard at phone, tablet and TV sizes, in Debian's
headless chromium against a real daemon.

At 360x640, 390x844, 768x1024, 1280x720 and 1920x1080: no horizontal overflow, every visible
button has a label inside the viewport, the clock's box is at least 40% of the height on a TV
and the goals 15%, PAUSED shows, and every text passes WCAG AA contrast. A goal entered on the
desk reaches the scoreboard within 200 ms in each profile (measured in the pages with
performance.now); a goal that does not count and a refusal are shown with their reasons; the
language follows the switch, the browser and `[ui] language`. Waits are on conditions with
generous timeouts (a loaded 2-core machine). The desk-to-scoreboard time is measured in the
pages; the test holds it to a bound a loaded machine keeps (the e2e tier's margin), and the
200 ms budget itself is measured by `bench/desk_latency.py`, which reports what it sees.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect
from web_harness import (
    SCORE_SEEN,
    SPEED,
    Daemon,
    browser_fixture,  # noqa: F401 (the `browser` fixture)
)

from timerd.i18n import Messages

#: Real daemons, a browser and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e

SIZES = [(360, 640), (390, 844), (768, 1024), (1280, 720), (1920, 1080)]
TV_SIZES = {(1280, 720), (1920, 1080)}
#: From the desk's tap to the scoreboard's new score: the issue's budget is 200 ms (a figure
#: for the benchmark); the test allows ten times that, so a loaded machine does not fail it,
#: while a scoreboard that polled or reloaded instead of being pushed would.
GOAL_TO_SCOREBOARD_MS = 2000
TIMEOUT_MS = 20_000

#: What the layout checks measure, in the page: overflow, buttons, boxes, contrast.
LAYOUT = """() => {
  const vw = document.documentElement.clientWidth, vh = window.innerHeight;
  const visible = (el) => {
    const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && cs.visibility !== "hidden" && cs.display !== "none";
  };
  const buttons = [...document.querySelectorAll("button, a.button, select")].filter(visible)
    .map((b) => { const r = b.getBoundingClientRect();
      return { text: (b.textContent || "").trim(), left: r.left, right: r.right, top: r.top,
        bottom: r.bottom, clipped: b.scrollWidth > b.clientWidth + 1, id: b.id,
        command: b.dataset.command || "" }; });
  const box = (id) => { const el = document.getElementById(id);
    return el && visible(el) ? el.getBoundingClientRect().height / vh : 0; };
  // WCAG 2.1 contrast of each visible text against the first opaque background behind it.
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = (el) => { for (let e = el; e; e = e.parentElement) {
    const c = rgb(getComputedStyle(e).backgroundColor); if (c.length === 3 || c[3] > 0.5) return c;
  } return [0, 0, 0]; };
  const poor = [];
  for (const el of document.querySelectorAll("body *")) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || !visible(el) || el.tagName === "OPTION") continue;
    const cs = getComputedStyle(el);
    const [a, b] = [lum(rgb(cs.color)), lum(background(el))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const large = parseFloat(cs.fontSize) >= 24 || (parseFloat(cs.fontSize) >= 18.66
      && Number(cs.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) poor.push(`${el.id || el.className}: ${ratio.toFixed(2)}`);
  }
  return { scrollWidth: document.documentElement.scrollWidth, clientWidth: vw, vh, buttons,
    clock: box("clock"), goals: box("home"), poor };
}"""


@pytest.fixture(scope="module")
def paused(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """An ITHF match with names, a goal, paused: the state every size is checked in."""
    d = Daemon(tmp_path_factory.mktemp("web-layout"), speed=SPEED,
               extra_config='[table]\nname = "Table 3"\n').start()
    for command in (["teams", "Jana Novak-Kovač", "Peter Horvat", "QF 2"], ["start"]):
        assert d.command(*command)[0] == 200
    page_wait(lambda: d.state()["phase"] == "running" and d.state()["faceoff_guard_s"] is None)
    assert d.command("goal", "home")[0] == 200
    assert d.command("pause")[0] == 200
    yield d
    d.stop()


def page_wait(condition: Any, timeout_s: float = TIMEOUT_MS / 1000) -> None:
    """Poll the daemon until `condition()` (a daemon's state, not a page's: no page yet)."""
    import time  # noqa: PLC0415 (only this helper polls)

    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def context(browser: Browser, daemon: Daemon, size: tuple[int, int] = (1280, 720), *,
            token: bool = True, locale: str = "en-GB") -> BrowserContext:
    """A browser profile at `size`, with the desk's token stored (as after entering it once)."""
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]}, locale=locale)
    ctx.set_default_timeout(TIMEOUT_MS)
    if token:
        ctx.add_init_script(f"localStorage.setItem('timerd.token', '{daemon.token}')")
    return ctx


def open_page(ctx: BrowserContext, daemon: Daemon, path: str) -> Page:
    """`path` open and live; a desk also with its buttons, which it builds only once GET
    /api/commands has answered, after the first state (a test measuring the desk before
    then saw none of them)."""
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{daemon.url}{path}")
    expect(page.locator("#link")).to_have_class("link up")  # "live", in any language
    if path.startswith("/control"):
        expect(page.locator("button[data-command=toggle]")).to_be_visible()
    page.errors = errors  # type: ignore[attr-defined]
    return page


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_every_size_fits_labels_its_buttons_and_reads_from_afar(
        browser: Browser, paused: Daemon, size: tuple[int, int]) -> None:
    ctx = context(browser, paused, size)
    try:
        for path in ("/", "/?kiosk=1", "/control"):
            page = open_page(ctx, paused, path)
            phase = page.locator("#phase")
            expect(phase).to_have_text(re.compile(r"^PAUSED \d:\d\d$"))
            expect(phase).to_be_visible()
            expect(page.locator("#home")).to_have_text("1")
            m = page.evaluate(LAYOUT)
            assert m["scrollWidth"] <= m["clientWidth"], (path, m["scrollWidth"])
            for b in m["buttons"]:
                assert b["text"], (path, b)
                assert b["left"] >= 0, (path, b)
                assert b["right"] <= m["clientWidth"] + 0.5, (path, b)
                assert not b["clipped"], (path, b)
            assert m["poor"] == [], (path, m["poor"])
            if path != "/control" and size in TV_SIZES:
                assert m["clock"] >= 0.40, (path, m["clock"])
                assert m["goals"] >= 0.15, (path, m["goals"])
            if path == "/control":  # which table's desk this is, and the round
                expect(page.locator("#where")).to_have_text("Table 3 · Round QF 2")
            if path == "/control" and size == (360, 640):
                # One-handed on the smallest phone: the whole ITHF desk without scrolling.
                desk = [b for b in m["buttons"] if b["command"]
                        and b["command"] in {"toggle", "goal", "faceoff", "undo", "passive",
                                             "reset"}]
                assert len(desk) == 8
                assert all(b["bottom"] <= m["vh"] for b in desk), desk
            if path == "/?kiosk=1":
                expect(page.locator("#controls")).to_be_hidden()
                expect(page.locator("#title")).to_have_text("Table hockey · ITHF")
                expect(page.locator("#where")).to_have_text("Table 3 · Round QF 2")
                expect(page.locator("#home-name")).to_have_text("Jana Novak-Kovač")
            if path.startswith("/"):
                # Spectators get no match controls: only the desk link, full screen, language.
                assert page.locator("#controls button[data-command]").count() == 0
            assert page.errors == []  # type: ignore[attr-defined]
            page.close()
    finally:
        ctx.close()


@pytest.mark.parametrize("profile", ["ithf", "ithf-thirds", "ithf-playoff", "isbhf",
                                     "isbhf-playoff"])
def test_a_goal_from_the_desk_is_pushed_to_the_scoreboard(
        browser: Browser, tmp_path: Path, profile: str) -> None:
    daemon = Daemon(tmp_path, speed=SPEED, profile=profile).start()
    ctx = context(browser, daemon)
    try:
        board = open_page(ctx, daemon, "/?kiosk=1")
        desk = open_page(ctx, daemon, "/control")
        assert daemon.command("start")[0] == 200
        expect(board.locator("#phase")).to_have_text("Running", timeout=TIMEOUT_MS)
        # ITHF 5.6: past the faceoff guard, so the goal counts.
        page_wait(lambda: daemon.state()["faceoff_guard_s"] is None)
        board.evaluate(SCORE_SEEN, "1")
        goal = desk.locator("button[data-command=goal][data-side=home]")
        goal.evaluate("b => b.addEventListener('click', () => { window.tapped = "
                      "performance.timeOrigin + performance.now(); }, { capture: true })")
        goal.click()
        expect(desk.locator("#reply")).to_have_text(re.compile(": done$"))
        shown_at = board.evaluate("window.scoreSeen")
        tapped_at = desk.evaluate("window.tapped")
        assert 0 <= shown_at - tapped_at <= GOAL_TO_SCOREBOARD_MS, shown_at - tapped_at
        expect(desk.locator("#home")).to_have_text("1")
    finally:
        ctx.close()
        daemon.stop()


def test_a_refusal_and_a_goal_that_does_not_count_show_their_reasons(
        browser: Browser, tmp_path: Path) -> None:
    # Speed 2: the pre-signal's 20 s lead (ITHF 4.4) lasts 10 real seconds, time enough to
    # enter a goal in it on a loaded machine.
    daemon = Daemon(tmp_path, speed=2).start()
    ctx = context(browser, daemon, (390, 844))
    try:
        board = open_page(ctx, daemon, "/?kiosk=1")
        desk = open_page(ctx, daemon, "/control")
        reply = desk.locator("#reply")
        goal = desk.locator("button[data-command=goal][data-side=away]")
        goal.click()  # no match yet: refused, with the core's reason
        expect(reply).to_have_text("GOAL Away: no match is running; press START to begin")
        expect(reply).to_have_class(re.compile(r"\berror\b"))
        # The reason comes as a code (issue 14): a Slovak desk says it in Slovak.
        slovak = open_page(ctx, daemon, "/control?lang=sk")
        slovak.locator("button[data-command=goal][data-side=away]").click()
        expect(slovak.locator("#reply")).to_have_text(
            re.compile(r": žiadny zápas neprebieha; stlač ZAČIATOK$"))
        slovak.close()

        desk.click("button[data-command=toggle]")
        expect(desk.locator("#phase")).to_have_text(re.compile("^Start in"))
        # The same button again: past the desk's double-tap guard (0.5 s, issue 45 item 4),
        # which a loaded CI machine's quick steps once met (GOAL counted once).
        desk.wait_for_timeout(600)
        goal.click()  # ITHF 5.1: entered, not counted before the start signal
        expect(reply).to_have_text("goal Away NOT counted: before the start (ITHF 5.1)")
        expect(reply).to_have_class(re.compile(r"\berror\b"))
        for page in (desk, board):
            no_goal = page.locator("#no-goal")
            expect(no_goal).to_have_text("NO GOAL - before the start (ITHF 5.1)")
            expect(no_goal).to_have_class(re.compile(r"\bflashing\b"))
            expect(no_goal).to_be_hidden(timeout=TIMEOUT_MS)  # after a few seconds
        expect(board.locator("#away")).to_have_text("0")
    finally:
        ctx.close()
        daemon.stop()


def test_the_scoreboard_shows_why_a_goal_did_not_count(browser: Browser, tmp_path: Path) -> None:
    """ITHF 5.6, from the event the daemon streams: the guard's window is too short to hit
    from a test on a loaded machine, so the event is sent into the page's stream."""
    daemon = Daemon(tmp_path, speed=SPEED).start()
    ctx = context(browser, daemon)
    try:
        page = ctx.new_page()
        routes: list[Any] = []
        page.route_web_socket(re.compile(r"/api/stream$"),
                              lambda r: (routes.append(r), r.connect_to_server()))
        page.goto(f"{daemon.url}/?kiosk=1")
        expect(page.locator("#link")).to_have_text("live")
        routes[0].send('{"type": "event", "event": {"t": 1.0, "type": "goal", "side": "home",'
                       ' "counted": false, "reason": "faceoff_guard", "match_time_s": 12.0,'
                       ' "score": {"home": 0, "away": 0}}}')
        expect(page.locator("#no-goal")).to_have_text("NO GOAL - faceoff guard (ITHF 5.6)")
    finally:
        ctx.close()
        daemon.stop()


def test_the_language_follows_the_switch_the_browser_and_the_config(
        browser: Browser, tmp_path: Path) -> None:
    daemon = Daemon(tmp_path, speed=SPEED).start()
    sl, sk = Messages("sl"), Messages("sk")
    try:
        ctx = context(browser, daemon)
        board = open_page(ctx, daemon, "/")
        desk = open_page(ctx, daemon, "/control")
        expect(board.locator("#phase")).to_have_text("Ready")
        board.select_option("#language", "sl")
        expect(board.locator("#phase")).to_have_text(sl("phase.idle"))
        expect(board.locator("#title")).to_have_text(sl("profile.ithf"))
        expect(board.locator("#home-name")).to_have_text(sl("side.home"))
        desk.reload()  # the choice is kept in this browser, for both pages
        expect(desk.locator("button[data-command=toggle]")).to_have_text(sl("ctl.start"))
        expect(desk.locator("button[data-command=faceoff]")).to_have_text(sl("ctl.faceoff"))
        desk.select_option("#language", "sk")
        expect(desk.locator("button[data-command=faceoff]")).to_have_text(sk("ctl.faceoff"))
        expect(desk.locator("#phase")).to_have_text(sk("phase.idle"))
        desk.select_option("#language", "auto")
        expect(desk.locator("button[data-command=faceoff]")).to_have_text("FACEOFF")
        ctx.close()

        ctx = context(browser, daemon, locale="sk-SK")  # no choice: the browser's language
        board = open_page(ctx, daemon, "/?kiosk=1")
        expect(board.locator("#phase")).to_have_text(sk("phase.idle"))
        ctx.close()
    finally:
        daemon.stop()

    fixed = Daemon(tmp_path / "fixed", speed=SPEED, extra_config='[ui]\nlanguage = "sl"\n')
    (tmp_path / "fixed").mkdir()
    fixed.start()
    try:
        ctx = context(browser, fixed, locale="sk-SK")  # the config's language wins
        board = open_page(ctx, fixed, "/?kiosk=1")
        expect(board.locator("#phase")).to_have_text(sl("phase.idle"))
        ctx.close()
    finally:
        fixed.stop()


#: A house profile that keeps net time under a name no page knows: the label follows the
#: profile's `clock`, never its name.
HOUSE = 'extends = "isbhf"\nname = "house"\ndescription = "net time, house rules"\n'


@pytest.mark.parametrize(("profile", "stopped"), [
    ("ithf", False), ("isbhf", True), ("house.toml", True)])
def test_a_stopped_clock_reads_as_its_profile_means_it(
        browser: Browser, tmp_path: Path, profile: str, stopped: bool) -> None:
    """ITHF 10.1: a stopped clock is an interruption, PAUSED; under net time (ISBHF 407) the
    whistle stops the clock: TIME STOPPED, with the same large label and blink, in every
    language, and the desk's main button starts it again rather than resuming."""
    (tmp_path / "house.toml").write_text(HOUSE)
    daemon = Daemon(tmp_path, speed=SPEED, profile=str(tmp_path / profile)
                    if profile.endswith(".toml") else profile).start()
    en, sk = Messages("en"), Messages("sk")
    key = "phase.stopped_for" if stopped else "phase.paused_for"
    ctx = context(browser, daemon, (1280, 720))
    try:
        assert daemon.command("toggle")[0] == 200
        page_wait(lambda: daemon.state()["phase"] == "running")
        assert daemon.command("toggle")[0] == 200
        assert daemon.state()["clock_rule"] == ("stop" if stopped else "running")
        board = open_page(ctx, daemon, "/?kiosk=1")
        desk = open_page(ctx, daemon, "/control")
        label = re.compile("^" + re.escape(en(key, time="")) + r"\d:\d\d$")
        for page in (board, desk):
            expect(page.locator("#phase")).to_have_text(label)
            expect(page.locator("#phase")).to_have_class("phase paused")
            expect(page.locator("#clock")).to_have_class(re.compile(r"\bpaused\b"))  # blinks
        expect(desk.locator("button[data-command=toggle]")).to_have_text(
            en("ctl.start") if stopped else en("ctl.resume"))
        desk.select_option("#language", "sk")
        expect(desk.locator("#phase")).to_have_text(
            re.compile("^" + re.escape(sk(key, time="")) + r"\d:\d\d$"))
        assert board.errors == desk.errors == []  # type: ignore[attr-defined]
    finally:
        ctx.close()
        daemon.stop()


#: The buttons' words that break across lines (a word drawn on two lines is unreadable).
BROKEN_WORDS = """() => {
  const broken = [];
  for (const button of document.querySelectorAll("button")) {
    if (!button.offsetParent) continue;
    const walker = document.createTreeWalker(button, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.textContent.matchAll(/[^\\s-]+/g)) {  // a hyphen may break
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(word[0]);
      }
    }
  }
  return broken;
}"""


@pytest.mark.parametrize("language", ["en", "sl", "sk"])
def test_no_button_word_breaks_on_the_smallest_phone(
        browser: Browser, paused: Daemon, language: str) -> None:
    """On a 360 px phone a long one-word label (Slovak VHADZOVANIE, faceoff) stays whole."""
    ctx = context(browser, paused, (360, 640))
    try:
        page = open_page(ctx, paused, f"/control?lang={language}")
        expect(page.locator("button[data-command=faceoff]")).to_be_visible()
        assert page.evaluate(BROKEN_WORDS) == []
        page.close()
    finally:
        ctx.close()


#: Sizes on a TV, in the page: the font of the team names, the header (the period), the
#: penalty rows, as a share of the height; whether each is inside the screen; the colours.
TV_READING = """() => {
  const vh = window.innerHeight, vw = document.documentElement.clientWidth;
  const size = (el) => parseFloat(getComputedStyle(el).fontSize) / vh;
  const inside = (el) => { const r = el.getBoundingClientRect();
    return r.left >= 0 && r.right <= vw + 0.5 && r.bottom <= vh + 0.5; };
  const rows = [...document.querySelectorAll(".box > div")];
  const names = [...document.querySelectorAll("#score .team")];
  const css = getComputedStyle(document.documentElement);
  return { team: Math.min(...names.map(size)), header: size(document.querySelector("header")),
    penalty: Math.min(...rows.map(size)), rows: rows.length,
    inside: [...names, ...rows, document.getElementById("period")].every(inside),
    sidesOfClock: names.every((n) => { const c = document.getElementById("clock")
      .getBoundingClientRect(), r = n.getBoundingClientRect();
      return r.right <= c.left + 1 || r.left >= c.right - 1; }),
    colours: Object.fromEntries(["home", "away", "paused", "last30"]
      .map((k) => [k, css.getPropertyValue(`--${k}`).trim()])) };
}"""


def lab(colour: str) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of a #rrggbb colour."""
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    x = (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2]) / 0.95047
    y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    z = (0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2]) / 1.08883
    f = [v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116 for v in (x, y, z)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


@pytest.mark.parametrize("language", ["en", "sl", "sk"])
def test_the_tv_reads_from_five_metres_using_the_side_thirds(
        browser: Browser, tmp_path: Path, language: str) -> None:
    """Issue 31: at 1920x1080 and 1280x720 the team names (at least 6% of the height; 5%
    before), the header with the period (5%) and the penalty rows (3.8%) sit in the side
    thirds, beside the clock, inside the screen; paused and the last 30 s have colours far
    from both teams' (CIE76 distance at least 40: the old paused blue was 34 from the away
    blue, the old amber 22 from the home yellow)."""
    daemon = Daemon(tmp_path, speed=SPEED, profile="isbhf").start()
    try:
        for command in (["teams", "HK Olimpija Ljubljana", "HC Košice", "2"], ["start"],
                        ["stop"], ["penalty", "home", "minor", "17"],
                        ["penalty", "home", "minor", "4"], ["penalty", "home", "major", "9"],
                        ["penalty", "away", "misconduct", "22"]):
            assert daemon.command(*command)[0] == 200, command
        for size in sorted(TV_SIZES):
            ctx = context(browser, daemon, size)
            page = open_page(ctx, daemon, f"/?kiosk=1&lang={language}")
            expect(page.locator("#home-box > div")).to_have_count(3)
            m = page.evaluate(TV_READING)
            assert m["team"] >= 0.06, (size, m)
            assert m["header"] >= 0.05, (size, m)
            assert m["penalty"] >= 0.038, (size, m)
            assert m["inside"], (size, m)
            assert m["sidesOfClock"], (size, m)
            assert page.evaluate(LAYOUT)["poor"] == []
            ctx.close()
        for state in ("paused", "last30"):
            for team in ("home", "away"):
                a, b = lab(m["colours"][state]), lab(m["colours"][team])
                assert sum((p - q) ** 2 for p, q in zip(a, b, strict=True)) ** 0.5 >= 40, (
                    state, team, m["colours"])
    finally:
        daemon.stop()


#: The TV's boxes as a spectator reads them, in the page: each goals' text baseline (the
#: bottom of its glyphs' line box, by a Range over the text), whether a name is cut (an
#: ellipsis or a clip: its text wider or taller than its box) or breaks inside a word, and
#: each line of the running timeout's text against the clock's centre.
TV_BOXES = """() => {
  const lines = (el) => { const range = document.createRange(); range.selectNodeContents(el);
    return [...range.getClientRects()]; };
  const baseline = (id) => Math.max(...lines(document.getElementById(id)).map((r) => r.bottom));
  const names = ["home-name", "away-name"].map((id) => document.getElementById(id));
  const vh = window.innerHeight;
  const brokenWords = names.flatMap((el) => [...el.textContent.matchAll(/\\S+/g)].filter((w) => {
    const range = document.createRange(), node = el.firstChild;
    range.setStart(node, w.index); range.setEnd(node, w.index + w[0].length);
    return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1;
  }).map((w) => w[0]));
  const clock = document.getElementById("clock").getBoundingClientRect();
  const timeout = document.getElementById("timeout");
  return {
    baselines: [baseline("home"), baseline("away")],
    nameLines: names.map((el) => new Set(lines(el).map((r) => Math.round(r.top))).size),
    cut: names.filter((el) => el.scrollWidth > el.clientWidth + 1
      || el.scrollHeight > el.clientHeight + 1
      || getComputedStyle(el).textOverflow === "ellipsis" && el.scrollWidth > el.clientWidth)
      .map((el) => el.id),
    brokenWords,
    nameSize: Math.min(...names.map((el) => parseFloat(getComputedStyle(el).fontSize) / vh)),
    clockCentre: (clock.left + clock.right) / 2,
    timeoutLines: timeout.hidden ? [] : lines(timeout).filter((r) => r.width > 1)
      .map((r) => (r.left + r.right) / 2),
    used: Math.max(...[...document.querySelectorAll("main *")].filter((el) => el.offsetParent)
      .map((el) => el.getBoundingClientRect().bottom)) / vh,
  };
}"""


def test_the_tv_fits_long_names_keeps_the_scores_level_and_centres_the_timeout(
        browser: Browser, tmp_path: Path) -> None:
    """Issue 45 item 3, at 1920x1080. Fails on main: the long name was cut to
    "HC Olimpij…" (an ellipsis after its second line), its goals stood 74 px below the other
    team's when one name took two lines, the timeout's second line (Slovak) started at the
    left of the middle column under the centred clock, and the penalties and the timeout
    left the lower part of the screen empty."""
    # Speed 2: the 30 s timeout lasts 15 real seconds, time enough to measure it.
    daemon = Daemon(tmp_path, speed=2, profile="isbhf").start()
    try:
        for command in (["teams", "HC Olimpija Ljubljana", "Košice", "2"], ["start"], ["stop"],
                        ["goal", "home", "17"], ["penalty", "home", "minor", "17"],
                        ["penalty", "away", "major", "22"], ["timeout", "home"]):
            assert daemon.command(*command)[0] == 200, command
        ctx = context(browser, daemon, (1920, 1080))
        # In Slovak the timeout's line is longest: "Oddychový čas HC Olimpija Ljubljana 0:28".
        page = open_page(ctx, daemon, "/?kiosk=1&lang=sk")
        expect(page.locator("#timeout")).to_contain_text("HC Olimpija Ljubljana")
        m = page.evaluate(TV_BOXES)
        assert m["nameLines"] == [2, 1], m  # the long name takes two lines, the other one
        assert abs(m["baselines"][0] - m["baselines"][1]) <= 2, m  # both goals on one line
        assert m["cut"] == [], m  # whole: shrunk to fit, not ellipsised
        assert m["brokenWords"] == [], m  # broken only between words
        assert m["nameSize"] >= 0.06, m  # and still read from 5 m (issue 31)
        assert len(m["timeoutLines"]) >= 1, m
        for centre in m["timeoutLines"]:  # every line of it under the clock's centre
            assert abs(centre - m["clockCentre"]) <= 2, m
        # The room under the clock is used: the penalties and the timeout reach into the
        # lower quarter of the screen (on main they ended at 69% of its height).
        assert m["used"] >= 0.75, m
        assert page.errors == []  # type: ignore[attr-defined]
        ctx.close()
    finally:
        daemon.stop()


def test_the_tv_lists_each_teams_goals_under_its_score(browser: Browser, tmp_path: Path) -> None:
    """Issue 45 item 3: the room under the scores shows what a spectator who came late wants,
    each team's goals at their match times, in the page's language, inside the team's column
    and without overflowing a phone. A goal that did not count (ITHF 5.1: before the start
    signal) is not listed. Fails on main: no goal is listed."""
    daemon = Daemon(tmp_path, speed=4).start()  # the pre-signal lasts 5 s
    try:
        assert daemon.command("teams", "Jana Novak", "Peter Horvat")[0] == 200
        assert daemon.command("start")[0] == 200  # the pre-signal: play has not begun
        assert daemon.command("goal", "away")[0] == 200
        page_wait(lambda: daemon.state()["phase"] == "running"
                  and daemon.state()["faceoff_guard_s"] is None)
        for side in ("home", "away", "home"):
            assert daemon.command("goal", side)[0] == 200
        assert daemon.command("pause")[0] == 200
        goals = daemon.state()["goals"]
        assert [g["counted"] for g in goals] == [False, True, True, True], goals
        for size, lang in (((1920, 1080), "en"), ((1920, 1080), "sl"), ((360, 640), "sk")):
            ctx = context(browser, daemon, size)
            page = open_page(ctx, daemon, f"/?kiosk=1&lang={lang}")
            said = Messages(lang)
            for side in ("home", "away"):
                times = [said.value("clock", g["match_time_s"]) for g in goals
                         if g["side"] == side and g["counted"]]
                expect(page.locator(f"#{side}-box .scored")).to_have_text(
                    said("web.goal_log", times=" · ".join(times)))
            assert page.evaluate("document.documentElement.scrollWidth") == size[0]
            if size == (1920, 1080):  # each list in its team's third, clear of the clock's
                boxes = page.evaluate("""() => ['home-box', 'clock', 'away-box'].map((id) => {
                    const r = document.getElementById(id).querySelector('.scored')
                      ?.getBoundingClientRect() ?? document.getElementById(id)
                      .getBoundingClientRect();
                    return [r.left, r.right]; })""")
                (_, home_right), (clock_left, clock_right), (away_left, _) = boxes
                assert home_right <= clock_left, boxes
                assert clock_right <= away_left, boxes
            assert page.errors == []  # type: ignore[attr-defined]
            ctx.close()
    finally:
        daemon.stop()


def test_a_busy_rink_keeps_the_goal_list_on_the_screen(browser: Browser, tmp_path: Path) -> None:
    """Issue 45 item 3: with a rink's penalties in its box, a team's goal list gives way on a
    720p TV: it shows its last goals after "…", as many as fit above the screen's bottom, and
    never runs off it (before the fit, three penalties pushed it past the edge)."""
    daemon = Daemon(tmp_path, speed=1, profile="isbhf").start()
    try:
        for command in (["start"], ["stop"], *(["goal", "home", str(n)] for n in range(11, 18)),
                        *(["penalty", "home", "minor", str(n)] for n in (4, 5, 6))):
            assert daemon.command(*command)[0] == 200, command
        ctx = context(browser, daemon, (1280, 720))
        page = open_page(ctx, daemon, "/?kiosk=1")
        log = page.locator("#home-box .scored")
        expect(log).to_contain_text("#17")  # the last goal
        assert page.evaluate("document.getElementById('home-box').getBoundingClientRect()"
                             ".bottom") <= 720
        assert log.inner_text().startswith(Messages("en")("web.goal_log", times="…")), \
            log.inner_text()  # some goals gave way
        assert page.errors == []  # type: ignore[attr-defined]
        ctx.close()
    finally:
        daemon.stop()
