"""For the web API and browser tests and the screenshot script: a real daemon, and chromium.

`Daemon` is a real `timerd run --simulate` in a subprocess with its web server on a loopback
port, its own config file and control socket; it can be stopped and started again on the same
port (the page must recover). Its log lines are collected by a thread, and waits are on those
lines, on HTTP replies or on conditions in the page, each with a timeout; nothing sleeps to let
time pass. Chromium is Debian's, driven by playwright; nothing is downloaded.
"""

from __future__ import annotations

import base64
import http.client
import json
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import require
from playwright.sync_api import Browser, Page, expect, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
READY = "web scoreboard at"
START_TIMEOUT_S = 20.0
#: How long an `expect` in a browser test waits for its condition. Playwright's own default
#: is 5 s, whatever a context's `set_default_timeout` says (that one is for actions only):
#: short for a page that loads, connects and fetches its catalogue on a loaded 2-core machine.
EXPECT_TIMEOUT_MS = 20_000
expect.set_options(timeout=EXPECT_TIMEOUT_MS)
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
#: Daemon speed for browser tests: a minute of match time in three real seconds.
SPEED = 20

#: The clock's text in seconds ("4:32" -> 272, "9.5" -> 9.5), evaluated in the page.
CLOCK_S = """() => {
  const t = document.getElementById("clock").textContent;
  if (t.includes(":")) { const [m, s] = t.split(":"); return 60 * Number(m) + Number(s); }
  return Number(t);
}"""


#: In the scoreboard: window.scoreSeen resolves with performance.timeOrigin + now() when
#: #home reads `goals` (the same clock as the desk's tap: both pages' origin plus now).
SCORE_SEEN = """goals => { window.scoreSeen = new Promise((resolve) => {
  const home = document.getElementById("home");
  new MutationObserver(() => {
    if (home.textContent === goals) resolve(performance.timeOrigin + performance.now());
  }).observe(home, { childList: true, characterData: true, subtree: true });
}); }"""


#: A PNG's pixels, decoded by the browser without premultiplying (alpha as stored): how many
#: pixels outside `box` (grown by `margin`) are not fully transparent, and the share of
#: pixels inside the panel `panel` that cover the picture (alpha 90% or more: the panel is
#: 94% opaque, the clock's cell and the text wholly).
ALPHA = """async ({ png, box, margin, panel }) => {
  const blob = await (await fetch(`data:image/png;base64,${png}`)).blob();
  const bitmap = await createImageBitmap(blob, { premultiplyAlpha: "none",
    colorSpaceConversion: "none" });
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const ctx = canvas.getContext("2d", { colorSpace: "srgb" });
  ctx.drawImage(bitmap, 0, 0);
  const { data, width, height } = ctx.getImageData(0, 0, bitmap.width, bitmap.height);
  let outside = 0, opaque = 0, inside = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const a = data[(y * width + x) * 4 + 3];
      const near = x >= box.left - margin && x <= box.right + margin
        && y >= box.top - margin && y <= box.bottom + margin;
      if (!near && a !== 0) outside++;
      if (x >= panel.left && x < panel.right && y >= panel.top && y < panel.bottom) {
        inside++;
        if (a >= 0.9 * 255) opaque++;
      }
    }
  }
  return { width, height, outside, opaque: opaque / inside };
}"""


def alpha(browser: Browser, png: bytes, box: dict[str, float], panel: dict[str, float],
          margin: float = 0) -> dict[str, Any]:
    """Read `png`'s alpha in a blank page of `browser` (see ALPHA): a screenshot taken with
    `omit_background`, as a streaming program's browser source composites a page."""
    page = browser.new_page()
    try:
        result: dict[str, Any] = page.evaluate(ALPHA, {
            "png": base64.b64encode(png).decode(), "box": box, "margin": margin,
            "panel": panel})
        return result
    finally:
        page.close()


def wait_clock_at_most(page: Page, seconds: float, timeout_ms: float = 10_000) -> None:
    page.wait_for_function(f"({CLOCK_S})() <= {seconds}", polling="raf", timeout=timeout_ms)



@pytest.fixture(scope="module", name="browser")
def browser_fixture() -> Iterator[Browser]:
    """`browser`: Debian's chromium, headless, for a test module (skipped where it is not
    installed). A module takes it with `from web_harness import browser_fixture`."""
    require(CHROMIUM.exists(), "Debian's chromium (/usr/bin/chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def timerctl(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`timerctl ARGS` as a user runs it, in a process of its own."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; from timerd.cli import timerctl; "
         "sys.exit(timerctl())", *args], cwd=ROOT, capture_output=True, text=True,
        timeout=60, check=False, env=env)


