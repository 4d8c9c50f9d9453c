"""An adapter's long-lived task in the daemon's supervised group (issue 32 item 5,
timerd/tasks.py): a crash is logged, shown in the status and the task started again; the
match goes on. On the old code an adapter's `create_task` was nobody's: its exception stayed
unseen until the task was collected, and the part stayed dead for the rest of the run."""

from __future__ import annotations

import ast
import asyncio
import logging
from pathlib import Path

import pytest

from tests.conftest import Recorder, run_virtual
from tests.syntax import parse_file
from timerd.config import profiles
from timerd.core.match import Match
from timerd.service import Service
from timerd.tasks import MAX_RESTARTS, RESTART_S

ROOT = Path(__file__).resolve().parents[2] / "timerd"


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


#: The daemon's modules that start tasks of their own: the supervisor itself, and the web
#: server's tasks of one connection (a request, a stream's sender), which end with it.
OWN_TASKS = frozenset({"tasks.py", "adapters/web/server.py", "adapters/web/adapter.py"})
#: What starts a task (`asyncio.create_task`, `loop.create_task`, `asyncio.ensure_future`,
#: `asyncio.Task(...)`, `run_coroutine_threadsafe`).
STARTS_A_TASK = frozenset({"create_task", "ensure_future", "Task", "run_coroutine_threadsafe"})
#: An exception class that a `contextlib.suppress` would swallow every crash with.
BLIND = frozenset({"Exception", "BaseException"})


def _groups(function: ast.AST) -> set[str]:
    """The names a function binds to a task group (`async with asyncio.TaskGroup() as g`)."""
    return {item.optional_vars.id for node in ast.walk(function)
            if isinstance(node, ast.AsyncWith) for item in node.items
            if isinstance(item.optional_vars, ast.Name)
            and ast.unparse(item.context_expr).endswith("TaskGroup()")}


def unsupervised(root: Path) -> list[str]:
    """Read on the syntax tree of every module of the daemon (not `tools/`, not `cli.py`):
    a task started outside the supervised group (`Control.spawn`) and outside a task group
    of the function that starts it, and a `contextlib.suppress` of every exception (a crash
    of a supervised task swallowed: never logged, counted or restarted)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        where = str(path.relative_to(root))
        if where.startswith("tools/") or where == "cli.py":
            continue
        tree = parse_file(path)
        groups: dict[int, set[str]] = {}  # a call's innermost function's task groups
        for function in ast.walk(tree):  # outer functions first: the inner ones override
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                bound = _groups(function)
                groups.update((id(node), bound) for node in ast.walk(function))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            receiver = ast.unparse(func.value) if isinstance(func, ast.Attribute) else ""
            if name in STARTS_A_TASK and receiver not in groups.get(id(node), set()) \
                    and where not in OWN_TASKS:
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)[:60]}")
            if name == "suppress" and any(ast.unparse(a).split(".")[-1] in BLIND
                                          for a in node.args):
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return sorted(set(found))


def test_adapters_start_their_long_lived_tasks_through_spawn() -> None:
    """Issue 44 item 4: no module of the daemon starts a task of its own beside the
    supervised group (the supervisor, the web server's tasks of one connection, and a task
    group's `create_task` aside), and none swallows every exception with
    `contextlib.suppress(Exception)`. Read on the syntax tree: the old check found
    `create_task(` by text, and the hall link's `asyncio.ensure_future` and a suppressed
    supervised task passed it."""
    assert unsupervised(ROOT) == []


def test_the_task_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "adapters").mkdir()
    (tmp_path / "adapters" / "x.py").write_text(
        "import asyncio, contextlib\n"
        "async def f(coroutines):\n"
        "    tasks = [asyncio.ensure_future(c) for c in coroutines]\n"
        "    asyncio.get_running_loop().create_task(f([]))\n"
        "    async with asyncio.TaskGroup() as group:\n"
        "        group.create_task(f([]))\n"
        "    with contextlib.suppress(Exception):\n"
        "        await f([])\n")
    assert unsupervised(tmp_path) == [
        "adapters/x.py:3: asyncio.ensure_future(c)",
        "adapters/x.py:4: asyncio.get_running_loop().create_task(f([]))",
        "adapters/x.py:7: contextlib.suppress(Exception)"]
