"""One dispatch value per dispatch (issue 14, invariant 5; issue 32): every output is handed
the same frozen `Dispatch`, whose one status document is built at the first output that reads
it, and every signal reaches the sound outputs before anything of its dispatch reaches any
output."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
from typing import Any

import pytest
from gpiozero.pins import mock

from tests.conftest import Recorder, play, run_virtual, wired
from timerd import config
from timerd.adapters.gpio import GpioBoard
from timerd.config import profiles
from timerd.core.effects import Signal, SignalKind
from timerd.core.match import Match
from timerd.ports import Dispatch
from timerd.service import Service
from timerd.timebase import WarpLoop
from timerd.wire import STATUS_FORMAT

CONFIG = config.load(None, [])


class Reader:
    """An output that reads the document, as the web page and the serial display do."""

    def __init__(self) -> None:
        self.seen: list[tuple[Dispatch, dict[str, Any]]] = []

    def notify(self, dispatch: Dispatch) -> None:
        self.seen.append((dispatch, dispatch.document))


class Quiet:
    """An output that reads no document."""

    def __init__(self) -> None:
        self.dispatches: list[Dispatch] = []

    def notify(self, dispatch: Dispatch) -> None:
        self.dispatches.append(dispatch)


def test_every_output_is_handed_one_dispatch_and_its_one_document() -> None:
    readers = [Reader(), Reader()]
    builds: list[int] = []
    quiet = Quiet()

    def setup(service: Service) -> None:
        service.outputs.extend([quiet, *readers])
        service.status_extras.append(lambda: builds.append(1) or {"muted": False})

    play("ithf", [(0, "start"), (100, "pause"), (105, "resume")], until=330, setup=setup)
    first, second = readers
    assert quiet.dispatches == [d for d, _ in first.seen]
    # The pause: its phase change and its chirp are one dispatch with one document.
    pause = next(d for d, _ in first.seen
                 if any(s.kind is SignalKind.PAUSE for s in d.signals))
    assert [type(e).__name__ for e in pause.effects] == ["PhaseChanged", "Signal", "Applied"]
    # Both outputs got the same dispatch and the same document object: built once each.
    for (dispatch_a, a), (dispatch_b, b) in zip(first.seen, second.seen, strict=True):
        assert dispatch_a is dispatch_b
        assert a is b
        assert a["muted"] is False
        assert a["format"] == STATUS_FORMAT
    assert len(builds) == len(first.seen)
    with pytest.raises(dataclasses.FrozenInstanceError):
        pause.status = pause.status  # type: ignore[misc]
    # Later dispatches build new documents: the final's shows the match finished.
    assert first.seen[-1][1]["phase"] == "finished"


def test_a_dispatch_nobody_shows_builds_no_document() -> None:
    builds: list[int] = []

    def setup(service: Service) -> None:
        service.status_extras.append(lambda: builds.append(1) or {})

    recorder = play("ithf", [(0, "start")], until=30, setup=setup)
    assert recorder.seen
    assert not builds


class Slow:
    """An output that takes 50 ms of the loop's time at each call (a blocking write, a slow
    encoder): on virtual time it moves the clock on, as the real call would."""

    def __init__(self, loop: WarpLoop) -> None:
        self.loop = loop
        self.calls = 0

    def notify(self, *_: object) -> None:
        self.calls += 1
        self.loop.warp.advance(0.05)


def test_a_slow_output_never_delays_a_buzzer_edge(mock_factory: Any,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: every signal's first buzzer edge comes at the signal's instant, with an
    output that takes 50 ms per call attached. Fails on the old code: a dispatch went effect
    by effect, output by output, so a pause's chirp waited for every output to have had its
    phase change (50 ms late), though the buzzer came first in the list."""

    async def main() -> tuple[list[Signal], list[float], int]:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, WarpLoop)
        monkeypatch.setattr(mock, "monotonic", loop.time)  # pin edges stamped in loop time
        service = Service(Match(profiles.load("ithf")))
        board = GpioBoard(CONFIG.gpio, CONFIG.signals, service, mock_factory)
        recorder = Recorder(loop)
        slow = Slow(loop)
        wired(board.buzzers, service)  # as app.py: the buzzers first
        service.outputs += [recorder, slow]
        buzzer = mock_factory.pin(CONFIG.gpio.buzzer_pins[0])
        buzzer.clear_states()  # at loop time 0
        task = asyncio.create_task(service.run())
        for at, command in ((0, "start"), (100, "pause"), (105, "resume"), (200, "pause"),
                            (203, "resume")):
            loop.call_at(at, lambda word=command: service.execute(service.parse(word)))
        await asyncio.sleep(340)
        task.cancel()
        board.close()
        # A mock pin stamps each state with the time since the one before.
        rises = [t for t, state in zip(itertools.accumulate(s.timestamp for s in buzzer.states),
                                       (s.state for s in buzzer.states), strict=True) if state]
        signals = [e for _, e, _ in recorder.seen if isinstance(e, Signal)]
        return signals, rises, slow.calls

    signals, rises, slow_calls = run_virtual(main)
    assert slow_calls > 300  # it was handed every dispatch, and took its time
    kinds = {s.kind for s in signals}
    assert {SignalKind.PAUSE, SignalKind.RESUME, SignalKind.START,
            SignalKind.FINAL} <= kinds
    for signal in signals:
        first_edge = min(t for t in rises if t >= signal.due - 1e-9)
        assert first_edge == pytest.approx(signal.due, abs=1e-9), (signal, rises)


