"""The broker locked down for a hall (issue 34 item 1): `timerd hall secure` writes the users,
passwords, access list, mosquitto.conf snippet and each table's login; a real mosquitto runs
with them. The desk and a real table daemon work; an anonymous client, and a table publishing
as another table or as the desk, are refused by the broker.
"""

from __future__ import annotations

import getpass
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
from tests.hall_rig import ROOT, Observer, Table, free_port, mosquitto_path, wait_until
from timerd.tools.hall_secure import BROKER_DIR

#: Real processes, a broker and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e


def login(out: Path, name: str) -> tuple[str, str]:
    path = out / ("desk.toml" if name == "desk" else f"tables/{name}.toml")
    hall = tomllib.loads(path.read_text())["hall"]
    return hall["username"], hall["password"]


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
    out = tmp_path / "secure"
    made = subprocess.run([sys.executable, "-m", "timerd", "hall", "secure", "--tables",
                           "t1,t2", "--out", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False)
    assert made.returncode == 0, made.stderr
    assert "allow_anonymous false" in (out / "mosquitto.conf").read_text()
    assert (out / "tables" / "t1.toml").stat().st_mode & 0o077 == 0  # its password
    port = free_port()
    # The snippet as the organiser installs it, with this test's port and paths (the broker,
    # started by this test's user, keeps it: the files are that user's, mode 600).
    conf = (out / "mosquitto.conf").read_text().replace(
        "listener 1883", f"listener {port} 127.0.0.1\npersistence false").replace(
        str(BROKER_DIR), str(out)) + f"user {getpass.getuser()}\n"
    (tmp_path / "broker.conf").write_text(conf)
    log = open(tmp_path / "mosquitto.log", "wb")  # noqa: SIM115 (the process keeps it)
    broker = subprocess.Popen([str(mosquitto_path()), "-c", str(tmp_path / "broker.conf")],
                              stdout=log, stderr=log)
    log.close()
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
        broker.terminate()
        broker.wait(10)
