"""Run the benchmark: `bench/run` (about 15 minutes) or `bench/run --quick` (about two minutes, CI).

Phases, one after the other so that none disturbs another's timing:

1. ready: start the daemon a few times and time exec to "timerd ready".
2. for each phase (idle; idle with the CPUs' idle states left to the kernel; every core busy;
   every core busy from timerd's own session, with the loop thread at normal priority and at
   the default one; slow storage):
   onset: timerd and both baselines, each in its own process, play the dense profile in real
   time with the same presses (start, three pauses); every buzzer onset is compared with its
   ideal instant. latency: timerd alone; the START/PAUSE button is pressed again and again.
   In both, every buzzer pulse of timerd is compared with its signal's pattern.
3. drift: timerd and both baselines play a whole ITHF match (the quick mode: the quick
   profile); meanwhile two daemon subprocesses play the same match, half a second apart:
   one as issue 16's CPU budget names it (control socket, event stream, web page open), one
   with every adapter on (peak RSS; its CPU is shown beside).

"Busy" is one CPU-burning process per core. By default each burner is started in a session
of its own, as another service or a login's job would be on the Pi; Linux then shares the CPU
between sessions (autogroup) before it shares it between processes. The third load starts them
in the bench's own session, so that timerd competes with them one process against another,
with its loop thread at normal priority (`[service] priority = "off"`); the fourth does the
same at the default priority.

timerd plays every phase but the third, and the drift match, with the daemon's default
`[service] priority` (SCHED_FIFO where the system grants it): what a user gets. Each phase's
label says the priority asked for and whether it was granted or refused (`loop_text`).

"Stream flood" gives the timerd player its web server (`bench.play --web-port`) and runs one
client (`bench.flood`) that floods its event stream with pings, reconnecting whenever it is
closed (issue 36): its budget is idle's.

"Speaker" phases give the timerd player its speaker (issue 33), on ALSA's file plugin with the
null sink behind it (the way the tests capture sound; `speaker_device`): its device owned by
the playback thread as in the daemon, or by a helper process (the candidate it was chosen
against, `bench.speaker_process`); and each of them with a device whose every open takes
300 ms and fails (strace's fault injection on ALSA's configuration file and the plugin's
file), tried again every 0.5 s through the runs.

"Slow output" gives the timerd player an output that blocks its loop 50 ms at every dispatch,
first of its outputs (issue 32): each signal reaches the buzzer before any output, so its
onset is idle's.

"Slow storage" runs every player under strace, which delays each fsync and fdatasync by
200 ms (an SD card on a bad day); timerd has its match journal and results file, and the
presses come shortly before signals are due: goals (GOAL HOME) and pauses whose resume comes
just before the signal the pause held back.

The full mode writes `bench/results.json` and the table in `docs/BENCHMARKS.md`; the quick mode
writes both into `bench/out/` unless `--out` says otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import ab as ab_mod
from bench import analysis, machine, report
from bench import play as play_mod
from bench.baselines import DESIGNS as BASELINES
from bench.footprint import (
    CPU_BUDGET_SWITCHES,
    REPO,
    Daemon,
    WebPage,
    adapter_config,
    compile_bytecode,
)
from timerd import priority
from timerd.config import profiles

#: Bench profiles, relative to the repository (the players run there).
PROFILES = "bench/profiles"
#: Each player's presses (and so its signals) come this much after the previous player's: on
#: two cores, three processes woken on one instant would measure each other. The daemon
#: subprocess of the drift phase comes after them all.
STAGGER_S = 0.11
DAEMON_OFFSET_S = 0.35


@dataclass(frozen=True)
class Mode:
    onset_profile: str
    #: START, then pause/resume pairs, in seconds from t0.
    onset_presses: tuple[float, ...]
    drift_profile: str
    toggles: int  # button presses in each latency run
    ready_runs: int
    #: Time a player keeps playing after the ideal final signal: the baselines' are late.
    grace_s: float
    #: Time given to player processes to start and wire up before the first press.
    start_delay_s: float
    #: The slow-storage onset run: START/PAUSE presses, and goals, each shortly before a
    #: signal is due (a pause 50 ms before one, its resume 50 ms before the held-back signal).
    storage_presses: tuple[float, ...]
    storage_goals: tuple[float, ...]


MODES = {
    "full": Mode(onset_profile=f"{PROFILES}/dense.toml",
                 onset_presses=(0.5, 14.37, 16.12, 31.9, 32.55, 47.06, 49.81),
                 drift_profile="ithf", toggles=60, ready_runs=5, grace_s=3.0,
                 start_delay_s=5.0,
                 storage_presses=(0.5, 14.45, 16.2, 34.15, 35.0, 46.15, 47.82),
                 storage_goals=(8.4, 24.17, 40.62, 57.0)),
    "quick": Mode(onset_profile=f"{PROFILES}/quick.toml",
                  onset_presses=(0.2, 1.75, 2.05),
                  drift_profile=f"{PROFILES}/quick.toml", toggles=6, ready_runs=2,
                  grace_s=3.0, start_delay_s=5.0,
                  storage_presses=(0.2, 1.75, 2.05), storage_goals=(1.1,)),
}


@dataclass(frozen=True)
class Phase:
    """What the onset and latency runs of one phase play under."""

    #: CPU burners: None (none), True (each in its own session), False (in the bench's).
    burners_own_session: bool | None = None
    #: timerd's loop thread priority (`bench.play --priority`): "default" is the daemon's
    #: default `[service] priority`, what a user gets; "off" is normal priority.
    priority: str = "default"
    #: Every player under strace with fsync/fdatasync delayed; timerd with its journal.
    slow_storage: bool = False
    #: timerd serves its web scoreboard, and one client floods the stream (`bench.flood`).
    stream_flood: bool = False
    #: timerd with its speaker, its device owned by a "thread" or a "process" (issue 33).
    speaker: str | None = None
    #: Every open of the speaker's device takes 300 ms and fails (`speaker_device`).
    speaker_fault: bool = False
    #: timerd holds the CPUs' wake-up latency as the daemon does (`[service]
    #: cpu_latency_us`, system-wide: the baselines of the phase get it too); False: the CPUs
    #: idle as the kernel chooses.
    cpu_latency: bool = True
    #: timerd has an output that blocks its loop this long at every dispatch, first of its
    #: outputs (`bench.play --slow-output-ms`, issue 32).
    slow_output_ms: float = 0.0


#: fsync and fdatasync of a player, and of every thread it starts, take 200 ms longer.
SLOW_STORAGE = ["strace", "-f", "--seccomp-bpf", "-o", "/dev/null",
                "-e", "trace=fsync,fdatasync",
                "-e", "inject=fsync,fdatasync:delay_exit=200000"]

#: How long the slow output of the slow-output phase blocks the loop per dispatch.
SLOW_OUTPUT_MS = 50.0

PHASES = {
    "idle": Phase(),
    "idle-kernel-idle-states": Phase(cpu_latency=False),
    "busy": Phase(burners_own_session=True),
    "busy-same-session": Phase(burners_own_session=False, priority="off"),
    "busy-same-session-priority": Phase(burners_own_session=False),
    "slow-storage": Phase(slow_storage=True),
    "stream-flood": Phase(stream_flood=True),
    "slow-output": Phase(slow_output_ms=SLOW_OUTPUT_MS),
    "speaker": Phase(speaker="thread"),
    "speaker-open-fails": Phase(speaker="thread", speaker_fault=True),
    "speaker-process": Phase(speaker="process"),
    "speaker-process-open-fails": Phase(speaker="process", speaker_fault=True),
}


# -- the speaker phases (issue 33) ----------------------------------------------------------

#: ALSA's default device in a speaker phase: the file plugin, with the null sink behind it.
SPEAKER_PCM = ('pcm.!default {{ type file; slave.pcm {{ type null }}; file "{out}"; '
               'format "raw" }}\n')
#: How often the speaker tries a failing device again in the fault phases ([speaker] retry_s).
SPEAKER_RETRY_S = 0.5


@contextlib.contextmanager
def speaker_device(phase: Phase) -> Iterator[tuple[list[str], list[str], dict[str, str] | None]]:
    """For the timerd player of a speaker phase: the command that wraps it, its options and
    its environment (ALSA_CONFIG_PATH). The plugin writes into RAM (/dev/shm), so the disk
    plays no part. With `speaker_fault`, strace makes every open of ALSA's configuration and
    of the plugin's file take 300 ms and fail: each of the speaker's opens is slow and fails,
    again every SPEAKER_RETRY_S."""
    if phase.speaker is None:
        yield [], [], None
        return
    with tempfile.TemporaryDirectory(prefix="timerd-bench-speaker-", dir="/dev/shm") as tmp:
        conf, out = Path(tmp) / "asound.conf", Path(tmp) / "speaker.raw"
        conf.write_text(SPEAKER_PCM.format(out=out))
        wrap = ["strace", "-f", "--seccomp-bpf", "-o", "/dev/null", "-P", str(conf),
                "-P", str(out), "-e", "trace=openat",
                "-e", "inject=openat:error=ENOENT:delay_enter=300000"] \
            if phase.speaker_fault else []
        options = ["--speaker", phase.speaker,
                   *(["--speaker-retry-s", str(SPEAKER_RETRY_S)] if phase.speaker_fault else [])]
        yield wrap, options, {**os.environ, "ALSA_CONFIG_PATH": str(conf)}

# -- end of the speaker phases --------------------------------------------------------------


def match_end_s(profile_name: str, presses: tuple[float, ...]) -> float:
    """Seconds after t0 at which the match's final signal is ideally due."""
    profile = profiles.load(profile_name)
    paused = sum(b - a for a, b in zip(presses[1::2], presses[2::2], strict=False))
    return presses[0] + profile.pre_signal_lead_s + profile.period_s + paused


