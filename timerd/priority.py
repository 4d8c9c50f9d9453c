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
"""

from __future__ import annotations

import logging
import os
import threading

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
