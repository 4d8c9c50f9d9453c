"""Issue 43 item 2: a phone is paired with the score desk by a one-time code, never by the
table's token in a link. The code is good once and for CODE_TTL_S; the device credential it
buys is kept (as a digest) in the state directory, mode 0600, survives a restart, is listed
and revoked on the control socket, and counts as authenticated through the same test as the
token (`WebServer.authenticated`).

On real loopback sockets and virtual time (tests.conftest.run_virtual), as test_web_tokens.py:
a code's five minutes pass without waiting for them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.test_web_limits import host_port
from tests.conftest import run_virtual, wired
from tests.untranslated import untranslated
from timerd import cli
from timerd.adapters.web import pairing
from timerd.adapters.web.adapter import WebServer
from timerd.adapters.web.pairing import CODE_TTL_S, DEVICES_NAME, MAX_CODES, MAX_DEVICES, Pairing
from timerd.config import WebConfig, profiles
from timerd.config.sections import MIN_TOKEN
from timerd.core.match import Match
from timerd.i18n import Messages
from timerd.service import Service

TOKEN = "scorekeeper-0123456789"
PHONE = "Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 Chrome/120 Mobile"


def serve(state: Path | None, body: Callable[[WebServer], Awaitable[Any]],
          **config: Any) -> Any:
    """`body(server)` with a server whose paired devices are kept in `state`."""
    async def main() -> Any:
        service = Service(Match(profiles.load("ithf")))
        web = WebConfig(**{"host": "127.0.0.1", "port": 0, "token": TOKEN, **config})
        async with WebServer(web, service, state_directory=state) as server:
            wired(server, service)
            return await body(server)
    return run_virtual(main)


async def post(server: WebServer, path: str, payload: Any,
               credential: str | None = None) -> tuple[int, Any]:
    """One POST with a JSON body (and a bearer credential): the status and the JSON reply."""
    reader, writer = await asyncio.open_connection(*host_port(server.url))
    body = json.dumps(payload).encode()
    lines = [f"POST {path} HTTP/1.1", "Host: x", "Connection: close",
             f"Content-Length: {len(body)}", "Content-Type: application/json",
             f"User-Agent: {PHONE}"]
    if credential is not None:
        lines.append(f"Authorization: Bearer {credential}")
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    answer = await reader.read()
    writer.close()
    head, _, data = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(data)


async def status_with(server: WebServer, credential: str) -> int:
    return (await post(server, "/api/command", {"command": "status"}, credential))[0]


async def new_code(server: WebServer) -> str:
    reply = await server.desk()
    assert reply["ok"], reply
    code: str = reply["code"]
    return code


def test_a_code_pairs_one_device_once_which_controls_until_it_is_revoked(
        tmp_path: Path) -> None:
    async def body(server: WebServer) -> dict[str, Any]:
        out: dict[str, Any] = {"offer": await server.desk()}
        code = out["offer"]["code"]
        out["paired"] = await post(server, "/api/pair", {"code": code})
        out["again"] = await post(server, "/api/pair", {"code": code})  # the code is dead
        credential = out["paired"][1]["credential"]
        out["command"] = await status_with(server, credential)
        out["who"] = [server.authenticated({"authorization": f"Bearer {given}"})
                      for given in (TOKEN, credential, credential + "x", "d1.nobody.x")]
        out["listed"] = await server.desk("list")
        out["revoked"] = await server.desk("revoke", out["paired"][1]["device"])
        out["after"] = await status_with(server, credential)
        out["revoked_again"] = await server.desk("revoke", out["paired"][1]["device"])
        out["token_still"] = await status_with(server, TOKEN)
        return out

    out = serve(tmp_path, body)
    offer = out["offer"]
    assert offer["expires_s"] == CODE_TTL_S
    assert offer["host"] == "127.0.0.1"
    assert len(offer["code"]) >= 22  # 128 random bits
    status, reply = out["paired"]
    assert status == 200
    assert reply["credential"].startswith(f"d1.{reply['device']}.")
    assert out["again"][0] == 401
    assert out["command"] == 200
    assert out["who"] == ["token", f"device {reply['device']}", None, None]
    [listed] = out["listed"]["devices"]
    assert listed["id"] == reply["device"]
    assert listed["label"] == "Linux; Android 14; Pixel 7"
    assert listed["address"] == "127.0.0.1"
    assert listed["last_used"] is not None
    assert out["revoked"] == {**out["revoked"], "ok": True, "devices": []}
    assert out["after"] == 401  # revoked: refused like a wrong token
    assert not out["revoked_again"]["ok"]
    assert out["token_still"] == 200


def test_the_devices_file_is_private_holds_no_secret_and_survives_a_restart(
        tmp_path: Path) -> None:
    async def first(server: WebServer) -> tuple[str, str]:
        _, reply = await post(server, "/api/pair", {"code": await new_code(server)})
        return reply["credential"], await new_code(server)  # a second code, never used

    credential, unused = serve(tmp_path, first)
    kept = tmp_path / DEVICES_NAME
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    text = kept.read_text()
    assert credential.rsplit(".", 1)[1] not in text
    assert TOKEN not in text
    assert unused not in text  # codes live in memory only

    async def second(server: WebServer) -> tuple[int, int]:
        return (await status_with(server, credential),
                (await post(server, "/api/pair", {"code": unused}))[0])

    assert serve(tmp_path, second) == (200, 401)  # the device stays, the code died


def test_a_code_dies_after_its_minutes_and_the_oldest_of_too_many_codes_dies() -> None:
    async def body(server: WebServer) -> list[int]:
        late = await new_code(server)
        await asyncio.sleep(CODE_TTL_S + 1)  # virtual seconds
        codes = [await new_code(server) for _ in range(MAX_CODES + 1)]
        return [(await post(server, "/api/pair", {"code": code}))[0]
                for code in (late, codes[0], codes[1], codes[-1])]

    assert serve(None, body) == [401, 401, 200, 200]


def test_wrong_codes_count_as_wrong_tokens_and_lock_the_guesser_out() -> None:
    async def body(server: WebServer) -> list[int]:
        return [(await post(server, "/api/pair", {"code": f"guess{n}"}))[0] for n in range(6)]

    assert serve(None, body) == [401] * 5 + [429]


def test_pairing_is_asked_on_the_control_socket_only_and_says_why_not() -> None:
    async def body(server: WebServer) -> tuple[int, Any, Any]:
        status, reply = await post(server, "/api/command", {"command": "desk"}, TOKEN)
        return status, reply, await server.desk("bogus")

    status, reply, bogus = serve(None, body)
    assert status == 400
    assert reply["code"] == "refused.unknown"
    assert not bogus["ok"]
    assert "revoke ID" in bogus["error"]
    no_token = serve(None, lambda server: server.desk(), token="")
    assert f"{MIN_TOKEN} or more" in no_token["error"]
    assert "32" not in no_token["error"]
    pi_only = serve(None, lambda server: server.desk(), control="127.0.0.1:0")
    assert "only on the Pi" in pi_only["error"]


def test_devices_are_bounded_the_one_paired_longest_ago_forgotten(
        caplog: pytest.LogCaptureFixture) -> None:
    now = [1000.0]
    kept = Pairing(None, lambda: 0.0, lambda: now[0])
    credentials = []
    for _ in range(MAX_DEVICES + 1):
        now[0] += 1
        paired = kept.redeem(kept.new_code(), "127.0.0.1", "phone")
        assert paired is not None
        credentials.append(paired[1])
    assert len(kept.devices) == MAX_DEVICES
    assert kept.device_of(credentials[0]) is None
    assert kept.device_of(credentials[1]) is not None
    assert "forgot device" in caplog.text


def test_a_devices_file_that_others_may_read_is_made_private_and_a_broken_one_is_said(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / DEVICES_NAME
    source = Pairing(None, lambda: 0.0, lambda: 5.0)
    paired = source.redeem(source.new_code(), "::1", "phone")
    assert paired is not None
    path.write_bytes(source.file_bytes())
    os.chmod(path, 0o644)
    with caplog.at_level(logging.WARNING, logger="timerd.web"):
        loaded = Pairing(path, lambda: 0.0, lambda: 6.0)
    assert loaded.device_of(paired[1]) is not None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "made 0600" in caplog.text
    path.write_text('{"format": 1, "devices": [{"id": 3}]}')
    assert pairing.load(path) == {}
    assert "malformed" in caplog.text


@pytest.mark.parametrize(("agent", "label"), [
    (PHONE, "Linux; Android 14; Pixel 7"),
    ("curl/8.5.0", "curl/8.5.0"),
    ("x (" + "a" * 200 + ")", "a" * pairing.LABEL_CHARS),
    ("", ""),
])
def test_a_device_is_labelled_by_what_its_browser_says_in_short(agent: str, label: str) -> None:
    assert pairing.label_of(agent) == label


def test_a_device_that_cannot_be_kept_on_disk_is_not_paired(tmp_path: Path) -> None:
    """A full or failing card: the page is told (503), and no credential is handed out that
    a restart would forget."""
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")  # the state directory cannot be made there

    async def body(server: WebServer) -> tuple[int, Any, Any]:
        status, reply = await post(server, "/api/pair", {"code": await new_code(server)})
        return status, reply, await server.desk("list")

    status, reply, listed = serve(blocked, body)
    assert status == 503
    assert "credential" not in reply
    assert "cannot be kept" in reply["error"]
    assert listed["devices"] == []


def test_a_revoke_that_fails_says_why_in_the_terminals_language(tmp_path: Path) -> None:
    """`timerctl desk --revoke ID` for no paired device, and for one whose revocation cannot be
    written (the devices file became a directory): each reply gives its catalogue code and
    values beside the English `error`, so timerctl says it in sl and sk (issue 46 item 1).
    Failed on the old code: both replies were English strings without a code."""
    async def body(server: WebServer) -> list[dict[str, Any]]:
        _, reply = await post(server, "/api/pair", {"code": await new_code(server)})
        unknown = await server.desk("revoke", "nobody")
        (tmp_path / DEVICES_NAME).unlink()
        (tmp_path / DEVICES_NAME / "x").mkdir(parents=True)
        return [unknown, await server.desk("revoke", reply["device"])]

    unknown, not_kept = serve(tmp_path, body)
    assert unknown["error"] == "no paired device 'nobody' (`timerctl desk --list` lists them)"
    assert not_kept["error"].startswith("revoked until timerd stops, but not on disk: ")
    for reply in (unknown, not_kept):
        english = cli._refusal(reply, Messages("en"))
        assert english == reply["error"]
        for language in ("sl", "sk"):
            said = cli._refusal(reply, Messages(language))
            assert untranslated(language, said, english, ("nobody",)) == [], said
    assert cli._refusal(unknown, Messages("sl")).startswith("ni povezane naprave 'nobody'")