def _instants(values: tuple[float, ...]) -> str:
    return ",".join(f"{p:.6f}" for p in values)


def play(mode: Mode, designs: list[str], profile: str, presses: tuple[float, ...],
         until_s: float, *, meanwhile: Callable[[int], None] | None = None,
         phase: Phase = Phase(), goals: tuple[float, ...] = (),
         state: Path | None = None) -> dict[str, dict[str, Any]]:
    """Every design in its own `bench.play` process, pressed in the same rhythm (STAGGER_S).

    `phase` says how timerd runs (its loop priority; its journal in `state`) and whether every
    player runs under SLOW_STORAGE. A player that a loaded machine started after its first
    press was due plays nothing: all play again, given three times the time to start.
    """
    for start_delay_s in (mode.start_delay_s, 3 * mode.start_delay_s):
        try:
            return _play_once(start_delay_s, designs, profile, presses, until_s,
                              meanwhile=meanwhile, phase=phase, goals=goals, state=state)
        except play_mod.StartedLate as late:
            print(f"bench: {late}; playing again", file=sys.stderr)
    raise play_mod.StartedLate(f"the players did not start within {3 * mode.start_delay_s:g} s")


def _play_once(start_delay_s: float, designs: list[str], profile: str,
               presses: tuple[float, ...], until_s: float, *,
               meanwhile: Callable[[int], None] | None, phase: Phase,
               goals: tuple[float, ...], state: Path | None) -> dict[str, dict[str, Any]]:
    t0_ns = time.monotonic_ns() + round(start_delay_s * 1e9)
    wrap = SLOW_STORAGE if phase.slow_storage else []
    port = free_port() if phase.stream_flood else None
    own = ["--priority", phase.priority, *(["--state", str(state)] if state is not None else []),
           *([] if phase.cpu_latency else ["--cpu-latency-us", "-1"]),
           *([] if port is None else ["--web-port", str(port)]),
           *(["--slow-output-ms", str(phase.slow_output_ms)] if phase.slow_output_ms else [])]
    with contextlib.ExitStack() as stack:
        # timerd's speaker, in a speaker phase: its wrapper, options and ALSA environment.
        speaker_wrap, speaker_options, speaker_env = stack.enter_context(speaker_device(phase))
        timerd_cmd = [*wrap, *speaker_wrap, sys.executable, "-m", "bench.play"]
        procs = {d: subprocess.Popen(
            [*(timerd_cmd if d == "timerd" else [*wrap, sys.executable, "-m", "bench.play"]),
             d, "--profile", profile, "--t0-ns", str(t0_ns + round(i * STAGGER_S * 1e9)),
             "--presses", _instants(presses), "--goals", _instants(goals),
             "--until-s", str(until_s), *(own + speaker_options if d == "timerd" else [])],
            cwd=REPO, env=speaker_env if d == "timerd" else None, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
            for i, d in enumerate(designs)}
        if meanwhile is not None:
            meanwhile(t0_ns)
        return _collect(procs, port, until_s)


def _collect(procs: dict[str, subprocess.Popen[str]], port: int | None,
             until_s: float) -> dict[str, dict[str, Any]]:
    """Every player's result, once it has played (the flood beside it, in that phase);
    StartedLate when one of them started late (after every player has ended)."""
    with flooding(port) as flood:
        out, late = {}, []
        for design, proc in procs.items():
            stdout, stderr = proc.communicate(timeout=until_s + 60)
            if proc.returncode == play_mod.STARTED_LATE:
                late.append(stderr.strip().splitlines()[-1])  # its last line says why
            elif proc.returncode != 0:
                raise RuntimeError(f"bench.play {design} failed:\n{stderr}")
            else:
                out[design] = json.loads(stdout)
    if late:
        raise play_mod.StartedLate("; ".join(late))
    if port is not None:
        out["timerd"]["flood"] = flood
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def flooding(port: int | None) -> Iterator[dict[str, Any]]:
    """`bench.flood` on the timerd player's web port while inside (nothing for None); what
    it did (connections, refusals, bytes of pings) is filled in at the end."""
    figures: dict[str, Any] = {}
    if port is None:
        yield figures
        return
    proc = subprocess.Popen([sys.executable, "-m", "bench.flood", str(port)], cwd=REPO,
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        yield figures
    finally:
        proc.terminate()
        stdout, _ = proc.communicate(timeout=30)
        figures.update(json.loads(stdout or "{}"))


@contextlib.contextmanager
def cores_busy(own_session: bool | None) -> Iterator[int]:
    """One CPU-burning process per core while inside (none for None); yields how many."""
    count = 0 if own_session is None else machine.cores()
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                start_new_session=bool(own_session)) for _ in range(count)]
    try:
        yield len(burners)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def _state(workdir: Path, name: str, phase: Phase) -> Path | None:
    """A fresh state directory for timerd's journal in a slow-storage run, else None."""
    if not phase.slow_storage:
        return None
    state = workdir / name
    shutil.rmtree(state, ignore_errors=True)
    return state


