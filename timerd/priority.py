"""Scheduling priority for the event loop's thread (`[service] priority`, docs/service.md).

The loop thread sounds every signal and times every buzzer edge; on a Pi that also runs other
work it must not wait for a CPU behind that work. `realtime` puts the loop thread (only it) in
SCHED_FIFO at `rt_priority`: it runs before every normal task and the kernel gives it no timer
slack. `nice` lowers its nice value to `nice` (it still shares the CPU, but with a larger part).

Only the loop thread: the policy is set with `SCHED_RESET_ON_FORK`, so every thread started
after it (gpiozero's callback threads, asyncio's executor threads, the journal's
writer, a sound's playback thread) starts as a normal thread with nice 0. Call `apply` on the
loop thread before the adapters start their threads. Linux applies `sched_setscheduler(0, ...)`
and `setpriority(PRIO_PROCESS, tid, ...)` to one thread, not to the whole process.

Without the right (RLIMIT_RTPRIO / RLIMIT_NICE too low and no CAP_SYS_NICE; the unit grants
`LimitRTPRIO=` and `LimitNICE=`), the system refuses: one warning in the log, and timerd runs
on at normal priority.

A thread that runs first still waits for its CPU to wake. An idle CPU sleeps in an idle state
(a C-state; in a virtual machine, a halted vCPU that the host must schedule again), and the
deeper the state, the longer the wake-up: on this project's VM it put the idle machine's tails
above the busy machine's (docs/BENCHMARKS.md). `hold_cpu_latency` asks the kernel's PM QoS
(`/dev/cpu_dma_latency`, `[service] cpu_latency_us`) to keep every CPU out of idle states
slower to leave than that, for as long as the daemon holds the device open. A system without
such states (a Raspberry Pi's kernel has no cpuidle driver) is unchanged by it.
"""

from __future__ import annotations

import gc
import logging
import os
import struct
import threading
from pathlib import Path

from timerd.config import ServiceConfig

log = logging.getLogger("timerd.priority")


def describe(config: ServiceConfig) -> str:
    if config.priority == "realtime":
        return f"SCHED_FIFO priority {config.rt_priority}"
    if config.priority == "nice":
        return f"nice {config.nice}"
    return "normal priority"


def apply(config: ServiceConfig) -> bool:
    """Give the calling thread the configured priority; False (logged once) if refused.

    Threads started after this call are reset to normal scheduling (SCHED_RESET_ON_FORK).
    """
    if config.priority == "off":
        return True
    tid = threading.get_native_id()
    try:
        if config.priority == "realtime":
            os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK,
                                  os.sched_param(config.rt_priority))
        else:
            os.sched_setscheduler(0, os.SCHED_OTHER | os.SCHED_RESET_ON_FORK,
                                  os.sched_param(0))
            os.setpriority(os.PRIO_PROCESS, tid, config.nice)
    except OSError as exc:
        log.warning("loop thread: %s refused (%s); running at normal priority. Allow it with "
                    "the unit's LimitRTPRIO=/LimitNICE= (or CAP_SYS_NICE), or set "
                    "[service] priority = \"off\"", describe(config), exc.strerror or exc)
        return False
    log.info("loop thread %d: %s; other threads normal", tid, describe(config))
    return True


#: The kernel's PM QoS request for CPU wake-up latency: a 32-bit count of µs written to it
#: holds while the file stays open (the kernel's "PM Quality Of Service Interface").
CPU_LATENCY_DEVICE = Path("/dev/cpu_dma_latency")


def hold_cpu_latency(config: ServiceConfig, device: Path = CPU_LATENCY_DEVICE) -> int | None:
    """Ask that no CPU take longer than `config.cpu_latency_us` to wake, for as long as the
    returned descriptor stays open (the daemon keeps it to its end). None when off (-1) or
    refused: one warning, and the CPUs idle as the kernel chooses."""
    if config.cpu_latency_us < 0:
        return None
    try:
        fd = os.open(device, os.O_WRONLY | os.O_CLOEXEC)
    except OSError as exc:
        log.warning("CPU wake-up latency of %d µs not held (%s: %s); the CPUs idle as the "
                    "kernel chooses. The unit's DeviceAllow= and the udev rule that "
                    "`timerd install` writes grant it; [service] cpu_latency_us = -1 silences "
                    "this", config.cpu_latency_us, device, exc.strerror or exc)
        return None
    try:  # a character device that takes the request at once: it never waits
        os.write(fd, struct.pack("=i", config.cpu_latency_us))
    except OSError as exc:
        os.close(fd)
        log.warning("CPU wake-up latency of %d µs refused by %s (%s); the CPUs idle as the "
                    "kernel chooses", config.cpu_latency_us, device, exc.strerror or exc)
        return None
    log.info("CPU wake-up latency held at %d µs (%s)", config.cpu_latency_us, device)
    return fd


def freeze_heap() -> None:
    """Put every object the daemon has made so far (its modules, the table it built) out of
    the cyclic garbage collector's reach (`gc.freeze`), after one last collection.

    Python's collector runs on the thread that allocates, at an instant it chooses: a full
    collection walks every tracked object, and after the start that is some 33,000 of them,
    which held the loop 4 to 5 ms on this project's VM (`python -m bench.gc_pause`), a pause
    that a press or a buzzer edge then waits out (the bench's rare 4-7 ms press-to-buzzer
    tails). Frozen, they are never walked again: a full collection scans only what was made
    since, in microseconds. Nothing frozen is ever freed, which costs nothing here: the
    daemon keeps what it built until it stops. Call it once, when the daemon is ready.
    """
    gc.collect()
    gc.freeze()
