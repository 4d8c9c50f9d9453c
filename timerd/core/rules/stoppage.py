"""Countdowns of real time during a stoppage: the line change (ISBHF 404b) and the time to dress
a new goalie (408).

Both run in monotonic time while the game clock stands still, each end is a deadline with a
signal, and a restart of play ends them (the faceoff has come). Each is a rule module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from timerd.core.buttons import Button
from timerd.core.checks import at_most, durations, hours
from timerd.core.commands import Command, arg
from timerd.core.effects import Effect, Notice, Phase, SignalKind
from timerd.core.frozen import ReadOnlyDict
from timerd.core.refused import CommandRefused
from timerd.core.rule import CommandTable, MatchView, RuleModule, Shown, Step
from timerd.core.score import Side, parse_side
from timerd.core.settings import ProfileBase, Settings

#: Line-change stages a profile may have at most: more than the rulebook knows (404b: three).
MAX_STAGES = 10


@dataclass(frozen=True)
class LineChangeRule:
    """ISBHF 404b: in a stoppage the visitors get 5 s to change, then the home team 5 s, then
    the teams have 5 s to line up for the faceoff; a signal after each stage."""

    stages: tuple[str, ...] = ("visitors", "home", "faceoff")
    stage_s: float = 5.0

    def problems(self) -> list[str]:
        out = []
        if not self.stages:
            out.append("stages: give at least one stage")
        if len(self.stages) > MAX_STAGES:
            out.append(f"stages: at most {MAX_STAGES} stages (ISBHF 404b has three)")
        return out + durations(stage_s=self.stage_s) + at_most(
            60, "ISBHF 404b: 5 s a stage", " s", stage_s=self.stage_s)


@dataclass(frozen=True)
class LineChangeSettings(Settings):
    """The line change's section of a profile."""

    #: ISBHF 404b: the line-change helper (none: not offered).
    line_change: LineChangeRule | None = None


@dataclass(frozen=True)
class GoalieChangeSettings(Settings):
    """The goalie change's key of a profile."""

    #: ISBHF 408: time a team gets to dress a new goalie (none: no countdown).
    goalie_change_s: float | None = None

    def problems(self, profile: ProfileBase) -> list[str]:
        out = hours(goalie_change_s=self.goalie_change_s)
        if self.goalie_change_s is not None and self.goalie_change_s <= 0:
            out.append(f"goalie_change_s = {self.goalie_change_s:g}: must be longer than 0 s "
                       "(or none)")
        return out


@dataclass(frozen=True)
class StartLineChange(Command):
    """ISBHF 404b: the line-change helper's stages, in a stoppage."""

    name = "linechange"


@dataclass(frozen=True)
class ChangeGoalie(Command):
    """ISBHF 408: `side` dresses a new goalie."""

    name = "goalie-change"
    side: Side = arg("home|away", parse_side)


@dataclass
class LineChange:
    """ISBHF 404b: consecutive stages (visitors 5 s, home 5 s, faceoff preparation 5 s) from
    `started_at`, with a signal at the end of each. `done` counts the stages whose signal has
    sounded."""

    rule: LineChangeRule
    started_at: float
    done: int = 0

    @property
    def over(self) -> bool:
        return self.done >= len(self.rule.stages)

    def next_end(self) -> float | None:
        """When the current stage ends."""
        if self.over:
            return None
        return self.started_at + (self.done + 1) * self.rule.stage_s

    def finish_stage(self) -> tuple[str, int]:
        """The current stage is over: its name and number (1-based), counted as done."""
        self.done += 1
        return self.rule.stages[self.done - 1], self.done

    def shown(self, now: float) -> dict[str, Any] | None:
        end = self.next_end()
        if end is None:
            return None
        return ReadOnlyDict(stage=self.rule.stages[self.done], number=self.done + 1,
                            stages=len(self.rule.stages), remaining_s=round(max(0.0, end - now), 3))


