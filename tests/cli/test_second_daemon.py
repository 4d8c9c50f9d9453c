"""A second `timerd run` never takes over what the first one holds (issue 30 item 3): its
control socket, web port, serial port or state directory. Real daemon processes; each case
fails on the old code, where the second one bound over the first one's socket (and unlinked
it when it quit), and ran on without a journal or a web port."""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

from tests.daemon_process import Daemon
from timerd.cli import request
from timerd.config import Config, StateConfig

HINT = "use --instance NAME or --control PATH"


def _answers(path: Path) -> bool:
    return bool(request(path, "status", [])["ok"])


def test_a_second_daemon_on_the_same_socket_refuses_and_leaves_the_first_reachable(
        tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with Daemon(tmp_path / "a").ready() as first:
        before = os.stat(first.socket).st_ino
        with Daemon(tmp_path / "b", "--control", str(first.socket)) as second:
            log = second.refused()
        assert f"another timerd answers on {first.socket}: {HINT}" in log
        assert os.stat(first.socket).st_ino == before
        assert _answers(first.socket)
        first.command("start")  # the first one still takes commands
        assert first.stop() == 0
    assert not first.socket.exists()  # its own socket: removed at its exit


def test_a_stale_socket_is_replaced(tmp_path: Path) -> None:
    stale = tmp_path / "control.sock"
    with socket.socket(socket.AF_UNIX) as crashed:  # bound, never listened on: nobody answers
        crashed.bind(str(stale))
    with Daemon(tmp_path).ready() as table:
        assert _answers(table.socket)


def test_a_daemon_never_unlinks_a_socket_that_is_not_its_own(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    shared = tmp_path / "control.sock"
    with Daemon(tmp_path / "a", "--control", str(shared)).ready() as first:
        shared.unlink()  # someone removed it; a new daemon takes the free path
        with Daemon(tmp_path / "b", "--control", str(shared)).ready() as second:
            assert first.stop() == 0
            assert shared.exists(), "the first daemon removed the second one's socket"
            assert request(shared, "status", [])["ok"]
            assert second.stop() == 0
    assert not shared.exists()


def test_a_second_daemon_on_the_same_state_directory_refuses(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with Daemon(tmp_path / "a").ready() as first:
        state = tmp_path / "a" / "state"
        with Daemon(tmp_path / "b", env={"STATE_DIRECTORY": str(state)}) as second:
            log = second.refused()
        assert f"another timerd runs with the state directory {state}: {HINT}" in log
        assert _answers(first.socket)


def test_a_second_daemon_on_the_same_web_port_refuses(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    # The first takes any free port (Daemon's web.port=0) and says which: a port picked free
    # here and bound by it a second later could be another process's by then.
    with Daemon(tmp_path / "a").ready() as first:
        said = next(line for line in first.log if "web scoreboard at" in line)
        port = re.search(r"http://127\.0\.0\.1:(\d+)/", said)
        assert port, said
        with Daemon(tmp_path / "b", "-o", f"web.port={port[1]}") as second:
            log = second.refused()
        assert f"127.0.0.1 port {port[1]} is in use (another timerd?)" in log
        assert _answers(first.socket)


def test_a_second_daemon_on_the_same_serial_port_refuses(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    master, slave = os.openpty()
    try:
        port = ("-o", f'serial.port="{os.ttyname(slave)}"')
        with Daemon(tmp_path / "a", *port).ready() as first:
            assert any("open at 115200 baud" in line for line in first.log)
            with Daemon(tmp_path / "b", *port) as second:
                log = second.refused()
            assert f"the serial port {os.ttyname(slave)} is held by another process" in log
            assert _answers(first.socket)
    finally:
        os.close(master)
        os.close(slave)


def test_state_runtime_directory_moves_the_control_socket(tmp_path: Path) -> None:
    config = Config(state=StateConfig(runtime_directory=str(tmp_path / "rt")))
    assert config.control_socket() == tmp_path / "rt" / "control.sock"
