"""The service's control socket is for root and the socket group only (issue 17): the unit
makes /run/timerd 0750 timerd:timerd, the daemon makes the socket 0660, and `timerd install`
adds the admin to the group. A member's `timerctl` gets the status; anyone else gets a clear
"join the group" error, not a traceback.

A real ControlSocket serves from a thread; timerctl runs in this process with its effective
user and groups switched (root may, and switches back), in a directory tree that others may
traverse, as /run is. The group is `audio`, which Debian has, standing for `timerd`.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.parser  # noqa: F401 (the package metadata reads it; /root is closed to others)
import grp
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_unit_file import TEMPLATE, settings
from timerd import cli
from timerd.adapters.control import ControlSocket
from timerd.config import profiles
from timerd.core import display  # noqa: F401 (timerctl imports it lazily: do it as root)
from timerd.core.match import Match
from timerd.service import Service

SERVICE_UID = 65534  # nobody, standing for the service's user
ADMIN_UID, OUTSIDER_UID = 64001, 64002


@contextlib.contextmanager
def acting_as(uid: int, groups: list[int]) -> Iterator[None]:
    saved = os.getgroups()
    os.setgroups(groups)
    os.seteuid(uid)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setgroups(saved)


@pytest.fixture
def service_socket() -> Iterator[tuple[Path, int]]:
    """/run/timerd as the service has it: 0750 service:group in a root-owned 0755 parent, with
    the daemon's socket in it."""
    group = grp.getgrnam("audio").gr_gid
    run = Path(tempfile.mkdtemp(prefix="timerd-run-"))
    run.chmod(0o755)
    directory = run / "timerd"
    directory.mkdir(mode=0o750)
    path = directory / "control.sock"
    started = threading.Event()
    stopping: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    async def serve() -> None:
        # Nothing here may import or open files once started: the switched credentials
        # apply to every thread of the process.
        stop = asyncio.Event()
        async with ControlSocket(path, Service(Match(profiles.load("ithf")))):
            os.chown(directory, SERVICE_UID, group)
            os.chown(path, SERVICE_UID, group, follow_symlinks=False)
            stopping.append((asyncio.get_running_loop(), stop))
            started.set()
            await stop.wait()

    thread = threading.Thread(target=lambda: asyncio.run(serve()), daemon=True)
    thread.start()
    assert started.wait(30)
    yield path, group
    loop, stop = stopping[0]
    loop.call_soon_threadsafe(stop.set)
    thread.join(30)
    shutil.rmtree(run)


pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="switching users needs root")


def test_the_unit_gives_the_socket_directory_to_the_group() -> None:
    unit = settings(TEMPLATE.read_text())
    assert unit["User"] == unit["Group"] == ["timerd"]
    assert unit["RuntimeDirectoryMode"] == ["0750"]


def test_a_member_of_the_socket_group_may_use_timerctl_and_others_are_told_how(
        service_socket: tuple[Path, int], capsys: pytest.CaptureFixture[str]) -> None:
    path, group = service_socket
    assert oct(path.stat().st_mode & 0o777) == "0o660"
    with acting_as(ADMIN_UID, [group]):
        code = cli.timerctl(["--socket", str(path), "status"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "phase     idle" in out.out
    with acting_as(OUTSIDER_UID, []):
        code = cli.timerctl(["--socket", str(path), "status"])
    err = capsys.readouterr().err
    assert code == cli.EXIT_USAGE
    assert f"not allowed to use {path}: add yourself to the timerd group" in err
