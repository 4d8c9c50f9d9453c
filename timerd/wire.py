"""Every public shape the daemon sends, built in one place and versioned (issue 14).

- The status document (`timerctl status --json`, `GET /api/state`, the WebSocket, MQTT's
  retained state, the serial frame's source): the core's `Status`, the clock face, and the
  keys adapters add, with `format` (this shape's version). An adapter adds keys of its own;
  a key the core has is the core's, even where the core leaves it null (issue 32).
- Event records (the event stream, the WebSocket, MQTT's events topic): one per effect.
- The reply to a request (the control socket, `POST /api/command`): the status after a
  command, a refusal (English text beside its code and values), or why a request is not one;
  the score desk's pairing (`timerctl desk`, `POST /api/pair`).
- The web page's documents: the commands a score desk offers, the message catalogues.
- The match id (`new_match_id`): one per match, in the results line (`match_id`), the
  journal's header, hall mode's result message and the status document.

The results line is built by `timerd.adapters.results.file`, and the serial frame by
`timerd.adapters.serial_protocol`: each is the documented format of its own part, with a
version of its own (docs/service.md, docs/serial-protocol.md).

A change of a shape that a tool could trip over (a key renamed or removed, a meaning changed)
raises its version; a key added beside the others does not.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from timerd.core.effects import (
    Effect,
    FaceoffGuardChanged,
    Notice,
    PhaseChanged,
    Reopened,
    ResultAbandoned,
    ResultCorrected,
    Signal,
)
from timerd.core.frozen import freeze_values
from timerd.core.score import Goal
from timerd.core.status import Status
from timerd.i18n import LOG_TEXT

log = logging.getLogger("timerd.wire")

#: The version of the status document's shape. 2: goal entries have no `wall_time`; the
#: wall times are `goal_wall_times` beside them (issue 32).
STATUS_FORMAT = 2
#: The version of an event record's shape. 2: a notice's `params` carry numbers as numbers
#: (seconds, a score as {"home", "away"}, a player's shirt number or null), no text the core
#: made ("2:00", "1:0", " #17"); its `message` is the catalogue's sentence (issue 32).
EVENT_FORMAT = 2
#: The version of a reply's shape (`ok_reply`, `error_reply`, `refused_reply`). 2: a refusal's
#: `params` carry numbers as numbers, as an event's notice does (issue 32).
REPLY_FORMAT = 2
#: The version of the web page's documents (`commands_document`, `i18n_document`).
PAGE_FORMAT = 1


def status_document(status: Status, extras: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The status as every tool sees it: the core's keys, then the adapters' (`extras`), whose
    dicts and lists are made read-only here (`freeze_values`), as the core's are where the
    core makes them: a dispatch's document then needs no pass over the core's part (issue 44
    items 2 and 8).

    An extra key the core has (`match_id`, `result`, `start_in_s`, also where the core leaves
    it null) or `format` is dropped with a log line: what the match says is never changed or
    filled in by an adapter (issue 14, invariant 5; issue 32).
    """
    out = status.to_dict()
    out["format"] = STATUS_FORMAT
    added: dict[str, Any] = {}
    for extra in extras:
        clash = extra.keys() & out.keys()  # the core's keys: C's pass over the extra's keys
        if clash:
            log.error("status keys %s of an adapter are not its own; dropped",
                      ", ".join(sorted(clash)))
            added.update((k, v) for k, v in extra.items() if k not in clash)
        else:
            added.update(extra)
    out.update(freeze_values(added))
    return out


def event_record(effect: Effect, status: Status) -> dict[str, Any] | None:
    """The JSON-able record of one effect, without its time; None for effects not streamed.
    The event stream, the WebSocket and MQTT's events topic all send these."""
    record = _event_fields(effect, status)
    return None if record is None else {"format": EVENT_FORMAT, **record}


def _event_fields(effect: Effect, status: Status) -> dict[str, Any] | None:
    if isinstance(effect, PhaseChanged):
        return {"type": "state", "state": effect.phase.value,
                "previous": effect.previous.value, "period": status.period,
                "remaining_s": round(status.remaining_s, 3)}
    if isinstance(effect, Signal):
        return {"type": "signal", "signal": effect.kind.value, "beeps": effect.beeps,
                "remaining_s": round(effect.remaining_s, 3), "period": effect.period}
    if isinstance(effect, Goal):
        record: dict[str, Any] = {"type": "goal", "side": effect.side.value,
                                  "counted": effect.counted,
                                  "reason": None if effect.reason is None
                                  else effect.reason.value,
                                  "match_time_s": round(effect.match_time_s, 3),
                                  "score": status.score}
        if effect.scorer is not None:  # ISBHF 420-422, when entered
            record |= {"scorer": effect.scorer, "assists": list(effect.assists)}
        return record
    if isinstance(effect, FaceoffGuardChanged):
        return {"type": "faceoff_guard", "active": effect.active}
    if isinstance(effect, Reopened):  # issue 28: the entry that ended the match taken back
        return {"type": "reopened", "revision": effect.revision, "goal": effect.number,
                "state": status.phase.value, "score": status.score,
                "in_play": effect.in_play}  # issue 42: no winner until it ends again
    if isinstance(effect, ResultAbandoned):  # issue 42: RESET of a reopened match
        return {"type": "result_abandoned", "revision": effect.revision,
                "match_id": effect.match_id, "score": dict(effect.score), "winner": None}
    if isinstance(effect, ResultCorrected):  # a superseding result: the latest revision
        result = status.result or {}
        return {"type": "result_corrected", "revision": effect.revision,
                "match_id": status.match_id, "score": result.get("score", status.score),
                "winner": result.get("winner"), "how": result.get("how")}
    if isinstance(effect, Notice):
        return {"type": "notice", "code": effect.code, "params": dict(effect.params),
                "message": LOG_TEXT.notice(effect.code, effect.params, status.teams)}
    return None



