"""A sport feature as one module (issue 14): the RuleModule hooks and the MatchView it sees.

`Match` is the phase machine: idle, the pre-signal, play, interruptions, breaks, overtime, the
end. Everything else a rulebook adds (ITHF 8.3 passive play, the 4.5-4.7 rulings, ISBHF
penalties, timeouts, the stoppage countdowns, the intermission and the ends, the shootout) is a
RuleModule in `timerd.core.rules`, present when the profile lists it (`rules = [...]`); the
score desk (goals, marked faceoffs, undo, names) and the start at an instant are modules too,
which every match has (`rules.BUILT_IN`). The match asks every present module, in a loop,
for its commands, its next timed step, and what it does when play restarts, a goal is
entered, a faceoff is made, a planned signal sounds, a period or the match ends; there is no
per-feature branch in the phase machine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Literal, Protocol

from timerd.core.buttons import Button, ButtonChord
from timerd.core.clock import MatchClock
from timerd.core.commands import Command
from timerd.core.effects import Effect, Phase, Signal, SignalKind
from timerd.core.faceoff import FaceoffGuard
from timerd.core.refused import CommandRefused
from timerd.core.score import Ending, Goal, ScoreSheet, Side
from timerd.core.settings import ProfileBase, Settings

#: The commands a match takes, by type (`timerd.core.commands`), and what handles each: a
#: callable of the command and `now`.
CommandTable = dict[type[Command], Callable[[Any, float], list[Effect]]]
#: A timed step: when it is due (monotonic), and what it does then.
Step = tuple[float, Callable[[float], list[Effect]]]
#: What a timed break leads to: overtime (ITHF 4.8), or play stopped for the faceoff
#: (an intermission, ISBHF 410; the break before a stop clock's overtime, 411).
BreakKind = Literal["overtime", "intermission"]


class MatchView(Protocol):
    """What a rule module sees of the match, and the phase machine's services it may call."""

    profile: ProfileBase
    phase: Phase
    period: int
    overtime: bool
    sheet: ScoreSheet
    #: ITHF 4.6: what showed that a side was at the table after the start signal, and when
    #: in play time (("faceoff", 10.0); the kinds are `evidence.*` in the message catalogue).
    took_part: dict[Side, tuple[str, float]]
    guard: FaceoffGuard  # ITHF 5.6, 10.4
    #: In a break: what it leads to; None out of one.
    break_kind: BreakKind | None
    paused_since: float | None  # the start of the running interruption (ITHF 10.1)
    start_at: float | None  # when the start (or overtime start) signal is due
    teams: dict[Side, str]
    round: str | None
    clock: MatchClock
    match_id: str | None  # the service's id for the match (results, journal, hall mode)

    def play_s(self, now: float) -> float: ...
    def remaining_s(self, now: float) -> float: ...
    def when_played(self, play_s: float) -> float | None: ...
    def sound(self, kind: SignalKind, due: float, beeps: int = 1,
              remaining_s: float = 0.0) -> Signal: ...
    def why_not(self, command: str) -> CommandRefused: ...
    def close_interruption(self, now: float) -> None: ...
    def finish(self, how: Ending, at: float, side: Side | None = None,
               winner: Side | None = None) -> list[Effect]: ...
    def restart(self, now: float) -> list[Effect]: ...
    def goal_entered(self, goal: Goal, now: float) -> list[Effect]:
        """Every rule module's answer to an entered goal."""
    def goal_undone(self, goal: Goal, now: float) -> list[Effect]:
        """Every rule module's answer to a goal entry taken back (`undo`)."""
    def regular_time_over(self, at: float) -> list[Effect]:
        """Regular time is over at `at`: overtime follows a tie (its break), else the end."""
    def faceoff_at(self, at: float) -> list[Effect]:
        """A faceoff at `at`: the modules hear of it and the guard starts (ITHF 5.6)."""
    def both_took_part(self, evidence: tuple[str, float]) -> None:
        """ITHF 4.6: `evidence` that both sides were at the table."""
    def pre_signal(self, at: float) -> list[Effect]:
        """Enter the pre-signal phase with its signal at `at` (ITHF 4.4)."""
    def goto(self, phase: Phase) -> list[Effect]:
        """Enter `phase`: its PhaseChanged, if it is a change."""
    def start_break(self, kind: BreakKind, at: float, length_s: float,
                    warning_s: float | None) -> list[Effect]:
        """A break of `length_s` from `at` (a `break_warning` `warning_s` before its end)."""


