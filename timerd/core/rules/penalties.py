"""Penalty clocks for ball hockey: minor, major and misconduct penalties (ISBHF part 4).

A penalty is served in game time: it runs only while the game clock runs, so it is kept in
net play time (seconds the match clock has run since the start, over all periods) and never
ticks. A penalty that runs has a start in play time; its end is that start plus its duration,
and the match turns that into a monotonic deadline through the clock.

At most `max_running` short-handed penalties of a team run at once (a team plays at most two
players short); the others wait and each starts the moment a running one ends, in the order
they were given. A misconduct does not leave the team short (the player is replaced), so it
runs at once and never waits. A minor ends early when the opponent scores while the penalised
team is short-handed, i.e. has more short-handed penalties running than the opponent; of the
team's running minors the one closest to its end is the one that ends.

This module knows nothing of clocks or phases: the match passes play time in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from timerd.core.checks import at_most, durations, hours
from timerd.core.commands import Command, arg
from timerd.core.effects import Effect, Notice, Phase, SignalKind
from timerd.core.frozen import ReadOnlyDict, ReadOnlyList
from timerd.core.refused import CommandRefused
from timerd.core.rule import CommandTable, MatchView, RuleModule, Shown, Step
from timerd.core.score import Goal, Side, parse_player, parse_side
from timerd.core.settings import MAX_COUNT, ProfileBase, Settings


def _player(word: str) -> str | None:
    """A penalised player's shirt number; "" names none."""
    return parse_player(word) if word else None


def _number(word: str) -> int | None:
    """A penalty's number as the status numbers it; "" is the side's last one."""
    if word and not (word.isascii() and word.isdigit()):
        raise CommandRefused("penalty_number", given=word[:8])
    return int(word) if word else None


#: Kinds of penalty a profile may have at most: more than the rulebook knows, to catch a typo.
MAX_KINDS = 16


@dataclass(frozen=True)
class PenaltyKind:
    """One kind of penalty: how long it runs in game time, and how it affects the team."""

    duration_s: float
    #: The team plays one player short while it runs, so it counts toward `max_running` and a
    #: goal against the team is a power-play goal. False for a misconduct: the player sits out
    #: but is replaced at once.
    short_handed: bool = True
    #: A minor penalty ends early when the opponent scores while the team is short-handed.
    ends_on_goal: bool = False


def _default_penalty_kinds() -> Mapping[str, PenaltyKind]:
    return MappingProxyType({
        "minor": PenaltyKind(120.0, ends_on_goal=True),
        "major": PenaltyKind(300.0),
        "misconduct": PenaltyKind(600.0, short_handed=False),
    })


@dataclass(frozen=True)
class PenaltyRules:
    """Penalty clocks that run only while the game clock runs (minor 2:00, major 5:00,
    misconduct 10:00 by default); at most `max_running` short-handed penalties of a team run at
    once, the others wait their turn."""

    kinds: Mapping[str, PenaltyKind] = field(default_factory=_default_penalty_kinds)
    max_running: int = 2

    def problems(self) -> list[str]:
        out = []
        if not self.kinds:
            out.append("kinds: give at least one kind (or leave [penalties] out)")
        if len(self.kinds) > MAX_KINDS:
            out.append(f"kinds: at most {MAX_KINDS} kinds of penalty (ISBHF knows three)")
        for name, kind in self.kinds.items():
            out += durations(**{f"kinds.{name}.duration_s": kind.duration_s})
            out += hours(**{f"kinds.{name}.duration_s": kind.duration_s})
        if self.max_running < 1:
            out.append(f"max_running = {self.max_running}: at least one")
        return out + at_most(MAX_COUNT, "a team has no more players to send off",
                             max_running=self.max_running)


@dataclass(frozen=True)
class PenaltySettings(Settings):
    """The penalties' section of a profile."""

    #: Penalty clocks (none: this profile has none).
    penalties: PenaltyRules | None = None

    @classmethod
    def rules_of(cls, profile: ProfileBase) -> PenaltyRules:
        """The profile's penalty rules, or ISBHF's where it leaves the section out."""
        return cls.of(profile).penalties or PenaltyRules()


@dataclass(frozen=True)
class Penalty(Command):
    """ISBHF part 4: `side` is given a penalty of `kind` (the profile's: minor, major,
    misconduct), optionally naming the player."""

    name = "penalty"
    side: Side = arg("home|away", parse_side)
    kind: str = arg(lambda profile: "|".join(PenaltySettings.rules_of(profile).kinds))
    player: str | None = arg("player", _player, optional=True)


