"""The hall board (`timerd hall board`): every table of the hall on one page for a big screen.

The board is the desk's view (`timerd.tools.hall_desk.Desk`, one MQTT connection subscribed to every
table's retained state) served over HTTP by aiohttp, like the table's own scoreboard. Each
table's card is `hall_desk.table_row`, the same row `timerd hall status` prints: table, names,
clock face, score, phase, last seen and clock-sync warnings. All of it is computed here, in
one place; the page (timerd/web/hall_board.html, .js, .css: local assets, nothing from the
network) only lays the cards out and colours them.

- `GET /`: the page; `?kiosk=1` hides everything but the cards (a TV in kiosk mode).
- `GET /overlay`: the round on stream: every table's names, goals and clock as a ticker or a
  grid on a transparent page, for a streaming program's browser source (issue 45).
- `GET /api/board`: the board document once, `{"version", "hall", "wall", "language",
  "notices", "tables": [...]}`; every sentence in it a catalogue key and its values.
- `GET /api/i18n`: the message catalogues (as the table's web server serves them), so the
  board speaks en, sl and sk like the scoreboard.
- `GET /api/board/stream`: a WebSocket that sends the document on connect and again whenever
  it changes: within `COALESCE_S` of a message from a table (so a change is on the screen well
  within 200 ms) and every `TICK_S` for the running clocks and the "seen" ages.

Limits: at most `MAX_VIEWERS` WebSockets (more get a 503); a viewer's messages are not read
beyond `MAX_VIEWER_MESSAGE` bytes; each viewer has its own sender that keeps only the newest
document, and one that cannot take it within `SEND_TIMEOUT_S` is closed, so a slow screen
never holds up the others. The desk's limits on what comes from the broker apply
(`hall_desk.MAX_PAYLOAD_BYTES`, `MAX_TABLES`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import time
from importlib import resources
from pathlib import Path
from typing import Any

from aiohttp import web

from timerd import i18n
from timerd.config import Config, HallConfig
from timerd.tools.hall_desk import Desk, run_command, table_row
from timerd.tools.hall_text import text as said
from timerd.wire import i18n_document

log = logging.getLogger("timerd.hall.board")

ASSETS = Path(str(resources.files("timerd") / "web"))
#: The board document's format (docs/hall.md, "The hall board"); 2: `notices`, the
#: schedule's tables first.
BOARD_VERSION = 2
#: After a message from a table, wait this long for more before sending (a burst of tables
#: becomes one document); with the browser's render this keeps a change under 200 ms.
COALESCE_S = 0.02
#: Running clocks and "seen" ages are recomputed this often.
TICK_S = 0.25
MAX_VIEWERS = 64
MAX_VIEWER_MESSAGE = 1024
SEND_TIMEOUT_S = 10.0


class Board:
    """The board document, kept current from `desk`, and the viewers it is sent to."""

    def __init__(self, desk: Desk, config: HallConfig, language: str = "auto") -> None:
        self.desk = desk
        self.config = config
        self.language = language  # `[ui] language`: "auto" lets each screen choose
        self.viewers: dict[web.WebSocketResponse, asyncio.Queue[str]] = {}
        self.text = ""

    def document(self, now: float) -> dict[str, Any]:
        tables = self.desk.hall.tables
        return {"version": BOARD_VERSION, "hall": self.config.hall, "wall": now,
                "language": self.language,
                "notices": self.desk.hall.notices(),
                "tables": [table_row(tables[name], now, self.config)
                           for name in self.desk.hall.names()]}

    def _text(self, now: float) -> str:
        document = self.document(now)
        del document["wall"]  # unchanged tables make an unchanged document
        return json.dumps(document, ensure_ascii=False, sort_keys=True)

    async def run(self) -> None:
        """Send the document whenever it changes (a table's message, or the clocks)."""
        changed = self.desk.hall.changed
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), TICK_S)
                await asyncio.sleep(COALESCE_S)
            changed.clear()
            text = self._text(time.time())
            if text != self.text:
                self.text = text
                for queue in self.viewers.values():
                    _replace(queue, text)

    # -- HTTP -------------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(client_max_size=4096)
        app.router.add_get("/", self._page)
        app.router.add_get("/overlay", self._overlay)
        app.router.add_static("/static/", ASSETS)
        app.router.add_get("/api/board", self._document)
        app.router.add_get("/api/i18n", self._i18n)
        app.router.add_get("/api/board/stream", self._stream)
        return app

    async def _page(self, request: web.Request) -> web.FileResponse:
        return web.FileResponse(ASSETS / "hall_board.html",
                                headers={"Cache-Control": "no-cache"})

    async def _overlay(self, request: web.Request) -> web.FileResponse:
        """The round on stream: every table's names, goals and clock on a transparent page
        for a streaming program's browser source (docs/hall.md)."""
        return web.FileResponse(ASSETS / "hall_overlay.html",
                                headers={"Cache-Control": "no-cache"})

    async def _document(self, request: web.Request) -> web.Response:
        return web.json_response(self.document(time.time()))

    async def _i18n(self, request: web.Request) -> web.Response:
        """The message catalogues, as the table's own web server serves them: the board
        speaks the scoreboard's languages (`?lang=sl`, the browser's, `[ui] language`)."""
        return web.json_response(i18n_document(
            i18n.from_accept(request.headers.get("accept-language", "")), i18n.NAMES,
            i18n.WORDS, {code: dict(i18n.catalogue(code)) for code in i18n.LANGUAGES}))

    async def _stream(self, request: web.Request) -> web.WebSocketResponse:
        if len(self.viewers) >= MAX_VIEWERS:
            raise web.HTTPServiceUnavailable(text=f"at most {MAX_VIEWERS} board viewers")
        ws = web.WebSocketResponse(heartbeat=20.0, max_msg_size=MAX_VIEWER_MESSAGE)
        await ws.prepare(request)
        queue: asyncio.Queue[str] = asyncio.Queue(maxsize=1)
        queue.put_nowait(self._text(time.time()))
        self.viewers[ws] = queue
        sender = asyncio.create_task(self._send(ws, queue))
        try:
            async for _ in ws:
                pass  # the board takes nothing from a viewer
        finally:
            del self.viewers[ws]
            sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)
        return ws

    async def _send(self, ws: web.WebSocketResponse, queue: asyncio.Queue[str]) -> None:
        try:
            while True:
                text = await queue.get()
                await asyncio.wait_for(ws.send_str(text), SEND_TIMEOUT_S)
        except (TimeoutError, ConnectionError) as exc:
            log.info("board viewer dropped: %r", exc)
            await ws.close()


