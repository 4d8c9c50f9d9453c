"""Shared test fixtures: virtual time, a recording output, a scripted match, mock pins."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import re
import socket
import threading
from collections.abc import Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin
from hypothesis import settings

from timerd.app import attach
from timerd.config import profiles
from timerd.core.effects import Effect, Notice
from timerd.core.match import Match
from timerd.core.refused import CommandRefused
from timerd.core.status import Status
from timerd.i18n import LOG_TEXT
from timerd.ports import Dispatch
from timerd.service import Service
from timerd.timebase import virtual_loop
from timerd.wire import EVENT_FORMAT, event_record

GOLDEN = Path(__file__).parent / "golden"
#: asyncio's debug mode, failing a test whose loop was blocked (TIMERD_LOOP_DEBUG=1).
pytest_plugins = ["tests.loop_debug"]

#: Hypothesis's per-example deadline (200 ms) is a timing check in real time, and fails on a
#: loaded 2-core machine; examples are bounded by max_examples instead.
settings.register_profile("timerd", deadline=None)
settings.load_profile("timerd")


def wired(part: Any, service: Service | None = None) -> Any:
    """Register an adapter with its service (default: the one it was given) as `timerd.app`
    does: a sound output if it sounds signals, an output if it is handed dispatches, and
    what it declares beside (status keys, commands, buttons)."""
    service = service or part.service
    if hasattr(part, "signal"):
        service.sound_outputs.append(part)
    if hasattr(part, "notify"):
        service.outputs.append(part)
    attach(service, part)
    return part


def dispatch(status: Status, *effects: Effect, now: float = 0.0) -> Dispatch:
    """A dispatch of `effects` leaving `status`, as the service hands one to an output."""
    return Dispatch(effects, lambda: status, now)


def run_virtual(main: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """Run `main()` on a loop whose time jumps to the next timer: minutes take milliseconds."""
    with asyncio.Runner(loop_factory=virtual_loop) as runner:
        return runner.run(main())


@dataclass
class Recorder:
    """An output that keeps every effect with the loop time it was notified at."""

    loop: asyncio.AbstractEventLoop
    t0: float = 0.0
    seen: list[tuple[float, Effect, Status]] = field(default_factory=list)

    def notify(self, dispatch: Dispatch) -> None:
        t = self.loop.time() - self.t0
        self.seen.extend((t, effect, dispatch.status) for effect in dispatch.effects)

    #: What made the effects: the profile, the script and the end, for a golden's header.
    script: str = ""

    def events(self, *types: str) -> Trace:
        """The effects as event-stream records with their `t`, optionally only some types."""
        out = Trace()
        out.header = self.script
        for t, effect, status in self.seen:
            record = event_record(effect, status)
            if record is not None and (not types or record["type"] in types):
                assert record.pop("format") == EVENT_FORMAT  # the same in every record
                out.append({"t": round(t, 6), **record})
        return out


@contextlib.contextmanager
def refused(pattern: str, code: str | None = None) -> Iterator[None]:
    """The block raises CommandRefused whose sentence (English, from the catalogue as the log
    and the replies say it) matches the regex `pattern`, with the reason `code` if given."""
    with pytest.raises(CommandRefused) as info:
        yield
    said = LOG_TEXT.refusal(info.value)
    assert re.search(pattern, said), said
    assert code is None or info.value.code == code, info.value.code


def said(effects: Iterable[Any]) -> list[str]:
    """The notices among `effects`, as the English log says them."""
    return [LOG_TEXT.notice(e.code, e.params) for e in effects if isinstance(e, Notice)]


def play(profile: str, script: list[tuple[float, str]], until: float,
         setup: Callable[[Service], None] | None = None) -> Recorder:
    """Run the real service on virtual time, pressing `script`'s commands at their times.

    A refused command is part of the trace (as a notice), not an error of the test.
    """

    async def main() -> Recorder:
        loop = asyncio.get_running_loop()
        service = Service(Match(profiles.load(profile)))
        recorder = Recorder(loop, loop.time())
        recorder.script = (f"# profile {profile}, until {until:g} s; commands at their times:\n"
                           + "".join(f"#   {t:g} {words}\n" for t, words in script)
                           + ("# (and the test's own setup)\n" if setup else ""))
        service.outputs.append(recorder)
        if setup is not None:
            setup(service)

        def press(words: str) -> None:
            command, *args = words.split()
            with contextlib.suppress(CommandRefused):
                service.execute(service.parse(command, *args))

        for t, words in script:
            loop.call_at(recorder.t0 + t, press, words)
        task = asyncio.create_task(service.run())
        await asyncio.sleep(until)
        task.cancel()
        return recorder

    result: Recorder = run_virtual(main)
    return result


class Trace(list[dict[str, Any]]):
    """Event records, and the script that made them (the golden file's header)."""

    header: str = ""


def trace_line(event: dict[str, Any]) -> str:
    """One event as a line of a golden trace: its time, its type, then its fields. A notice
    is its code and values (issue 14): its English text is the catalogue's, not the trace's."""
    fields = " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in event.items()
                      if k not in ("t", "type", "message"))
    t = f"{event['t']:.6f}".rstrip("0")  # to the microsecond, as the records keep it
    return f"{t + '0' if t.endswith('.') else t:>12}  {event['type']:<13} {fields}".rstrip()


