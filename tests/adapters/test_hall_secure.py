"""The broker locked down for a hall (issue 34 item 1): `timerd hall secure` writes the users,
passwords, access list, mosquitto.conf snippet and each table's login; a real mosquitto runs
with them. The desk and a real table daemon work; an anonymous client, and a table publishing
as another table or as the desk, are refused by the broker.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from paho.mqtt.client import CallbackAPIVersion
from paho.mqtt.client import Client as PahoClient

from tests.conftest import require
from tests.hall_rig import (
    ROOT,
    Observer,
    Table,
    free_port,
    locked_broker,
    login,
    mosquitto_path,
    secure_hall,
    wait_until,
)

#: Real processes, a broker and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e


def connect_code(port: int, user: tuple[str, str] | None) -> int:
    """The broker's CONNACK reason for a client with `user` (None: anonymous): 0 accepted."""
    client = PahoClient(CallbackAPIVersion.VERSION2)
    if user is not None:
        client.username_pw_set(*user)
    codes: list[int] = []
    client.on_connect = lambda c, u, f, reason, p: codes.append(reason.value)
    client.connect("127.0.0.1", port)
    client.loop_start()
    try:
        return wait_until(lambda: codes[0] if codes else None, 10, "a CONNACK")
    finally:
        client.disconnect()
        client.loop_stop()


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True


def test_a_hall_locked_down_by_hall_secure_works_and_refuses_forgers(tmp_path: Path) -> None:
    require(mosquitto_path() is not None, "mosquitto (Debian package mosquitto)")
    port = free_port()
    out = secure_hall(tmp_path, port, "t1", "t2")
    assert "allow_anonymous false" in (out / "mosquitto.conf").read_text()
    assert (out / "tables" / "t1.toml").stat().st_mode & 0o077 == 0  # its password
    broker = locked_broker(tmp_path, out, port)
    table = Table(tmp_path, "t1", port, "ithf", options=(
        "-o", f'hall.username="{login(out, "t1")[0]}"',
        "-o", f'hall.password="{login(out, "t1")[1]}"'))
    desk = None
    try:
        wait_until(lambda: listening(port), 10, "the broker")
        assert connect_code(port, login(out, "desk")) == 0
        assert connect_code(port, None) != 0  # anonymous: not authorised
        assert connect_code(port, ("t1", "wrong")) != 0
        desk = Observer(port, login(out, "desk"))
        table.start()
        desk.wait_for(lambda _: (m := desk.last("t1", "state")) is not None
                      and m.json()["phase"] == "idle", 30, "t1's state at the desk")

        # t2 forges: a result and a reply as t1, a command to t1 and to the hall, as the desk.
        forger = Observer(port, login(out, "t2"))
        for topic in ("timerd/hall/tables/t1/results", "timerd/hall/tables/t1/events",
                      "timerd/hall/tables/t1/cmd", "timerd/hall/cmd"):
            forger.publish(topic, {"command": "start_round", "at": time.time() + 60,
                                   "forged": True})
        forger.publish("timerd/hall/tables/t2/state", {"phase": "idle", "marker": True})
        desk.wait_for(lambda _: (m := desk.last("t2", "state")) is not None
                      and m.json().get("marker"), 10, "t2's own state at the desk")
        # The desk works: its command reaches t1, which answers.
        desk.publish("timerd/hall/tables/t1/cmd", {"command": "start_round",
                                                   "at": time.time() + 60, "id": "d1"})
        reply = desk.wait_for(lambda _: next((e for e in desk.events("t1")
                                              if e.get("id") == "d1"), None), 20, "t1's reply")
        assert reply["ok"] is True, reply
        assert not any(b'"forged"' in m.payload for m in desk.snapshot()), "a forgery passed"
        assert not any(m.topic == "timerd/hall/cmd" for m in desk.snapshot())
        # t1 answered the desk's command only: none of t2's reached it.
        assert [e.get("id") for e in desk.events("t1") if e["type"] == "reply"] == ["d1"]
        forger.close()
        # A table with a wrong password is told which keys hold its login and what makes one
        # (issue 46 item 5), not only the broker's "Not authorized".
        wrong = Table(tmp_path, "t2", port, "ithf", options=(
            "-o", f'hall.username="{login(out, "t2")[0]}"', "-o", 'hall.password="wrong"'))
        try:
            wrong.start()
            said = wait_until(lambda: next((line for line in wrong.stderr().splitlines()
                                            if "Not authorized" in line), None),
                              30, "t2's refused login in its log")
            assert "hall.username and hall.password" in said, said
            assert "timerd hall secure" in said, said
        finally:
            wrong.stop()
    finally:
        if desk is not None:
            desk.close()
        table.stop()
        broker.stop()