def events(effects: Iterable[Effect], status: Status) -> list[dict[str, Any]]:
    """The event records of what one command did (`event_record`'s, in order)."""
    return [record for effect in effects if (record := event_record(effect, status))]


def ok_reply(status: Mapping[str, Any],
             done: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The reply to a command done: the status document after it, and for an operator's
    command `events`, the event records of what it did (its goal, notices, a reopen, a
    corrected result, the phase it moved to), as the event stream gives them."""
    reply = {"format": REPLY_FORMAT, "ok": True, "status": status}
    return reply if done is None else reply | {"events": list(done)}


def commands_reply(status: Mapping[str, Any],
                   offered: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The reply to `commands` (`timerctl help`): `ok_reply` and every command the running
    profile and the adapters offer, each with its arguments' names (`x`, `x?`, `x...`)."""
    return ok_reply(status) | {"commands": [{"command": name, "args": list(usage)}
                                            for name, usage in offered.items()]}


def error_reply(error: str) -> dict[str, Any]:
    """The reply to a request that is not a command (malformed, over a limit): why, in
    English, for the script that sent it."""
    return {"format": REPLY_FORMAT, "ok": False, "error": error}


def coded_error_reply(key: str, **params: Any) -> dict[str, Any]:
    """The reply to a request refused before it reached the match (a limit, `timerctl desk`'s
    problem): `error` in English, and the catalogue's `code` and `params` for a page or tool
    that says it in its reader's language (issue 46)."""
    return error_reply(LOG_TEXT(key, **params)) | {"code": key, "params": params}


def refused_reply(told: Notice) -> dict[str, Any]:
    """The reply to a refused command: `error` in English (for a script and the log), and
    `code` and `params` for a page or tool that says it in its reader's language."""
    return error_reply(LOG_TEXT.notice(told.code, told.params)) | {
        "code": told.code, "params": dict(told.params)}


def done_reply(code: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """A hall table's answer to a desk command it took (docs/hall.md): `detail` in English
    (for a desk of before issue 46, which shows it as it is), and `code` and `params`, the
    catalogue's key (`hall.done.*`) and values, for a desk that says it in its language."""
    return {"format": REPLY_FORMAT, "ok": True, "detail": LOG_TEXT.notice(code, params),
            "code": code, "params": dict(params)}


def pairing_code_reply(code: str, expires_s: float, host: str, port: int) -> dict[str, Any]:
    """The reply to `desk` on the control socket (`timerctl desk`): a one-time pairing code,
    the seconds it stays good, and where the control page listens (`host` as bound: a
    wildcard, 0.0.0.0 or ::, is every address of the machine) (issue 43)."""
    return {"format": REPLY_FORMAT, "ok": True, "code": code, "expires_s": expires_s,
            "host": host, "port": port}


def devices_reply(devices: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The reply to `desk list` and `desk revoke ID` (`timerctl desk --list`, `--revoke`):
    the paired devices after it, each `id`, `paired` and `last_used` (wall times, the last
    since the daemon started, else null), `address` and `label` (the browser it said it
    was)."""
    return {"format": REPLY_FORMAT, "ok": True, "devices": [dict(d) for d in devices]}


def paired_reply(device: str, credential: str) -> dict[str, Any]:
    """The reply to `POST /api/pair`: the new device's id and its credential, which the page
    keeps and sends as `Authorization: Bearer ...` (issue 43)."""
    return {"format": REPLY_FORMAT, "ok": True, "device": device, "credential": credential}


def commands_document(commands: list[dict[str, Any]], control: bool) -> dict[str, Any]:
    """`GET /api/commands`: what a score desk offers (`control`: whether it may send them)."""
    return {"format": PAGE_FORMAT, "commands": commands, "control": control}


def i18n_document(browser: str | None, names: Mapping[str, str], words: Mapping[str, str],
                  texts: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    """`GET /api/i18n`: every message catalogue, the browser's language if one is there, the
    languages' own names, and which catalogue word each notice value is (`i18n.WORDS`)."""
    return {"format": PAGE_FORMAT, "browser": browser, "names": names, "words": words,
            "texts": texts}


def new_match_id(wall: float | None = None) -> str:
    """A new match id: the set-up's wall time (UTC, `20261203T222915Z`, now when None) and a
    random suffix, so ids sort by time and two tables never clash without talking. The
    results file has always used this shape (`match_id`): users' tools rely on it."""
    stamp = datetime.fromtimestamp(time.time() if wall is None else wall, UTC)
    return f"{stamp.strftime('%Y%m%dT%H%M%SZ')}-{uuid.uuid4().hex[:6]}"
