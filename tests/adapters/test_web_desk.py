"""Issue 31: the score desk a thumb can trust, on phones, in Debian's headless chromium with
touch emulation, against real daemons.

- No wrong-side goal: at 360x640, 390x844 and 412x915, for every built-in profile, with
  every panel of the desk open in turn, the page is exactly as wide as the phone and a tap at
  each button's centre sends that button's command; a goal goes to the daemon, whose score
  per side is checked after each (the old desk was 764 px wide with "Scorer and assists"
  open, and a tap aimed at GOAL home scored for away).

One browser for the module; each test its own daemon. Real daemons and real time: e2e.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Route, expect
from test_web_layout import page_wait
from web_harness import (
    Daemon,
    browser_fixture,  # noqa: F401 (the `browser` fixture)
)

from timerd.config.profiles import builtin_names
from timerd.i18n import Messages
from timerd.wire import REPLY_FORMAT

#: Real daemons, a browser and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e

TIMEOUT_MS = 20_000
#: The phones of the issue, each in one of the languages (Slovak's long words on the smallest).
PHONES = [((360, 640), "sk"), ((390, 844), "sl"), ((412, 915), "en")]
#: Slow enough that no match ends while its desk is tapped through (a 5:00 ITHF match lasts
#: 75 real seconds), fast enough to reach play quickly.
SPEED = 4

#: Every enabled button of the desk that sends a command, with its centre and what it sends.
DESK_BUTTONS = """() => [...document.querySelectorAll("button[data-command]")]
  .filter((b) => b.checkVisibility() && !b.disabled)
  .map((b, i) => { b.dataset.tap = String(i);
    return { index: i, command: b.dataset.command, side: b.dataset.side || null,
      result: b.dataset.result || null, confirm: "confirm" in b.dataset,
    text: b.textContent.trim() }; })"""

#: The panels a desk can open: its <details> and the token form (its "Token" button).
PANELS = """() => [...document.querySelectorAll("details")].filter((d) => !d.closest("[hidden]"))
  .map((d) => d.id || d.className)"""


def phone(browser: Browser, daemon: Daemon, size: tuple[int, int], language: str, *,
          stored: bool = True, link: str = "", clock: bool = False
          ) -> tuple[BrowserContext, Page]:
    """A phone held upright, touch only, showing `/control`: with the desk's token stored
    (`stored`), or opened from `link` (a fragment: `#code=...` of `timerctl desk`); with
    playwright's clock in the page (`clock`: the test holds and moves the page's time)."""
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]}, has_touch=True,
                              is_mobile=True, device_scale_factor=2, locale="en-GB")
    ctx.set_default_timeout(TIMEOUT_MS)
    if stored:
        ctx.add_init_script(f"localStorage.setItem('timerd.token', '{daemon.token}')")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors  # type: ignore[attr-defined]
    page.taps = {}  # type: ignore[attr-defined]  # when each button was last tapped (check_panel)
    if clock:
        page.clock.install()
    page.goto(f"{daemon.url}/control?lang={language}{link}")
    expect(page.locator("#link")).to_have_class("link up")
    expect(page.locator("button[data-command=toggle]")).to_be_visible()
    return ctx, page


def in_play(daemon: Daemon) -> None:
    """Start the match and wait for play past the faceoff guard (ITHF 5.6), polling the
    daemon (no page involved)."""
    assert daemon.command("start")[0] == 200
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while True:
        state = daemon.state()
        if state["phase"] == "running" and not state.get("faceoff_guard_s"):
            return
        assert time.monotonic() < deadline, state
        time.sleep(0.05)


def tap_centre(page: Page, index: int) -> None:
    """Tap the centre of the desk's `index`th command button, as a thumb would (scrolled into
    view first, to the middle: not under the sticky head)."""
    button = page.locator(f"[data-tap='{index}']")
    button.evaluate("b => b.scrollIntoView({ block: 'center' })")
    box = button.bounding_box()
    assert box is not None
    page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


@pytest.mark.parametrize("profile", builtin_names())
def test_every_tap_on_every_phone_sends_its_own_buttons_command(
        browser: Browser, tmp_path: Path, profile: str) -> None:
    daemon = Daemon(tmp_path, speed=SPEED, profile=profile).start()
    try:
        in_play(daemon)
        for size, language in PHONES:
            ctx, page = phone(browser, daemon, size, language)
            page.route("**/api/command", only_goals)
            panels: list[str | None] = [None, *page.evaluate(PANELS), "token-form"]
            for panel in panels:
                check_panel(page, daemon, panel, f"{profile} {size} {language} {panel}")
            check_more_in_words(page, Messages(language))
            assert page.errors == []  # type: ignore[attr-defined]
            ctx.close()
    finally:
        daemon.stop()


def only_goals(route: Route) -> None:
    """Goals reach the daemon (its score is checked); every other command is answered here,
    so the match stays in play whatever is tapped (the test checks what the tap sent)."""
    if json.loads(route.request.post_data or "{}").get("command") == "goal":
        route.continue_()
    else:
        route.fulfill(status=200, content_type="application/json", body=json.dumps(
            {"format": REPLY_FORMAT, "ok": False, "error": "not sent in this test"}))


def open_only(page: Page, panel: str | None) -> None:
    """Open `panel` (a <details> by id or class, or the token form) and close the others."""
    page.evaluate("""panel => {
      for (const d of document.querySelectorAll("details")) {
        d.open = panel !== null && (d.id === panel || d.className === panel);
      }
      document.getElementById("token-form").hidden = panel !== "token-form";
    }""", panel)


#: The commands under "More": each button's command and label, and its inputs' placeholders.
MORE = """() => [...document.querySelectorAll("#more-commands .generic")].map((row) => ({
  command: row.querySelector("button").dataset.command,
  label: row.querySelector("button").textContent,
  placeholders: [...row.querySelectorAll("input")].map((i) => i.placeholder) }))"""


def check_more_in_words(page: Page, texts: Messages) -> None:
    """Issue 31 item 6: "More" names each command and each argument in the page's language
    (its catalogue's words), never by the daemon's raw names (`faceoff?`, `args...`)."""
    rows = page.evaluate(MORE)
    assert rows
    for row in rows:
        assert row["label"] == texts(f"ctl.cmd.{row['command']}"), row
        for placeholder in row["placeholders"]:
            assert not re.search(r"[?|]|\.\.\.$", placeholder), row


def check_panel(page: Page, daemon: Daemon, panel: str | None, where: str) -> None:
    open_only(page, panel)
    width = page.viewport_size["width"] if page.viewport_size else 0
    assert page.evaluate("document.documentElement.scrollWidth") == width, where
    for b in page.evaluate(DESK_BUTTONS):
        before = daemon.state()
        if b["confirm"]:  # UNDO, RESET...: the first tap only arms the button
            tap_centre(page, b["index"])
            expect(page.locator(f"[data-tap='{b['index']}']")).to_have_class(
                re.compile(r"\barmed\b"))
        # A second tap of one button within 0.5 s is a double tap the desk ignores (issue 45
        # item 4): the same button's taps, from one panel to the next, are 0.6 s apart.
        taps: dict[tuple[Any, ...], float] = page.taps  # type: ignore[attr-defined]
        key = (b["command"], b["side"], b["result"], b["text"])
        if (wait_s := 0.6 - (time.monotonic() - taps.get(key, -1.0))) > 0:
            page.wait_for_timeout(wait_s * 1000)
        with page.expect_request("**/api/command") as info:
            tap_centre(page, b["index"])
        taps[key] = time.monotonic()
        got = json.loads(info.value.post_data or "{}")
        assert got["command"] == b["command"], (where, b, got)
        if b["side"]:
            assert got["args"][:1] == [b["side"]], (where, b, got)
        if b["result"]:
            assert got["args"][1:2] == [b["result"]], (where, b, got)
        if b["command"] == "goal":
            assert info.value.response() is not None  # the daemon has answered
            check_goal(daemon, before, b["side"], where)


def check_goal(daemon: Daemon, before: dict[str, Any], side: str, where: str) -> None:
    """The goal went to `side`: one more goal entered for it, none for the other, and the
    score per side moved by the goals that counted."""
    after = daemon.state()
    new = after["goals"][len(before["goals"]):]
    assert [g["side"] for g in new] == [side], (where, new)
    other = "away" if side == "home" else "home"
    assert after["score"][other] == before["score"][other], (where, after["score"])
    assert after["score"][side] == before["score"][side] + int(new[0]["counted"]), (
        where, before["score"], after["score"])


#: ITHF with a short pre-signal and a long faceoff guard (ITHF 4.4, 5.6), so a match at real
#: speed reaches play quickly and a goal tapped after FACEOFF surely does not count.
QUICK_GUARD = ('extends = "ithf"\nname = "quick-guard"\ndescription = "test"\n'
               "ithf_conformant = false\npre_signal_lead_s = 2\nfaceoff_guard_s = 30\n")

#: Records every layout shift from now on that moves a button (the shifted node is a button
#: or holds one), whether or not a tap came just before it: a button must not move at all.
WATCH_SHIFTS = """() => {
  window.buttonShifts = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const moved = entry.sources.map((s) => s.node).filter((n) => n instanceof Element
        && (n.closest("button") || n.querySelector("button")));
      const box = (r) => [r.x, r.y, r.width, r.height].map(Math.round);
      if (moved.length) window.buttonShifts.push({ value: entry.value,
        nodes: moved.map((n) => n.id || n.className || n.tagName),
        from: entry.sources.map((s) => box(s.previousRect)),
        to: entry.sources.map((s) => box(s.currentRect)),
        scrolled: window.scrollY, at_ms: Math.round(entry.startTime) });
    }
  }).observe({ type: "layout-shift" });
}"""

#: Where every command button is, in the page (scrolled to the top); the list of penalties
#: (after every other button) comes and goes with them.
BUTTON_RECTS = """() => { window.scrollTo(0, 0);
  return Object.fromEntries([...document.querySelectorAll("button[data-command]")]
    .filter((b) => b.checkVisibility() && !b.dataset.number).map((b) => {
      const r = b.getBoundingClientRect();
      return [`${b.dataset.command} ${b.dataset.side || ""}`, [r.x, r.y, r.width, r.height]];
    })); }"""


def nothing_moved(page: Page, rects: dict[str, Any]) -> None:
    """Every button is where it was (`rects`), no layout shift moved one, no script error."""
    assert page.evaluate(BUTTON_RECTS) == rects
    assert page.evaluate("window.buttonShifts") == []
    assert page.errors == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("language", ["en", "sl", "sk"])
def test_no_button_moves_under_the_thumb_over_a_match(
        browser: Browser, tmp_path: Path, language: str) -> None:
    """A refusal, a NO GOAL banner (it shows for 6 s), a pause and its resume, a second tap:
    no layout shift moves a button, and every button ends where it began. The table's name
    and round stay on their line whether the phase reads "Running" or "PAUSED 0:12"."""
    texts = Messages(language)
    (tmp_path / "quick.toml").write_text(QUICK_GUARD)
    daemon = Daemon(tmp_path, profile=str(tmp_path / "quick.toml"),
                    extra_config='[table]\nname = "Table 3"\n').start()
    try:
        assert daemon.command("teams", "Jana Novak-Kovač", "Peter Horvat", "QF 2")[0] == 200
        ctx, page = phone(browser, daemon, (360, 640), language)
        button = lambda command, side="": page.locator(  # noqa: E731
            f"button[data-command={command}]" + (f"[data-side={side}]" if side else ""))
        expect(page.locator("#where")).to_be_visible()
        page.evaluate(WATCH_SHIFTS)
        where = page.locator("#where").bounding_box()
        rects = page.evaluate(BUTTON_RECTS)
        button("goal", "home").tap()  # no match yet: refused, with its reason
        expect(page.locator("#reply")).to_have_class(re.compile(r"\berror\b"))
        button("toggle").tap()
        expect(page.locator("#phase")).to_have_class("phase running")
        button("faceoff").tap()  # its own reply: START's ("done", ok) stood there already
        expect(page.locator("#reply")).to_have_text(
            texts("ctl.done", what=texts("ctl.faceoff")))
        button("goal", "away").tap()  # in the faceoff guard: NO GOAL (ITHF 5.6)
        expect(page.locator("#no-goal")).to_be_visible()
        assert page.evaluate(BUTTON_RECTS) == rects
        button("toggle").tap()
        expect(page.locator("#phase")).to_have_class("phase paused")
        assert page.locator("#where").bounding_box() == where
        expect(page.locator("#no-goal")).to_be_hidden(timeout=TIMEOUT_MS)  # after 6 s
        button("undo").tap()
        expect(button("undo")).to_have_class(re.compile(r"\barmed\b"))
        assert page.evaluate(BUTTON_RECTS) == rects
        button("undo").tap()
        # UNDO's own reply: PAUSE's ("done", ok) stood there already, and the next UNDO
        # could go while this one was still on its way.
        expect(page.locator("#reply")).to_have_text(
            texts("ctl.done", what=texts("ctl.undo")))
        button("undo").tap()
        button("undo").tap()  # nothing left to undo: refused
        expect(page.locator("#reply")).to_have_class(re.compile(r"\berror\b"))
        button("toggle").tap()
        expect(page.locator("#phase")).to_have_class("phase running")
        assert page.locator("#where").bounding_box() == where
        nothing_moved(page, rects)
        ctx.close()
    finally:
        daemon.stop()


@pytest.mark.parametrize("language", ["en", "sl", "sk"])
def test_ball_hockey_desk_shows_and_cancels_penalties_timeouts_and_the_line_change(
        browser: Browser, tmp_path: Path, language: str) -> None:
    """ISBHF on a 360x640 phone: PENALTY and RESET above the fold; penalties given on the desk
    are listed per side (number, player, kind, time left; the third of a side waiting, ISBHF
    4xx), the reply echoes the kind and player entered; a running timeout names its team
    (412), the line change its stage (404b); a penalty is cancelled from the list (a second
    tap). No button moves meanwhile."""
    texts = Messages(language)
    daemon = Daemon(tmp_path, profile="isbhf",
                    extra_config='[table]\nname = "Table 3"\n').start()
    try:
        assert daemon.command("teams", "HK Olimpija", "HC Košice", "2")[0] == 200
        in_play(daemon)
        ctx, page = phone(browser, daemon, (360, 640), language)
        button = lambda command, side="": page.locator(  # noqa: E731
            f"button[data-command={command}]" + (f"[data-side={side}]" if side else ""))
        for command in ("penalty", "reset"):  # above the fold, nothing scrolled
            box = button(command).first.bounding_box()
            assert box is not None
            assert box["y"] + box["height"] <= 640, (command, box)
        page.evaluate(WATCH_SHIFTS)
        rects = page.evaluate(BUTTON_RECTS)
        button("toggle").tap()  # the whistle (ISBHF 407)
        expect(page.locator("#phase")).to_have_class("phase paused")
        for kind, player in (("major", "17"), ("minor", "4"), ("minor", "9")):
            page.select_option("select.kind", kind)
            page.fill("input[name=player]", player)
            button("penalty", "home").tap()
            expect(page.locator("#reply")).to_have_text(texts(
                "ctl.done", what=f"{texts('ctl.penalty', side='HK Olimpija')} "
                                 f"({texts(f'kind.{kind}')}, #{player})"))
        items = page.locator(".penalty-side.home button[data-command=penalty-cancel]")
        expect(items).to_have_count(3)
        expect(items.nth(0)).to_have_text(f"1. #17 {texts('kind.major')} 5:00")
        expect(items.nth(1)).to_have_text(f"2. #4 {texts('kind.minor')} 2:00")
        expect(items.nth(2)).to_have_text(  # a third penalty waits for a place
            f"3. #9 {texts('kind.minor')} {texts('web.penalty_waiting')}")
        expect(items.nth(2)).to_have_class(re.compile(r"\bwaiting\b"))
        expect(page.locator(".penalty-side.home .penalty-head")).to_have_text(
            texts("ctl.penalties_of", side="HK Olimpija"))
        button("timeout", "away").tap()
        expect(page.locator("#situation")).to_have_text(re.compile(
            "^" + re.escape(texts("ctl.timeout_running", side="HC Košice", time="TIME"))
            .replace("TIME", r"0:[0-2]\d") + "$"))
        button("linechange").tap()
        expect(page.locator("#situation")).to_contain_text(
            texts("web.line_change", stage=texts("stage.visitors"), time="0:05", n=1, of=3)
            .split(" 0:05")[0])
        items.nth(1).tap()
        expect(items.nth(1)).to_have_class(re.compile(r"\barmed\b"))
        items.nth(1).tap()  # the second tap cancels penalty 2
        expect(page.locator("#reply")).to_have_text(re.compile(
            "^" + re.escape(texts("ctl.cancel_penalty", penalty=f"2. #4 {texts('kind.minor')}"))))
        expect(items).to_have_count(2)
        numbers = sorted((p["side"], p["number"]) for p in daemon.state()["penalties"])
        assert numbers == [("home", 1), ("home", 3)]
        expect(items.nth(1)).not_to_have_class(re.compile(r"\bwaiting\b"))  # 3 takes its place
        nothing_moved(page, rects)
        ctx.close()
    finally:
        daemon.stop()


@pytest.mark.parametrize("language", ["en", "sl", "sk"])
def test_a_phone_is_paired_by_the_link_and_a_wrong_token_is_told_in_its_language(
        browser: Browser, tmp_path: Path, language: str) -> None:
    """The link `timerctl desk` shows (its QR code) pairs the phone: its one-time code leaves
    the address bar, and the phone keeps a credential of its own, never the table's token;
    the TV scoreboard never shows either. The used link pairs no other phone, and a wrong
    token is told wholly in the page's language (no HTTP words)."""
    texts = Messages(language)
    daemon = Daemon(tmp_path, speed=SPEED).start()
    try:
        in_play(daemon)
        link = "#" + daemon.pairing_link().split("#", 1)[1]
        ctx, page = phone(browser, daemon, (390, 844), language, stored=False, link=link)
        expect(page.locator("#reply")).to_have_text(texts("ctl.paired"))
        assert "#" not in page.url  # replaced in the history, not a new entry
        kept = page.evaluate("localStorage.getItem('timerd.token')")
        assert kept.startswith("d1.")
        assert daemon.token not in kept
        expect(page.locator("#token-form")).to_be_hidden()
        page.locator("button[data-command=goal][data-side=home]").tap()
        expect(page.locator("#home")).to_have_text("1")
        assert daemon.state()["score"] == {"home": 1, "away": 0}
        board = ctx.new_page()
        board.goto(f"{daemon.url}/?kiosk=1&lang={language}")
        expect(board.locator("#home")).to_have_text("1")
        for secret in (daemon.token, kept):
            assert secret not in board.content()
            assert secret not in board.evaluate("document.body.innerText")

        used, phone3 = phone(browser, daemon, (390, 844), language, stored=False, link=link)
        expect(phone3.locator("#reply")).to_have_text(texts("ctl.pair_refused"))
        expect(phone3.locator("#token-form")).to_be_visible()
        assert phone3.evaluate("localStorage.getItem('timerd.token')") is None
        used.close()

        wrong, phone2 = phone(browser, daemon, (390, 844), language, stored=False)
        phone2.fill("#token", "not-the-token")
        phone2.locator("#token-form button[type=submit]").tap()
        expect(phone2.locator("#token-form")).to_be_hidden()
        phone2.locator("button[data-command=goal][data-side=away]").tap()
        expect(phone2.locator("#reply")).to_have_text(texts("ctl.need_token"))
        expect(phone2.locator("#token-form")).to_be_visible()
        assert daemon.state()["score"] == {"home": 1, "away": 0}
        wrong.close()
        ctx.close()
    finally:
        daemon.stop()


