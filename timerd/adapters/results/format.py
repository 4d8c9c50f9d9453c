"""The results file's format (docs/scoring.md), for the daemon and the tools that read it.

A documented format: tools may import this module (`timerd results`), and only this one, of
the results file. The file holds one JSON object per line, one line per finished match,
appended by the daemon (`timerd.adapters.results.file`): `format` (RESULT_FORMAT), `match_id` (the
match's one id, `20261203T222915Z-ab12cd`), `profile`, `teams`, `started`/`finished`, `score`,
`how`, `goals`, and the rest docs/scoring.md lists. A torn last line (a crash mid-write, an
edit by hand) is skipped by a reader, never an error.
"""

from __future__ import annotations

import json
import logging
from collections import deque
from pathlib import Path
from typing import Any

log = logging.getLogger("timerd.results")

#: The version of a results line's shape (docs/scoring.md); raised when a key changes meaning.
RESULT_FORMAT = 1


def recent_results(path: Path, n: int = 20) -> list[dict[str, Any]]:
    """The last `n` results in `path`, oldest first; a torn or foreign line is skipped."""
    if n <= 0 or not path.is_file():
        return []
    out: deque[dict[str, Any]] = deque(maxlen=n)
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                record = None
            if isinstance(record, dict):
                out.append(record)
            else:
                log.warning("%s line %d is not a result (torn write?); skipped", path, number)
    return list(out)