@dataclass(frozen=True)
class PenaltyCancel(Command):
    """Lift `side`'s penalty `number` (default: its last one given)."""

    name = "penalty-cancel"
    side: Side = arg("home|away", parse_side)
    number: int | None = arg("number", _number, optional=True)


class PenaltyEnd(StrEnum):
    """Why a penalty is over."""

    EXPIRED = "expired"  # served in full
    GOAL = "goal"  # a minor ended by the opponent's power-play goal
    CANCELLED = "cancelled"  # entered by mistake, or lifted by the referee
    MATCH_OVER = "match_over"  # the match ended before it was served


@dataclass
class GivenPenalty:
    """One penalty, from being given to its end; times are play time (net seconds)."""

    number: int  # 1, 2, ... in the order given: the handle for `penalty-cancel`
    side: Side
    kind: str
    rule: PenaltyKind
    player: str | None
    given_s: float
    period: int
    started_s: float | None = None  # None while it waits for a place
    ended_s: float | None = None
    end: PenaltyEnd | None = None

    @property
    def running(self) -> bool:
        return self.started_s is not None and self.end is None

    def ends_s(self) -> float | None:
        """The play time it runs out, while it runs."""
        if self.started_s is None or self.end is not None:
            return None
        return self.started_s + self.rule.duration_s

    def remaining_s(self, play_s: float) -> float:
        end = self.ends_s()
        if end is None:
            return 0.0 if self.end is not None else self.rule.duration_s
        return max(0.0, end - play_s)

    def shown(self, play_s: float) -> dict[str, Any]:
        """As the status lists it (the scoreboard and serial display read this shape);
        `short_handed`: its team plays a player short while it runs (the power play a
        stream overlay shows), which a misconduct does not."""
        return ReadOnlyDict(
            number=self.number, side=self.side.value, kind=self.kind, player=self.player,
            remaining_s=round(self.remaining_s(play_s), 3), running=self.running,
            short_handed=self.rule.short_handed)

    def record(self) -> dict[str, Any]:
        """As the results file keeps it."""
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 3)

        return {"number": self.number, "side": self.side.value, "kind": self.kind,
                "player": self.player, "period": self.period, "duration_s": self.rule.duration_s,
                "given_s": r(self.given_s), "started_s": r(self.started_s),
                "ended_s": r(self.ended_s), "end": None if self.end is None else self.end.value}


@dataclass
class PenaltyBox:
    """Every penalty of a match, and which of them run."""

    rules: PenaltyRules
    penalties: list[GivenPenalty] = field(default_factory=list)

    def give(self, side: Side, kind: str, player: str | None, play_s: float,
             period: int) -> GivenPenalty:
        """A new penalty at `play_s`: it runs at once if its team has a place, else waits."""
        rule = self.rules.kinds.get(kind)
        if rule is None:
            raise CommandRefused("penalty_kind", given=kind, kinds=", ".join(self.rules.kinds))
        penalty = GivenPenalty(len(self.penalties) + 1, side, kind, rule, player, play_s, period)
        self.penalties.append(penalty)
        self._start_waiting(play_s)
        return penalty

    def active(self) -> list[GivenPenalty]:
        return [p for p in self.penalties if p.end is None]

    def short_handed_count(self, side: Side) -> int:
        return sum(p.running and p.rule.short_handed and p.side is side for p in self.penalties)

    def next_end(self) -> GivenPenalty | None:
        """The running penalty that runs out first (the earliest given on a tie)."""
        running = [p for p in self.penalties if p.ends_s() is not None]
        return min(running, key=lambda p: p.ends_s() or 0.0, default=None)

    def expire(self, penalty: GivenPenalty) -> list[GivenPenalty]:
        """`penalty` ran out at its end; returns the waiting penalties that start then."""
        at = penalty.ends_s()
        if at is None:
            return []
        self._end(penalty, PenaltyEnd.EXPIRED, at)
        return self._start_waiting(at)

    def power_play_goal(self, scorer: Side,
                        play_s: float) -> tuple[GivenPenalty, list[GivenPenalty]] | None:
        """A goal by `scorer` at `play_s`: ends the opponent's running minor closest to its end
        if the opponent is short-handed; returns it and the waiting penalties that start."""
        penalised = scorer.opponent
        if self.short_handed_count(penalised) <= self.short_handed_count(scorer):
            return None
        minors = [p for p in self.penalties
                  if p.side is penalised and p.running and p.rule.ends_on_goal]
        if not minors:
            return None
        ended = min(minors, key=lambda p: p.ends_s() or 0.0)
        self._end(ended, PenaltyEnd.GOAL, play_s)
        return ended, self._start_waiting(play_s)

    def cancel(self, side: Side, number: int | None,
               play_s: float) -> tuple[GivenPenalty, list[GivenPenalty]]:
        """Lift `side`'s penalty `number` (default: its last one given that is not over);
        returns it and the waiting penalties that start in its place. CommandRefused when
        there is none."""
        mine = [p for p in self.active() if p.side is side]
        if number is not None:
            mine = [p for p in mine if p.number == number]
        if not mine:
            raise CommandRefused("no_penalty" if number is None else "no_penalty_number",
                                 side=side.value, number=number)
        penalty = mine[-1]
        self._end(penalty, PenaltyEnd.CANCELLED, play_s)
        return penalty, self._start_waiting(play_s)

    def resume(self, ended: GivenPenalty, started: list[GivenPenalty],
               played_since_s: float) -> None:
        """Undo a power-play goal (`power_play_goal`): `ended` runs again with the time it
        had left (`played_since_s` of play since then does not count), `started` wait
        again."""
        if ended.started_s is not None:
            ended.started_s += played_since_s
        ended.end = ended.ended_s = None
        for penalty in started:
            penalty.started_s = None

    def close(self, play_s: float) -> None:
        """The match is over: whatever is not served ends with it."""
        for penalty in self.active():
            self._end(penalty, PenaltyEnd.MATCH_OVER, play_s)

    def shown(self, play_s: float) -> list[dict[str, Any]]:
        """The penalties not over: running ones first (soonest end first), then waiting ones
        in the order they will start, so a display that shows two per team shows those that
        run."""
        active = self.active()
        running = sorted((p for p in active if p.running), key=lambda p: p.ends_s() or 0.0)
        waiting = [p for p in active if not p.running]
        return ReadOnlyList(p.shown(play_s) for p in running + waiting)

    def _end(self, penalty: GivenPenalty, how: PenaltyEnd, play_s: float) -> None:
        penalty.end = how
        penalty.ended_s = play_s

    def _start_waiting(self, play_s: float) -> list[GivenPenalty]:
        started = []
        for penalty in self.active():
            if penalty.started_s is not None:
                continue
            if penalty.rule.short_handed and \
                    self.short_handed_count(penalty.side) >= self.rules.max_running:
                continue
            penalty.started_s = play_s
            started.append(penalty)
        return started


