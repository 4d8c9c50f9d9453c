"""A refused command never swallows a signal or the end of a match (issue 13, item 1).

`Match.handle` fires what is due before it applies the command (a goal at the final signal is
judged after it, ITHF 6.5). When the command is then refused, what fired must still reach the
outputs: the final signal (ITHF 4.4) and the result of the match. The property test drives
every built-in profile with any commands, valid or refused, at any instants (many of them right
at a signal's due instant) and checks that every planned signal is emitted exactly once and
that a finished match always yields its result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import refused
from timerd.config import profiles
from timerd.core.effects import Effect, Phase, PhaseChanged, Signal, SignalKind
from timerd.core.match import Match
from timerd.core.plan import PlannedSignal, overtime_plan, signal_plan
from timerd.core.refused import CommandRefused

K = SignalKind

#: The signals a period's plan places (`signal_plan`, `overtime_plan`).
PLANNED = frozenset({K.INTERVAL, K.LAST_30, K.PERIOD_END, K.FINAL, K.HALF_PERIOD})


def test_a_goal_refused_at_the_final_signal_does_not_swallow_it():
    """Fails on main: the final signal and PhaseChanged(FINISHED) were polled inside the
    refused `handle` and thrown away; `poll(321)` then returned nothing."""
    match = Match(profiles.load("ithf"))
    match.handle(match.parse("start"), 0)
    match.poll(20)
    match.poll(319.9)
    with refused("no goal entry 9", "no_goal_number"):  # refused by the match, not its words
        match.handle(match.parse("correct", "9"), 320.0005)
    assert match.next_deadline() == 320.0005  # the held effects are due at once
    effects = match.poll(321)
    assert [e.kind for e in effects if isinstance(e, Signal)] == [K.FINAL]
    assert [e for e in effects if isinstance(e, PhaseChanged)] == [
        PhaseChanged(Phase.FINISHED, Phase.RUNNING)]
    assert match.result is not None
    assert match.poll(400) == []  # exactly once


def test_a_pause_refused_after_the_final_signal_hands_it_out_with_the_next_command():
    """The held effects come first in the next `handle`'s effects, in time order."""
    match = Match(profiles.load("ithf"))
    match.handle(match.parse("start"), 0)
    match.poll(319.9)
    with refused("finished"):
        match.handle(match.parse("pause"), 320.0)  # the final fired first: the match is over
    effects = match.handle(match.parse("reset"), 330.0)
    assert effects[0] == next(e for e in effects if isinstance(e, Signal))
    assert [e.kind for e in effects if isinstance(e, Signal)] == [K.FINAL]
    assert effects[-1] == PhaseChanged(Phase.IDLE, Phase.FINISHED)


# -- the property ------------------------------------------------------------------------

#: Argument words, valid and not, for any command.
WORDS = ["home", "away", "sideways", "faceoff", "minor", "major", "misconduct", "scored",
         "missed", "7", "12", "1", "30", "16", "-5", "nan", ""]


def _commands(profile_name: str) -> list[str]:
    return sorted(cls.name for cls in Match(profiles.load(profile_name)).commands())


#: A step: when (a gap in seconds, or at the next deadline plus a hair), a command, its words.
Timing = tuple[str, float]
Step = tuple[Timing, str, list[str]]

timings = st.one_of(
    st.tuples(st.just("gap"), st.floats(0, 200, allow_nan=False)),
    st.tuples(st.just("due"), st.sampled_from([0.0, 1e-6, 0.0005, 0.05])),
)


@st.composite
def scripts(draw: st.DrawFn) -> tuple[str, list[Step]]:
    name = draw(st.sampled_from(profiles.builtin_names()))
    commands = _commands(name)
    # START often, so that most scripts get into play; the rest uniformly.
    command = st.one_of(st.just("start"), st.just("toggle"), st.sampled_from(commands))
    steps = draw(st.lists(st.tuples(timings, command, st.lists(st.sampled_from(WORDS),
                                                               max_size=3)),
                          max_size=30))
    return name, steps


