"""Team timeouts (ISBHF 412): one 30-s timeout per team per match, in a stoppage.

A timeout is asked for while the game clock is stopped; both teams may not take one in the same
stoppage; a team that has used its allowance is refused. The timeout clock runs in real
(monotonic) time, not game time: the game clock stands still through it. It ends with a signal
after its length, or earlier when the referee restarts play.

The match tells this module when the clock starts (`play_started`), which ends the stoppage.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from timerd.core.checks import at_most, durations, hours
from timerd.core.commands import Command, arg
from timerd.core.effects import Effect, Notice, Phase, SignalKind
from timerd.core.frozen import ReadOnlyDict
from timerd.core.refused import CommandRefused
from timerd.core.rule import CommandTable, MatchView, RuleModule, Shown, Step
from timerd.core.score import Side, parse_side
from timerd.core.settings import MAX_COUNT, Settings


@dataclass(frozen=True)
class TimeoutRule:
    """ISBHF 412: each team may take `per_team` timeouts of `length_s` in a match, asked for
    while the clock is stopped; both teams may not take one in the same stoppage."""

    per_team: int = 1
    length_s: float = 30.0

    def problems(self) -> list[str]:
        out = []
        if self.per_team < 1:
            out.append(f"per_team = {self.per_team}: at least one (or leave [timeouts] out)")
        out += at_most(MAX_COUNT, "ISBHF 412: one per team", per_team=self.per_team)
        return out + durations(length_s=self.length_s) + hours(length_s=self.length_s)


@dataclass(frozen=True)
class TimeoutSettings(Settings):
    """The timeouts' section of a profile."""

    #: ISBHF 412: timeouts (none: this profile has none).
    timeouts: TimeoutRule | None = None


@dataclass(frozen=True)
class TakeTimeout(Command):
    """ISBHF 412: `side` takes its timeout."""

    name = "timeout"
    side: Side = arg("home|away", parse_side)


@dataclass(frozen=True)
class Timeout:
    """One timeout taken: when (period, play time, monotonic start) and how long it lasted."""

    side: Side
    period: int
    match_time_s: float
    started_at: float
    length_s: float
    lasted_s: float | None = None  # set when it is over

    @property
    def ends_at(self) -> float:
        return self.started_at + self.length_s

    def record(self) -> dict[str, Any]:
        return {"side": self.side.value, "period": self.period,
                "match_time_s": round(self.match_time_s, 3),
                "lasted_s": None if self.lasted_s is None else round(self.lasted_s, 3)}


@dataclass
class Timeouts:
    rule: TimeoutRule
    taken: list[Timeout] = field(default_factory=list)
    running: Timeout | None = None
    _this_stoppage: Side | None = None  # the team that took one in the current stoppage

    def left(self, side: Side) -> int:
        return self.rule.per_team - sum(t.side is side for t in self.taken)

    def request(self, side: Side, now: float, match_time_s: float, period: int) -> Timeout:
        """Start `side`'s timeout; CommandRefused says why not. The match checks the clock is
        stopped; this checks the allowance and the stoppage (ISBHF 412)."""
        if self.left(side) <= 0:
            raise CommandRefused("timeouts_used", side=side.value, n=self.rule.per_team)
        if self._this_stoppage is not None:
            raise CommandRefused("timeout_this_stoppage", side=self._this_stoppage.value)
        timeout = Timeout(side, period, match_time_s, now, self.rule.length_s)
        self.taken.append(timeout)
        self.running = timeout
        self._this_stoppage = side
        return timeout

    def ends_at(self) -> float | None:
        return None if self.running is None else self.running.ends_at

    def end(self, at: float) -> Timeout | None:
        """The running timeout is over at `at` (run out, or play restarted); returns it."""
        running = self.running
        if running is None:
            return None
        done = replace(running, lasted_s=min(at - running.started_at, running.length_s))
        self.taken[self.taken.index(running)] = done
        self.running = None
        return done

    def shifted(self, shift: float) -> None:
        """Every timeout's start `shift` seconds later (`core.rebase`)."""
        taken = [replace(t, started_at=t.started_at + shift) for t in self.taken]
        if self.running is not None:
            self.running = taken[next(i for i, t in enumerate(self.taken) if t is self.running)]
        self.taken = taken

    def play_started(self, now: float) -> Timeout | None:
        """The clock started: the stoppage is over, and with it a timeout still running."""
        self._this_stoppage = None
        return self.end(now)

    def shown(self, now: float) -> dict[str, dict[str, Any]]:
        """Per team: timeouts left, and the time left on its running timeout (else null)."""
        out = {}
        for side in Side:
            running = self.running if self.running and self.running.side is side else None
            out[side.value] = ReadOnlyDict(
                left=self.left(side),
                remaining_s=None if running is None else round(max(0.0, running.ends_at - now), 3))
        return ReadOnlyDict(out)


