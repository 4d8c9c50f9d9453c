"""A command refused at a signal's due instant: the service still sounds the signal at once
and a final signal still writes the result (issue 13, item 1; ITHF 4.4 final signal)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

import pytest

from tests.conftest import play
from timerd.adapters.results.file import ResultsFile
from timerd.core.effects import Phase, PhaseChanged, Signal, SignalKind
from timerd.core.refused import CommandRefused
from timerd.service import Service
from timerd.timebase import WarpLoop


def _refused_late(service: Service, command: str, *args: str) -> None:
    """At 319.95 s the loop is held up 50.5 ms (a slow SD write), and a command arrives that
    is refused: it reaches the match at 320.0005 s, before the loop has polled the final
    signal due at 320 s (the pre-signal lead is 20 s, the match 300 s)."""
    loop = asyncio.get_running_loop()
    assert isinstance(loop, WarpLoop)

    def stalled() -> None:
        loop.warp.advance(0.0505)
        with pytest.raises(CommandRefused):
            service.execute(service.parse(command, *args))

    loop.call_at(loop.time() + 319.95, stalled)


@pytest.mark.parametrize(("command", "args"), [("goal", ("sideways",)), ("resume", ())])
def test_a_refused_command_at_the_final_signal_still_gives_the_final_and_the_result(
        tmp_path: Path, command: str, args: tuple[str, ...]) -> None:
    """Fails on main: the final signal and PhaseChanged(FINISHED) were lost inside the refused
    command, so no results line was written and the outputs never saw the match end."""
    path = tmp_path / "results.jsonl"

    def setup(service: Service) -> None:
        service.outputs.append(ResultsFile(path))
        _refused_late(service, command, *args)

    recorder = play("ithf", [(0, "start"), (100, "goal home")], until=400, setup=setup)
    finals = [(t, e) for t, e, _ in recorder.seen
              if isinstance(e, Signal) and e.kind is SignalKind.FINAL]
    assert len(finals) == 1
    t, final = finals[0]
    assert t == pytest.approx(320.0005)  # sounded with the refusal, 0.5 ms late, not later
    assert final.due - recorder.t0 == pytest.approx(320.0)
    ends = [e for _, e, _ in recorder.seen
            if isinstance(e, PhaseChanged) and e.phase is Phase.FINISHED]
    assert len(ends) == 1
    lines = path.read_text().splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert (record["how"], record["score"]) == ("regular", {"home": 1, "away": 0})


def test_a_refused_button_press_at_the_final_signal_still_gives_the_result(
        tmp_path: Path) -> None:
    """The same through a button: START/PAUSE pressed (toggle: a pause) while the loop is
    late at 0:00 is refused (the match is over) and the result is still written."""
    path = tmp_path / "results.jsonl"

    def setup(service: Service) -> None:
        service.outputs.append(ResultsFile(path))
        loop = asyncio.get_running_loop()
        assert isinstance(loop, WarpLoop)

        def stalled() -> None:
            loop.warp.advance(0.0505)
            with contextlib.suppress(CommandRefused):
                service.execute(service.parse("toggle"), at=loop.time())

        loop.call_at(loop.time() + 319.95, stalled)

    recorder = play("ithf", [(0, "start")], until=400, setup=setup)
    kinds = [e.kind for _, e, _ in recorder.seen if isinstance(e, Signal)]
    assert kinds.count(SignalKind.FINAL) == 1
    assert SignalKind.PAUSE not in kinds
    assert len(path.read_text().splitlines()) == 1