@dataclass
class Run:
    """One match driven step by step, as the service drives it: a refused command is
    followed by a `poll` at its instant (what fell due is sounded then, `Service.execute`)."""

    match: Match
    effects: list[Effect] = field(default_factory=list)
    refused: list[int] = field(default_factory=list)

    def step(self, i: int, now: float, command: str, args: list[str], skip: bool) -> None:
        if skip:
            self.effects += self.match.poll(now)
            return
        try:
            self.effects += self.match.handle(self.match.parse(command, *args), now)
        except CommandRefused:
            self.refused.append(i)
            self.effects += self.match.poll(now)


def _instants(match: Match, steps: list[Step]) -> list[float]:
    """The instant of each step, fixed from a first run (so two runs share them)."""
    now, out = 0.0, []
    for timing, command, args in steps:
        how, value = timing
        deadline = match.next_deadline()
        now = now + value if how == "gap" or deadline is None else max(now, deadline + value)
        out.append(now)
        try:
            match.handle(match.parse(command, *args), now)
        except CommandRefused:
            match.poll(now)
    return out


def _plan(match: Match, period: int) -> tuple[PlannedSignal, ...]:
    profile = match.profile
    if period <= profile.periods:
        return signal_plan(profile, period)
    assert profile.overtime is not None
    return overtime_plan(profile.overtime, profile.half_period_signal)


def _check_plans(match: Match, effects: list[Effect]) -> None:
    """Per match (a reset or replay starts another) and period, the planned signals emitted
    are the plan's, in order, each once: a prefix of it, ended early only by a final signal
    that a goal, forfeit, walk-out or shot gave; the whole plan once the period ran out."""
    runs: list[list[Signal]] = [[]]
    for e in effects:
        if isinstance(e, PhaseChanged) and e.previous is Phase.IDLE:
            runs.append([])  # a start, or a replay's restart (ITHF 4.5), begins a new run
        elif isinstance(e, Signal) and e.kind in PLANNED:
            runs[-1].append(e)
    for run in runs:
        for period in sorted({s.period for s in run}):
            got = [(s.kind, s.beeps, s.remaining_s) for s in run if s.period == period]
            plan = [(p.kind, p.beeps, p.remaining_s) for p in _plan(match, period)]
            if got != plan[: len(got)]:
                assert got[-1][0] is K.FINAL, (period, got, plan)  # a match ended early
                got = got[:-1]
            assert got == plan[: len(got)], (period, got, plan)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scripts())
def test_no_command_valid_or_refused_swallows_a_signal_or_a_result(script):
    """For any commands at any instants: a refused one changes nothing but the time (the
    same match without it emits the same), every planned signal comes exactly once, the
    outputs always know the phase (the last PhaseChanged is the match's), and a finished
    match has its result. Covers ITHF and ISBHF profiles. Fails on main (the final signal of
    a refused press at 0:00 was lost)."""
    name, steps = script
    instants = _instants(Match(profiles.load(name)), steps)
    first = Run(Match(profiles.load(name)))
    shown = Phase.IDLE
    for i, (now, (_, command, args)) in enumerate(zip(instants, steps, strict=True)):
        first.step(i, now, command, args, skip=False)
        shown = next((e.phase for e in reversed(first.effects)
                      if isinstance(e, PhaseChanged)), shown)
        assert shown is first.match.phase
        if first.match.phase is Phase.FINISHED:
            assert first.match.result is not None
    end = (instants[-1] if instants else 0.0) + 10_000
    first.effects += first.match.poll(end)
    # The same script without the refused commands: nothing may differ.
    second = Run(Match(profiles.load(name)))
    for i, (now, (_, command, args)) in enumerate(zip(instants, steps, strict=True)):
        second.step(i, now, command, args, skip=i in first.refused)
    second.effects += second.match.poll(end)
    assert second.refused == []
    assert first.effects == second.effects
    timed = [(e.kind, e.due, e.period) for e in first.effects
             if isinstance(e, Signal) and e.kind in PLANNED]
    assert len(timed) == len(set(timed))
    _check_plans(first.match, first.effects)
    finished = [e for e in first.effects
                if isinstance(e, PhaseChanged) and e.phase is Phase.FINISHED]
    if first.match.phase is Phase.FINISHED:
        assert finished
        assert finished[-1] is next(e for e in reversed(first.effects)
                                    if isinstance(e, PhaseChanged))
        assert first.match.result is not None