class Penalties(RuleModule):
    """ISBHF part 4 in a match: the `penalty` and `penalty-cancel` commands, each penalty's end
    as a timed step while the game clock runs, the power-play goal (a counted goal against a
    short-handed team ends its minor), and the penalties in the status and the result. The
    durations come from the profile's `[penalties]` (minor 2:00, major 5:00, misconduct 10:00
    by default)."""

    name = "penalties"
    settings = PenaltySettings
    #: The penalties not over: {"number", "side", "kind", "player", "remaining_s",
    #: "running"}, running ones first (`PenaltyBox.shown`); in the result, every penalty
    #: given (`GivenPenalty.record`).
    shows = records = MappingProxyType({"penalties": []})
    #: As `timerctl status` shows them: a line per penalty not over, a waiting one says so.
    display = MappingProxyType({"penalties": Shown(
        None, "entries", texts={"st.penalty": "running", "st.penalty_waiting": ""},
        fields={"number": ("number", "text"), "side": ("side", "side"),
                "player": ("player", "player"), "kind": ("kind", "kind"),
                "time": ("remaining_s", "countdown")},
        runs={"remaining_s": ("play", "running")})})  # served in play time, once running
    declares = (Penalty, PenaltyCancel)
    ahead_of_signals = True  # a penalty that runs out with the period ends in that period

    def __init__(self, match: MatchView) -> None:
        super().__init__(match)
        self.box = PenaltyBox(PenaltySettings.rules_of(match.profile))
        #: What each power-play goal did, by its entry number: the minor it ended and the
        #: penalties that started in its place (undone if the goal is taken back).
        self.power_plays: dict[int, tuple[GivenPenalty, list[GivenPenalty]]] = {}

    def commands(self) -> CommandTable:
        return {Penalty: self.penalty, PenaltyCancel: self.cancel}

    def penalty(self, command: Penalty, now: float) -> list[Effect]:
        """Give `side` a penalty of `kind` (minor, major, misconduct), optionally naming the
        player. It is served in game time; it waits while two of the team's run."""
        self._allowed("penalty")
        given = self.box.give(command.side, command.kind, command.player,
                              self.match.play_s(now), self.match.period)
        told = PenaltyRunning if given.running else PenaltyWaiting
        return [told(*named(given), float(given.rule.duration_s))]

    def cancel(self, command: PenaltyCancel, now: float) -> list[Effect]:
        """Lift `side`'s penalty `number` (as numbered in the status), or its last one given:
        a penalty entered by mistake. A waiting penalty may take its place."""
        self._allowed("penalty-cancel")
        lifted, started = self.box.cancel(command.side, command.number, self.match.play_s(now))
        return [PenaltyCancelled(*named(lifted)), *_starting(started)]

    def _allowed(self, command: str) -> None:
        if self.match.phase in (Phase.IDLE, Phase.PRE_SIGNAL, Phase.SHOOTOUT, Phase.FINISHED):
            raise self.match.why_not(command)

    def next_step(self) -> Step | None:
        if self.match.phase is not Phase.RUNNING or (ending := self.box.next_end()) is None:
            return None
        due = self.match.when_played(ending.ends_s() or 0.0)
        return None if due is None else (due, self._over)

    def _over(self, at: float) -> list[Effect]:
        ended = self.box.next_end()
        if ended is None:
            return []
        started = self.box.expire(ended)
        return [self.match.sound(SignalKind.PENALTY_END, at,
                                 remaining_s=self.match.remaining_s(at)),
                PenaltyOver(*named(ended)),
                *_starting(started)]

    def goal_entered(self, goal: Goal, now: float) -> list[Effect]:
        if not goal.counted or goal.overtime:
            return []
        power_play = self.box.power_play_goal(goal.side, goal.match_time_s)
        if power_play is None:
            return []
        ended, started = power_play
        self.power_plays[goal.number] = power_play
        return [self.match.sound(SignalKind.PENALTY_END, now,
                                 remaining_s=self.match.remaining_s(now)),
                PowerPlayGoal(*named(ended)),
                *_starting(started)]

    def goal_undone(self, goal: Goal, now: float) -> list[Effect]:
        """ISBHF 420 !1: a goal taken back was never a goal. The minor it ended runs again
        with the time it had left at the goal; what started in its place waits again."""
        power_play = self.power_plays.pop(goal.number, None)
        if power_play is None:
            return []
        ended, started = power_play
        self.box.resume(ended, started, self.match.play_s(now) - goal.match_time_s)
        return [PenaltyRunning(*named(ended),
                               round(ended.remaining_s(self.match.play_s(now)), 3))]

    def finish(self, at: float) -> None:
        self.box.close(self.match.play_s(at))

    def status(self, now: float) -> Mapping[str, Any]:
        return {"penalties": self.box.shown(self.match.play_s(now))}

    def record(self) -> Mapping[str, Any]:
        return {"penalties": [p.record() for p in self.box.penalties]}