#: Where the running timeout's time (m:ss) lies in the desk's situation line, and the line.
TIME_IN_SITUATION = """() => {
  const line = document.getElementById("situation");
  const node = line.firstChild;
  const found = /\\d+:\\d\\d/.exec(node.textContent);
  const range = document.createRange();
  range.setStart(node, found.index);
  range.setEnd(node, found.index + found[0].length);
  const time = range.getBoundingClientRect(), box = line.getBoundingClientRect();
  return { text: node.textContent, left: time.left, right: time.right, boxLeft: box.left,
    boxRight: box.right, cut: line.scrollWidth > line.clientWidth };
}"""


@pytest.mark.parametrize("language", ["en", "sl", "sk"])
def test_the_timeout_countdown_stays_in_view_beside_a_long_team_name(
        browser: Browser, tmp_path: Path, language: str) -> None:
    """Issue 45 item 4. Old code: on a 360 px phone the line read "Timeout HC Košice Steel
    Wol…", the time cut off behind the "…"; now the time comes first."""
    texts = Messages(language)
    daemon = Daemon(tmp_path, profile="isbhf").start()
    try:
        away = "HC Košice Steel Wolves Juniors"
        assert daemon.command("teams", "HK Olimpija Ljubljana Dragons", away, "2")[0] == 200
        in_play(daemon)
        ctx, page = phone(browser, daemon, (360, 640), language)
        page.locator("button[data-command=toggle]").tap()  # the whistle (ISBHF 407)
        expect(page.locator("#phase")).to_have_class("phase paused")
        page.locator("button[data-command=timeout][data-side=away]").tap()
        expect(page.locator("#situation")).to_contain_text(away[:8])
        seen = page.evaluate(TIME_IN_SITUATION)
        assert seen["cut"], seen  # the name is too long for the line: cut, as it may be
        assert seen["text"].startswith(("0:", "1:")), seen
        assert seen["boxLeft"] <= seen["left"] < seen["right"] <= seen["boxRight"], seen
        assert texts("ctl.timeout_running", time="", side=away).strip() in seen["text"]
        ctx.close()
    finally:
        daemon.stop()


