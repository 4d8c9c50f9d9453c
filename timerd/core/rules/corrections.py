"""Corrections as a referee makes them: `undo` of a goal entry, also of the one that ended the
match, and `correct` of a goal's scorer and assists (ITHF 6.1 with 4.8; ISBHF 420 !1, !3 with
411). Every match has it (`timerd.core.rules.BUILT_IN`).

- `undo` removes the last goal entry. A goal taken back was never a goal: the rule modules
  undo what it did (`RuleModule.goal_undone`: the minor a power-play goal ended runs again
  with the time it had left). Under a profile with `undo_until_faceoff` (ISBHF 420 !1) a goal
  can only be revoked until the faceoff that follows it.
- `undo` of the entry that ended the match reopens it, within `reopen_within_s` of the end
  (the profile's; until RESET or the next match in any case). A golden goal (ITHF 4.8,
  ISBHF 411) taken back puts the match back as it stood at that entry, paused, waiting for the
  referee's restart (ITHF 10.4: a faceoff; ISBHF: START). A regular-time entry taken back
  after the final signal leaves the final result with the corrected score, or, when the
  correction ties a play-off match, the overtime follows (its break from the correction).
- `correct NUMBER [scorer] [assist] [assist]` puts right the names of any goal entry of the
  match (ISBHF 420 !3), the score and the clock untouched.

A result that changes after the end is a new revision (`revision`: 0 for the first result,
1, 2... for each correction); the result records it, the results file appends it as a new
line and every reader shows the latest (docs/scoring.md). A match has at most
MAX_REVISIONS: a correction after the end that could go past it is refused (issue 42 item 5:
each is a results line, fsynced, and a message to the hall desk). The match as it stood when it
ended is kept (a deep copy of its state, taken as it ends) so that a reopen restores every
rule module's clocks exactly as they were.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from timerd.core.buttons import Button
from timerd.core.checks import hours
from timerd.core.commands import Command, arg
from timerd.core.effects import (
    Effect,
    Notice,
    Phase,
    Reopened,
    ResultAbandoned,
    ResultCorrected,
    SignalKind,
)
from timerd.core.rebase import rebase
from timerd.core.refused import CommandRefused
from timerd.core.rule import CommandTable, MatchView, RuleModule
from timerd.core.rules.scoring import Goal as GoalCommand
from timerd.core.rules.scoring import players
from timerd.core.score import AWARDS, Ending, Goal, GoalReason, Side, parse_player, shirt_numbers
from timerd.core.settings import ProfileBase, Settings


def entry_number(word: str) -> int:
    """A goal entry's number as the status numbers it (1, 2, ...)."""
    if not (word.isascii() and word.isdigit() and str(int(word)) == word):
        raise CommandRefused("no_goal_number", number=word[:8])
    return int(word)


#: The most revisions a match's result may have after the first (issue 42 item 5): a referee
#: corrects a result a few times at most; a script that loops writes no unbounded file.
MAX_REVISIONS = 20


@dataclass(frozen=True)
class Undo(Command):
    """Take back the last goal entry (ITHF 6.1; ISBHF 420 !1)."""

    name = "undo"


@dataclass(frozen=True)
class Correct(Command):
    """ISBHF 420 !3: goal entry `number`'s scorer and assists put right (none: no names)."""

    name = "correct"
    number: int = arg("number", entry_number)
    scorer: str | None = arg("scorer", parse_player, optional=True)
    assists: tuple[str, ...] = arg("assist", parse_player, repeat=2)

    def __post_init__(self) -> None:
        shirt_numbers(players(self.scorer, self.assists))  # a player named twice is refused


@dataclass(frozen=True)
class LateGoal(GoalCommand):
    """ISBHF 410, 420: a goal of the last second of the period that just ended."""

    name = "late-goal"


@dataclass(frozen=True)
class CorrectionSettings(Settings):
    """The corrections' keys of a profile."""

    #: ISBHF 420 !1: a goal may be revoked (`undo`) only until the faceoff that follows it.
    undo_until_faceoff: bool = False
    #: ITHF 6.1 with 4.8, ISBHF 420 !1 with 411: `undo` of the entry that ended the match
    #: reopens it up to this long after the end (and until RESET or the next match).
    reopen_within_s: float = 600.0

    def problems(self, profile: ProfileBase) -> list[str]:
        out = hours(reopen_within_s=self.reopen_within_s)
        if self.reopen_within_s < 0:
            out.append(f"reopen_within_s = {self.reopen_within_s:g}: must not be negative "
                       "(0: a finished match is never reopened)")
        return out