def _starting(started: list[GivenPenalty]) -> list[Effect]:
    return [PenaltyStarted(*named(p), p.rule.duration_s) for p in started]


def named(penalty: GivenPenalty) -> tuple[int, Side, str | None, str]:
    """A penalty as a notice names it (`PenaltyNotice`'s fields)."""
    return penalty.number, penalty.side, penalty.player, penalty.kind


@dataclass(frozen=True)
class PenaltyNotice(Notice):
    """A penalty as a notice names it: its number, side, player (a shirt number or None) and
    kind; the catalogue shows them (`i18n.WORDS`)."""

    number: int
    side: Side
    player: str | None
    kind: str


@dataclass(frozen=True)
class PenaltyCancelled(PenaltyNotice):
    """`penalty-cancel`: a penalty entered by mistake lifted."""

    code = "notice.penalty_cancelled"


@dataclass(frozen=True)
class PenaltyOver(PenaltyNotice):
    """A penalty ran out."""

    code = "notice.penalty_over"


@dataclass(frozen=True)
class PowerPlayGoal(PenaltyNotice):
    """A goal against the short-handed team ended its minor (ISBHF part 4)."""

    code = "notice.power_play_goal"


@dataclass(frozen=True)
class PenaltyGiven(PenaltyNotice):
    """A penalty with `time`, the seconds it has to run."""

    time: float


@dataclass(frozen=True)
class PenaltyRunning(PenaltyGiven):
    """A penalty runs: given with a place free, or again with the time it had left (ISBHF
    420 !1: the power-play goal that ended it was taken back)."""

    code = "notice.penalty_running"


@dataclass(frozen=True)
class PenaltyStarted(PenaltyGiven):
    """A waiting penalty started, with `time` its whole length: a running one of its team
    ended (ISBHF part 4)."""

    code = "notice.penalty_starts"


@dataclass(frozen=True)
class PenaltyWaiting(PenaltyGiven):
    """A penalty given waits: two of the team's run (ISBHF part 4)."""

    code = "notice.penalty_waiting"
