"""The real daemon as a subprocess: time from exec to ready, CPU per match minute, peak RSS.

`python -m timerd run --simulate` is started as a user would, with every adapter that the code
on this branch has switched on (`adapter_config`), its event stream on stdout and its log on
stderr. Ready is the "timerd ready" log line. CPU is read from the kernel's per-thread run time
(`/proc/PID/task/*/schedstat`, nanoseconds), peak RSS from `wait4`'s `ru_maxrss` once it exits.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import tomli_w

from timerd.cli import request
from timerd.disk import on_ram

REPO = Path(__file__).resolve().parent.parent
#: Settings that switch adapters on, by config section; applied only to sections and keys this
#: branch's config has, so the file may name adapters that are not merged yet.
ADAPTERS = Path(__file__).with_name("adapters.toml")
#: Keys that switch a config section's adapter on, turned on wherever they exist.
SWITCHES = ("enabled", "enable")
#: Real playback without a sound card: ALSA's file plugin writing into a null sink.
ALSA_NULL = 'pcm.!default { type file; slave.pcm { type null }; file "/dev/null"; format "raw" }\n'


def compile_bytecode(repo: Path = REPO) -> None:
    """Write timerd's bytecode (.pyc) before the daemon is started and timed, as pip does when
    it installs a package: a daemon that started once has it anyway, but a checkout run with
    PYTHONDONTWRITEBYTECODE set (as on this project's machines) would compile every module at
    every start (about 0.2 s and 1 MB more, measured for issue 16)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(repo / "timerd")], check=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


#: Where `{ram}` scratch directories go: RAM, as the unit's runtime directory (/run/timerd).
SHM = Path("/dev/shm")


def ram_directory(workdir: Path) -> Path:
    """A scratch directory in RAM (a tmpfs at /dev/shm, removed when the bench exits), else
    `workdir`: the heartbeat is written where the daemon on a Pi writes it."""
    if on_ram(SHM) is not True:
        return workdir
    ram = Path(tempfile.mkdtemp(prefix="timerd-bench-", dir=SHM))
    atexit.register(shutil.rmtree, ram, True)
    return ram


#: The switches of issue 16's CPU budget ("with the control socket, event stream and web
#: page open"): the web server, for the page; the socket and the stream are always on.
CPU_BUDGET_SWITCHES = ("web.enabled",)


def adapter_config(workdir: Path, profile: str, only: tuple[str, ...] | None = None,
                   repo: Path = REPO) -> tuple[Path, list[str]]:
    """A config file with every adapter on (or the switches `only`, `section.key`), and what
    was switched on (`section.key = value`).

    Starts from the effective defaults (`timerd config`), turns on every `enabled` switch, then
    applies `adapters.toml`, whose strings may hold `{tmp}` (a scratch directory) or `{ram}`
    (one in RAM, `ram_directory`), and whose value `"{port}"` becomes a free loopback TCP port.
    """
    empty = workdir / "empty.toml"
    empty.write_text("")
    shown = subprocess.run([sys.executable, "-m", "timerd", "config", "--config", str(empty)],
                           cwd=repo, capture_output=True, text=True, check=True).stdout
    config: dict[str, Any] = tomllib.loads(shown)
    changed = []
    for section, table in config.items():
        for key in SWITCHES:
            if isinstance(table, dict) and isinstance(table.get(key), bool) \
                    and (only is None or f"{section}.{key}" in only):
                table[key] = True
                changed.append(f"{section}.{key} = true")
    wanted = tomllib.loads(ADAPTERS.read_text())
    for section, table in wanted.items():
        for key, given in table.items():
            if key not in config.get(section, {}):
                continue
            value = given
            if given == "{port}":
                value = free_port()
            elif isinstance(given, str) and "{ram}" in given:
                value = given.replace("{ram}", str(ram_directory(workdir)))
            elif isinstance(given, str):
                value = given.replace("{tmp}", str(workdir))
            config[section][key] = value
            changed.append(f"{section}.{key} = {value!r}")
    config["match"]["profile"] = profile
    path = workdir / "timerd.toml"
    path.write_text(tomli_w.dumps(config))
    return path, changed