def _pulses(played: dict[str, Any]) -> dict[str, Any]:
    return {**analysis.pulse_errors(played), "loop_priority": played["loop_priority"]}


def loop_text(phase: Phase, granted: bool, held: bool) -> str:
    """How timerd's loop thread ran in a phase, for its label: asked for, and got; and a CPU
    wake-up latency hold that was asked for but refused."""
    refused = "" if held or not phase.cpu_latency else "; CPU wake-up latency hold refused"
    if phase.priority == "off":
        return "loop at normal priority (priority off)" + refused
    asked = priority.describe(play_mod.loop_priority(phase.priority))
    default = " (the default)" if phase.priority == "default" else ""
    return (f"loop in {asked}{default}" if granted else
            f"loop {asked}{default} refused: normal priority") + refused


def onset(mode: Mode, name: str, phase: Phase, workdir: Path) -> dict[str, Any]:
    profile = profiles.load(mode.onset_profile)
    presses, goals = mode.onset_presses, ()
    if phase.slow_storage:
        presses, goals = mode.storage_presses, mode.storage_goals
    until = match_end_s(mode.onset_profile, presses) + mode.grace_s
    played = play(mode, ["timerd", *BASELINES], mode.onset_profile, presses, until,
                  phase=phase, goals=goals, state=_state(workdir, f"onset-{name}", phase))
    out: dict[str, Any] = {"presses_s": presses, "goals_s": goals}
    for design, result in played.items():
        found = analysis.onset_errors(profile, result)
        out[design] = {**analysis.summary([e["error_ms"] for e in found["errors"]]), **found,
                       "to_plan": analysis.summary([e["to_plan_ms"] for e in found["errors"]
                                                    if "to_plan_ms" in e])}
    out["timerd"]["pulses"] = _pulses(played["timerd"])
    out["loop"] = loop_text(phase, played["timerd"]["loop_priority"],
                            played["timerd"]["cpu_latency_held"])
    if "flood" in played["timerd"]:
        out["flood"] = played["timerd"]["flood"]
    if phase.speaker is not None:  # how many signals found the speaker's device ok or down
        states = [s.get("speaker") for s in played["timerd"]["signals"]]
        out["speaker_states"] = {state: states.count(state) for state in sorted(set(states))}
    print(f"  onset {name}: " + ", ".join(
        f"{d} p99 {out[d].get('p99', float('nan')):.3f} ms" for d in played)
        + f"; pulse length p99 {out['timerd']['pulses']['length'].get('p99', float('nan')):.3f}"
        " ms" + (f"; speaker at the signals {out['speaker_states']}"
                 if "speaker_states" in out else ""), flush=True)
    return out


