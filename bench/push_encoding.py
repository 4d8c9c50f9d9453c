"""What one state push costs to encode (issue 44 item 8): `python -m bench.push_encoding`.

The web sends a state push once a second to every open page; at 0445dec its encoding was a
quarter of a running match's instructions (docs/BENCHMARKS.md). This takes a real document
(a daemon's `GET /api/state` in a running ITHF match with names and a goal, made read-only as
the daemon holds it: `core.frozen.read_only`) and counts, under valgrind's callgrind, the
instructions of one push's encoding by each way of writing it: `ENCODERS`, each over N and 0
encodings in a process of its own, the difference over N (with Debian's `valgrind`), and its
median time in microseconds (a loaded machine spreads those; the counts hardly move). Prints
JSON.
"""

from __future__ import annotations

import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.footprint import CPU_BUDGET_SWITCHES, Daemon, adapter_config
from timerd.cli import request
from timerd.core.frozen import read_only

#: Encodings counted per way (and as many again with none, to take the process's own away).
COUNT = 1000


def _stdlib() -> Callable[[Any], bytes]:
    """The web's encoder at 0445dec: the standard library's, made once."""
    dumps = json.JSONEncoder(default=str, check_circular=False).encode
    return lambda value: dumps(value).encode()


def _web() -> Callable[[Any], bytes]:
    """What the web writes now (`json_bytes`: orjson, where it is installed)."""
    from timerd.adapters.web.adapter import json_bytes  # noqa: PLC0415 (only this way needs it)
    return json_bytes


#: Each way: how it writes, and what of the document it is given.
ENCODERS: dict[str, tuple[Callable[[], Callable[[Any], bytes]], Callable[[Any], Any]]] = {
    "standard library (0445dec)": (_stdlib, lambda state: state),
    "standard library, the document without `display`": (
        _stdlib, lambda state: read_only({k: v for k, v in state.items() if k != "display"})),
    "standard library, plain dicts (not read-only)": (
        _stdlib, lambda state: json.loads(json.dumps(state))),
    "json_bytes (orjson)": (_web, lambda state: state),
}


def live_state() -> dict[str, Any]:
    """`GET /api/state` of a daemon 3 s into a running match, with names and a goal."""
    with tempfile.TemporaryDirectory(prefix="timerd-push-") as tmp:
        workdir = Path(tmp)
        config, _ = adapter_config(workdir, "ithf", CPU_BUDGET_SWITCHES)
        port = tomllib.loads(config.read_text())["web"]["port"]
        daemon = Daemon(config, workdir, options=("--speed", "10"))
        try:
            daemon.wait_ready()
            request(daemon.socket, "teams", ["Žiga Kovač", "Ľubomír Ďurovič"])
            daemon.command("start")
            daemon.wait_signal("start", timeout_s=30)
            request(daemon.socket, "goal", ["home", "17"])
            time.sleep(0.3)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state") as reply:
                state: dict[str, Any] = json.load(reply)
        finally:
            daemon.stop()
    return state


def encode(way: str, state_file: str, count: int) -> None:
    """The child: `count` pushes of the document in `state_file`, written `way`."""
    make, given = ENCODERS[way]
    write = make()
    state = read_only(json.loads(Path(state_file).read_text()))
    message = {"type": "state", "state": given(state), "rate": 1.0}
    for _ in range(count):
        write(message)


def counted(way: str, state_file: Path, count: int) -> int:
    """The instructions (callgrind's Ir) of a child process encoding `count` pushes."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out",
             sys.executable, "-m", "bench.push_encoding", "--encode", way, str(state_file),
             str(count)], capture_output=True, text=True, check=True).stderr
    return int(out.rsplit("Collected :", 1)[1].split()[0])


def timed_us(way: str, state: dict[str, Any]) -> float:
    make, given = ENCODERS[way]
    write, message = make(), {"type": "state", "state": given(read_only(state)), "rate": 1.0}
    times = []
    for _ in range(COUNT):
        start = time.perf_counter()
        write(message)
        times.append((time.perf_counter() - start) * 1e6)
    return round(statistics.median(times), 2)


def main() -> None:
    if sys.argv[1:2] == ["--encode"]:
        encode(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    state = live_state()
    found: dict[str, Any] = {"machine": platform.machine(), "python": platform.python_version(),
                             "document_bytes": len(json.dumps(state)), "pushes": COUNT}
    with tempfile.TemporaryDirectory() as tmp:
        state_file = Path(tmp) / "state.json"
        state_file.write_text(json.dumps(state))
        found["median_us_per_push"] = {way: timed_us(way, state) for way in ENCODERS}
        if shutil.which("valgrind"):
            found["k_instructions_per_push"] = {
                way: round((counted(way, state_file, COUNT) - counted(way, state_file, 0))
                           / COUNT / 1000, 1) for way in ENCODERS}
    print(json.dumps(found, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