def _replace(queue: asyncio.Queue[str], text: str) -> None:
    """Put `text` in a viewer's one-slot queue, in place of a document not yet sent."""
    with contextlib.suppress(asyncio.QueueEmpty):
        queue.get_nowait()
    queue.put_nowait(text)


async def serve(config: HallConfig, args: argparse.Namespace, language: str = "auto") -> int:
    """`timerd hall board`: serve the board until interrupted."""
    async with Desk(config, args.store) as desk:
        await desk.gather(args.wait)  # the first page shows every table the broker keeps
        board = Board(desk, config, language)
        runner = web.AppRunner(board.app(), access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, args.bind, args.port).start()
            port = runner.addresses[0][1]  # as bound: `--port 0` takes any free one
            print(said("hall.term.board", hall=repr(config.hall),
                       url=f"http://{args.bind}:{port}/"), flush=True)
            tasks = {asyncio.create_task(board.run()), asyncio.create_task(desk.lost())}
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:
                task.cancel()
            for task in done:
                task.result()  # the broker went away: its error
        finally:
            await runner.cleanup()
    return 0


def main(config: Config, args: argparse.Namespace) -> int:
    """`timerd hall board`: serve the page until Ctrl-C."""
    return run_command(config.hall, lambda: serve(config.hall, args, config.ui.language))