class Heard:
    """A sound output that notes, at each signal, what the match had worked out by then."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.heard: list[tuple[SignalKind, str, bool, Dispatch]] = []

    def signal(self, signal: Signal, dispatch: Dispatch) -> None:
        match = self.service.match
        self.heard.append((signal.kind, match.phase.value, match.result is not None, dispatch))


def test_the_final_signal_sounds_before_the_match_works_out_its_end() -> None:
    """Issue 33: the end of a match (its result, the state kept for a correction) took the
    match 0.5 ms at its final signal, all before that signal reached the buzzer: the final's
    onset was the tail of every `bench/run` phase. The final goes to the sound outputs first,
    with the match as it stood at the signal; the outputs still get one dispatch of the signal
    and the end, its document the finished match's, and the final is sounded once."""
    readers, sounders = [Reader()], []

    def setup(service: Service) -> None:
        service.outputs.extend(readers)
        sounders.append(Heard(service))
        service.sound_outputs.extend(sounders)

    play("ithf", [(0, "start"), (100, "goal home")], until=330, setup=setup)
    kind, phase, decided, ahead = sounders[0].heard[-1]
    assert (kind, phase, decided) == (SignalKind.FINAL, "running", False)
    assert [s.kind for s in ahead.signals] == [SignalKind.FINAL]
    assert sum(k is SignalKind.FINAL for k, *_ in sounders[0].heard) == 1
    final, document = readers[0].seen[-1]
    assert [type(e).__name__ for e in final.effects][:2] == ["Signal", "PhaseChanged"]
    assert document["phase"] == "finished"
    assert document["result"]["winner"] == "home"


def test_the_status_is_made_after_the_buzzers_had_the_signal() -> None:
    """Issue 33: a dispatch's status (0.1 ms of the match's time in the daemon's process on
    the bench's machine) is made after the sound outputs had the step's signals, so a signal's
    first edge waits for nothing but the step that fired it; the outputs then read that one
    status. Every timed signal's instant: the signal first, then the status at that instant."""
    order: list[tuple[str, float]] = []

    class Sounder:
        def signal(self, signal: Signal, dispatch: Dispatch) -> None:
            order.append((signal.kind.value, round(signal.due, 6)))

    def setup(service: Service) -> None:
        made = service.match.status

        def status(now: float) -> Any:
            order.append(("status", round(now, 6)))
            return made(now)

        service.match.status = status  # type: ignore[method-assign]
        service.sound_outputs.append(Sounder())

    play("ithf", [(0, "start")], until=330, setup=setup)
    timed = [(kind, due) for kind, due in order if kind in ("start", "interval", "final")]
    assert [kind for kind, _ in timed] == ["start", *["interval"] * 4, "final"]
    for signal in timed:
        made_at = order.index(("status", signal[1]))
        assert made_at > order.index(signal), signal


