"""No command bricks a table (issue 34 item 0): every command of every built-in profile, sent
through the real control socket with hostile arguments, is answered; none raises out of a
dispatch; and the table restarts cleanly from its journal after each.

Most cases build the whole table in-process (`app.build`, the daemon's own composition root)
on virtual time, stop it cleanly and build it again from the same state directory; one case
runs the exact reproduction of the issue with real processes: `timerctl start_in 1e308`,
SIGKILL, three restarts; and a journal that an older timerd wrote with that command in it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import run_virtual
from tests.daemon_process import REPO, Daemon
from timerd import app
from timerd import service as service_module
from timerd.adapters.control import MAX_LINE
from timerd.config import Config, MatchConfig, SpeakerConfig, StateConfig, WebConfig, profiles
from timerd.core.commands import Command, check_arguments
from timerd.core.match import Match
from timerd.core.refused import CommandRefused

PROFILES = profiles.builtin_names()
#: `timerctl` as its console script runs it, with this interpreter.
TIMERCTL = "import sys; from timerd.cli import timerctl; sys.exit(timerctl())"

#: Arguments a tool, a forged MQTT message or a noisy serial line may carry: huge, tiny,
#: negative, not finite, not a number, over-long, control and bidi characters.
HOSTILE = ["1e308", "-1e308", "1.7e308", "1e999", "5e-324", "-5e-324", "1e-308", "-0", "0",
           "-1", "-999999999999", "9" * 400, "nan", "NaN", "inf", "-inf", "Infinity",
           "0x1p1023", "١٢٣", "home", "away", "", " ", "x" * 5000, "\x00", "\x1b[2J\x07",
           "\u202egoal", "a\nb", "\ud800", "99", "3.5", "1_000"]


def commands_of(profile: str, home: Path, factory: Any) -> dict[str, tuple[str, ...]]:
    """Every command a table with `profile` answers, by name, with its arguments' names: the
    match's own (those its profile lacks are refused, and sent all the same) and the ones a
    built table's adapters add (`Service.offered`: mute, ...)."""
    rules = profiles.load(profile)
    table = {cls.name: cls.usage(rules) for cls in Match(rules).commands()}

    async def offered() -> dict[str, tuple[str, ...]]:
        async with contextlib.AsyncExitStack() as stack:
            daemon = await app.build(config(home, profile), options(home), factory, stack)
            return daemon.service.offered()

    built: dict[str, tuple[str, ...]] = run_virtual(offered)
    return table | built


def config(home: Path, profile: str) -> Config:
    return Config(match=MatchConfig(profile=profile), web=WebConfig(enabled=False),
                  speaker=SpeakerConfig(enabled=False),
                  state=StateConfig(directory=str(home / "state"),
                                    runtime_directory=str(home / "run")))


def options(home: Path) -> app.RunOptions:
    return app.RunOptions(simulate=True, control=home / "run" / "control.sock")


async def ask(path: Path, command: str, args: list[str]) -> dict[str, Any]:
    """One request on the real control socket, as `timerctl` sends it; its reply."""
    reader, writer = await asyncio.open_unix_connection(path, limit=4 * MAX_LINE)
    try:
        line = json.dumps({"command": command, "args": args}).encode() + b"\n"
        writer.write(line)
        data = await reader.readline()
    finally:
        writer.close()
    assert data.endswith(b"\n"), f"{command} {args!r:.200}: no reply"
    reply: dict[str, Any] = json.loads(data)
    return reply


async def session(home: Path, profile: str, sends: list[tuple[str, list[str]]],
                  factory: Any) -> list[dict[str, Any]]:
    """Build the table, send `sends` through its control socket with its match loop running
    (virtual time runs on while a reply waits for the disk), check that the loop is still
    alive after each, stop it cleanly; then build it again from its journal and check that
    the restored table runs and answers. The replies."""
    replies = []
    for restart in (False, True):
        async with contextlib.AsyncExitStack() as stack:
            daemon = await app.build(config(home, profile), options(home), factory, stack)
            service = daemon.service
            if restart:
                recovery = daemon.journal.recovery
                assert daemon.journal.enabled
                # Everything journalled was accepted by the core and replays as it did.
                assert recovery.warnings == [], recovery.warnings
            loop_task = asyncio.create_task(service.run())
            await asyncio.sleep(0)
            for command, args in ([] if restart else sends):
                reply = await ask(options(home).control, command, args)
                assert reply["ok"] in (True, False), reply
                assert "format" in reply, reply
                assert not loop_task.done(), (command, args, loop_task)
                replies.append(reply)
            await asyncio.sleep(1.5)  # a tick, a heartbeat: the loop keeps time
            status = await ask(options(home).control, "status", [])
            assert status["ok"], status
            assert not loop_task.done(), loop_task
            loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await loop_task
    return replies


def run_session(home: Path, profile: str, sends: list[tuple[str, list[str]]],
                factory: Any) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = run_virtual(lambda: session(home, profile, sends, factory))
    return result


def arities(usage: tuple[str, ...]) -> list[int]:
    """How many arguments to try: each count the command takes, and one too many."""
    required = sum(not u.endswith("?") for u in usage)
    return [*range(required, len(usage) + 1), len(usage) + 1]


