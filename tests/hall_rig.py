"""A hall on one machine, for the hall-mode tests and `bench/hall_skew.py`.

- `Broker`: Debian's mosquitto on a loopback port with a throwaway config; it can be stopped
  and started again on the same port (the broker going away mid-match).
- `Table`: a real daemon process, `python -m timerd run --simulate` with hall mode on, its
  event stream in a file.
- `Observer`: the desk's view, a paho-mqtt client (not our code) in its own thread that keeps
  every message under `timerd/#` and lets a test wait for a condition with a timeout.

Nothing here sleeps to let time pass: every wait polls a condition until a deadline.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from paho.mqtt.client import CallbackAPIVersion
from paho.mqtt.client import Client as PahoClient

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")
POLL_S = 0.005
#: How far ahead a test's `start_round` puts the start instant: the command must reach each
#: table before the instant less its profile's lead, or the table refuses it ("too late for
#: the pre-signal", ITHF 4.4). At 0.5 s ahead with a 0.2-0.3 s lead that left 0.2-0.3 s for
#: the broker and the table's loop, which a loaded 2-core machine does not keep.
START_AHEAD_S = 3.0


def wait_until(probe: Callable[[], T | None], timeout_s: float, what: str) -> T:
    """Poll `probe` until it returns something other than None (or False); fail after
    `timeout_s` saying `what` was awaited."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = probe()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(POLL_S)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def mosquitto_path() -> str | None:
    return shutil.which("mosquitto") or next(
        (p for p in ("/usr/sbin/mosquitto",) if os.access(p, os.X_OK)), None)