#: Counts the page's POST /api/command requests by command, in window.sent.
COUNT_SENT = """() => {
  window.sent = {};
  const original = window.fetch;
  window.fetch = (url, options) => {
    if (String(url).endsWith("/api/command")) {
      const { command } = JSON.parse(options.body);
      window.sent[command] = (window.sent[command] || 0) + 1;
    }
    return original(url, options);
  };
}"""


@pytest.mark.parametrize("language", ["en", "sl", "sk"])
def test_a_double_tap_is_one_goal_and_one_pause_and_is_said(
        browser: Browser, tmp_path: Path, language: str) -> None:
    """Issue 45 item 4, with touch emulation and the page's clock held (playwright's clock:
    the taps are exactly 120 ms and 600 ms apart, whatever the machine's load). Old code: two
    taps on GOAL 120 ms apart counted two goals, and PAUSE tapped twice paused and resumed."""
    texts = Messages(language)
    daemon = Daemon(tmp_path, speed=SPEED).start()
    try:
        in_play(daemon)
        ctx, page = phone(browser, daemon, (360, 640), language, clock=True)
        page.evaluate(COUNT_SENT)
        page.clock.pause_at(page.evaluate("Date.now()") + 1000)
        goal = page.locator("button[data-command=goal][data-side=home]")
        label = texts("ctl.goal_home", side=texts("side.home"))
        twice = texts("ctl.double_tap", what=label, s=0.5)
        before = len(daemon.state()["goals"])
        goal.tap()
        page.clock.run_for(120)
        goal.tap()  # a double tap: ignored, and said, also once the first is done
        expect(page.locator("#reply")).to_have_text(twice)
        page_wait(lambda: len(daemon.state()["goals"]) == before + 1)
        expect(page.locator("#reply")).to_have_text(twice)
        assert page.evaluate("window.sent") == {"goal": 1}
        page.clock.run_for(600)
        goal.tap()  # a second goal, meant: 0.72 s after the first tap
        expect(page.locator("#reply")).to_have_text(texts("ctl.done", what=label))
        assert page.evaluate("window.sent") == {"goal": 2}
        assert len(daemon.state()["goals"]) == before + 2

        toggle = page.locator("button[data-command=toggle]")
        page.clock.run_for(600)
        toggle.tap()
        page.clock.run_for(120)
        toggle.tap()
        expect(page.locator("#phase")).to_have_class("phase paused")
        expect(page.locator("#reply")).to_have_text(
            texts("ctl.double_tap", what=texts("ctl.pause"), s=0.5))
        assert page.evaluate("window.sent") == {"goal": 2, "toggle": 1}
        assert daemon.state()["phase"] == "paused"  # paused, not paused and resumed
        ctx.close()
    finally:
        daemon.stop()