def latency(mode: Mode, name: str, phase: Phase, workdir: Path) -> dict[str, Any]:
    rng = random.Random(10)  # the same press rhythm on every run
    presses = [0.2]
    for _ in range(mode.toggles):
        presses.append(presses[-1] + rng.uniform(0.15, 0.25))
    played = play(mode, ["timerd"], f"{PROFILES}/buttons.toml", tuple(presses),
                  presses[-1] + 0.5, phase=phase,
                  state=_state(workdir, f"latency-{name}", phase))
    found = analysis.reaction_latencies(played["timerd"])
    out = {"buzzer": analysis.summary(found["buzzer_ms"]),
           "clock_stop": analysis.summary(found["clock_stop_ms"]), **found,
           "pulses": _pulses(played["timerd"])}
    print(f"  latency {name}: buzzer p99 {out['buzzer'].get('p99', float('nan')):.3f} ms, "
          f"clock stop p99 {out['clock_stop'].get('p99', float('nan')):.3f} ms", flush=True)
    return out


def ready_times(mode: Mode, workdir: Path) -> dict[str, Any]:
    compile_bytecode()
    config, switched = adapter_config(workdir, mode.drift_profile)
    times = []
    for _ in range(mode.ready_runs):
        daemon = Daemon(config, workdir)
        times.append(daemon.wait_ready())
        stopped = daemon.stop()
        if stopped["exit_code"] != 0:
            raise RuntimeError(f"timerd exited {stopped['exit_code']}:\n" + "\n".join(daemon.log))
    print(f"  ready: {', '.join(f'{t:.3f}' for t in times)} s", flush=True)
    return {"runs_s": times, "max_s": max(times), "median_s": analysis.percentile(times, 50),
            "adapters_switched_on": switched}


