"""The WebSocket stream serves the table's own pages only (issue 34 item 5): a browser on
another site's page sends that page's Origin and is refused (403); the scoreboard's own page,
whose Origin is the host it asked, and a tool that sends no Origin, are served. Real
connections to the daemon's own server on loopback."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from tests.conftest import wired
from timerd.adapters.web.adapter import WebServer, same_origin
from timerd.config import WebConfig, profiles
from timerd.core.match import Match
from timerd.service import Service


def test_the_stream_refuses_another_sites_page_and_serves_its_own_and_tools() -> None:
    """Fails on the old code: the page of evil.example got the table's stream."""
    async def main() -> tuple[int | None, str, str]:
        service = Service(Match(profiles.load("ithf")))
        async with WebServer(WebConfig(host="127.0.0.1", port=0), service) as server:
            wired(server, service)
            url = f"{server.url}api/stream"
            host = server.url.split("//")[1].rstrip("/")
            async with aiohttp.ClientSession() as session:
                refused = None
                try:
                    async with session.ws_connect(url, origin="http://evil.example"):
                        pass
                except aiohttp.WSServerHandshakeError as exc:
                    refused = exc.status
                async with session.ws_connect(url, origin=f"http://{host}") as own:
                    page = (await own.receive_json(timeout=10))["type"]
                async with session.ws_connect(url) as tool:
                    served = (await tool.receive_json(timeout=10))["type"]
            return refused, page, served

    refused, page, served = asyncio.run(main())
    assert refused == 403
    assert (page, served) == ("state", "state")


@pytest.mark.parametrize(("origin", "host", "same"), [
    ("http://pi.local", "pi.local", True), ("http://PI.local:8080", "pi.local:8080", True),
    ("http://pi.local:80", "pi.local", True), ("https://pi.local", "pi.local:443", True),
    ("http://pi.local:8081", "pi.local:8080", False), ("http://evil.example", "pi.local", False),
    ("null", "pi.local", False), ("file://", "pi.local", False), ("", "pi.local", False)])
def test_same_origin(origin: str, host: str, same: bool) -> None:
    assert same_origin(origin, host) is same