class TeamTimeouts(RuleModule):
    """ISBHF 412 in a match: the `timeout` command (only while the clock is stopped), its
    end as a timed step with `timeout_end`, the restart of play ending it early, and the
    timeouts in the status and the result."""

    name = "timeouts"
    settings = TimeoutSettings
    #: ISBHF 412: per team {"left", "remaining_s"}, the time left on its running timeout or
    #: null; in the result, every timeout taken (`Timeout.record`).
    shows = MappingProxyType({"timeouts": None})
    #: As the text views show it: each team's timeouts left and a running one's time left
    #: in one row; the terminal's status line, a running timeout alone.
    display = MappingProxyType({"timeouts": Shown(
        "st.timeouts", "sides",
        texts={"st.timeout_running": "remaining_s", "st.timeout_left": ""},
        brief={"term.timeout": "remaining_s"},
        fields={"side": ("side", "side"), "n": ("left", "text"),
                "time": ("remaining_s", "countdown")},
        runs={"remaining_s": ("real", "")})})  # ISBHF 412: while the clock stands
    records = MappingProxyType({"timeouts": []})
    declares = (TakeTimeout,)

    def __init__(self, match: MatchView) -> None:
        super().__init__(match)
        self.timeouts = Timeouts(TimeoutSettings.of(match.profile).timeouts or TimeoutRule())

    def commands(self) -> CommandTable:
        return {TakeTimeout: self.timeout}

    def rebase(self, shift: float) -> None:
        self.timeouts.shifted(shift)

    def timeout(self, command: TakeTimeout, now: float) -> list[Effect]:
        """`side` takes its timeout: only while the clock is stopped, one per team per match,
        not both teams in one stoppage. Its end sounds `timeout_end`. Decision (ISBHF 412,
        "in a stoppage"): a stoppage is play stopped in a period; the wait after an
        intermission (or before the match's or the overtime's first faceoff) is not one."""
        side = command.side
        if self.match.phase is Phase.RUNNING:
            raise CommandRefused("timeout_in_stoppage")
        if self.match.phase is not Phase.PAUSED:
            raise self.match.why_not("timeout")
        if self.match.paused_since is None:  # decision: the wait for a period's faceoff
            raise CommandRefused("timeout_before_faceoff")  # is no stoppage (ISBHF 412)
        taken = self.timeouts.request(side, now, self.match.play_s(now), self.match.period)
        return [TimeoutTaken(side, taken.length_s)]

    def next_step(self) -> Step | None:
        at = self.timeouts.ends_at()
        return None if at is None else (at, self._over)

    def _over(self, at: float) -> list[Effect]:
        if self.timeouts.end(at) is None:
            return []
        return [self.match.sound(SignalKind.TIMEOUT_END, at,
                                 remaining_s=self.match.remaining_s(at))]

    def play_restarts(self, now: float) -> list[Effect]:
        ended = self.timeouts.play_started(now)
        if ended is None:
            return []
        return [TimeoutFaceoff(ended.side, round(ended.lasted_s or 0.0))]

    def finish(self, at: float) -> None:
        self.timeouts.end(at)

    def status(self, now: float) -> Mapping[str, Any]:
        return {"timeouts": self.timeouts.shown(now)}

    def record(self) -> Mapping[str, Any]:
        return {"timeouts": [t.record() for t in self.timeouts.taken]}


@dataclass(frozen=True)
class TimeoutTaken(Notice):
    """ISBHF 412: `side` takes its timeout of `s` seconds."""

    code = "notice.timeout"
    side: Side
    s: float


@dataclass(frozen=True)
class TimeoutFaceoff(Notice):
    """ISBHF 412: the faceoff ended `side`'s timeout after `s` whole seconds."""

    code = "notice.timeout_faceoff"
    side: Side
    s: int