def golden_lines(name: str) -> list[str]:
    """A golden trace's event lines (its `#` header says how it was made)."""
    text = (GOLDEN / f"{name}.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def trace(profile: str, script: list[tuple[float, str]], until: float) -> Trace:
    return play(profile, script, until).events()


def check_golden(name: str, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Compare with tests/golden/<name>.txt (or write it when TIMERD_UPDATE_GOLDEN=1; see
    tests/golden/README.md for how a changed trace is reviewed)."""
    path = GOLDEN / f"{name}.txt"
    lines = [trace_line(e) for e in events]
    if os.environ.get("TIMERD_UPDATE_GOLDEN") == "1":
        header = getattr(events, "header", "")
        path.write_text(f"# {name}\n{header}" + "\n".join(lines) + "\n", encoding="utf-8")
    assert lines == golden_lines(name)
    return events


def goals(events: list[dict[str, Any]]) -> list[tuple[float, str, bool, str | None]]:
    return [(e["t"], e["side"], e["counted"], e["reason"]) for e in events if e["type"] == "goal"]


def signals(events: list[dict[str, Any]]) -> list[tuple[float, str]]:
    return [(e["t"], e["signal"]) for e in events if e["type"] == "signal"]


@pytest.fixture
def mock_factory() -> Any:
    """gpiozero's MockFactory (PWM-capable pins), reset after the test so pins can be reused."""
    factory = MockFactory(pin_class=MockPWMPin)
    yield factory
    factory.reset()


def require(available: bool, what: str) -> None:
    """Skip a test whose real part (ALSA, mosquitto, chromium, ...) is not installed here.

    CI sets TIMERD_REQUIRE_ALL=1 after installing every part, and then a missing one fails.
    """
    if available:
        return
    if os.environ.get("TIMERD_REQUIRE_ALL") == "1":
        pytest.fail(f"{what} is not available, but TIMERD_REQUIRE_ALL=1")
    pytest.skip(f"{what} is not available on this machine")


@pytest.fixture(autouse=True)
def own_state_directories(tmp_path_factory: pytest.TempPathFactory,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test's daemons (in-process, or subprocesses inheriting the environment) keep
    their match journal and heartbeat to themselves: a match one test left running is never
    restored into the next (docs/service.md)."""
    home = tmp_path_factory.mktemp("timerd-dirs")
    monkeypatch.setenv("STATE_DIRECTORY", str(home / "state"))
    monkeypatch.setenv("RUNTIME_DIRECTORY", str(home / "run"))


@pytest.fixture(autouse=True, scope="session")
def _the_default_web_port_is_taken() -> Iterator[None]:
    """The suite holds the default web port (8080) while it runs, as a club's live timerd
    would (issue 46 item 4): a test daemon left on the default port fails here on every run,
    not only in CI, where `.ci/run` keeps a live timerd on it. Already taken: nothing to do."""
    holder: socket.socket | None = socket.socket()
    try:
        holder.bind(("127.0.0.1", 8080))  # loopback: it still stops a bind of every address
        holder.listen()
    except OSError:
        holder.close()
        holder = None
    yield
    if holder is not None:
        holder.close()


@pytest.fixture
def mosquitto(tmp_path: Path) -> Any:
    """A real mosquitto broker on a free loopback port (tests/hall_rig.py), stopped after."""
    from tests.hall_rig import Broker, mosquitto_path  # noqa: PLC0415 (paho only for hall tests)

    require(mosquitto_path() is not None, "mosquitto (Debian package mosquitto)")
    broker = Broker(tmp_path)
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(autouse=True)
def _the_test_thread_keeps_its_priority() -> Iterator[None]:
    """A test that runs `app.serve` in-process gives the test's own thread the daemon's
    loop priority (SCHED_FIFO by default, when run as root): put back after it, or every
    later test of the run, and a test that spins, would hold a core at real-time priority."""
    tid = threading.get_native_id()
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    nice = os.getpriority(os.PRIO_PROCESS, tid)
    yield
    if (os.sched_getscheduler(0), os.sched_getparam(0)) != (policy, param):
        os.sched_setscheduler(0, policy, param)
    if os.getpriority(os.PRIO_PROCESS, tid) != nice:
        os.setpriority(os.PRIO_PROCESS, tid, nice)
    # ... and the heap it froze when ready (`priority.freeze_heap`): the test run's own
    # objects would never be collected again.
    if gc.get_freeze_count():
        gc.unfreeze()


@pytest.fixture(autouse=True)
def _no_instance_from_another_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """`timerd --instance NAME` names its instance in the process's environment
    (TIMERD_INSTANCE) for what it runs; a test that calls `cli.main` in-process with it must
    not move the next test's default paths (removed before each test, undone after: set
    first, so that the undo puts back what was there, its absence included; a `delenv` of an
    absent name alone records nothing, and a test's own leaked name outlived it)."""
    monkeypatch.setenv("TIMERD_INSTANCE", "")
    monkeypatch.delenv("TIMERD_INSTANCE")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The suite beside a live timerd (issue 46 item 4): `.ci/run` starts `timerd run` on every
    default (web port 8080, the default state and runtime directories and control socket) and
    names it in TIMERD_LIVE_PID. After the whole suite it must still run, answer on its own
    socket and port, idle as it was left: no test took its port, socket, journal or match."""
    pid = os.environ.get("TIMERD_LIVE_PID")
    if not pid:
        return
    from urllib.request import urlopen  # noqa: PLC0415

    from timerd.cli import find_socket, request  # noqa: PLC0415

    try:
        os.kill(int(pid), 0)
        reply = request(find_socket(None), "status", [])
        with urlopen("http://127.0.0.1:8080/api/state", timeout=10) as answer:
            served = json.load(answer)
        phases = (reply.get("status", {}).get("phase"), served.get("phase"))
        problem = None if phases == ("idle", "idle") else (
            f"it was disturbed: its socket and its port say the match is {phases}")
    except (OSError, ValueError, KeyError) as exc:
        problem = f"it cannot be reached as it was: {exc!r}"
    if problem is not None:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        print(f"\nthe live timerd (pid {pid}) beside the suite: {problem}")
