"""A match moved onto another clock (docs/service.md, "Crash recovery"): every instant it
keeps shifted by one amount, so that a match restored from a snapshot of its journal in a
later run stands exactly where it stood, and the time the daemon was down is no match time.

The match keeps instants of the loop's clock (the match clock's anchor, a break's end, the
start of an interruption, a goal's entry, a timeout's start) and durations and play time (the
seconds on the clock, a penalty's start in play time, a passive count), which do not move. A
replay of the journal's commands at shifted times moves the instants by construction; a
snapshot moves them here: the phase machine's (`rebase`) and each rule module's, in its
`RuleModule.rebase` hook.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from timerd.core.effects import Signal
from timerd.core.score import ScoreSheet

#: The phase machine's instants that are a float or None.
_INSTANTS = ("start_at", "paused_since", "_break_warning_at", "_held_at")


def rebase(state: dict[str, Any], shift: float, *, keep: object = None) -> None:
    """Move every instant of a match's state (`vars(match)`, or the copy of it that
    `rules.corrections` keeps for a reopen) by `shift` seconds, and each of its rule
    modules' but `keep` (the module whose copy this is: it moves itself)."""
    state["clock"] = state["clock"].shifted(shift)
    for key in _INSTANTS:
        if state[key] is not None:
            state[key] += shift
    state["last_signal"] = _signal(state["last_signal"], shift)
    state["_held"] = [_signal(effect, shift) for effect in state["_held"]]
    if state["_period_ends"] is not None:
        due, step = state["_period_ends"]
        state["_period_ends"] = (due + shift, step)
    sheet: ScoreSheet = state["sheet"]
    sheet.goals = [replace(goal, at=goal.at + shift) for goal in sheet.goals]
    for rule in state["rules"]:
        if rule is not keep:
            rule.rebase(shift)


def _signal(effect: Any, shift: float) -> Any:
    return replace(effect, due=effect.due + shift) if isinstance(effect, Signal) else effect