def test_the_snippet_stops_a_client_id_takeover_and_an_oversized_message_and_the_login_is_a_drop_in(
        tmp_path: Path) -> None:
    """Issue 41 item 5. Fails on the old code: the snippet let t2's login, connecting with
    t1's client id, close t1's session ("already connected"), and kept a retained message
    of 300 KiB for every desk; the login file had no host or port and could not be added to
    a timerd.toml that has a [hall] section (a TOML error: the table defined twice)."""
    require(mosquitto_path() is not None, "mosquitto (Debian package mosquitto)")
    port = free_port()
    out = secure_hall(tmp_path, port, "t1", "t2")
    assert "use_username_as_clientid true" in (out / "mosquitto.conf").read_text()
    broker = locked_broker(tmp_path, out, port)
    # The table's own config has a [hall] section; the login is its drop-in, as written.
    config = tmp_path / "t1" / "timerd.toml"
    (config.parent / "timerd.d").mkdir(parents=True)
    config.write_text('[hall]\nenabled = true\nchronyc = "none"\ntimedatectl = "none"\n'
                      "heartbeat_s = 1\nreconnect_max_s = 0.2\n\n[web]\nenabled = false\n")
    (config.parent / "timerd.d" / "hall-login.toml").write_bytes(
        (out / "tables" / "t1.toml").read_bytes())
    table = Table(tmp_path, "t1", port, "ithf")
    table.args = [sys.executable, "-m", "timerd", "run", "--simulate", "--config", str(config),
                  "--control", str(table.socket), "--events", str(table.events_path),
                  "-o", f'state.directory="{table.directory / "state"}"',
                  "-o", f'state.runtime_directory="{table.directory / "run"}"']
    desk = Observer(port, login(out, "desk"))
    try:
        table.start()
        desk.wait_for(lambda _: (m := desk.last("t1", "state")) is not None
                      and m.json()["phase"] == "idle", 30, "t1's state, logged in by drop-in")

        # t2's login with t1's client id: the broker names the session by its user (t2).
        impostor = PahoClient(CallbackAPIVersion.VERSION2, client_id="timerd-hall-t1")
        impostor.username_pw_set(*login(out, "t2"))
        connected: list[int] = []
        impostor.on_connect = lambda c, u, f, reason, p: connected.append(reason.value)
        impostor.connect("127.0.0.1", port)
        impostor.loop_start()
        wait_until(lambda: connected, 10, "the impostor's CONNACK")
        # ... and a message too large for the broker, retained on its own topic.
        huge = b"x" * (300 * 1024)
        impostor.publish("timerd/hall/tables/t2/results", huge, qos=1, retain=True)
        wait_until(lambda: impostor.is_connected() is False, 10, "the broker closing it")
        impostor.loop_stop()
        late = PahoClient(CallbackAPIVersion.VERSION2)
        late.username_pw_set(*login(out, "t2"))
        late.connect("127.0.0.1", port)
        late.loop_start()
        late.publish("timerd/hall/tables/t2/state", b'{"marker": 1}', qos=1).wait_for_publish(5)
        desk.wait_for(lambda _: desk.last("t2", "state") is not None, 10, "the marker")
        late.disconnect()
        late.loop_stop()

        assert desk.last("t2", "results") is None, "the oversized message reached the desk"
        log_text = (tmp_path / "mosquitto.log").read_text(errors="replace")
        assert "already connected" not in log_text, log_text
        assert [m.payload for m in desk.snapshot("t1/status")] == [b"online"]  # never kicked
    finally:
        desk.close()
        table.stop()
        broker.stop()


