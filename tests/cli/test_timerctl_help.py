"""The command line people reach for (issue 30 item 11): `timerctl help` and `--help` list
what the running daemon's profile offers, with the arguments; a goal that does not count
exits non-zero and says so first; `| head` ends quietly. Against a real daemon process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon_process import REPO, Daemon
from timerd.cli import EXIT_NOT_COUNTED, EXIT_PIPE, request, timerctl
from timerd.config import profiles
from timerd.core.offered import offered_commands


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with Daemon(tmp_path_factory.mktemp("table"), speed=1.0).ready() as daemon:
        yield daemon


def _ctl(table: Daemon, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = timerctl(["--socket", str(table.socket), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _offered(table: Daemon) -> list[dict[str, object]]:
    commands: list[dict[str, object]] = request(table.socket, "commands", [])["commands"]
    return commands


def test_help_lists_every_command_of_the_running_profile_with_its_arguments(
        table: Daemon, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _ctl(table, capsys, "help")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "commands of the running timerd (profile ithf):"
    listed = {line.split()[0] for line in lines[1:lines.index("arguments:")]}
    # Every command the profile offers (a command it would refuse is not offered, e.g.
    # ITHF's late-goal), and the adapters' own (the speaker's mute).
    assert offered_commands(profiles.load("ithf")) <= listed
    assert "mute" in listed
    assert {str(c["command"]) for c in _offered(table)} | {"help"} == listed
    assert "  goal <home|away> [scorer] [assist] [assist]" in lines
    assert "  status" in lines
    # One spelling of a command (hyphens), and what each argument is (issue 46 item 6).
    assert "start-in" in listed
    assert not any("_" in name for name in listed)
    described = dict(line.split(None, 1) for line in lines[lines.index("arguments:") + 1:])
    assert described["home|away"] == "one of: home, away"
    assert described["scorer"] == "the scorer's shirt number"
    assert described["seconds"] == "seconds from now"
    assert all(what != name for name, what in described.items()), described


def test_dash_dash_help_shows_the_options_and_the_running_profiles_commands(
        table: Daemon, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _ctl(table, capsys, "--help")
    assert code == 0
    assert out.startswith("usage: timerctl")
    assert "--socket PATH" in out
    assert "commands of the running timerd (profile ithf):" in out
    assert "  goal <home|away> [scorer] [assist] [assist]" in out.splitlines()


def test_dash_dash_help_without_a_daemon_still_helps(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = timerctl(["--socket", str(tmp_path / "none.sock"), "--help"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("usage: timerctl")
    assert "no timerd is listening at" in out


def test_a_goal_that_is_not_counted_exits_non_zero_and_says_so_first(
        table: Daemon, capsys: pytest.CaptureFixture[str]) -> None:
    table.command("start")  # 20 s of pre-signal at speed 1: a goal now is before the start
    try:
        code, out, err = _ctl(table, capsys, "goal", "home")
        assert code == EXIT_NOT_COUNTED
        assert err.splitlines()[0] == "timerctl: no goal: before the start (ITHF 5.1)"
        assert out.endswith(", Home 0:0 Away\n")
    finally:
        table.command("reset")


def _closed_reader(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run a command whose standard output nobody reads any more (`| head` that quit)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-c", "import sys; from timerd.cli import "
                               "main, timerctl; sys.exit((timerctl if sys.argv[1] == 'ctl' "
                               "else main)(sys.argv[2:]))", *argv],
                              cwd=REPO, stdout=write_end, stderr=subprocess.PIPE, text=True,
                              timeout=60, check=False)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("argv", [
    ("ctl", "help"), ("ctl", "status"), ("ctl", "--help"), ("ctl", "status", "--json"),
    ("timerd", "--help"), ("timerd", "profiles"), ("timerd", "profiles", "show", "ithf"),
    ("timerd", "config"), ("timerd", "hall", "--help"), ("timerd", "--version"),
])
def test_a_reader_that_goes_away_ends_every_command_quietly(
        table: Daemon, tmp_path: Path, argv: tuple[str, ...]) -> None:
    (tmp_path / "empty.toml").write_text("")
    if argv[0] == "ctl":
        argv = ("ctl", "--socket", str(table.socket), *argv[1:])
    elif argv[1] == "config":
        argv = (*argv, "--config", str(tmp_path / "empty.toml"))
    done = _closed_reader(*argv)
    assert done.stderr == ""  # no BrokenPipeError traceback, no "Exception ignored"
    # argparse's own --help and --version drop a failed write themselves and exit 0.
    assert done.returncode in (0, EXIT_PIPE)
