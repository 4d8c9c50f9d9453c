"""The control socket's limits on a real Unix socket (docs/service.md, "Limits and failure
modes"): deep JSON and overlong lines get an error reply and the requests after them are
answered; idle and half-sent requests are hung up on; a flood of idle connections stays under
the cap and `timerctl` still gets through.

The service runs on virtual time with its clients on the same loop: the socket's data is ready
at once, so time only jumps when everyone waits, and the idle timeout is exact.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_virtual
from timerd import cli
from timerd.adapters.control import MAX_LINE, ControlSocket
from timerd.config import ControlConfig, profiles
from timerd.core.match import Match
from timerd.i18n import Messages
from timerd.service import Service
from timerd.wire import REPLY_FORMAT, error_reply


def service() -> Service:
    return Service(Match(profiles.load("ithf")))


async def exchange(path: Path, data: bytes, replies: int) -> list[dict[str, Any]]:
    reader, writer = await asyncio.open_unix_connection(path, limit=4 * MAX_LINE)
    writer.write(data)
    out = [json.loads(await reader.readline()) for _ in range(replies)]
    writer.close()
    return out


def test_deep_json_is_an_error_reply_and_pipelined_requests_are_answered(
        tmp_path: Path) -> None:
    """Fails on main: json.loads raised RecursionError, the connection dropped, no reply."""
    deep = b'{"command": "status", "args": ' + b"[" * 50_000 + b"]" * 50_000 + b"}\n"
    shallow_but_deep = b'{"command": "status", "x": ' + b"[" * 40 + b"]" * 40 + b"}\n"

    async def main() -> list[dict[str, Any]]:
        async with ControlSocket(tmp_path / "c.sock", service()) as control:
            return await exchange(control.path, b"".join(
                [deep[:MAX_LINE - 2] + b"\n", shallow_but_deep, b"status\n"]), 3)

    first, second, third = run_virtual(main)
    assert first == error_reply("JSON nested deeper than 32 levels")
    assert second == error_reply("JSON nested deeper than 32 levels")
    assert third["ok"] is True
    assert third["status"]["phase"] == "idle"


def test_an_overlong_line_is_refused_and_the_next_request_answered(tmp_path: Path) -> None:
    """Fails on main: the connection was closed after the error, the status went unanswered."""
    async def main() -> list[dict[str, Any]]:
        async with ControlSocket(tmp_path / "c.sock", service()) as control:
            return await exchange(control.path, b"x" * (3 * MAX_LINE) + b"\nstatus\n", 2)

    refused, answered = run_virtual(main)
    assert refused == {"format": REPLY_FORMAT, "ok": False,
                       "error": f"request line over {MAX_LINE} bytes"}
    assert answered["ok"] is True


@pytest.mark.parametrize("sent", [b"", b"sta"], ids=["silent", "half a line"])
def test_a_tool_that_sends_no_complete_line_is_hung_up_on(tmp_path: Path, sent: bytes) -> None:
    """Fails on main (no timeout: the connection stayed until the test's own deadline)."""
    config = ControlConfig(idle_timeout_s=60.0)

    async def main() -> float:
        loop = asyncio.get_running_loop()
        async with ControlSocket(tmp_path / "c.sock", service(), config) as control:
            reader, writer = await asyncio.open_unix_connection(control.path)
            writer.write(sent)
            t0 = loop.time()
            async with asyncio.timeout(600):  # virtual seconds
                assert await reader.read() == b""  # hung up on, with no reply
            writer.close()
            return loop.time() - t0

    assert run_virtual(main) == pytest.approx(60.0, abs=0.01)


def test_a_flood_of_idle_connections_stays_under_the_cap_and_timerctl_gets_through(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Fails on main: every idle connection was kept (an fd each), without a cap."""
    config = ControlConfig(max_connections=8)

    async def main() -> tuple[list[int], dict[str, Any]]:
        async with ControlSocket(tmp_path / "c.sock", service(), config) as control:
            held = []
            connected = []
            for _ in range(200):
                held.append(await asyncio.open_unix_connection(control.path))
                await asyncio.sleep(0)  # the server takes it up
                connected.append(len(control._clients))
            reply = (await exchange(control.path, b"status\n", 1))[0]
            for _, writer in held:
                writer.close()
            return connected, reply

    with caplog.at_level(logging.INFO, logger="timerd.control"):
        connected, reply = run_virtual(main)
    assert max(connected) <= 8
    assert reply["ok"] is True
    cap_lines = [r for r in caplog.records if "cap of 8" in r.getMessage()]
    assert len(cap_lines) == 1  # one line for 192 hang-ups, not one each


def test_at_the_cap_the_tool_idle_longest_is_hung_up_on_not_the_oldest(tmp_path: Path) -> None:
    """The first tool asked something a second ago; the second has sent nothing for ten: the
    newcomer takes the second's place. Fails on main (the oldest waiting one was hung up on,
    the tool that had just asked included)."""
    config = ControlConfig(max_connections=2)

    async def main() -> tuple[bytes, dict[str, Any]]:
        async with ControlSocket(tmp_path / "c.sock", service(), config) as control:
            first_reader, first = await asyncio.open_unix_connection(control.path)
            await asyncio.sleep(0)
            second_reader, second = await asyncio.open_unix_connection(control.path)
            await asyncio.sleep(9)  # virtual seconds
            first.write(b"status\n")
            await first_reader.readline()
            await asyncio.sleep(1)
            _, third = await asyncio.open_unix_connection(control.path)
            hung_up = await second_reader.read()
            first.write(b"status\n")
            reply = json.loads(await first_reader.readline())
            for writer in (first, second, third):
                writer.close()
            return hung_up, reply

    hung_up, reply = run_virtual(main)
    assert hung_up == b""
    assert reply["ok"] is True


def test_over_the_cap_with_every_connection_busy_the_new_one_is_refused(
        tmp_path: Path) -> None:
    """A connection in the middle of a request is never hung up on: here one that pipelines
    requests and reads no replies, so the server waits to write one (busy, not idle)."""
    config = ControlConfig(max_connections=1)

    async def main() -> bytes:
        async with ControlSocket(tmp_path / "c.sock", service(), config) as control:
            _, writer = await asyncio.open_unix_connection(control.path)
            writer.write(b"status\n" * 5000)
            clients = control._clients
            while not clients or next(iter(clients.values())).idle_since is not None:  # noqa: ASYNC110 (no event to await)
                await asyncio.sleep(0)
            other_reader, other = await asyncio.open_unix_connection(control.path)
            line = await other_reader.readline()
            other.close()
            writer.close()
            return line

    refused = json.loads(run_virtual(main))
    assert refused == {**error_reply("too many connections"), "code": "limit.connections",
                       "params": {}}  # timerctl says it in its language (issue 46)
    assert cli._refusal(refused, Messages("sl")) == "preveč povezav"


def test_one_users_commands_are_bounded_a_second_and_asking_is_not_counted(
        tmp_path: Path) -> None:
    """Issue 42 item 4: a client pushed 42,342 commands into a match in 169 s (fails on the
    old code: every one was applied). Past the burst a command is refused, not applied, and
    says why; the status is still answered; a second later one more goes through. The rate
    is the user's, not the connection's: a new connection does not start it afresh."""
    config = ControlConfig(commands_per_s=1.0, command_burst=3)
    teams = b'{"command": "teams", "args": ["A", "B"]}\n'

    async def main() -> list[list[dict[str, Any]]]:
        async with ControlSocket(tmp_path / "c.sock", service(), config) as control:
            burst = await exchange(control.path, teams * 5 + b"status\n", 6)
            again = await exchange(control.path, teams, 1)
            await asyncio.sleep(1.0)
            return [burst, again, await exchange(control.path, teams * 2, 2)]

    burst, again, later = run_virtual(main)
    assert [r["ok"] for r in burst] == [True, True, True, False, False, True]
    assert burst[3]["error"] == ("too many commands: at most 1 a second after 3 at once from "
                                 "one client; this one was not applied")
    assert cli._refusal(burst[3], Messages("sk")).startswith(  # by its code (issue 46)
        "príliš veľa príkazov: najviac 1 za sekundu po 3 naraz")
    assert again[0]["ok"] is False
    assert [r["ok"] for r in later] == [True, False]
