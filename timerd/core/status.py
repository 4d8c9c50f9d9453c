"""What the operator, the displays and the tools see of a match at one instant: `Status`, and
`snapshot`, which reads it off the match (the phase machine and its rule modules) at `now`.

`Status` is composed, like `Profile`: the phase machine's keys (`StatusBase`) and every
registered rule module's (`RuleModule.shows`, `timerd.core.rules.REGISTERED`), each module's
as a profile without it shows them; the result's keys likewise (`RuleModule.records`,
`period_records`). A module's keys reach the status document and the results through the
registry alone.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from timerd.core import rules
from timerd.core.clock import MatchClock
from timerd.core.display import ClockFace, clock_face, next_change, next_whole, tenth_only
from timerd.core.effects import Phase, Signal
from timerd.core.faceoff import FaceoffGuard
from timerd.core.frozen import ReadOnlyDict, ReadOnlyList, freeze_values, read_only
from timerd.core.profile import Profile
from timerd.core.record import Interruption, PeriodPlayed, periods_record
from timerd.core.rule import BreakKind, RuleModule, own
from timerd.core.score import Goal, Result, ScoreSheet, Side


@dataclass(frozen=True)
class StatusBase:
    """The phase machine's keys of the status; `Status` adds the rule modules'."""

    profile: str
    #: The profile's clock (`Profile.clock`): "running" (ITHF 4.2: a stopped clock is an
    #: interruption) or "stop" (ISBHF 407: net time, stopped at every whistle); how every view
    #: names a stopped clock.
    clock_rule: str
    phase: Phase
    period: int
    periods: int
    clock_running: bool
    period_s: float
    remaining_s: float  # 0 while a sudden-death overtime counts up (see overtime_s)
    elapsed_s: float
    start_in_s: float | None  # before the start or the overtime start: time until its signal
    interruption_s: float | None  # while paused: how long this interruption has lasted
    interruptions: int
    paused_total_s: float
    last_signal: str | None
    last_signal_remaining_s: float | None
    score: dict[str, int]
    goals: list[dict[str, Any]]  # every entry, counted or not (`Goal.to_dict`)
    faceoff_guard_s: float | None  # ITHF 5.6: guard time left while goals cannot count
    faceoff_pending: bool  # a counted goal awaits the faceoff that restarts play
    overtime: bool
    overtime_s: float | None  # overtime played so far (the count-up clock, ITHF 4.8)
    count_up: bool  # the shown clock is overtime_s counting up, not remaining_s
    result: dict[str, Any] | None  # once finished: `Result.to_dict` and the interruptions
    break_kind: str | None  # in a break: "overtime" (before it) or "intermission"
    #: The players' or teams' names per side ("" when not given: the views say Home/Away),
    #: set by `teams`; kept over a reset, since the next match's names come the same way.
    teams: dict[str, str]
    round: str | None  # the tournament round the names belong to (hall mode), if given
    #: The match's one id (`Match.match_id`: the service's, from the set-up to the reset);
    #: null while no match is set up. The results line, the journal and hall mode carry it.
    match_id: str | None
    #: The status keys the profile's rule modules show in rows of their own
    #: (`RuleModule.display`), each `{"key", "kind", "label": {language: text}}`: every view
    #: shows them alike, without a line of its own (issue 44 item 5).
    display: list[dict[str, Any]]

    if TYPE_CHECKING:
        def __getattr__(self, key: str) -> Any:
            """A rule module's key (`RuleModule.shows`): a field of the composed `Status`."""

    @property
    def clock_face(self) -> ClockFace:
        """What the big clock shows now (`timerd.core.display.clock_face`)."""
        goals = None
        if self.phase is Phase.SHOOTOUT and self.shootout is not None:
            goals = (self.shootout["goals"]["home"], self.shootout["goals"]["away"])
        return clock_face(remaining_s=self.remaining_s, count_up=self.count_up,
                          overtime_s=self.overtime_s, shootout_goals=goals,
                          break_left_s=self.start_in_s if self.phase is Phase.BREAK else None)

    def to_dict(self) -> dict[str, Any]:
        # The fields in their order: a dataclass's instance dict holds them as __init__ set
        # them (one copy, not a getattr per key: made per dispatch, issue 44 item 8).
        out = dict(self.__dict__)
        out["clock_face"] = ReadOnlyDict(self.clock_face.to_dict())
        return out