class WebPage(threading.Thread):
    """A browser on the scoreboard: loads the page, then reads its event stream
    (`/api/stream`) until `close`, as the hall TV does through a whole match."""

    def __init__(self, port: int) -> None:
        super().__init__(name="web-page", daemon=True)
        self.port = port
        self.messages = 0
        self._loop = asyncio.new_event_loop()
        self._done = asyncio.Event()
        self._open = threading.Event()

    def run(self) -> None:
        self._loop.run_until_complete(self._read())

    async def _read(self) -> None:
        import aiohttp  # noqa: PLC0415 (the orchestrator needs it only here)

        base = f"http://127.0.0.1:{self.port}"
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{base}/") as page:
                await page.read()
            async with session.ws_connect(f"{base}/api/stream") as ws:
                self._open.set()
                reader = asyncio.ensure_future(self._count(ws))
                await self._done.wait()
                reader.cancel()

    async def _count(self, ws: Any) -> None:
        async for _ in ws:
            self.messages += 1

    def __enter__(self) -> WebPage:
        self.start()
        if not self._open.wait(10):
            raise RuntimeError(f"the scoreboard's stream on port {self.port} did not open")
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._done.set)
        self.join(10)


class Daemon:
    """One `timerd run --simulate` process; lines of its stdout and stderr are timestamped.
    `repo`: the tree whose timerd it runs (`python -m timerd` from there: `bench/run --ab`
    runs two commits' trees)."""

    def __init__(self, config: Path, workdir: Path, repo: Path = REPO,
                 under: Sequence[str] = (), options: Sequence[str] = ()) -> None:
        """`under`: a command the daemon runs under (`valgrind ...`: `bench/run --ab
        --instructions`); `options`: more of `timerd run`'s (`--speed`, `-o`)."""
        self.socket = workdir / "control.sock"
        alsa = workdir / "alsa.conf"
        alsa.write_text(ALSA_NULL)
        env = {**os.environ, "ALSA_CONFIG_PATH": str(alsa)}
        cmd = [*under, sys.executable, "-m", "timerd", "run", "--simulate", "--config",
               str(config), "--control", str(self.socket), "--events", "-", *options]
        self.events: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self.log: list[str] = []
        self._ready = threading.Event()
        self.ready_at = 0.0
        self.exec_at = time.monotonic()
        self.proc = subprocess.Popen(cmd, cwd=repo, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        assert self.proc.stderr is not None
        self._readers = [threading.Thread(target=self._read, args=(self.proc.stdout, self._event)),
                         threading.Thread(target=self._read, args=(self.proc.stderr, self._log))]
        for reader in self._readers:
            reader.start()

    def _read(self, stream: IO[str], keep: Callable[[float, str], None]) -> None:
        for line in stream:
            keep(time.monotonic(), line.rstrip("\n"))

    def _event(self, at: float, line: str) -> None:
        self.events.put((at, json.loads(line)))

    def _log(self, at: float, line: str) -> None:
        self.log.append(line)
        if "timerd ready" in line and not self._ready.is_set():
            self.ready_at = at
            self._ready.set()

    def wait_ready(self, timeout_s: float = 30.0) -> float:
        """Seconds from exec to the "timerd ready" line."""
        deadline = time.monotonic() + timeout_s
        while not self._ready.wait(0.05):
            if self.proc.poll() is not None:
                for reader in self._readers:
                    reader.join()
                raise RuntimeError(f"timerd exited {self.proc.returncode} before it was ready:\n"
                                   + "\n".join(self.log[-20:]))
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("timerd did not get ready:\n" + "\n".join(self.log[-20:]))
        return self.ready_at - self.exec_at

    def command(self, name: str) -> None:
        reply = request(self.socket, name, [])
        if not reply.get("ok"):
            raise RuntimeError(f"timerd refused {name}: {reply.get('error')}")

    def wait_signal(self, kind: str, timeout_s: float) -> float:
        """The instant the event stream reported signal `kind`."""
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            try:
                at, record = self.events.get(timeout=left)
            except queue.Empty:
                break
            if record.get("type") == "signal" and record.get("signal") == kind:
                return at
        raise RuntimeError(f"timerd gave no {kind} signal within {timeout_s:g} s")

    def cpu_s(self) -> dict[str, float]:
        """CPU time so far: the event loop's thread (the main thread; kernel run time, ns
        resolution) and every other thread apart. The others are the whole process's user and
        system time (clock ticks, which keep the time of threads that have ended, such as a
        sound's playback thread) less the loop thread's."""
        pid = self.proc.pid
        loop_s = int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0]) / 1e9
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return {"loop_thread": loop_s, "other_threads": max(0.0, total_s - loop_s)}

    def stop(self) -> dict[str, Any]:
        """SIGTERM, then the exit code and peak RSS (MB) from wait4."""
        self.proc.send_signal(signal.SIGTERM)
        _, status, usage = os.wait4(self.proc.pid, 0)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        for reader in self._readers:
            reader.join()
        return {"exit_code": self.proc.returncode, "peak_rss_mb": usage.ru_maxrss / 1024}