def drift_and_footprint(mode: Mode, workdir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The drift match for the players; meanwhile the same match on two daemon subprocesses:
    one with every adapter on (peak RSS, issue 16), one as issue 16's CPU budget names it
    (the control socket, the event stream and the web page open), half a second apart."""
    presses = (0.2,)
    until = match_end_s(mode.drift_profile, presses) + mode.grace_s
    runs: dict[str, tuple[str, ...] | None] = {"every_adapter": None,
                                               "cpu_budget": CPU_BUDGET_SWITCHES}
    daemons: dict[str, Daemon] = {}
    web_ports: dict[str, int | None] = {}
    usage: dict[str, dict[str, Any]] = {name: {} for name in runs}
    failed: list[BaseException] = []
    try:
        for name, only in runs.items():
            (workdir / name).mkdir()
            config, switched = adapter_config(workdir / name, mode.drift_profile, only)
            usage[name]["switched_on"] = switched
            web_ports[name] = tomllib.loads(config.read_text()).get("web", {}).get("port")
            daemons[name] = Daemon(config, workdir / name)
            daemons[name].wait_ready()

        def daemon_match(name: str, offset_s: float, t0_ns: int) -> None:
            daemon, used = daemons[name], usage[name]
            try:
                time.sleep(max(0.0, (t0_ns - time.monotonic_ns()) / 1e9 + offset_s))
                with contextlib.ExitStack() as stack:
                    # The scoreboard open in a browser through the match.
                    port = web_ports[name]
                    page = stack.enter_context(WebPage(port)) if port else None
                    started, cpu0 = time.monotonic(), daemon.cpu_s()
                    daemon.command("start")
                    ended = daemon.wait_signal("final", timeout_s=until + 30)
                    cpu1 = daemon.cpu_s()
                used["web_page_messages"] = page.messages if page is not None else None
                minutes = (ended - started) / 60
                per_minute = {part: (cpu1[part] - cpu0[part]) / minutes for part in cpu0}
                used.update(match_minutes=minutes,
                            cpu_s_per_match_minute=sum(per_minute.values()),
                            cpu_s_per_match_minute_by_thread=per_minute)
            except BaseException as exc:  # noqa: BLE001 (raised again on the bench's thread)
                failed.append(exc)

        def both(t0_ns: int) -> None:
            threads = [threading.Thread(target=daemon_match,
                                        args=(name, presses[0] + DAEMON_OFFSET_S + 0.5 * i, t0_ns))
                       for i, name in enumerate(runs)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()

        played = play(mode, ["timerd", *BASELINES], mode.drift_profile, presses, until,
                      meanwhile=both)
    finally:
        for name, daemon in daemons.items():
            usage[name].update(daemon.stop())
    if failed:
        raise failed[0]
    # The budgets read the CPU of the one and the peak RSS of the other.
    footprint = {**usage["cpu_budget"], "own_peak_rss_mb": usage["cpu_budget"]["peak_rss_mb"],
                 "peak_rss_mb": usage["every_adapter"]["peak_rss_mb"],
                 "every_adapter": usage["every_adapter"]}
    profile = profiles.load(mode.drift_profile)
    drift = {}
    for design, result in played.items():
        found = analysis.onset_errors(profile, result)
        final = [e["error_ms"] for e in found["errors"] if e["signal"] == "final"]
        drift[design] = {"final_error_ms": final[0] if final else None,
                         "match_s": profile.pre_signal_lead_s + profile.period_s, **found}
    print("  drift: " + ", ".join(f"{d} {r['final_error_ms']:.3f} ms"
                                  for d, r in drift.items() if r["final_error_ms"] is not None)
          + f"; daemon {footprint['cpu_s_per_match_minute']:.4f} CPU-s/min "
          f"({footprint['every_adapter']['cpu_s_per_match_minute']:.4f} with every adapter), "
          f"{footprint['peak_rss_mb']:.1f} MB", flush=True)
    return drift, footprint


def only(mode: Mode, name: str, load: str, out: Path) -> int:
    """One phase's onset and latency runs, as the whole benchmark runs them."""
    phase = PHASES[load]
    print(f"timerd benchmark ({name}), phase {load} only, on "
          f"{machine.label(machine.describe())}", flush=True)
    with tempfile.TemporaryDirectory(prefix="timerd-bench-") as tmp, \
            cores_busy(phase.burners_own_session) as burners, machine.Load() as background:
        found = {"onset": onset(mode, load, phase, Path(tmp)),
                 "latency": latency(mode, load, phase, Path(tmp))}
    found.update(mode=name, phase=load, burners=burners, machine=background.figures,
                 revision=machine.revision(REPO),
                 date=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"))
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{load}.json").write_text(json.dumps(found, indent=1) + "\n")
    buzzer = found["latency"]["buzzer"]
    print(f"  button to buzzer p99 {buzzer.get('p99', float('nan')):.3f} ms; "
          f"flood {found['onset'].get('flood')}; wrote {out / (load + '.json')}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a few seconds, for CI")
    parser.add_argument("--out", type=Path, help="write results.json and BENCHMARKS.md here")
    parser.add_argument("--only", choices=list(PHASES),
                        help="only this phase's onset and latency runs: printed, and written "
                        "to PHASE.json in --out (bench/out/); BENCHMARKS.md is not touched")
    parser.add_argument("--ab", nargs=2, metavar=("A", "B"),
                        help="two commits' daemons, alternately, on one match each per run: "
                        "CPU per match minute of each and B's over A's (bench/ab.py); "
                        "nothing else is measured")
    parser.add_argument("--pairs", type=int, default=2, help="runs of each commit for --ab")
    parser.add_argument("--instructions", action="store_true",
                        help="--ab counts instructions under valgrind's callgrind instead of "
                        "CPU seconds (bench/ab.py): steady on a loaded machine")
    parser.add_argument("--speed", type=float, default=1.0,
                        help="--ab's CPU seconds with each match played this many times "
                        "faster (`timerd run --speed`): more pairs in the time")
    args = parser.parse_args(argv)
    name = "quick" if args.quick else "full"
    mode = MODES[name]
    if args.ab is not None:
        a, b = args.ab
        profile = str(REPO / mode.drift_profile) if mode.drift_profile.endswith(".toml") \
            else mode.drift_profile
        print(f"timerd A/B ({name}: {profile}) on {machine.label(machine.describe())}; "
              f"A {a}, B {b}", flush=True)
        found = ab_mod.ab(a, b, args.pairs, profile, instructions=args.instructions,
                          speed=args.speed)
        print(f"  medians: A {found['medians'][a]:.4f}, B {found['medians'][b]:.4f} "
              f"{found['unit']} per match minute; B/A {found['ratio_b_over_a']:.3f}")
        return 0
    if args.only is not None:
        return only(mode, name, args.only, args.out or REPO / "bench/out")
    if args.out is not None:
        json_path, md_path = args.out / "results.json", args.out / "BENCHMARKS.md"
    elif args.quick:
        json_path, md_path = REPO / "bench/out/results.json", REPO / "bench/out/BENCHMARKS.md"
    else:
        json_path, md_path = REPO / "bench/results.json", REPO / "docs/BENCHMARKS.md"
    host = machine.describe()
    print(f"timerd benchmark ({name}) on {machine.label(host)}", flush=True)
    began = time.monotonic()
    onsets: dict[str, Any] = {}
    latencies: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="timerd-bench-") as tmp:
        workdir = Path(tmp)
        ready = ready_times(mode, workdir)
        for load, phase in PHASES.items():
            with cores_busy(phase.burners_own_session) as burners, \
                    machine.Load() as background:
                onsets[load] = onset(mode, load, phase, workdir)
                latencies[load] = latency(mode, load, phase, workdir)
            onsets[load]["burners"] = latencies[load]["burners"] = burners
            onsets[load]["machine"] = background.figures
        with machine.Load() as background:
            drift, usage = drift_and_footprint(mode, workdir)
        drift["machine"] = background.figures
    results: dict[str, Any] = {
        "mode": name,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "revision": machine.revision(REPO),
        "machine": host,
        "duration_s": time.monotonic() - began,
        "onset": {"profile": mode.onset_profile, **onsets},
        "latency": {"toggles": mode.toggles, **latencies},
        "drift": {"profile": mode.drift_profile, **drift},
        "footprint": {**usage, "ready": ready},
    }
    results["budgets"] = report.budgets(results)
    report.write(results, json_path, md_path)
    for budget in results["budgets"]:
        print(f"  {'PASS' if budget['pass'] else 'FAIL'}  {budget['name']}: "
              f"{report.fmt(budget['measured'])} (budget {budget['limit']})")
    print(f"wrote {json_path} and {md_path} in {results['duration_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