@pytest.mark.parametrize("profile", PROFILES)
def test_every_command_with_every_hostile_argument_is_answered_and_the_table_restarts(
        profile: str, tmp_path_factory: pytest.TempPathFactory, mock_factory: Any) -> None:
    """Each command, in a fresh table and then in one where a match is under way (started,
    and a minute on), gets every hostile value in each of its argument places; then the
    table stops and is built again from its journal. Fails on the old code: `start_in
    1e308` went unanswered (the dispatch raised OverflowError) and the restart died."""
    commands = commands_of(profile, tmp_path_factory.mktemp("offered"), mock_factory)
    assert "start-in" in commands
    for name, usage in sorted(commands.items()):
        for running in (False, True):
            home = tmp_path_factory.mktemp(f"{profile}-{name}")
            sends: list[tuple[str, list[str]]] = [("start", [])] if running else []
            for count in arities(usage):
                for value in HOSTILE:
                    for place in range(max(count, 1)):
                        args = ["1"] * count
                        if count:
                            args[place] = value
                        sends.append((name, args))
                        if not count:
                            break
            replies = run_session(home, profile, sends, mock_factory)
            assert len(replies) == len(sends)
            refused = [r for r in replies if not r["ok"]]
            assert all(r.get("code") != "refused.failed" for r in refused), refused


@st.composite
def hostile_sends(draw: st.DrawFn, table: dict[str, tuple[str, ...]]
                  ) -> list[tuple[str, list[str]]]:
    words = st.one_of(st.sampled_from(HOSTILE),
                      st.floats(allow_nan=True, allow_infinity=True).map(repr),
                      st.integers().map(str),
                      st.text(max_size=60))
    sends = []
    for _ in range(draw(st.integers(1, 6))):
        name = draw(st.sampled_from(sorted(table)))
        args = draw(st.lists(words, max_size=len(table[name]) + 1))
        sends.append((name, args))
    return sends


#: Each profile's commands, read once (`commands_of`).
TABLES: dict[str, dict[str, tuple[str, ...]]] = {}


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_any_sequence_of_hostile_commands_keeps_the_table_answering_and_restartable(
        data: st.DataObject, tmp_path_factory: pytest.TempPathFactory, mock_factory: Any
) -> None:
    """Hypothesis draws a profile and a few commands with hostile arguments (any float's
    repr, any integer, any text): each is answered, and the table restarts from its journal."""
    profile = data.draw(st.sampled_from(PROFILES))
    if profile not in TABLES:
        TABLES[profile] = commands_of(profile, tmp_path_factory.mktemp("offered"), mock_factory)
    sends = data.draw(hostile_sends(TABLES[profile]))
    home = tmp_path_factory.mktemp("hypothesis")
    replies = run_session(home, profile, sends, mock_factory)
    assert [r.get("code") for r in replies].count("refused.failed") == 0, replies


def test_start_in_refuses_a_start_beyond_the_horizon_and_takes_one_within() -> None:
    """Issue 34 item 3: an hour ahead at most (the profile's `start_horizon_s`)."""
    profile = profiles.load("ithf")
    assert profile.start_horizon_s == 3600
    match = Match(profile)
    for beyond in ("3600.5", "1e308", "1e999", "inf", "nan"):
        with pytest.raises(CommandRefused) as refused:
            match.handle(match.parse("start_in", beyond), 0.0)
        assert refused.value.code in ("start_too_far", "not_seconds"), beyond
    match.handle(match.parse("start_in", "3600"), 0.0)
    assert match.status(0.0).start_in_s == 3600
    longer = Match(replace(profile, start_horizon_s=7200.0))
    longer.handle(longer.parse("start_in", "7000"), 0.0)
    assert replace(profile, start_horizon_s=0).problems()[0].startswith("start_horizon_s = 0")
    check_arguments(("seconds",), ("1",))