@dataclass
class GoalieChange:
    """ISBHF 408: a team whose goalies cannot go on gets `length_s` to dress another player as
    goalie; one countdown per team, from the command to its signal."""

    length_s: float
    ends_at: dict[Side, float] = field(default_factory=dict)

    def begin(self, side: Side, now: float) -> float:
        if side in self.ends_at:
            raise CommandRefused("goalie_dressing", side=side.value)
        self.ends_at[side] = now + self.length_s
        return self.ends_at[side]

    def next_end(self) -> tuple[float, Side] | None:
        return min(((at, side) for side, at in self.ends_at.items()), default=None)

    def end(self, side: Side) -> None:
        self.ends_at.pop(side, None)

    def shown(self, now: float) -> dict[str, float]:
        """Time left per team that is dressing a goalie."""
        return ReadOnlyDict({side.value: round(max(0.0, at - now), 3)
                             for side, at in self.ends_at.items()})


class LineChanges(RuleModule):
    """ISBHF 404b in a match: the `linechange` command in a stoppage, a `line_change` signal
    after each stage (as many beeps as its number), ended by the restart of play."""

    name = "line_change"
    settings = LineChangeSettings
    #: ISBHF 404b: {"stage", "number", "stages", "remaining_s"} while one runs.
    shows = MappingProxyType({"line_change": None})
    #: As the text views show it: the stage, its number and time left (the terminal's
    #: status line, the time).
    display = MappingProxyType({"line_change": Shown(
        None, "entry", texts={"st.line_change": ""}, brief={"term.line_change": ""},
        fields={"stage": ("stage", "stage"), "n": ("number", "text"),
                "of": ("stages", "text"), "time": ("remaining_s", "countdown")},
        runs={"remaining_s": ("real", "")},  # ISBHF 404b: while the clock stands
        banner={"web.line_change": ""})})  # under the scoreboard's clock, in the desk's head
    declares = (StartLineChange,)
    buttons = (Button("line_change", "The LINE CHANGE button of ball hockey (ISBHF 404b).",
                      press=StartLineChange(), pin=7, keys=("KEY_KPPLUS",), panel="l",
                      panel_help="key.line_change",
                      wiring="Pin 7 is SPI CE1 when SPI is on: then choose another."),)

    def __init__(self, match: MatchView) -> None:
        super().__init__(match)
        self.rule = LineChangeSettings.of(match.profile).line_change or LineChangeRule()
        self.running: LineChange | None = None

    def commands(self) -> CommandTable:
        return {StartLineChange: lambda _, now: self.begin(now)}

    def begin(self, now: float) -> list[Effect]:
        """Start the stages (visitors, home, faceoff preparation), each 5 s."""
        if self.match.phase is Phase.RUNNING:
            raise CommandRefused("line_change_in_stoppage")
        if self.match.phase is not Phase.PAUSED:
            raise self.match.why_not("linechange")
        shown = None if self.running is None else self.running.shown(now)
        if shown is not None:
            raise CommandRefused("line_change_runs", n=shown["number"], of=shown["stages"],
                                 stage=shown["stage"])
        self.running = LineChange(self.rule, now)
        return [LineChangeStarted(len(self.rule.stages), self.rule.stage_s)]

    def rebase(self, shift: float) -> None:
        if self.running is not None:
            self.running.started_at += shift

    def next_step(self) -> Step | None:
        at = None if self.running is None else self.running.next_end()
        return None if at is None else (at, self._stage_over)

    def _stage_over(self, at: float) -> list[Effect]:
        if self.running is None:
            return []
        _, number = self.running.finish_stage()
        if self.running.over:
            self.running = None
        return [self.match.sound(SignalKind.LINE_CHANGE, at, number, self.match.remaining_s(at))]

    def play_restarts(self, now: float) -> list[Effect]:
        if self.running is None:
            return []
        self.running = None
        return [LineChangeFaceoff()]

    def play_stops(self) -> None:
        self.running = None

    def finish(self, at: float) -> None:
        self.running = None

    def status(self, now: float) -> Mapping[str, Any]:
        return {"line_change": None if self.running is None else self.running.shown(now)}


