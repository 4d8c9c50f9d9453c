"""A token is a secret, guessing it is limited globally, and the desk cannot be framed (issue 36
items 4 and 5), on real loopback sockets: other hosts are other loopback addresses
(127.0.0.2, ...), a proxy is a peer listed in `web.trusted_proxies`. The server and its
clients share a loop on virtual time, as in test_web_limits.py.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.adapters.test_web_limits import host_port, serve
from timerd.adapters.web.adapter import WebServer
from timerd.config import WebConfig

TOKEN = "scorekeeper-0123456789"
WRONG = "guess-0000000000000"


async def request(url: str | None, method: str, path: str, *, host: str = "127.0.0.1",
                  headers: dict[str, str] | None = None, body: bytes = b"") -> tuple[int, str]:
    """One request from `host`: the status, and the answer's head (its headers)."""
    reader, writer = await asyncio.open_connection(*host_port(url), local_addr=(host, 0))
    lines = [f"{method} {path} HTTP/1.1", "Host: x", "Connection: close",
             f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in (headers or {}).items())]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    writer.close()
    return int(head.split(" ", 2)[1]), head


async def command(url: str | None, token: str, host: str = "127.0.0.1",
                  forwarded: str | None = None) -> int:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    if forwarded is not None:
        headers["X-Forwarded-For"] = forwarded
    status, _ = await request(url, "POST", "/api/command", host=host, headers=headers,
                              body=json.dumps({"command": "status"}).encode())
    return status


def test_guesses_from_many_addresses_are_limited_and_the_scorekeeper_keeps_control() -> None:
    """Fails on main: 800 guesses from 200 addresses (4 each, under the per-address limit)
    were all checked, with no limit at all. Now after 20 wrong tokens in a minute every
    address not known to hold the token gets 429 for a minute, without its token being
    checked (a right one too: nothing is learnt); the scorekeeper, whose right token came
    before, keeps control."""
    async def body(server: WebServer) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        keeper = await command(server.url, TOKEN)  # the scorekeeper's phone, 127.0.0.1
        t0 = loop.time()
        answers = [await command(server.url, WRONG, f"127.0.{2 + n // 250}.{1 + n % 250}")
                   for n in range(200) for _ in range(4)]
        out = {"keeper": keeper, "answers": answers,
               "new_right": await command(server.url, TOKEN, "127.0.9.9"),
               "keeper_during": await command(server.url, TOKEN)}
        assert loop.time() - t0 < 60
        await asyncio.sleep(61)
        out["new_right_later"] = await command(server.url, TOKEN, "127.0.9.9")
        return out

    out = serve(WebConfig(host="127.0.0.1", port=0, token=TOKEN), body)
    assert out["keeper"] == 200
    assert out["answers"][:19] == [401] * 19
    assert out["answers"][19:].count(429) == len(out["answers"]) - 20
    assert out["new_right"] == 429
    assert out["keeper_during"] == 200
    assert out["new_right_later"] == 200


def test_behind_a_trusted_proxy_each_client_has_its_own_lockout() -> None:
    """Fails on main: behind the TLS proxy every client is the proxy's address, so five
    wrong guesses from anyone locked the scorekeeper's right token out. Now the proxy's
    X-Forwarded-For names the client; from a peer that is not a trusted proxy the header is
    ignored (a client cannot choose its own address)."""
    async def body(server: WebServer) -> dict[str, Any]:
        proxy = "127.0.0.1"
        guesses = [await command(server.url, WRONG, proxy, "10.0.0.9") for _ in range(6)]
        forged = [await command(server.url, WRONG, "127.0.0.3", f"10.0.1.{n}")
                  for n in range(6)]
        return {"guesses": guesses, "forged": forged,
                "keeper": await command(server.url, TOKEN, proxy, "10.0.0.7"),
                "spoofed_hop": await command(server.url, TOKEN, proxy, "10.0.0.7, 10.0.0.9"),
                "forger_right": await command(server.url, TOKEN, "127.0.0.3", "10.0.0.7")}

    config = WebConfig(host="127.0.0.1", port=0, token=TOKEN, trusted_proxies=("127.0.0.1",))
    out = serve(config, body)
    assert out["guesses"] == [401] * 5 + [429]
    assert out["forged"] == [401] * 5 + [429]  # by its own address, whatever it wrote
    assert out["keeper"] == 200
    assert out["spoofed_hop"] == 429  # the proxy appended 10.0.0.9: the locked-out client
    assert out["forger_right"] == 429


