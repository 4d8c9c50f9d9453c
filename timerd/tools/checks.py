"""One line of `timerd doctor`, and the checks both doctors make (`doctor`, and
`doctor_service` for `--service`): kept apart so that neither imports the other for them."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from timerd.adapters.journal.format import (
    HEARTBEAT_NAME,
    JOURNAL_NAME,
    parse_journal,
    read_heartbeat,
    recover,
)

OK, WARN, FAIL = "ok", "warn", "FAIL"


@dataclass(frozen=True)
class Check:
    level: str
    topic: str
    message: str


def journal_summary(state: Path, runtime: Path, resume_within_s: float) -> Check:
    """What the next start would do with the journal in `state` and the heartbeat in
    `runtime` (without changing them)."""
    try:
        data = (state / JOURNAL_NAME).read_bytes()
    except FileNotFoundError:
        data = b""
    except OSError as exc:
        return Check(FAIL, "match journal", f"cannot read it: {exc.strerror}")
    records, warnings = parse_journal(data)
    heartbeat = read_heartbeat(runtime / HEARTBEAT_NAME)
    result = recover(records, heartbeat, now=0.0, wall_now=time.time(), run="doctor",
                     resume_within_s=resume_within_s)
    skipped = f" ({len(warnings)} damaged lines will be skipped)" if warnings else ""
    if result.report is None:
        return Check(WARN if warnings else OK, "match journal",
                     f"no unfinished match{skipped}")
    return Check(WARN if warnings else OK, "match journal",
                 f"on the next start: {result.report['message']}{skipped}")