class Writer:
    """An output that writes to the dispatch's document (its score, its goals, a key of its
    own), as a careless adapter adding a key of its own would."""

    def __init__(self) -> None:
        self.refused: list[str] = []

    def notify(self, dispatch: Dispatch) -> None:
        document: Any = dispatch.document
        for name, write in (("score", lambda: document["score"].update(home=99)),
                            ("goals", lambda: document["goals"].append({"side": "away"})),
                            ("phase", lambda: document.__setitem__("phase", "finished")),
                            ("pop", lambda: document.pop("match_id"))):
            try:
                write()
            except TypeError:
                self.refused.append(name)


def test_an_output_cannot_change_the_document_a_later_output_sends() -> None:
    """Issue 44 item 2: the document is read-only to its depth, so an output that writes to
    it is refused (TypeError) and a later output sends what the match said. Fails on the old
    code: the document was a plain dict shared by every output, and the reader after the
    writer saw the writer's score, goals and phase."""
    writer, reader = Writer(), Reader()

    def setup(service: Service) -> None:
        service.outputs.extend([writer, reader])

    play("ithf", [(0, "start"), (60, "goal home")], until=65, setup=setup)
    assert writer.refused == ["score", "goals", "phase", "pop"] * len(reader.seen)
    goal = reader.seen[-1][1]  # the goal's and after
    assert goal["score"] == {"home": 1, "away": 0}
    assert [g["side"] for g in goal["goals"]] == ["home"]
    assert goal["phase"] == "running"
    assert "match_id" in goal
    # A copy is the reader's own, and JSON sees the document as the dict it is.
    own = {**goal, "wall": 1.0}
    own["score"] = dict(goal["score"], home=2)
    assert json.loads(json.dumps(goal)) == goal


class Puller:
    """An output and a sound output that ask the service for the status during the hand-out,
    instead of reading the dispatch's."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.refused: list[str] = []

    def pull(self, where: str) -> None:
        for ask in (self.service.status, self.service.status_dict):
            try:
                ask()
            except RuntimeError:
                self.refused.append(where)

    def notify(self, dispatch: Dispatch) -> None:
        self.pull("notify")

    def signal(self, signal: Signal, dispatch: Dispatch) -> None:
        self.pull("signal")


def test_a_status_pull_during_a_hand_out_is_refused() -> None:
    """Issue 44 item 2: an output, or a sound output, that asks the service for the status
    while a dispatch is handed out is refused (RuntimeError, logged by the hand-out; the match
    goes on): it reads the dispatch's. Fails on the old code: the pull passed, a second
    snapshot in the middle of a hand-out. Outside a hand-out (a tool's request) it is served."""
    pullers: list[Puller] = []
    after: list[dict[str, Any]] = []

    def setup(service: Service) -> None:
        puller = Puller(service)
        pullers.append(puller)
        service.outputs.append(puller)
        service.sound_outputs.append(puller)
        service.status_extras.append(lambda: {"seen_round": service.status().round})
        service.loop.call_later(12, lambda: after.append(service.status_dict()))

    recorder = play("ithf", [(0, "start")], until=15, setup=setup)
    refused = pullers[0].refused
    assert refused.count("notify") == 2 * len({id(s) for _, _, s in recorder.seen})
    assert refused.count("signal") == 2  # the start signal: both asks refused
    # The document's own extras are read while it is built, also inside a hand-out.
    assert after[0]["phase"] == "pre_signal"  # ITHF 4.4: 20 s before the play starts
    assert "seen_round" in after[0]