@dataclass(frozen=True)
class Shown:
    """How every view shows one of a module's status keys (issue 44 item 5): data alone,
    catalogue keys and value kinds; the text is made in `timerd.i18n` (`Messages.shown`).

    `label` names it: its text per language (`{"en": "Laps", "sl": "Krogi"}`: a view in
    another language shows the English), or a catalogue key (`"st.timeouts"`). `kind` is how
    its value reads: one of `i18n.WORDS`' kinds (`clock` seconds as the count-up clock face,
    `countdown` seconds left as the scoreboard shows them, `tenths`, `score` {"home",
    "away"}, `player`, `shirts`; `text` as it is) for a value shown whole, or a value of
    parts, each one text: `sides` ({"home": part, "away": part}, a side whose part is null
    shows nothing), `entries` (a list of parts), `entry` (one part, or null: nothing).

    A part's text is a catalogue entry: `texts` (`timerctl status`) and `brief` (the
    terminal's status line) map each catalogue key to the part's field that must be set
    (true, a number not 0) for it, "" for none: the first that holds is the part's text;
    none, and the part is not shown there. `fields` gives each placeholder of those texts
    as a part's field and its kind (`{"time": ("remaining_s", "countdown")}`); a part's
    fields are its keys (a part that is no mapping is `value`), and under `sides` its
    `side`. With a `label`, `timerctl status` shows the parts in one row, else each part on
    a line of its own; without a `brief` the terminal shows a row with a label. The desk,
    the scoreboard, the terminal and `timerctl status` show it without a line of their own
    (`Status.display`).

    `runs` says which of a part's fields (`value`: a value shown whole, or a part that is no
    mapping) count down between two statuses, so a page runs them on between pushes as the
    match does: each in `play` time (while the match clock runs: a penalty) or `real` time
    (always: a timeout), and only while the part's field it names is set ("" none: a
    waiting penalty stands still).

    `board` are the texts of a part with a `side` as a rink's board shows it, in its team's
    box (the scoreboard), and `banner` those of a part in a line of its own (under the
    scoreboard's clock, in the desk's head: the line change), each read as `texts` are;
    without them a page shows the part with the other modules' rows."""

    label: Mapping[str, str] | str | None
    kind: str = "text"
    texts: Mapping[str, str] = field(default_factory=dict)
    brief: Mapping[str, str] = field(default_factory=dict)
    fields: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    runs: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    board: Mapping[str, str] = field(default_factory=dict)
    banner: Mapping[str, str] = field(default_factory=dict)

    def entry(self, key: str) -> dict[str, Any]:
        """The status's entry for `key`: its key, kind and label, how its parts read when
        it has parts, and what counts down (`Status.display`)."""
        label = self.label if self.label is None or isinstance(self.label, str) \
            else dict(self.label)
        out: dict[str, Any] = {"key": key, "kind": self.kind, "label": label}
        for name in ("texts", "brief", "fields", "runs", "board", "banner"):
            if value := getattr(self, name):
                out[name] = {k: list(v) if isinstance(v, tuple) else v for k, v in value.items()}
        return out