class GoalieChanges(RuleModule):
    """ISBHF 408 in a match: `goalie-change SIDE` gives a team whose goalies cannot go on ten
    minutes (the profile's `goalie_change_s`) to dress another player; a signal at the end,
    or the faceoff ends it."""

    name = "goalie_change"
    settings = GoalieChangeSettings
    #: ISBHF 408: the time left per team dressing a goalie.
    shows = MappingProxyType({"goalie_change": {}})
    #: As `timerctl status` shows it: a line per team dressing a goalie, its time left.
    display = MappingProxyType({"goalie_change": Shown(
        None, "sides", texts={"st.goalie_change": ""},
        fields={"side": ("side", "side"), "time": ("value", "countdown")},
        runs={"value": ("real", "")},  # ISBHF 408: while the clock stands
        board={"web.goalie_change": ""})})  # in its team's box on the scoreboard
    declares = (ChangeGoalie,)

    def __init__(self, match: MatchView) -> None:
        super().__init__(match)
        own = GoalieChangeSettings.of(match.profile)
        self.countdowns = GoalieChange(own.goalie_change_s or 600.0)

    def commands(self) -> CommandTable:
        return {ChangeGoalie: self.begin}

    def begin(self, command: ChangeGoalie, now: float) -> list[Effect]:
        side = command.side
        if self.match.phase is Phase.RUNNING:
            raise CommandRefused("stop_first")
        if self.match.phase not in (Phase.PAUSED, Phase.BREAK):
            raise self.match.why_not("goalie-change")
        self.countdowns.begin(side, now)
        return [GoalieChangeStarted(side, self.countdowns.length_s)]

    def rebase(self, shift: float) -> None:
        ends = self.countdowns.ends_at
        ends.update({side: at + shift for side, at in ends.items()})

    def next_step(self) -> Step | None:
        due = self.countdowns.next_end()
        return None if due is None else (due[0], self._over)

    def _over(self, at: float) -> list[Effect]:
        due = self.countdowns.next_end()
        if due is None:
            return []
        self.countdowns.end(due[1])
        return [self.match.sound(SignalKind.GOALIE_CHANGE_END, at,
                                 remaining_s=self.match.remaining_s(at)),
                GoalieChangeOver(due[1])]

    def play_restarts(self, now: float) -> list[Effect]:
        effects: list[Effect] = []
        for side in list(self.countdowns.ends_at):
            self.countdowns.end(side)
            effects.append(GoalieChangeFaceoff(side))
        return effects

    def finish(self, at: float) -> None:
        self.countdowns.ends_at.clear()

    def status(self, now: float) -> Mapping[str, Any]:
        return {"goalie_change": self.countdowns.shown(now)}


@dataclass(frozen=True)
class LineChangeStarted(Notice):
    """ISBHF 404b: a line change of `stages` stages of `s` seconds each."""

    code = "notice.line_change"
    stages: int
    s: float


@dataclass(frozen=True)
class LineChangeFaceoff(Notice):
    """ISBHF 404b: the faceoff ended the line change."""

    code = "notice.line_change_faceoff"


@dataclass(frozen=True)
class GoalieChangeStarted(Notice):
    """ISBHF 408: `side` has `time` seconds to dress another goalie."""

    code = "notice.goalie_change"
    side: Side
    time: float


@dataclass(frozen=True)
class GoalieChangeOver(Notice):
    """ISBHF 408: `side`'s time to dress a goalie is over."""

    code = "notice.goalie_change_over"
    side: Side


@dataclass(frozen=True)
class GoalieChangeFaceoff(Notice):
    """ISBHF 408: the faceoff ended `side`'s goalie change."""

    code = "notice.goalie_change_faceoff"
    side: Side