@functools.cache
def compose_status(modules: tuple[type[RuleModule], ...]) -> type[StatusBase]:
    """`StatusBase` with the keys `modules` show (`RuleModule.shows`, in order); TypeError if
    two show the same key. One class per registry (cached), so statuses compare equal."""
    owner = {f.name: "the phase machine" for f in dataclasses.fields(StatusBase)}
    keys = []
    for module in modules:
        for key in module.shows:
            if key in owner:
                raise TypeError(f"status key {key!r} of rule module {module.name!r} is "
                                f"already {owner[key]}'s")
            owner[key] = module.name
            keys.append((key, Any))
    return dataclasses.make_dataclass(
        "Status", keys, bases=(StatusBase,), frozen=True,
        namespace={"__module__": __name__, "__doc__": "What the operator, the displays and "
                   "the tools see, computed at one instant (composed by `compose_status`)."})


if TYPE_CHECKING:
    Status = StatusBase
else:
    Status = compose_status(rules.REGISTERED)


def absent(modules: tuple[type[RuleModule], ...], which: str) -> dict[str, Any]:
    """The keys `modules` add to the status (`which` = "shows") or the result ("records"),
    as a match without them has them (a period's entry: `periods_record`): a copy of what
    `_absent` composed once per registry (it is read per status: issue 44 item 8), whose
    values are read-only, so that a status's document keeps them as they are."""
    return dict(_absent(modules, which))


@functools.cache
def _absent(modules: tuple[type[RuleModule], ...], which: str) -> Mapping[str, Any]:
    out: dict[str, Any] = {}
    for module in modules:
        out.update(getattr(module, which))
    return read_only(out)


class Shown(Protocol):
    """What `snapshot` reads of a match (`timerd.core.match.Match`)."""

    profile: Profile
    phase: Phase
    period: int
    overtime: bool
    clock: MatchClock
    start_at: float | None
    paused_since: float | None
    interruptions: list[Interruption]
    last_signal: Signal | None
    sheet: ScoreSheet
    guard: FaceoffGuard
    result: Result | None
    replays: int
    rules: list[RuleModule]
    periods_played: list[PeriodPlayed]
    teams: dict[Side, str]
    round: str | None
    match_id: str | None
    break_kind: BreakKind | None

    def play_s(self, now: float) -> float: ...
    def remaining_s(self, now: float) -> float: ...
    def records(self) -> dict[str, Any]: ...


@functools.cache
def displayed(modules: tuple[type[RuleModule], ...]) -> ReadOnlyList:
    """The status's `display` of a match of `modules` (`RuleModule.display`, each key's
    entry): made once and shared by every status of such a match, read-only, so that no
    reader's write changes what a later status shows (issue 44 item 2)."""
    return ReadOnlyList(read_only(how.entry(key)) for module in modules
                        for key, how in module.display.items())


class Kept:
    """A read-only part of the status (`make(source)`) kept while the part of the match it is
    made from (`source`: the goals, the names) compares equal to the copy it was made from:
    those change a few times a match, the status is made every second (issue 44 item 8:
    CPU per match minute). A list or dict compares in C, item by item, each first by
    identity; the pair is swapped whole, so a reader never sees one without the other."""

    def __init__(self, make: Callable[[Any], Any]) -> None:
        self.make = make
        self.last: tuple[Any, Any] = (object(), None)

    def __call__(self, source: Any) -> Any:
        last = self.last
        if source != last[0]:
            last = self.last = (source.copy(), self.make(source))
        return last[1]


def _scored(goals: list[Goal]) -> tuple[ReadOnlyDict, ReadOnlyList]:
    score = ScoreSheet(goals).score()
    return (ReadOnlyDict({side.value: n for side, n in score.items()}),
            ReadOnlyList([read_only(goal.to_dict()) for goal in goals]))


_SCORED = Kept(_scored)  # the score and the goals (`Goal` is frozen: a copy of the list holds)
_NAMED = Kept(lambda teams: ReadOnlyDict({side.value: name for side, name in teams.items()}))


