"""`timerctl desk` pairs a phone by one scan (issues 31, 43): it asks the running daemon over
its control socket for a one-time code, and shows the desk's link with the code (never the
token) as a QR code in the terminal and as text, for the Pi's IP addresses and its `.local`
name; `--list` and `--revoke ID` manage the paired devices.

The tests against a daemon run a real `timerd run --simulate` (the e2e tier), started with
`--config` and `-o` and asked through `--socket` or $TIMERD_SOCKET: timerctl reads no config
of its own for the desk.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import segno

from tests.adapters.web_harness import Daemon, free_port, timerctl
from timerd import cli
from timerd.config.sections import MIN_TOKEN
from timerd.tools import desk_link

REPLY = {"ok": True, "code": "Xq3_vT9-kLm2Pz8RwYb4Nc", "expires_s": 300.0, "host": "0.0.0.0",
         "port": 8081}


def qr_modules(text: str) -> list[list[bool]]:
    """The QR code segno drew in the terminal (compact: a character is two rows of modules,
    the light ones as blocks) back as rows of dark modules, the quiet zone left off."""
    top = {"█": False, " ": True, "▀": False, "▄": True}
    bottom = {"█": False, " ": True, "▀": True, "▄": False}
    lines = [line for line in text.splitlines() if line and set(line) <= set(top)]
    rows = [r for line in lines for r in ([top[c] for c in line], [bottom[c] for c in line])
            if not all(r)]  # an odd count of rows: the last character's lower half is none
    dark = [i for i, row in enumerate(rows) if any(row)]
    cols = [j for row in rows for j, d in enumerate(row) if d]
    return [row[min(cols):max(cols) + 1] for row in rows[dark[0]:dark[-1] + 1]]


def test_the_link_carries_the_code_for_each_address_and_the_local_name(
        capsys: pytest.CaptureFixture[str]) -> None:
    from io import StringIO  # noqa: PLC0415

    out = StringIO()
    desk_link.print_desk(REPLY, out, ["192.168.1.20", "10.0.0.7"], "table3.lan")
    text = out.getvalue()
    links = [f"http://{h}:8081/control#code={REPLY['code']}"
             for h in ("192.168.1.20", "10.0.0.7", "table3.local")]
    assert [line.strip() for line in text.splitlines() if "://" in line] == links
    assert "within 5 minutes" in text
    # The QR code is the first link's, module for module (what a phone's camera reads).
    expected = segno.make(links[0], error="m").matrix
    assert qr_modules(text) == [[bool(m) for m in row] for row in expected]


def test_a_daemon_on_one_address_gives_that_address_and_ipv6_in_brackets() -> None:
    assert desk_link.desk_links({**REPLY, "host": "192.168.1.20"}, ["10.0.0.7"], "pi") == [
        f"http://192.168.1.20:8081/control#code={REPLY['code']}"]
    assert desk_link.desk_links({**REPLY, "host": "fd00::20"}, [], "pi") == [
        f"http://[fd00::20]:8081/control#code={REPLY['code']}"]


def test_the_paired_devices_are_listed_one_a_line() -> None:
    assert "no device is paired" in desk_link.format_devices([])
    table = desk_link.format_devices([{"id": "ab12cd34", "paired": 1.7e9, "last_used": None,
                                       "address": "192.168.1.31", "label": "Android 14"}])
    head, row = table.splitlines()
    assert head.split() == ["id", "paired", "last", "used", "from", "browser"]
    assert row.startswith("ab12cd34  ")
    assert row.endswith("192.168.1.31  Android 14")


def test_the_machines_own_addresses_are_read_without_any_traffic() -> None:
    addresses = desk_link.local_addresses()
    assert all(a.count(".") == 3 and not a.startswith("127.") for a in addresses)


# -- against a running daemon (e2e) ---------------------------------------------------------


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    """A daemon whose web port is given by `-o`, beside its `--config` (the old timerctl read
    the config's port and would link to the wrong one)."""
    port = free_port()
    d = Daemon(tmp_path, port=port, overrides=[f"web.port={port}"]).start()
    yield d
    d.stop()


@pytest.mark.e2e
def test_timerctl_desk_asks_the_running_daemon_and_never_prints_the_token(
        daemon: Daemon) -> None:
    """Fails on the old code: it printed `#token=` and the token itself, read from the
    system config (not the daemon's: `--socket` was ignored)."""
    done = timerctl("--socket", str(daemon.socket), "desk")
    assert done.returncode == 0, done.stderr
    assert daemon.token not in done.stdout
    [link] = [line.strip() for line in done.stdout.splitlines() if "://" in line]
    assert re.fullmatch(rf"http://127\.0\.0\.1:{daemon.port}/control#code=[\w-]{{22}}", link)
    code = link.rsplit("=", 1)[1]
    status, reply = daemon.request("POST", "/api/pair", json.dumps({"code": code}).encode())
    assert status == 200, reply
    assert daemon.command("status", token=reply["credential"])[0] == 200

    env = {"PATH": "/usr/bin:/bin", "TIMERD_SOCKET": str(daemon.socket)}
    listed = timerctl("desk", "--list", env=env)
    assert listed.returncode == 0, listed.stderr
    assert reply["device"] in listed.stdout
    assert "127.0.0.1" in listed.stdout
    as_json = json.loads(timerctl("desk", "--list", "--json", env=env).stdout)
    assert [d["id"] for d in as_json["devices"]] == [reply["device"]]
    revoked = timerctl("desk", "--revoke", reply["device"], env=env)
    assert revoked.returncode == 0, revoked.stderr
    assert daemon.command("status", token=reply["credential"])[0] == 401
    again = timerctl("desk", "--revoke", reply["device"], env=env)
    assert again.returncode == cli.EXIT_REFUSED
    assert "no paired device" in again.stderr


@pytest.mark.e2e
@pytest.mark.parametrize(("web", "words"), [
    ({"token": ""}, f"{MIN_TOKEN} or more"),
    ({"web_extra": "enabled = false\n", "ready": "timerd ready"}, "web server is off"),
])
def test_timerctl_desk_says_why_a_daemon_cannot_pair(tmp_path: Path, web: dict[str, str],
                                                    words: str) -> None:
    """Fails on the old code: it read the system config, not the daemon's, and asked for
    "32 or more" characters where the daemon takes 16."""
    daemon = Daemon(tmp_path, **web).start()  # type: ignore[arg-type]
    try:
        done = timerctl("--socket", str(daemon.socket), "desk")
        assert done.returncode != 0
        assert words in done.stderr
        assert "32" not in done.stderr
        assert "://" not in done.stdout
    finally:
        daemon.stop()


def test_list_and_revoke_go_with_desk_only(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.timerctl(["status", "--list"])
    assert "go with desk" in capsys.readouterr().err