def test_a_defect_after_the_core_took_a_command_is_answered_and_never_journalled(
        tmp_path: Path, mock_factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The class, not the one bug: a command the match takes but cannot show or time
    (`core.status.check` raises) is answered `refused.failed`, never reaches the journal, and stops
    the loop (as a defect in it does) so that the daemon restarts from the journal, which
    restores the match as it was before the command."""
    real_check = service_module.check

    def check(match: Match, now: float) -> None:
        if match.sheet.goals:
            raise OverflowError("a defect in the core")
        real_check(match, now)

    async def main() -> tuple[dict[str, Any], BaseException | None, dict[str, Any]]:
        async with contextlib.AsyncExitStack() as stack:
            daemon = await app.build(config(tmp_path, "ithf"), options(tmp_path),
                                     mock_factory, stack)
            loop_task = asyncio.create_task(daemon.service.run())
            # Set up without waiting on the disk: virtual time would run on meanwhile.
            daemon.service.execute(daemon.service.parse("start"))
            await asyncio.sleep(30)  # the pre-signal, the start signal, 10 s played
            monkeypatch.setattr(service_module, "check", check)
            reply = await ask(options(tmp_path).control, "goal", ["home"])
            await asyncio.sleep(0)
            assert loop_task.done()
            failed = loop_task.exception()
        monkeypatch.setattr(service_module, "check", real_check)
        async with contextlib.AsyncExitStack() as stack:
            daemon = await app.build(config(tmp_path, "ithf"), options(tmp_path),
                                     mock_factory, stack)
            return reply, failed, daemon.service.status_dict()

    reply, failed, restored = run_virtual(main)
    assert (reply["ok"], reply["code"]) == (False, "refused.failed")
    assert isinstance(failed, OverflowError)
    assert restored["recovery"]["outcome"] == "restored"
    assert restored["score"] == {"home": 0, "away": 0}  # the goal was never journalled
    journal = (tmp_path / "state" / "match-journal.jsonl").read_text()
    assert '"goal"' not in journal


def test_recovery_skips_a_record_the_match_raises_on_and_restores_the_rest(
        tmp_path: Path, mock_factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Recovery never dies on a record: one the replay raises on (not a refusal) is skipped,
    said in the log and the status (`recovery.skipped`), and the match before and after it is
    restored."""
    async def play() -> None:
        async with contextlib.AsyncExitStack() as stack:
            daemon = await app.build(config(tmp_path, "ithf"), options(tmp_path),
                                     mock_factory, stack)
            loop_task = asyncio.create_task(daemon.service.run())
            for command, args in (("start", []), ("goal", ["home"]), ("goal", ["away"]),
                                  ("goal", ["home"])):
                daemon.service.execute(daemon.service.parse(command, *args))
                await asyncio.sleep(30)
            loop_task.cancel()

    run_virtual(play)
    real_handle = Match.handle
    seen = []

    def handle(self: Match, command: Command, now: float) -> Any:
        if command.words() == ("away",):
            seen.append(command.name)
            raise OverflowError("a record that an older timerd let in")
        return real_handle(self, command, now)

    monkeypatch.setattr(Match, "handle", handle)

    async def restart() -> dict[str, Any]:
        async with contextlib.AsyncExitStack() as stack:
            daemon = await app.build(config(tmp_path, "ithf"), options(tmp_path),
                                     mock_factory, stack)
            return daemon.service.status_dict()

    status = run_virtual(restart)
    assert seen == ["goal"]
    assert status["recovery"]["outcome"] == "restored"
    assert status["recovery"]["skipped"] == 1
    assert status["score"] == {"home": 2, "away": 0}


@pytest.mark.e2e
def test_timerctl_start_in_1e308_is_refused_and_never_bricks_the_table(tmp_path: Path) -> None:
    """The exact reproduction of issue 34 item 0, with real processes. Fails on the old code:
    timerctl got no reply, and every later start died replaying the journal (exit 1)."""
    env = {**os.environ, "STATE_DIRECTORY": str(tmp_path / "state"),
           "RUNTIME_DIRECTORY": str(tmp_path / "run")}
    (tmp_path / "timerd.toml").write_text("[web]\nenabled = false\n")
    with Daemon(tmp_path, speed=1.0) as daemon:
        daemon.ready()
        said = subprocess.run(
            [sys.executable, "-c", TIMERCTL, "--socket", str(daemon.socket), "start_in",
             "1e308"], cwd=REPO, env=env,
            capture_output=True, text=True, timeout=30, check=False)
        assert said.returncode == 1, said
        assert "further than the 3600 s" in said.stderr, said.stderr
        assert daemon.command("status")["phase"] == "idle"
        daemon.command("teams", "Ana", "Bor")  # something to restore
        assert daemon.stop(signal.SIGKILL) == -signal.SIGKILL
    for _ in range(3):
        with Daemon(tmp_path, speed=1.0) as again:
            again.ready()
            status = again.command("status")
            assert status["teams"] == {"home": "Ana", "away": "Bor"}
            assert again.stop(signal.SIGKILL) == -signal.SIGKILL


@pytest.mark.e2e
def test_a_journal_an_older_timerd_poisoned_with_start_in_1e308_is_restored(
        tmp_path: Path) -> None:
    """A journal written by the old code (the header, then `start_in 1e308` it took): the
    record is skipped, the log and the status say so, the daemon runs."""
    (tmp_path / "timerd.toml").write_text("[web]\nenabled = false\n")
    state = tmp_path / "state"
    state.mkdir()
    profile = profiles.load("ithf")
    from timerd.config.schema import to_plain  # noqa: PLC0415

    now = 1000.0
    wall = 1.7e9
    lines = [{"type": "match", "match": "20261206T000000Z-abcdef", "run": "old",
              "profile": to_plain(profile), "t": now, "wall": wall},
             {"type": "command", "command": "start_in", "args": ["1e308"], "t": now,
              "wall": wall}]
    (state / "match-journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    with Daemon(tmp_path, speed=1.0) as daemon:
        daemon.ready()
        assert any("`start_in 1e308` refused in the replay" in line for line in daemon.log)
        status = daemon.command("status")
        assert status["phase"] == "idle"
        assert status["recovery"]["skipped"] == 1
        assert status["recovery"]["code"] == "notice.recovery_skipped"
        assert daemon.stop() == 0
