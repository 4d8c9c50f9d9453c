"""`[service] priority`: the loop thread alone gets SCHED_FIFO or a lower nice value, and a
refusal is one warning while the daemon runs on; `[service] cpu_latency_us`: the CPUs' wake-up
latency held while the daemon runs (timerd/priority.py, docs/service.md)."""

from __future__ import annotations

import gc
import logging
import os
import resource
import shutil
import struct
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from daemon_process import Daemon

from timerd import config, priority
from timerd.config import ServiceConfig
from timerd.config.schema import SchemaError


def test_the_default_is_realtime_at_priority_10_with_the_cpus_quick_to_wake() -> None:
    assert config.load(Path("/dev/null")).service == ServiceConfig("realtime", 10, -10, 0)


def test_the_section_is_read_from_the_file_and_options(tmp_path: Path) -> None:
    path = tmp_path / "timerd.toml"
    path.write_text('[service]\npriority = "nice"\nnice = -5\n')
    assert config.load(path).service == ServiceConfig("nice", 10, -5)
    assert config.load(path, ["service.priority=off"]).service.priority == "off"


@pytest.mark.parametrize(("option", "message"), [
    ("service.priority=fast", "service.priority: 'fast' is not one of 'off', 'nice', 'realtime'"),
    ("service.rt_priority=0", "service.rt_priority = 0: SCHED_FIFO priorities are 1 to 99"),
    ("service.rt_priority=100", "service.rt_priority = 100: SCHED_FIFO priorities are 1 to 99"),
    ("service.nice=-21", "service.nice = -21: nice values are -20 to 19"),
    ("service.cpu_latency_us=-2", "service.cpu_latency_us = -2: -1 (off) or 0 to 2147483647"),
    ("service.cpu_latency_us=2147483648", "cpu_latency_us = 2147483648: -1 (off) or 0 to"),
    ("service.priorty=off", "did you mean `priority`?"),
])
def test_bad_values_are_config_errors(option: str, message: str) -> None:
    with pytest.raises(SchemaError) as raised:
        config.load(Path("/dev/null"), [option])
    assert any(message in problem for problem in raised.value.problems), raised.value.problems


def in_thread(fn: Callable[[], None]) -> None:
    """Run `fn` in a thread of its own: the test process's own threads keep their priority."""
    failures: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 (handed to the test's thread)
            failures.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failures:
        raise failures[0]


def test_a_refusal_is_one_warning_and_no_change(monkeypatch: pytest.MonkeyPatch,
                                                caplog: pytest.LogCaptureFixture) -> None:
    def refuse(pid: int, policy: int, param: os.sched_param) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_setscheduler", refuse)
    with caplog.at_level(logging.INFO, logger="timerd.priority"):
        assert priority.apply(ServiceConfig("realtime", 10)) is False
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "SCHED_FIFO priority 10 refused (Operation not permitted)" in caplog.text
    assert "LimitRTPRIO=" in caplog.text


def test_off_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def called(*args: object) -> None:
        raise AssertionError("off must not touch the scheduler")

    monkeypatch.setattr(os, "sched_setscheduler", called)
    monkeypatch.setattr(os, "setpriority", called)
    assert priority.apply(ServiceConfig("off")) is True


def test_the_cpu_latency_request_is_written_and_held_until_closed(tmp_path: Path) -> None:
    device = tmp_path / "cpu_dma_latency"
    device.write_bytes(b"")
    fd = priority.hold_cpu_latency(ServiceConfig(cpu_latency_us=25), device)
    assert fd is not None
    try:
        assert device.read_bytes() == struct.pack("=i", 25)  # the kernel's 32-bit request
        os.fstat(fd)  # still open: the kernel keeps the request while it is
    finally:
        os.close(fd)


def test_off_holds_no_cpu_latency_and_says_nothing(tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="timerd.priority"):
        assert priority.hold_cpu_latency(ServiceConfig(cpu_latency_us=-1),
                                         tmp_path / "absent") is None
    assert caplog.records == []


def test_a_cpu_latency_refusal_is_one_warning_and_the_daemon_runs_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="timerd.priority"):
        assert priority.hold_cpu_latency(ServiceConfig(), tmp_path / "absent") is None
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "CPU wake-up latency of 0 µs not held" in caplog.text
    assert "cpu_latency_us = -1 silences" in caplog.text


def test_the_kernel_takes_the_request_while_it_is_held() -> None:
    """The real PM QoS device: reading it gives the CPUs' latency limit now."""
    device = priority.CPU_LATENCY_DEVICE
    if not os.access(device, os.R_OK | os.W_OK):
        pytest.skip(f"{device} (root, and a kernel with PM QoS)")
    fd = priority.hold_cpu_latency(ServiceConfig(cpu_latency_us=3), device)
    assert fd is not None
    try:
        (limit,) = struct.unpack("=i", device.read_bytes()[:4])
        assert limit <= 3
    finally:
        os.close(fd)