class Broker:
    """mosquitto on 127.0.0.1:`port`, anonymous, nothing persisted; or with `config`, the
    whole mosquitto.conf (`locked_broker`: `timerd hall secure`'s)."""

    def __init__(self, directory: Path, port: int | None = None, extra_config: str = "",
                 config: str | None = None) -> None:
        self.directory = directory
        self.port = port or free_port()
        #: The port is this broker's own pick, not yet bound: another process may take it
        #: between free_port() and mosquitto's bind, and then it picks again. Once started it
        #: keeps its port for a restart (the tables know it).
        self._picked = port is None
        self.extra_config = extra_config  # more mosquitto.conf lines (TLS)
        self.config = config
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 10.0) -> None:
        binary = mosquitto_path()
        if binary is None:
            raise FileNotFoundError("mosquitto is not installed")
        while True:
            try:
                self._start(binary, timeout_s)
            except RuntimeError:
                if not (self._picked and "Address already in use" in self.log()):
                    raise
                self.port = free_port()
            else:
                self._picked = False
                return

    def _start(self, binary: str, timeout_s: float) -> None:
        conf = self.directory / "mosquitto.conf"
        conf.write_text(self.config if self.config is not None else
                        f"listener {self.port} 127.0.0.1\nallow_anonymous true\n"
                        f"persistence false\n{self.extra_config}")
        path = self.directory / "mosquitto.log"
        before = path.stat().st_size if path.exists() else 0
        log = path.open("ab")
        self.proc = subprocess.Popen([binary, "-c", str(conf)], stdout=log, stderr=log)
        log.close()

        def accepting() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.log()}")
            # With our own config it logs to stderr: its "running" line, so that another
            # process that holds the port is not taken for it before mosquitto exits.
            if self.config is None and b" running" not in path.read_bytes()[before:]:
                return False
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
            except OSError:
                return False
            return True

        wait_until(accepting, timeout_s, f"mosquitto on port {self.port}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None

    def kill(self) -> None:
        """SIGKILL: the broker gone at once, as a power cut takes it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def log(self) -> str:
        path = self.directory / "mosquitto.log"
        return path.read_text(errors="replace") if path.exists() else ""


def secure_hall(directory: Path, port: int, *tables: str) -> Path:
    """`timerd hall secure` for `tables` under `directory`/secure, its logins naming a broker
    on 127.0.0.1:`port`."""
    out = directory / "secure"
    made = subprocess.run([sys.executable, "-m", "timerd", "hall", "secure", "--tables",
                           ",".join(tables), "--out", str(out), "--host", "127.0.0.1",
                           "--port", str(port)], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=False)
    if made.returncode != 0:
        raise RuntimeError(f"timerd hall secure failed: {made.stderr}")
    return out


def locked_broker(directory: Path, out: Path, port: int) -> Broker:
    """mosquitto with `hall secure`'s snippet as written in `out` (its listener on loopback
    only, its files where the test put them, run as this user), started."""
    import getpass  # noqa: PLC0415 (only for a locked broker)

    conf = (out / "mosquitto.conf").read_text().replace(
        f"listener {port}\n", f"listener {port} 127.0.0.1\npersistence false\n").replace(
        "/etc/mosquitto/timerd", str(out)) + f"user {getpass.getuser()}\n"
    broker = Broker(directory, port, config=conf)
    broker.start()
    return broker


def login(out: Path, name: str) -> tuple[str, str]:
    """The user name and password of `hall secure`'s login file for `name` (a table, `desk`
    or `board`)."""
    import tomllib  # noqa: PLC0415

    path = out / (f"{name}.toml" if name in ("desk", "board") else f"tables/{name}.toml")
    hall = tomllib.loads(path.read_text())["hall"]
    return hall["username"], hall["password"]


@dataclass(frozen=True)
class Message:
    topic: str
    payload: bytes
    retain: bool
    seen_wall: float  # when the observer got it

    def json(self) -> Any:
        return json.loads(self.payload)


class Observer:
    """Every message under `timerd/#`, kept in order; resubscribes after a broker restart."""

    def __init__(self, port: int, login: tuple[str, str] | None = None) -> None:
        self.messages: list[Message] = []
        self._lock = threading.Lock()
        self.client = PahoClient(CallbackAPIVersion.VERSION2)
        if login is not None:  # a broker without anonymous access (`timerd hall secure`)
            self.client.username_pw_set(*login)
        self.client.on_connect = lambda c, *_: c.subscribe("timerd/#", qos=1)
        subscribed = threading.Event()
        self.client.on_subscribe = lambda *_: subscribed.set()
        self.client.on_message = self._on_message
        self.client.reconnect_delay_set(0.05, 0.2)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        # Subscribed before the test goes on: until the broker's SUBACK a message that is not
        # retained (an event, a reply) passes the observer by, and a wait for it times out.
        if not subscribed.wait(20):
            self.close()
            raise TimeoutError("the observer was not subscribed within 20 s")

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        with self._lock:
            self.messages.append(Message(message.topic, bytes(message.payload),
                                         bool(message.retain), time.time()))

    def snapshot(self, topic_suffix: str = "") -> list[Message]:
        with self._lock:
            return [m for m in self.messages if m.topic.endswith(topic_suffix)]

    def wait_for(self, probe: Callable[[list[Message]], T | None], timeout_s: float,
                 what: str) -> T:
        return wait_until(lambda: probe(self.snapshot()), timeout_s, what)

    def events(self, table: str, hall: str = "hall") -> list[dict[str, Any]]:
        topic = f"timerd/{hall}/tables/{table}/events"
        return [m.json() for m in self.snapshot() if m.topic == topic]

    def last(self, table: str, kind: str, hall: str = "hall") -> Message | None:
        topic = f"timerd/{hall}/tables/{table}/{kind}"
        found = [m for m in self.snapshot() if m.topic == topic]
        return found[-1] if found else None

    def publish(self, topic: str, payload: Any) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.client.publish(topic, data, qos=1).wait_for_publish(5)

    def close(self) -> None:
        self.client.disconnect()  # wakes the network thread, so loop_stop does not wait
        self.client.loop_stop()


def write_profile(path: Path, period_s: float, lead_s: float) -> Path:
    """A training profile (not ITHF-conformant) with a short match and lead, for fast tests."""
    path.write_text(f'extends = "ithf"\nname = "{path.stem}"\nithf_conformant = false\n'
                    f"period_s = {period_s}\npre_signal_lead_s = {lead_s}\nsignals = []\n")
    return path


class Table:
    """One table: a timerd daemon process in hall mode, with its event stream in a file."""

    def __init__(self, directory: Path, name: str, port: int, profile: str | Path, *,
                 speed: float = 1.0, hall: str = "hall", options: tuple[str, ...] = ()) -> None:
        self.name = name
        self.directory = directory / name
        self.directory.mkdir(parents=True, exist_ok=True)
        self.events_path = self.directory / "events.jsonl"
        self.socket = self.directory / "control.sock"
        #: hall mode's default: in the table's own state directory (issue 41 item 4)
        self.outbox = self.directory / "state" / "hall-outbox"
        self.args = [
            sys.executable, "-m", "timerd", "run", "--simulate", "--speed", str(speed),
            "--events", str(self.events_path), "--control", str(self.socket),
            "--profile", str(profile),
            "-o", "hall.enabled=true", "-o", f"hall.port={port}", "-o", 'hall.host="127.0.0.1"',
            "-o", f'hall.hall="{hall}"', "-o", f'hall.table="{name}"',
            "-o", "hall.reconnect_max_s=0.2", "-o", "hall.allow_anonymous=true",
            "-o", "hall.heartbeat_s=1",
            # Each table is its own Pi: its own match journal, no web port shared with others.
            "-o", f'state.directory="{self.directory / "state"}"',
            "-o", f'state.runtime_directory="{self.directory / "run"}"',
            "-o", "web.enabled=false", *options,
        ]
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Table:
        stderr = open(self.directory / "stderr.log", "ab")  # noqa: SIM115 (the process keeps it)
        self.proc = subprocess.Popen(self.args, cwd=ROOT, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=stderr)
        stderr.close()
        return self

    def events(self) -> list[dict[str, Any]]:
        if not self.events_path.exists():
            return []
        lines = self.events_path.read_text().splitlines()
        return [json.loads(line) for line in lines if line.endswith("}")]

    def wait_event(self, probe: Callable[[dict[str, Any]], bool], timeout_s: float,
                   what: str) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            self.check_alive()
            return next((e for e in self.events() if probe(e)), None)

        return wait_until(found, timeout_s, f"{self.name}: {what}")

    def check_alive(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(f"table {self.name} exited {self.proc.returncode}:\n"
                               + self.stderr())

    def stderr(self) -> str:
        return (self.directory / "stderr.log").read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def stop_all(tables: list[Table]) -> None:
    """SIGTERM every table first, then wait for each: they shut down in parallel."""
    for table in tables:
        if table.proc is not None and table.proc.poll() is None:
            table.proc.terminate()
    for table in tables:
        table.stop()


def link_is(observer: Observer, table: str, link: bytes) -> bool:
    found = observer.last(table, "status")
    return found is not None and found.payload == link


@contextmanager
def running_tables(broker: Broker, directory: Path, names: tuple[str, ...], period_s: float,
                   lead_s: float) -> Iterator[tuple[Observer, list[Table]]]:
    """Tables `names` (daemon processes, a training profile) online on `broker`; stopped
    after, with the observer that watched them come online."""
    profile = write_profile(directory / "round.toml", period_s=period_s, lead_s=lead_s)
    tables = [Table(directory, name, broker.port, profile) for name in names]
    observer = Observer(broker.port)
    for table in tables:
        table.start()
    try:
        for table in tables:
            observer.wait_for(lambda _, t=table: link_is(observer, t.name, b"online"), 20,
                              f"{table.name} online")
        yield observer, tables
    finally:
        observer.close()
        stop_all(tables)