def snapshot(match: Shown, now: float) -> Status:
    """The match at `now`: the phase machine's clock, score and records, and what each of the
    profile's rule modules shows (`RuleModule.status`).

    The `Status` is made from its fields in their order, its instance dict set at once: a
    frozen dataclass's `__init__` sets each of its fields (36 in an ITHF match) through
    `object.__setattr__`, 5.5 µs of a status's 23, every second (issue 44 item 8; run hot
    in a loop, 0.4 µs set at once). `tests/core/test_status.py` holds its keys to the
    class's fields."""
    paused_total = sum(i.length_s for i in match.interruptions)
    current = None
    if match.paused_since is not None:
        current = now - match.paused_since
        paused_total += current
    last = match.last_signal
    count_up = not math.isfinite(match.clock.length_s)
    in_play = match.phase in (Phase.RUNNING, Phase.PAUSED)
    # Every part is made read-only here, where it is made (the score, the names, the goals,
    # the clock face, the result, the rule modules' parts): a dispatch's document then keeps
    # them as they are (issue 44 item 8: its freeze to the depth was a sixth of the
    # instructions of a match minute, docs/BENCHMARKS.md).
    teams = _NAMED(match.teams)
    score, goals = _SCORED(match.sheet.goals)
    registered = rules.REGISTERED  # read now: a module registered later is shown too
    result = None
    if match.result is not None:
        result = read_only(match.result.to_dict() | {
            "interruptions": [i.to_dict() for i in match.interruptions],
            "replays": match.replays,
            "periods": periods_record(match.periods_played, match.sheet.goals,
                                      absent(registered, "period_records")),
            **absent(registered, "records"), **match.records(), "teams": teams,
            "round": match.round})
    shown = absent(registered, "shows")
    for rule in match.rules:
        if type(rule).status is not RuleModule.status:  # else it shows what `absent` has
            shown.update(own(rule, rule.status(now), rule.shows, "status"))
    status = object.__new__(compose_status(registered))
    object.__setattr__(status, "__dict__", {
        "profile": match.profile.name,
        "clock_rule": match.profile.clock,
        "phase": match.phase,
        "period": match.period,
        "periods": match.profile.periods,
        "clock_running": match.clock.running,
        "period_s": match.profile.period_s if count_up else match.clock.length_s,
        "remaining_s": match.remaining_s(now),
        "elapsed_s": match.clock.elapsed(now),
        "start_in_s": None if match.start_at is None else match.start_at - now,
        "interruption_s": current,
        "interruptions": len(match.interruptions) + (current is not None),
        "paused_total_s": paused_total,
        "last_signal": None if last is None else last.kind.value,
        "last_signal_remaining_s": None if last is None else last.remaining_s,
        "score": score,
        "goals": goals,
        "faceoff_guard_s": match.guard.remaining_s(match.play_s(now)) if in_play else None,
        "faceoff_pending": match.guard.pending,
        "overtime": match.overtime,
        "overtime_s": match.clock.elapsed(now) if match.overtime else None,
        "count_up": count_up,
        "result": result,
        "break_kind": match.break_kind,
        "teams": teams,
        "round": match.round,
        "match_id": match.match_id,
        "display": displayed(tuple(map(type, match.rules))),
        **freeze_values(shown),
    })
    return status


def next_shown_change(status: Status, now: float, tenths: bool) -> tuple[float, bool] | None:
    """When the shown clock (or pre-signal countdown, or interruption length) next changes,
    and whether only its tenths will (`Tick.tenth`); tenths only where `tenths` are shown."""
    if status.phase is Phase.RUNNING and status.count_up and status.overtime_s is not None:
        return now + next_whole(status.overtime_s), False  # ITHF 4.8: overtime counts up
    counting_down = (Phase.SCHEDULED, Phase.PRE_SIGNAL, Phase.BREAK)
    left = status.remaining_s if status.phase is Phase.RUNNING else \
        status.start_in_s if status.phase in counting_down else None
    if left is not None:
        step = next_change(left, tenths)
        return now + step, tenth_only(left - step)
    if status.phase is Phase.PAUSED and status.interruption_s is not None:
        return now + next_whole(status.interruption_s), False
    return None


class Timed(Protocol):
    """A match as `check` sees it."""

    def status(self, now: float) -> Status: ...

    def next_deadline(self) -> float | None: ...


def check(match: Timed, now: float) -> Status:
    """Raise (a defect: never CommandRefused) unless `match`, as it stands at `now`, can be
    shown and timed: its status, the shown clock's next change, a finite next deadline; the
    status, for the dispatch that hands it out. The service asks this of every command the
    match accepted before it hands the command to any output (the journal among them), and
    the journal's replay of every record it restores: a command the core took but cannot
    live with is never journalled, and a journal never holds what a restart would die of
    (issue 34)."""
    status = match.status(now)
    next_shown_change(status, now, tenths=True)
    deadline = match.next_deadline()
    if deadline is not None and not math.isfinite(deadline):
        raise ValueError(f"the match's next deadline is {deadline!r}")
    return status