@dataclass
class Daemon:
    tmp: Path
    speed: float = 1.0
    token: str = "test-token-0123456789"
    profile: str = "ithf"
    #: More of the config file: `[table]`, `[ui]` sections.
    extra_config: str = ""
    #: More of its `[web]` section (`enabled = false`).
    web_extra: str = ""
    #: `-o SECTION.KEY=VALUE` on its command line.
    overrides: list[str] = field(default_factory=list)
    #: The log line that says it is ready.
    ready: str = READY
    #: Its web port; 0 (the default): the one the kernel gives its first start, learned from
    #: its ready line and kept for a restart. A port picked free here and bound by the daemon
    #: a second later could be taken by another process meanwhile.
    port: int = 0
    proc: subprocess.Popen[str] | None = None
    log: list[str] = field(default_factory=list)
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _ended: bool = False  # the daemon's stderr closed: it exited

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def socket(self) -> Path:
        """Its control socket (`timerctl --socket`)."""
        return self.tmp / "control.sock"

    def start(self) -> Daemon:
        config = self.tmp / "timerd.toml"
        # Its own state directories: a module-scoped daemon starts before conftest's
        # per-test ones exist, and must not restore a match another test left.
        config.write_text(f'[web]\nhost = "127.0.0.1"\nport = {self.port}\n'
                          f'token = "{self.token}"\n{self.web_extra}'
                          f'[state]\ndirectory = "{self.tmp / "state"}"\n'
                          f'runtime_directory = "{self.tmp / "run"}"\n'
                          # No speaker: its player opening (or failing to) in its thread
                          # would change the status between two reads of an idle table.
                          '[speaker]\nenabled = false\n'
                          + self.extra_config)
        self.log.clear()
        self._ended = False
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "timerd", "run", "--simulate", "--speed", str(self.speed),
             "--config", str(config), "--profile", self.profile,
             "--control", str(self.socket),
             *(a for o in self.overrides for a in ("-o", o))],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()
        self.wait_log(self.ready, START_TIMEOUT_S)
        if self.port == 0:  # the port its web server says (none with the server off)
            with self._changed:
                bound = next((m for line in self.log if READY in line
                              and (m := re.search(r"http://127\.0\.0\.1:(\d+)/", line))), None)
            if bound:
                self.port = int(bound[1])
        return self

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            with self._changed:
                self.log.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    def wait_log(self, text: str, timeout_s: float) -> str:
        """The first log line holding `text`, waiting for it; fails with the log on timeout."""
        def found() -> str | None:
            return next((line for line in self.log if text in line), None)

        with self._changed:
            self._changed.wait_for(lambda: found() or self._ended, timeout_s)
            hit = found()
        if not hit:
            code = None if self.proc is None else self.proc.poll()
            raise AssertionError(f"timerd never logged {text!r} (exit code {code}):\n"
                                 + "\n".join(self.log))
        return hit

    def stop(self) -> None:
        """SIGTERM, as systemd stops it; waits for the clean exit."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=15)
        self.proc = None

    # -- HTTP ------------------------------------------------------------------------------

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, Any]:
        """One request; returns the status and the JSON body (None if the body is not JSON)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            data = response.read()
        finally:
            conn.close()
        try:
            return response.status, json.loads(data)
        except ValueError:
            return response.status, None

    def state(self) -> dict[str, Any]:
        status, body = self.request("GET", "/api/state")
        assert status == 200, body
        assert isinstance(body, dict)
        return body

    def timerctl(self, *args: str) -> str:
        """`timerctl --socket ITS_SOCKET ARGS`'s output, which must succeed."""
        done = timerctl("--socket", str(self.socket), *args)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def pairing_link(self) -> str:
        """The first link `timerctl desk` prints for this daemon, as a user runs it (its
        one-time pairing code in the fragment: `http://.../control#code=...`)."""
        return next(line.strip() for line in self.timerctl("desk").splitlines()
                    if "://" in line)

    def command(self, name: str, *args: str, token: str | None = None) -> tuple[int, Any]:
        """POST /api/command with the daemon's token (or `token`)."""
        return self.request(
            "POST", "/api/command", json.dumps({"command": name, "args": list(args)}).encode(),
            {"Authorization": f"Bearer {self.token if token is None else token}",
             "Content-Type": "application/json"})
