"""With few file descriptors a crowd of connections cannot fill the log (issue 43 item 4): at
64 (`ulimit -n 64`) asyncio logged a traceback per accept refused for want of descriptors,
1355 in 10 s; now one line per 30 s with a count, and the daemon serves on. A real daemon, its
crowd real sockets from 40 loopback addresses on both its listeners (the scoreboard's and
control's). The daemon holds about 30 descriptors of its own and gives each listener a
quarter of its limit (`limits.fd_share`): at 48 two crowded listeners run out for sure (at 64
it takes more parts, or a moment of connections closing late)."""

from __future__ import annotations

import re
import socket
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from daemon_process import Daemon

pytestmark = pytest.mark.e2e

#: Runs the daemon's command line with at most 48 file descriptors.
LIMITED = [sys.executable, "-c", "import os, resource, sys; "
           "resource.setrlimit(resource.RLIMIT_NOFILE, (48, 48)); "
           "os.execv(sys.argv[1], sys.argv[1:])"]


def test_a_crowd_out_of_file_descriptors_gets_a_line_not_a_traceback_per_accept(
        tmp_path: Path) -> None:
    """Fails on the old code: a traceback for each refused accept, at least one a second."""
    with Daemon(tmp_path, "-o", "web.control=127.0.0.1:0", "-o", f"web.token={'k' * 20}",
                wrapper=LIMITED, speed=1.0).ready() as daemon:
        ports = sorted({int(m[1]) for line in daemon.log
                        for m in re.finditer(r"http://127\.0\.0\.1:(\d+)", line)})
        assert len(ports) == 2
        crowd = []
        for n in range(300):
            sock = socket.socket()
            sock.bind((f"127.0.0.{2 + n % 40}", 0))
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", ports[n % 2]))  # under way: EINPROGRESS
            crowd.append(sock)
        daemon.wait_log("cannot accept connections")
        time.sleep(4.0)  # four of asyncio's one-second retries: each a traceback before
        for sock in crowd:
            sock.close()
        log = "".join(daemon.log)
        with urllib.request.urlopen(f"http://127.0.0.1:{ports[0]}/api/state",
                                    timeout=15) as reply:
            served = reply.status
    assert "Traceback" not in log
    assert log.count("cannot accept connections") == 1
    assert "Too many open files" in log
    assert served == 200