def test_a_short_token_refuses_the_start_with_a_clear_error(tmp_path: Path) -> None:
    """Fails on main: `web.token = "a"` was taken, a secret anyone guesses."""
    config = tmp_path / "timerd.toml"
    config.write_text('[web]\ntoken = "a"\n')
    run = subprocess.run(
        [sys.executable, "-m", "timerd", "run", "--simulate", "--config", str(config)],
        capture_output=True, text=True, timeout=60, check=False,
        env={"STATE_DIRECTORY": str(tmp_path / "state"),
             "RUNTIME_DIRECTORY": str(tmp_path / "run"), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 2
    assert "web.token: 1 characters, too short to be a secret: use at least 16" in run.stderr
    assert "Traceback" not in run.stderr


def test_the_control_page_and_the_api_cannot_be_framed_the_scoreboard_when_configured(
        ) -> None:
    """Fails on main: /control sent neither X-Frame-Options nor CSP frame-ancestors, and a
    page elsewhere framed the desk under a decoy button."""
    async def heads(server: WebServer) -> dict[str, str]:
        out = {}
        for path in ("/control", "/api/state", "/api/commands", "/", "/overlay"):
            out[path] = (await request(server.url, "GET", path))[1]
        out["POST /api/command"] = (await request(
            server.url, "POST", "/api/command", headers={"Authorization": f"Bearer {TOKEN}"},
            body=b'{"command": "status"}'))[1]
        return out

    deny = ("X-Frame-Options: DENY", "Content-Security-Policy: frame-ancestors 'none'")
    default = serve(WebConfig(host="127.0.0.1", port=0, token=TOKEN), heads)
    for path, head in default.items():
        assert all(h in head for h in deny), (path, head)
    overlay = "'self' http://192.168.1.20:8000"
    framable = serve(WebConfig(host="127.0.0.1", port=0, token=TOKEN,
                               scoreboard_frame_ancestors=overlay), heads)
    for path in ("/", "/overlay"):  # the scoreboard and the stream overlay (issue 45)
        assert f"Content-Security-Policy: frame-ancestors {overlay}" in framable[path]
        assert "X-Frame-Options" not in framable[path]
    for path in ("/control", "/api/state", "/api/commands", "POST /api/command"):
        assert all(h in framable[path] for h in deny), (path, framable[path])


def test_commands_are_bounded_per_address_a_second_and_asking_is_not_counted() -> None:
    """Issue 42 item 4 (fails on the old code: every command was applied): past its burst an
    address gets 429 and its command is not applied; another address has its own; asking
    for the status is not counted; a second later one more goes through."""
    teams = json.dumps({"command": "teams", "args": ["A", "B"]}).encode()
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}

    async def body(server: WebServer) -> dict[str, Any]:
        async def post(host: str, payload: bytes = teams) -> int:
            status, _ = await request(server.url, "POST", "/api/command", host=host,
                                      headers=headers, body=payload)
            return status

        out = {"burst": [await post("127.0.0.1") for _ in range(5)],
               "asks": await command(server.url, TOKEN),
               "other": await post("127.0.0.2")}
        await asyncio.sleep(1.0)
        out["later"] = [await post("127.0.0.1") for _ in range(2)]
        return out

    out = serve(WebConfig(host="127.0.0.1", port=0, token=TOKEN, commands_per_s=1.0,
                          command_burst=3), body)
    assert out == {"burst": [200, 200, 200, 429, 429], "asks": 200, "other": 200,
                   "later": [200, 429]}
