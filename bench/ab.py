"""`bench/run --ab A B`: two commits' daemons side by side on one machine (issue 44 item 8).

Each commit's tree is taken out of this repository (`git archive`, into a scratch directory)
and its daemon (`python -m timerd run --simulate`, run from that tree) plays the same match
as the footprint's CPU budget names it (the control socket, the event stream and the web page
open: `CPU_BUDGET_SWITCHES`), one daemon at a time, A and B alternately (A B, B A, A B, ...),
so a machine whose load drifts through the run weighs on both alike. Reported: each run's
CPU seconds per match minute, each commit's median, and B's median over A's (below 1: B costs
less). Figures are for one machine at one time; a loaded machine spreads them.

`--instructions` counts instead of timing: each daemon runs under valgrind's callgrind
(Debian's `valgrind`) at `--speed 10`, counting from the start command to the final signal
only, and the report is the instructions per match minute (Ir). A count hardly moves with the
machine's load, so two commits a few percent apart are told apart in one pair, where CPU
seconds on a shared 2-core machine spread by a tenth. Either way both run without the
speaker: a commit whose speaker cannot play on the machine (018c525 without simpleaudio)
would else be measured doing less.
"""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import tarfile
import tempfile
import time
import tomllib
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench.footprint import (
    CPU_BUDGET_SWITCHES,
    REPO,
    Daemon,
    WebPage,
    adapter_config,
    compile_bytecode,
)
from timerd.config import profiles


def tree_of(commit: str, into: Path) -> Path:
    """`commit`'s files, out of this repository, in a directory of `into`."""
    tree = into / commit.replace("/", "_")
    tree.mkdir()
    archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=REPO,
                             capture_output=True, check=True).stdout
    with tempfile.TemporaryFile() as tar:
        tar.write(archive)
        tar.seek(0)
        with tarfile.open(fileobj=tar) as files:
            files.extractall(tree, filter="data")
    compile_bytecode(tree)
    return tree


def cpu_per_match_minute(tree: Path, workdir: Path, profile: str, speed: float = 1.0) -> float:
    """The CPU seconds per match minute of `tree`'s daemon playing one match of `profile`,
    at `speed` (`timerd run --speed`: the same dispatches per match minute, in a tenth of the
    time at 10, so that many runs fit where a 2-core machine's CPU seconds spread)."""
    workdir.mkdir()
    config, _ = adapter_config(workdir, profile, CPU_BUDGET_SWITCHES, repo=tree)
    port: int | None = tomllib.loads(config.read_text()).get("web", {}).get("port")
    daemon = Daemon(config, workdir, repo=tree,
                    options=("--speed", str(speed), "-o", "speaker.enabled=false"))
    played = profiles.load(profile)
    length_s = played.pre_signal_lead_s + played.period_s
    try:
        daemon.wait_ready()
        with contextlib.ExitStack() as stack:
            if port:
                stack.enter_context(WebPage(port))
            started, cpu0 = time.monotonic(), daemon.cpu_s()
            daemon.command("start")
            ended = daemon.wait_signal("final", timeout_s=length_s / speed + 30)
            cpu1 = daemon.cpu_s()
    finally:
        stopped = daemon.stop()
    if stopped["exit_code"] != 0:
        raise RuntimeError(f"{tree.name}: timerd exited {stopped['exit_code']}:\n"
                           + "\n".join(daemon.log[-20:]))
    return sum(cpu1[part] - cpu0[part] for part in cpu0) / ((ended - started) * speed / 60)


#: `--instructions`: the daemon's speed under callgrind, whose slowdown its loop still keeps
#: up with at a match minute in 6 s.
CALLGRIND_SPEED = 10


def instructions_per_match_minute(tree: Path, workdir: Path, profile: str) -> float:
    """The instructions (callgrind's Ir, millions) per match minute of `tree`'s daemon
    playing one match of `profile`, from its start command to its final signal."""
    workdir.mkdir()
    config, _ = adapter_config(workdir, profile, CPU_BUDGET_SWITCHES, repo=tree)
    port: int | None = tomllib.loads(config.read_text()).get("web", {}).get("port")
    out = workdir / "callgrind.out"
    daemon = Daemon(config, workdir, repo=tree,
                    under=("valgrind", "--tool=callgrind", "--instr-atstart=no",
                           f"--callgrind-out-file={out}.%p"),
                    options=("--speed", str(CALLGRIND_SPEED), "-o", "speaker.enabled=false"))
    played = profiles.load(profile)
    length_s = played.pre_signal_lead_s + played.period_s
    pid = str(daemon.proc.pid)
    try:
        daemon.wait_ready(timeout_s=600)
        with contextlib.ExitStack() as stack:
            if port:
                stack.enter_context(WebPage(port))
            subprocess.run(["callgrind_control", "--instr=on", pid], check=True,
                           capture_output=True)
            daemon.command("start")
            daemon.wait_signal("final", timeout_s=length_s / CALLGRIND_SPEED + 300)
            subprocess.run(["callgrind_control", "--instr=off", pid], check=True,
                           capture_output=True)
            subprocess.run(["callgrind_control", "--dump", pid], check=True,
                           capture_output=True)
    finally:
        daemon.stop()
    counted = 0
    for dump in workdir.glob(f"callgrind.out.{pid}*"):
        for line in dump.read_text(errors="replace").splitlines():
            if line.startswith("totals:"):
                counted += int(line.split()[1])
    return counted / 1e6 / (length_s / 60)


def ab(a: str, b: str, pairs: int, profile: str, *, instructions: bool = False,
       speed: float = 1.0) -> dict[str, Any]:
    """`pairs` runs of each commit, alternately (A B, B A, ...); each run printed: CPU
    seconds (the match played at `speed`), or with `instructions` millions of instructions,
    per match minute."""
    measure: Callable[[Path, Path, str], float]
    if instructions:
        measure, unit = instructions_per_match_minute, "M instructions"
    else:
        measure, unit = partial(cpu_per_match_minute, speed=speed), "CPU-s"
    runs: dict[str, list[float]] = {a: [], b: []}
    with tempfile.TemporaryDirectory(prefix="timerd-ab-") as tmp:
        trees = {commit: tree_of(commit, Path(tmp)) for commit in (a, b)}
        for pair in range(pairs):
            for commit in (a, b) if pair % 2 == 0 else (b, a):
                found = measure(trees[commit], Path(tmp) / f"run-{pair}-{commit}", profile)
                runs[commit].append(found)
                print(f"  {commit}: {found:.4f} {unit} per match minute", flush=True)
    medians = {commit: statistics.median(found) for commit, found in runs.items()}
    return {"profile": profile, "pairs": pairs, "unit": unit, "runs": runs, "medians": medians,
            "ratio_b_over_a": medians[b] / medians[a]}