class RuleModule:
    """One feature of a rulebook. Every hook does nothing unless the module overrides it."""

    #: The name a profile lists it by (`rules = ["penalties"]`).
    name: ClassVar[str]
    #: The commands it declares (`timerd.core.commands.Command`), for a clear refusal under a
    #: profile without it (the refusal's code is `lacks_<name>`, in the message catalogue).
    declares: ClassVar[tuple[type[Command], ...]] = ()
    #: Its push buttons (`Button`: the command each makes), present on the GPIO header and
    #: a keypad whatever the profile (a command the match lacks is refused with the reason),
    #: each with its config keys (`[gpio] NAME_pin`, `[keypad] NAME`) from this declaration
    #: alone (issue 44 item 5).
    buttons: ClassVar[tuple[Button, ...]] = ()
    #: Two buttons held together, of its own or another module's, that make one of its
    #: commands (the ITHF 4.6 forfeit: RESET with a GOAL).
    chords: ClassVar[tuple[ButtonChord, ...]] = ()
    #: Its timed step comes before a planned signal due at the same instant.
    ahead_of_signals: ClassVar[bool] = False
    #: Its part of the profile (`Settings`: its keys with their defaults and checks), which
    #: `Profile` has, listed or not, composed from every registered module's.
    settings: ClassVar[type[Settings]] = Settings
    #: Its keys of the status (what `status()` returns), each with what a match whose
    #: profile leaves the module out shows: `Status` is composed from every registered
    #: module's (`timerd.core.status`).
    shows: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    #: Its keys of the result (what `record()` returns), each as recorded without it.
    records: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    #: Its keys of each period's entry in the result (`period_record()`), likewise.
    period_records: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    #: How the views show its status keys, those it wants shown in a row of their own
    #: (`Shown`): a key here needs no line in any view.
    display: ClassVar[Mapping[str, Shown]] = MappingProxyType({})

    @classmethod
    def offered(cls, profile: ProfileBase) -> frozenset[str]:
        """The commands it offers under `profile` (which lists it, or every match has it): a
        score desk shows only those (`timerd.core.offered`). All it declares, by default."""
        return frozenset(command.name for command in cls.declares)

    def __init__(self, match: MatchView) -> None:
        self.match = match

    def commands(self) -> CommandTable:
        """What handles each of its commands in this match, by the command's type."""
        return {}

    def next_step(self) -> Step | None:
        """Its earliest timed step in the current phase, if any."""
        return None

    def goal_entered(self, goal: Goal, now: float) -> list[Effect]:
        """After a goal is entered (and sounded); `goal.counted` says whether it counts."""
        return []

    def goal_undone(self, goal: Goal, now: float) -> list[Effect]:
        """`goal` was taken back (`undo`): it was never a goal; undo what it did."""
        return []

    def faceoff(self, at: float) -> None:
        """A faceoff was made (the start signal, a marked one, a resume with one)."""

    def play_restarts(self, now: float) -> list[Effect]:
        """The clock starts again: the stoppage is over."""
        return []

    def play_stops(self) -> None:
        """A period or the match ended, or the match is played again from the start."""

    def planned_signal(self, signal: Signal) -> None:
        """A signal of the period's plan sounded (ISBHF 407 !3: the half-time signal)."""

    def next_period(self, at: float) -> list[Effect] | None:
        """A period before the last ended at `at` and the next one is entered: what follows
        (an intermission, ISBHF 410), or None: the next period waits, stopped, for its
        faceoff. The first module that answers decides."""
        return None

    def rewound(self) -> None:
        """The match is played again from the start (ITHF 4.5): forget the periods."""

    def period_record(self) -> Mapping[str, Any]:
        """Its keys of the current period's entry in the result, when the period ends (those
        of `period_records`)."""
        return {}

    def tied_after_overtime(self, at: float) -> list[Effect] | None:
        """A timed overtime ended tied: what follows, or None (the tie stands)."""
        return None

    def ending(self, how: Ending, at: float) -> list[Effect]:
        """The match is about to end at `at`, `how`, nothing of it stopped yet: what this
        module says of it (the corrections keep the match as it stood)."""
        return []

    def reset(self, now: float) -> list[Effect]:
        """RESET at `now`, the match as it stands, nothing of it cleared yet: what this
        module says of it (a reopened match abandoned, `rules.corrections`)."""
        return []

    def overtime_follows(self, at: float) -> None:
        """Regular time ended tied at `at` and overtime follows; nothing of it entered yet."""

    def finish(self, at: float) -> None:
        """The match ended at `at`: stop every clock of the module."""

    def rebase(self, shift: float) -> None:
        """Move every instant of the loop's clock it keeps by `shift` seconds: the match
        is restored from a snapshot in a run whose clock reads otherwise (`core.rebase`).
        Play time and durations stay."""

    def status(self, now: float) -> Mapping[str, Any]:
        """Its keys of the status (those of `shows`)."""
        return {}

    def record(self) -> Mapping[str, Any]:
        """Its keys of the result (those of `records`)."""
        return {}


def own(rule: RuleModule, values: Mapping[str, Any], declared: Mapping[str, Any],
        what: str) -> Mapping[str, Any]:
    """`values`, which `rule` returned for the status, the result or a period's entry, if each
    of its keys is one the module declares there (`declared`: its `shows`, `records` or
    `period_records`). Another module's key would overwrite that module's value where they are
    composed, the last writer winning in silence: a defect, raised (issue 44 item 3)."""
    if values.keys() <= declared.keys():
        return values
    strays = ", ".join(repr(key) for key in sorted(values.keys() - declared.keys()))
    raise ValueError(f"{what} keys {strays} of rule module {rule.name!r} are not its own")


def timed_steps(rules: Iterable[RuleModule]) -> tuple[list[Step], list[Step]]:
    """The timed steps of `rules` now (`next_step`): those `ahead_of_signals`, then the
    others, each in the modules' order. Only a module with steps of its own is asked: the
    match asks this twice a dispatch (issue 44 item 8: CPU per match minute)."""
    ahead: list[Step] = []
    later: list[Step] = []
    for rule in rules:
        if type(rule).next_step is not RuleModule.next_step \
                and (step := rule.next_step()) is not None:
            (ahead if rule.ahead_of_signals else later).append(step)
    return ahead, later


def recorded(rules: Iterable[RuleModule], period: bool = False) -> dict[str, Any]:
    """What `rules` keep in the result (`record()`), or of a period (`period_record()`), each
    module's keys its own (`own`)."""
    if period:
        return {k: v for r in rules
                for k, v in own(r, r.period_record(), r.period_records, "period").items()}
    return {k: v for r in rules for k, v in own(r, r.record(), r.records, "result").items()}
