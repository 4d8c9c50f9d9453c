"""The results file's format (docs/scoring.md), for the daemon and the tools that read it.

A documented format: tools may import this module (`timerd results`), and only this one, of
the results file. The file holds one JSON object per line, one line per finished match,
appended by the daemon (`timerd.adapters.results.file`): `format` (RESULT_FORMAT), `match_id` (the
match's one id, `20261203T222915Z-ab12cd`), `profile`, `teams`, `started`/`finished`, `score`,
`how`, `goals`, and the rest docs/scoring.md lists. A torn last line (a crash mid-write, an
edit by hand) is skipped by a reader, never an error.

Format 2 (issue 28): a result corrected after the end (a reopened match, ISBHF 420 !3 names)
is a new line with the same `match_id`, the next `revision` (0 for the first result) and
`supersedes` (the revision it replaces); the file stays append-only. A reader shows the
latest revision of each match (`recent_results`); a line of format 1 is revision 0.

Format 3 (issue 42): `state` says what a line is: `final` (a result: the match ended),
`reopened` (the entry that ended the match was taken back and the match is in play again: no
winner, `how` and `finished` null, the score as it stands, until a later revision) or
`abandoned` (RESET of a reopened match: no winner, `how` and `finished` null, the score as it
stood). `finished` is the match's end, kept by a correction (ISBHF 420 !3 names); a revision
has `corrected_at`, when it was made (null in revision 0). A line without `state` (formats 1
and 2) is `final`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger("timerd.results")

#: The version of a results line's shape (docs/scoring.md); raised when a key changes meaning.
RESULT_FORMAT = 3
#: What a results line says (`state`): a result, a match in play again, a match abandoned.
FINAL, REOPENED, ABANDONED = "final", "reopened", "abandoned"


def results_line(*, match_id: str | None, profile: str, teams: Mapping[str, str],
                 score: Mapping[str, int], result: Mapping[str, Any], started: str | None,
                 finished: str | None, goals: list[dict[str, Any]], state: str = FINAL,
                 corrected_at: str | None = None) -> dict[str, Any]:
    """The results line of a finished match (`state` FINAL; REOPENED or ABANDONED: a match
    that has none, `result` only its revision): who, when (ISO 8601 wall times, which the
    core does not know: `finished` the match's end, `corrected_at` the revision's) and the
    score, then every key of the core's `result` (the phase machine's and each registered
    rule module's record, `RuleModule.records`: a new rule's key reaches the file with no
    change here), and the goals with their wall times last."""
    revision = int(result.get("revision", 0))
    line: dict[str, Any] = {
        "format": RESULT_FORMAT,
        "match_id": match_id,
        # Issue 28: a correction after the end is a new line; readers take the latest.
        "revision": revision,
        "supersedes": revision - 1 if revision else None,
        "state": state,
        "profile": profile,
        "teams": result.get("teams", teams),  # "" for a side nobody named
        "round": result.get("round"),
        "started": started,
        "finished": finished if state == FINAL else None,
        "corrected_at": corrected_at if revision else None,
        "score": dict(score),
    }
    if state != FINAL:  # issue 42: no winner until the match ends again
        line.update(how=None, winner=None, side=None, points=None)
    line.update((key, value) for key, value in result.items() if key not in line)
    line["goals"] = goals
    return line


def recent_results(path: Path, n: int = 20) -> list[dict[str, Any]]:
    """The last `n` matches' results in `path`, oldest first, each at its latest revision
    (in the place of its first line); a torn or foreign line is skipped."""
    if n <= 0 or not path.is_file():
        return []
    latest: dict[Any, dict[str, Any]] = {}
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                record = None
            if not isinstance(record, dict):
                log.warning("%s line %d is not a result (torn write?); skipped", path, number)
                continue
            key = record.get("match_id") or f"line {number}"
            kept = latest.get(key)
            if kept is None or revision(record) >= revision(kept):
                latest[key] = record
    return list(latest.values())[-n:]


def revision(record: dict[str, Any]) -> int:
    """A results line's revision: 0 for the first result (and a line of format 1)."""
    value = record.get("revision")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