def test_nice_lowers_only_the_calling_thread_and_threads_it_starts_reset() -> None:
    if os.geteuid() != 0:
        pytest.skip("lowering a nice value needs root (or RLIMIT_NICE)")
    seen: dict[str, int] = {}
    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())  # 10 under `nice`

    def body() -> None:
        assert priority.apply(ServiceConfig("nice", nice=-7)) is True
        seen["self"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        child = threading.Thread(target=lambda: seen.update(
            child=os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
        child.start()
        child.join()

    in_thread(body)
    assert seen == {"self": -7, "child": 0}
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before


def threads(pid: int) -> dict[int, tuple[int, int, int]]:
    """Every thread of `pid`: (policy without flags, rt priority, nice), from the kernel."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        tid = int(task.name)
        policy = os.sched_getscheduler(tid) & ~os.SCHED_RESET_ON_FORK
        out[tid] = (policy, os.sched_getparam(tid).sched_priority,
                    os.getpriority(os.PRIO_PROCESS, tid))
    return out


def daemon_home(tmp_path: Path, wanted: str) -> Path:
    # The web server and the speaker start threads of their own (asyncio's executor for the
    # pages' files, the sound's playback): they must stay normal.
    (tmp_path / "timerd.toml").write_text(
        f'[service]\n{wanted}\n[web]\nenabled = true\nport = 0\nhost = "127.0.0.1"\n'
        '[speaker]\nenabled = true\n')
    alsa = tmp_path / "alsa.conf"
    alsa.write_text('pcm.!default { type file; slave.pcm { type null }; file "/dev/null"; '
                    'format "raw" }\n')
    return alsa


def test_in_the_daemon_only_the_loop_thread_is_realtime(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("SCHED_FIFO needs root here (the unit grants LimitRTPRIO=)")
    alsa = daemon_home(tmp_path, 'priority = "realtime"\nrt_priority = 12')
    with Daemon(tmp_path, speed=1, env={"ALSA_CONFIG_PATH": str(alsa)}) as daemon:
        daemon.ready()
        daemon.command("start")  # the pre-signal plays: a playback thread starts
        daemon.wait_signal("pre_signal")
        found = threads(daemon.proc.pid)
    assert found.pop(daemon.proc.pid) == (os.SCHED_FIFO, 12, 0)  # the main thread runs the loop
    assert found, "the daemon should have other threads to check"
    assert set(found.values()) == {(os.SCHED_OTHER, 0, 0)}


def test_a_daemon_without_the_right_warns_once_and_runs_on(tmp_path: Path) -> None:
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (Debian: util-linux)")
    alsa = daemon_home(tmp_path, 'priority = "realtime"')
    # Without CAP_SYS_NICE and with RLIMIT_RTPRIO 0, as for a user, or the unit without
    # LimitRTPRIO=.
    with Daemon(tmp_path, speed=1, env={"ALSA_CONFIG_PATH": str(alsa)},
                wrapper=[setpriv, "--bounding-set=-sys_nice", "--inh-caps=-sys_nice"],
                ) as daemon:
        daemon.ready()
        daemon.command("start")  # asserts the reply is ok
        daemon.wait_signal("pre_signal")
        warnings = [line for line in daemon.log
                    if "timerd.priority" in line and not line.startswith("INFO")]
        found = threads(daemon.proc.pid)
    assert len(warnings) == 1
    assert warnings[0].startswith("WARNING")
    assert "refused (Operation not permitted)" in warnings[0]
    assert {policy for policy, _, _ in found.values()} == {os.SCHED_OTHER}


def test_limit_rtprio_is_enough_without_root_powers(tmp_path: Path) -> None:
    """What the unit's LimitRTPRIO=10 grants: SCHED_FIFO up to 10 without CAP_SYS_NICE."""
    setpriv, prlimit = shutil.which("setpriv"), shutil.which("prlimit")
    if setpriv is None or prlimit is None:
        pytest.skip("setpriv and prlimit (Debian: util-linux)")
    if os.geteuid() != 0 or resource.getrlimit(resource.RLIMIT_RTPRIO)[1] < 10:
        pytest.skip("raising RLIMIT_RTPRIO's hard limit needs CAP_SYS_RESOURCE (a container "
                    "may not have it)")
    alsa = daemon_home(tmp_path, 'priority = "realtime"\nrt_priority = 10')
    with Daemon(tmp_path, speed=1, env={"ALSA_CONFIG_PATH": str(alsa)},
                wrapper=[prlimit, "--rtprio=10", setpriv, "--bounding-set=-sys_nice",
                         "--inh-caps=-sys_nice"]) as daemon:
        daemon.ready()
        found = threads(daemon.proc.pid)
    assert found.pop(daemon.proc.pid) == (os.SCHED_FIFO, 10, 0)
    assert {policy for policy, _, _ in found.values()} <= {os.SCHED_OTHER}


def test_the_heap_frozen_at_ready_is_never_walked_by_a_collection_again() -> None:
    """`freeze_heap` (called by `app.serve` when the daemon is ready) moves every object made
    so far out of the collector's reach: a full collection then walks only newer objects
    (bench/gc_pause.py measures the pause it saves)."""
    kept = [[i] for i in range(1000)]  # objects made before the daemon is ready
    try:
        priority.freeze_heap()
        assert gc.get_freeze_count() >= len(kept)
        walked = {id(o) for o in gc.get_objects(generation=2)}
        assert gc.is_tracked(kept[0])
        assert not walked & {id(x) for x in kept}
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0
