"""The runtime directory and the control socket are trusted only when they are this user's own
(issue 13 item 2): another user who pre-creates /tmp/timerd-UID (anyone may, in /tmp) must not
get the heartbeat written through a symbolic link of theirs, nor `timerctl`'s commands.

The tests point the /tmp fallback at a sticky, world-writable directory of their own through
$TMPDIR, and as root hand directories and sockets to `nobody` with chown.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from timerd import cli
from timerd import config as config_mod
from timerd.adapters.journal.format import HEARTBEAT_NAME
from timerd.adapters.journal.writer import Journal
from timerd.config import UnsafePath, private_directory, profiles, trusted_socket

REPO = Path(__file__).resolve().parent.parent.parent
NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def shared_tmp(tmp_path: Path) -> Path:
    """A directory like /tmp: anyone may create entries, only their owner may remove them."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    tmp.chmod(0o1777)
    return tmp


@pytest.fixture
def fallback_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No systemd and no login session: the runtime directory is $TMPDIR/timerd-UID."""
    tmp = shared_tmp(tmp_path)
    for name in ("RUNTIME_DIRECTORY", "XDG_RUNTIME_DIR", config_mod.INSTANCE_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr("tempfile.tempdir", None)  # gettempdir() reads $TMPDIR again
    return tmp / f"timerd-{os.geteuid()}"


def test_the_fallback_directory_is_created_private(fallback_env: Path) -> None:
    assert config_mod.runtime_dir() == fallback_env
    assert private_directory(fallback_env) == fallback_env
    assert fallback_env.stat().st_mode & 0o777 == 0o700
    assert private_directory(fallback_env) == fallback_env  # ours: accepted again


@pytest.mark.parametrize(("mode", "why"), [(0o777, "may be changed by other users (mode 0777)"),
                                           (0o755, "may be read by other users (mode 0755")])
def test_a_fallback_directory_others_may_use_is_refused(fallback_env: Path, mode: int,
                                                        why: str) -> None:
    fallback_env.mkdir()
    fallback_env.chmod(mode)
    with pytest.raises(UnsafePath, match=r"runtime directory .* " + re.escape(why)):
        private_directory(fallback_env)


def test_a_symbolic_link_is_refused_not_followed(fallback_env: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    fallback_env.symlink_to(target)
    with pytest.raises(UnsafePath, match="is a symbolic link"):
        private_directory(fallback_env)


@as_root
def test_a_directory_another_user_made_is_refused(fallback_env: Path) -> None:
    fallback_env.mkdir(mode=0o700)
    os.chown(fallback_env, NOBODY, NOBODY)
    with pytest.raises(UnsafePath, match=r"belongs to nobody \(uid 65534\), not to root"):
        private_directory(fallback_env)


@as_root
def test_the_daemon_refuses_to_start_in_a_planted_directory(fallback_env: Path,
                                                            tmp_path: Path) -> None:
    """Fails on main: the daemon started there and wrote its heartbeat through the link."""
    fallback_env.mkdir()
    fallback_env.chmod(0o777)
    os.chown(fallback_env, NOBODY, NOBODY)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (fallback_env / HEARTBEAT_NAME).symlink_to(victim)
    env = {k: v for k, v in os.environ.items()
           if k not in ("RUNTIME_DIRECTORY", "XDG_RUNTIME_DIR")}
    env.update(TMPDIR=str(fallback_env.parent), STATE_DIRECTORY=str(tmp_path / "state"))
    result = subprocess.run([sys.executable, "-m", "timerd", "run", "--simulate",
                             "-o", "web.enabled=false"], cwd=REPO, env=env,
                            stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 2, result.stderr
    assert f"the runtime directory {fallback_env} belongs to nobody" in result.stderr
    assert victim.read_text() == "precious\n"


def test_the_heartbeat_is_never_written_through_a_symbolic_link(tmp_path: Path) -> None:
    """Fails on main: the heartbeat was opened without O_NOFOLLOW and overwrote the target."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (runtime / HEARTBEAT_NAME).symlink_to(victim)

    async def main() -> None:
        journal = Journal(tmp_path / "state", runtime, asyncio.get_running_loop(), 7200.0)
        journal.recover(profiles.load("ithf"))
        async with journal:
            pass

    asyncio.run(main())
    assert victim.read_text() == "precious\n"


# -- timerctl: whose socket is it? ----------------------------------------------------------

@pytest.fixture
def listener(tmp_path: Path) -> Iterator[Path]:
    """A socket that answers every request with a fixed, 'ok' status, like a fake daemon."""
    directory = tmp_path / "sock"
    directory.mkdir(mode=0o700)
    path = directory / "control.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(4096)
                conn.sendall(b'{"ok": false, "error": "fake daemon"}\n')

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path
    server.close()


def test_timerctl_talks_to_a_socket_of_its_own_user(listener: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.timerctl(["--socket", str(listener), "status"]) == cli.EXIT_REFUSED
    assert "fake daemon" in capsys.readouterr().err


@as_root
def test_timerctl_refuses_a_socket_in_someone_elses_directory(
        listener: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Fails on main: timerctl sent the command to whoever had made the directory."""
    planted = shared_tmp(tmp_path) / "timerd-0"
    listener.parent.rename(planted)
    os.chown(planted, NOBODY, NOBODY)
    assert cli.timerctl(["--socket", str(planted / "control.sock"), "goal", "home"]) == 2
    err = capsys.readouterr().err
    assert f"{planted} belongs to nobody (uid 65534), not to you or root" in err
    assert "fake daemon" not in err


@as_root
def test_timerctl_refuses_a_socket_another_user_put_in_a_shared_directory(
        listener: Path, tmp_path: Path) -> None:
    shared = shared_tmp(tmp_path)
    moved = shared / "control.sock"
    listener.rename(moved)
    os.chown(moved, NOBODY, NOBODY, follow_symlinks=False)
    with pytest.raises(UnsafePath, match="belongs to nobody"):
        trusted_socket(moved)
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)  # writable by all, no sticky bit: anyone may swap the socket
    with pytest.raises(UnsafePath, match="may be written by other users"):
        trusted_socket(open_dir / "control.sock")


@as_root
def test_the_services_directory_made_by_root_is_trusted(listener: Path, tmp_path: Path) -> None:
    """/run/timerd: made by systemd (root) in root's /run, owned by the service's user."""
    run = tmp_path / "run"
    run.mkdir(mode=0o755)
    service_dir = run / "timerd"
    listener.parent.rename(service_dir)
    service_dir.chmod(0o750)
    os.chown(service_dir, NOBODY, NOBODY)
    os.chown(service_dir / "control.sock", NOBODY, NOBODY, follow_symlinks=False)
    trusted_socket(service_dir / "control.sock")  # raises if refused