def test_hall_secure_writes_no_file_through_a_planted_link(tmp_path: Path) -> None:
    """Issue 41 item 5. Fails on the old code: `passwd` and `tables/` planted as symbolic
    links in --out made it write the logins into the links' targets."""
    require(mosquitto_path() is not None, "mosquitto_passwd (Debian package mosquitto)")
    victim, elsewhere, out = tmp_path / "victim", tmp_path / "elsewhere", tmp_path / "out"
    victim.write_text("someone's file\n")
    elsewhere.mkdir()
    out.mkdir()

    def secure() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "timerd", "hall", "secure", "--tables",
                               "t1,t2", "--out", str(out), "--host", "desk.example",
                               "--port", "8883"], cwd=ROOT, capture_output=True, text=True,
                              timeout=60, check=False)

    (out / "passwd").symlink_to(victim)
    refused = secure()
    assert refused.returncode == 2
    assert f"{out / 'passwd'} is a symbolic link: not followed" in refused.stderr
    assert victim.read_text() == "someone's file\n"
    (out / "passwd").unlink()
    (out / "tables").symlink_to(elsewhere, target_is_directory=True)
    refused = secure()
    assert refused.returncode == 2
    assert "a symbolic link is not followed" in refused.stderr
    assert list(elsewhere.iterdir()) == []
    (out / "tables").unlink()
    (tmp_path / "linked-out").symlink_to(out, target_is_directory=True)
    linked = subprocess.run([sys.executable, "-m", "timerd", "hall", "secure", "--tables",
                             "t1", "--out", str(tmp_path / "linked-out")], cwd=ROOT,
                            capture_output=True, text=True, timeout=60, check=False)
    assert linked.returncode == 2, linked.stdout

    made = secure()
    assert made.returncode == 0, made.stderr
    assert secure().returncode == 0  # again: every file replaced, every password new
    for name in ("passwd", "acl", "desk.toml", "board.toml", "tables/t1.toml"):
        assert (out / name).stat().st_mode & 0o077 == 0, name
    login_file = tomllib.loads((out / "tables" / "t1.toml").read_text())["hall"]
    assert (login_file["host"], login_file["port"], login_file["table"]) == (
        "desk.example", 8883, "t1")
    assert "listener 8883\n" in (out / "mosquitto.conf").read_text()
    assert sorted(p.name for p in out.iterdir()) == [
        "acl", "board.toml", "desk.toml", "mosquitto.conf", "passwd", "tables"]


def test_a_table_and_the_desk_refuse_a_hall_without_a_login(tmp_path: Path) -> None:
    """Issue 41 item 5. Fails on the old code: both went ahead on an anonymous broker."""
    table = subprocess.run(
        [sys.executable, "-m", "timerd", "run", "--simulate", "--control",
         str(tmp_path / "c.sock"), "-o", "hall.enabled=true", "-o", 'hall.chronyc="none"',
         "-o", "web.enabled=false"], cwd=ROOT, capture_output=True, text=True, timeout=60,
        check=False, stdin=subprocess.DEVNULL)
    assert table.returncode == 2, table.stderr
    assert "hall.username = '': the hall has no login" in table.stderr
    assert "Run `timerd hall secure`" in table.stderr
    for command in (["status", "--once"], ["results"], ["board", "--port", "0"]):
        desk = subprocess.run([sys.executable, "-m", "timerd", "hall", *command,
                               "-o", "hall.port=9", "-o", 'hall.host="127.0.0.1"'], cwd=ROOT,
                              capture_output=True, text=True, timeout=60, check=False)
        assert desk.returncode == 2, desk.stderr
        assert "Run `timerd hall secure`" in desk.stderr, desk.stderr
    allowed = subprocess.run([sys.executable, "-m", "timerd", "hall", "status", "--once",
                              "-o", "hall.port=9", "-o", 'hall.host="127.0.0.1"',
                              "-o", "hall.allow_anonymous=true"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60, check=False)
    assert "timerd hall secure" not in allowed.stderr  # it tried the broker (none on port 9)
    assert "broker 127.0.0.1:9" in allowed.stderr