class Corrections(RuleModule):
    """`undo` (before and after the end) and `correct`, and the result's revision."""

    name = "corrections"
    settings = CorrectionSettings
    #: In the result: how many times the ended match's result was corrected.
    records = MappingProxyType({"revision": 0})
    declares = (Undo, Correct, LateGoal)
    buttons = (Button("undo", "The UNDO button: held `[gpio] long_press_s`, it takes back the "
                      "last goal (a stray touch never does).", long_press=Undo(),
                      hint="notice.hold_undo", pin=12, keys=("KEY_KPASTERISK",), panel="u",
                      panel_help="key.undo"),)

    @classmethod
    def offered(cls, profile: ProfileBase) -> frozenset[str]:
        """`late-goal` only under a stop clock (ISBHF 410, 420)."""
        if profile.clock == "stop":
            return super().offered(profile)
        return super().offered(profile) - {LateGoal.name}

    def __init__(self, match: MatchView) -> None:
        super().__init__(match)
        #: The result's revision: how many times the ended match's result was corrected.
        self.revision = 0
        #: Goal entries numbered up to the last faceoff (ISBHF 420 !1: revocable until then).
        self.faced_off_after = 0
        #: The match's state as it ended, when it ended by a goal or the final signal; its
        #: end instant and the entries numbered by then.
        self.ended: tuple[dict[str, Any], float, int] | None = None
        #: The instant the match ended last, however it ended.
        self.ended_at: float | None = None
        #: Reopened and in play again: the revision that said so was given (`Reopened`
        #: `in_play`); the match has no winner until it ends again (issue 42 item 2).
        self.reopened = False

    def commands(self) -> CommandTable:
        table: CommandTable = {Undo: lambda _, now: self.undo(now), Correct: self.correct}
        if self.match.profile.clock == "stop":  # a running clock keeps ITHF 6.5
            table[LateGoal] = self.late_goal
        return table

    # -- hooks -------------------------------------------------------------------------------

    def faceoff(self, at: float) -> None:
        self.faced_off_after = self.match.sheet.entered

    def ending(self, how: Ending, at: float) -> list[Effect]:
        """Keep the match as it ends (play and the final signal only: a ruling or a
        shootout is not undone by taking back a goal entry); a corrected result says so."""
        self.ended, self.ended_at = None, at
        if how in (Ending.REGULAR, Ending.OVERTIME):
            self.ended = (self._state(), at, self.match.sheet.entered)
        if self.reopened:  # the revision that said "reopened" is superseded by this one
            self.reopened = False
            self.revision += 1
        return [ResultCorrected(self.revision)] if self.revision else []

    def reset(self, now: float) -> list[Effect]:
        """RESET of a reopened match (issue 42 item 2): its result is superseded by one
        that says it was abandoned: no winner, the score as it stands."""
        if not self.reopened:
            return []
        self.reopened = False
        self.revision += 1
        score = {side.value: n for side, n in self.match.sheet.score().items()}
        return [ResultAbandoned(self.revision, self.match.match_id, score),
                AbandonedNotice(self.revision, self.match.sheet.score())]

    def overtime_follows(self, at: float) -> None:
        """Keep the match as regular time ended tied: a goal of its last second entered in
        the break (`late_goal`) decides it after all."""
        self.ended = (self._state(), at, self.match.sheet.entered)

    def record(self) -> Mapping[str, Any]:
        return {"revision": self.revision}

    def correctable_until(self) -> float | None:
        """The instant until which the finished match may be corrected (None: it is not
        finished): `reopen_within_s` after its end. The journal keeps it until then, and a
        restart restores it, correctable (issue 42 item 1)."""
        if self.ended_at is None or self.match.phase is not Phase.FINISHED:
            return None
        return self.ended_at + CorrectionSettings.of(self.match.profile).reopen_within_s

    def rebase(self, shift: float) -> None:
        """The match as it ended moves with the match (its copy shares this module)."""
        if self.ended is not None:
            state, at, entered = self.ended
            rebase(state, shift, keep=self)
            self.ended = (state, at + shift, entered)
        if self.ended_at is not None:
            self.ended_at += shift

    # -- undo --------------------------------------------------------------------------------

    def undo(self, now: float) -> list[Effect]:
        """Remove the last goal entry; of the entry that ended the match, reopen it."""
        match = self.match
        goal = self._last_entry()
        until_faceoff = CorrectionSettings.of(match.profile).undo_until_faceoff
        if until_faceoff and goal.number <= self.faced_off_after:
            raise CommandRefused("undo_after_faceoff", number=goal.number,
                                 time=round(goal.match_time_s, 3))
        if match.phase is Phase.FINISHED:
            return self._reopen(now)
        return self._take_back(now)

    def _last_entry(self) -> Goal:
        entries = [g for g in self.match.sheet.goals if g.reason not in AWARDS]
        if not entries:
            raise CommandRefused("no_goal_to_undo")
        return entries[-1]

    def _take_back(self, now: float) -> list[Effect]:
        match = self.match
        goal = match.sheet.undo()
        assert goal is not None  # `_last_entry` found it
        if goal.counted:
            match.guard.pending = False
        values = goal.side, round(goal.match_time_s, 3), match.sheet.score()
        told = GoalUndone(*values) if goal.reason is None else \
            EntryUndone(*values, goal.reason)
        return [told, *match.goal_undone(goal, now)]

    def _reopen(self, now: float) -> list[Effect]:
        """ITHF 6.1 with 4.8, ISBHF 420 !1 with 411: the entry that ended the match is taken
        back. An entry made after the end (not counted) is only removed."""
        match = self.match
        goal = self._last_entry()
        if self.ended is None:
            raise match.why_not("undo")
        _, end_at, entered = self.ended
        if goal.number > entered:  # entered after the end: the result does not change
            return self._take_back(now)
        golden = goal.overtime and goal.counted and goal.at == end_at
        if match.overtime and not golden:
            raise CommandRefused("reopen_not_last", number=goal.number)
        self._restore_end(now)
        effects: list[Effect] = [*self._take_back(now)]
        if golden:  # play stands as it was at the goal, paused for the restart (ITHF 10.4)
            match.clock = match.clock.stopped(end_at)
            match.paused_since = end_at if match.paused_since is None else match.paused_since
            match.guard.on_resume = True
            effects += match.goto(Phase.PAUSED)
        else:  # the final result with the corrected score, or overtime (its `ResultCorrected`)
            effects += match.regular_time_over(now)
        self.reopened = match.phase is not Phase.FINISHED  # in play: no winner for now
        return [Reopened(self.revision, goal.number, self.reopened),
                ReopenedNotice(self.revision, match.sheet.score()),
                *effects]

    def _restore_end(self, now: float, correction: bool = True) -> None:
        """The match back as it stood when it ended (`correction`: the result to come is a
        new revision) or when regular time ended tied, within the profile's time limit."""
        match = self.match
        assert self.ended is not None
        state, end_at, _ = self.ended
        within_s = CorrectionSettings.of(match.profile).reopen_within_s
        if now - end_at > within_s:
            raise CommandRefused("reopen_too_late", after=within_s)
        if correction:  # a reopened match takes two: in play again, then its end
            self._bounded(2)
        shown = Phase.FINISHED if correction else match.phase
        match_id = match.match_id  # the service's, given after a restart's replay too
        vars(match).update(state)
        match.match_id = match_id
        match.phase = shown  # as seen from outside, until what follows
        self.ended = None
        self.revision += 1 if correction else 0

    def _bounded(self, needed: int) -> None:
        """Refuse a correction after the end that could take the result past MAX_REVISIONS
        (`needed`: the revisions it may give)."""
        if self.revision + needed > MAX_REVISIONS:
            raise CommandRefused("too_many_corrections", most=MAX_REVISIONS)

    def _state(self) -> dict[str, Any]:
        """A deep copy of the match's state; the profile and this module are shared, not
        copied (the profile is frozen; this module keeps the revision across a reopen)."""
        match = self.match
        memo: dict[int, Any] = {id(match): match, id(self): self,
                                id(match.profile): match.profile}
        for f in dataclasses.fields(match.profile):
            value = getattr(match.profile, f.name)
            memo[id(value)] = value
        return copy.deepcopy(dict(vars(match)), memo)

    # -- ISBHF 410, 420: a goal of the last second, entered after the horn --------------------

    def late_goal(self, command: LateGoal, now: float) -> list[Effect]:
        """ISBHF 410, 420 (stop clock): a ball that crossed the line in the last second of
        the period that just ended, entered after its horn: counted for that period, at its
        end. In the intermission or the wait for the next period's faceoff; after the last
        period it corrects the result (a new revision) or, breaking a tie, ends the match."""
        match = self.match
        side = command.side
        between = not match.overtime and match.period > 1 and (
            (match.phase is Phase.BREAK and match.break_kind == "intermission")
            or (match.phase is Phase.PAUSED and match.paused_since is None))
        ended = match.phase is Phase.FINISHED and self.ended is not None \
            and not match.overtime  # regular time ended it, not a ruling or overtime
        tied = match.overtime and self.ended is not None and match.clock.elapsed(now) == 0 \
            and match.phase in (Phase.BREAK, Phase.PAUSED)  # before overtime's faceoff
        if not (between or ended or tied):
            raise CommandRefused("late_goal_when")
        if ended or tied:
            self._restore_end(now, correction=ended)
        goal = match.sheet.add(Goal(side, match.play_s(now), True, None,
                                    match.period - 1 if between else match.period, False, now,
                                    command.scorer, command.assists))
        effects: list[Effect] = [goal, match.sound(SignalKind.GOAL, now),
                                 LateGoalCounted(side, goal.period)]
        effects += match.goal_entered(goal, now)
        return effects + (match.regular_time_over(now) if ended or tied else [])

    # -- ISBHF 420 !3 --------------------------------------------------------------------------

    def correct(self, command: Correct, now: float) -> list[Effect]:
        """ISBHF 420 !3: put right the scorer and assists of goal entry `number` (as numbered
        in the status); no name: the goal has none. The score and the clock are untouched. After
        the end, the result is corrected: a new revision."""
        match = self.match
        if match.phase is Phase.IDLE:
            raise match.why_not("correct")
        found = [i for i, g in enumerate(match.sheet.goals)
                 if g.number == command.number and g.reason not in AWARDS]
        if not found:
            raise CommandRefused("no_goal_number", number=command.number)
        if match.phase is Phase.FINISHED:
            self._bounded(1)
        goal = match.sheet.goals[found[0]]
        sheets = [match.sheet] + ([self.ended[0]["sheet"]] if self.ended else [])
        for sheet in sheets:  # the kept end too: a later reopen keeps the correction
            sheet.goals = [replace(g, scorer=command.scorer, assists=command.assists)
                           if g.number == goal.number
                           else g for g in sheet.goals]
        told = GoalCorrected(goal.number, goal.side, command.scorer or None,
                             tuple(command.assists))
        if match.phase is not Phase.FINISHED:
            return [told]
        self.revision += 1
        return [told, ResultCorrected(self.revision)]


