"""An adapter's long-lived task in the daemon's supervised group (issue 32 item 5,
timerd/tasks.py): a crash is logged, shown in the status and the task started again; the
match goes on. On the old code an adapter's `create_task` was nobody's: its exception stayed
unseen until the task was collected, and the part stayed dead for the rest of the run."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from tests.conftest import Recorder, run_virtual
from timerd.config import profiles
from timerd.core.match import Match
from timerd.service import Service
from timerd.tasks import MAX_RESTARTS, RESTART_S


def test_a_crashing_adapter_task_is_logged_restarted_and_the_match_goes_on(
        caplog: pytest.LogCaptureFixture) -> None:
    runs: list[float] = []

    async def main() -> tuple[dict[str, object], list[str]]:
        loop = asyncio.get_running_loop()
        service = Service(Match(profiles.load("ithf")))
        recorder = Recorder(loop)
        service.outputs.append(recorder)
        service.status_extras.append(service.tasks.status_extra)

        async def display_link() -> None:  # an adapter's task with a defect: fails after 1 s
            runs.append(loop.time())
            await asyncio.sleep(1)
            raise RuntimeError("the display's library raised what it never documented")

        link = service.spawn("display-link", display_link)
        task = asyncio.create_task(service.run())
        service.execute(service.parse("start"))
        await asyncio.sleep(330)  # the whole match: START, 20 s to the start, 5:00, final
        status = service.status_dict()
        await link.stop()
        task.cancel()
        return status, [e["signal"] for e in recorder.events("signal")]

    with caplog.at_level(logging.ERROR, "timerd.tasks"):
        status, signals = run_virtual(main)
    assert signals[-1] == "final"  # the match went on to its end
    assert status["phase"] == "finished"
    # Run, crash after 1 s, start again RESTART_S later: until it crashed MAX_RESTARTS + 1
    # times within a minute, then it stays down.
    assert runs[:2] == [0.0, 1.0 + RESTART_S]
    assert len(runs) == MAX_RESTARTS + 1
    assert status["task_crashes"] == {"display-link": MAX_RESTARTS + 1}
    crashed = [r for r in caplog.records if "task display-link crashed" in r.getMessage()]
    assert len(crashed) == MAX_RESTARTS + 1
    assert all(r.exc_info is not None for r in crashed)  # with the traceback
    assert "it stays down" in crashed[-1].getMessage()


def test_a_task_stopped_by_its_adapter_is_no_crash(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> dict[str, int]:
        service = Service(Match(profiles.load("ithf")))
        link = service.spawn("hall-link", lambda: asyncio.sleep(3600))
        await asyncio.sleep(1)
        assert await link.stop(1.0)
        await asyncio.sleep(RESTART_S * 2)
        return service.tasks.crashed()

    with caplog.at_level(logging.ERROR, "timerd.tasks"):
        assert run_virtual(main) == {}
    assert "crashed" not in caplog.text


def test_adapters_start_their_long_lived_tasks_through_spawn() -> None:
    """No adapter starts a task of its own beside the supervised group, but the web server's
    tasks of one connection (a request, a stream's sender), which end with it."""
    adapters = Path(__file__).resolve().parents[2] / "timerd" / "adapters"
    own = sorted(str(path.relative_to(adapters)) for path in adapters.rglob("*.py")
                 if "create_task(" in path.read_text() and path.parent.name != "web")
    assert own == []
