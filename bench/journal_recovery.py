"""How long a start takes to restore a match of 100,000 commands, and what the journal's
snapshots cost the loop (issue 42 item 4): `python -m bench.journal_recovery [COMMANDS]`.

A match takes COMMANDS commands through the service and the real journal, as a control
client flooding it would send them (a resume and a pause in a row, then eight `teams`, half
with the longest names: issue 42's mix of pauses, resumes and names), on a tmpfs state
directory (the disk's fsync is not what is measured). Then it times, five times each:

- `recovery`: `Journal.recover` of that journal (read, parse, thaw the snapshot, replay the
  lines after it), what a start after a SIGKILL does before it serves;
- `snapshot`: `format.snapshot_record` of the match as it ends (the loop's share of one
  compaction; its write is the disk writer thread's);
- `full_replay` (once): `format.recover` of the same commands as one uncompacted journal (the old
  journal's way, which also set such a file aside past 4 MB: for comparison).

It prints the journal's size, the match's interruptions and the medians in ms, as JSON (the
full replay's after the rest: it takes long).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from timerd.adapters.journal.format import JOURNAL_NAME, recover, snapshot_record
from timerd.adapters.journal.writer import Journal
from timerd.config import profiles
from timerd.config.schema import to_plain
from timerd.core.profile import Profile
from timerd.disk import DiskWriter
from timerd.service import Service

#: ITHF with a pre-signal of 1 s (the flood begins a second after the start) and a period of
#: an hour: the clock runs between each resume and pause, and must not run out.
QUICK = ('extends = "ithf"\nname = "bench"\nithf_conformant = false\npre_signal_lead_s = 1\n'
         'period_s = 3600\nsignals = []\n')
NAME = "N" * 40


def _words(n: int) -> list[list[str]]:
    """A resume and a pause in a row, then eight `teams`, over and over (each interruption
    is kept for the results, ITHF 10.1: the match's status costs more with each)."""
    cycle = [["resume"], ["pause"], *[["teams", NAME, NAME, NAME], ["teams", "Home", "Away"]] * 4]
    return [cycle[i % len(cycle)] for i in range(n)]


def _median_ms(work: Callable[[], object], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        work()
        times.append(time.perf_counter() - began)
    return round(statistics.median(times) * 1e3, 2)


async def _flood(home: Path, commands: int, profile: Profile) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    journal = Journal(home / "state", home / "run", loop, 7200.0, DiskWriter(loop, inline=True))
    service = Service(journal.recover(profile))
    journal.match_of = lambda: service.match
    async with journal:
        service.outputs.append(journal)
        service.command({"command": "start"})
        await asyncio.sleep(profile.pre_signal_lead_s + 0.05)
        service.match.poll(loop.time())
        service.command({"command": "pause"})
        for words in _words(commands):
            service.execute(service.parse(*words))
        match = service.match
        snapshot = _median_ms(lambda: snapshot_record(match, [], None))
        status = service.status()
    size = (home / "state" / JOURNAL_NAME).stat().st_size

    def restore() -> None:
        restored = Journal(home / "state", home / "again", loop, 7200.0)
        restored.recover(profile)
        assert restored.recovery.outcome == "restored", restored.recovery.report
        assert restored.recovery.match is not None
        assert len(restored.recovery.match.interruptions) == len(match.interruptions)
        os.close(restored._lock_fd or -1)

    return {"commands": commands, "journal_bytes": size,
            "interruptions": status.interruptions, "snapshot_ms": snapshot,
            "recovery_ms": _median_ms(restore), "phase": status.phase.value}


def _full_replay_ms(commands: int, profile: Profile) -> float:
    now = 1000.0
    records = [{"type": "match", "match": "m", "run": "r", "profile": to_plain(profile),
                "t": 0.0, "wall": 1.8e9},
               {"type": "command", "command": "start", "args": [], "t": 0.0, "wall": 1.8e9},
               {"type": "command", "command": "pause", "args": [], "t": 31.0, "wall": 1.8e9}]
    records += [{"type": "command", "command": words[0], "args": words[1:], "t": 31.0 + i * 1e-4,
                 "wall": 1.8e9} for i, words in enumerate(_words(commands))]
    return _median_ms(lambda: recover(records, None, now=now, wall_now=1.8e9 + 60, run="b",
                                      resume_within_s=7200.0), runs=1)


def main() -> None:
    commands = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    home = Path(tempfile.mkdtemp(prefix="timerd-bench-",
                                 dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
    try:
        (home / "bench.toml").write_text(QUICK)
        profile = profiles.load(str(home / "bench.toml"))
        out = asyncio.run(_flood(home, commands, profile))
        print(json.dumps(out, indent=2), flush=True)  # the uncompacted replay may take long
        print(json.dumps({"full_replay_ms": _full_replay_ms(commands, profile)}, indent=2))
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