@dataclass(frozen=True)
class GoalUndone(Notice):
    """ITHF 6.1, ISBHF 420 !1: `side`'s goal at `time` (match seconds) taken back; `score`
    is the score after it."""

    code = "notice.undo"
    side: Side
    time: float
    score: Mapping[Side, int]


@dataclass(frozen=True)
class EntryUndone(GoalUndone):
    """An entry that was not counted (`reason`) taken back: the score is unchanged."""

    code = "notice.undo_not_counted"
    reason: GoalReason


@dataclass(frozen=True)
class ReopenedNotice(Notice):
    """ITHF 6.1 with 4.8, ISBHF 420 !1 with 411: the entry that ended the match taken back;
    result revision `revision` is to come, the score now `score`."""

    code = "notice.reopened"
    revision: int
    score: Mapping[Side, int]


@dataclass(frozen=True)
class AbandonedNotice(Notice):
    """RESET of a reopened match: result revision `revision` says it was abandoned, no
    winner, at `score` (issue 42 item 2)."""

    code = "notice.abandoned"
    revision: int
    score: Mapping[Side, int]


@dataclass(frozen=True)
class LateGoalCounted(Notice):
    """ISBHF 410, 420: `side`'s goal of the last second, counted for period `period`."""

    code = "notice.late_goal"
    side: Side
    period: int


@dataclass(frozen=True)
class GoalCorrected(Notice):
    """ISBHF 420 !3: goal entry `number` of `side` now names `scorer` (a shirt number, or None)
    and `assists` (shirt numbers); the catalogue shows none as "-" (`i18n.WORDS`)."""

    code = "notice.corrected"
    number: int
    side: Side
    scorer: str | None
    assists: tuple[str, ...]
