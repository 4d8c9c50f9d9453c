"""Tab completion for timerd and timerctl, and `--help` that names every subcommand (issue 30
item 12). The bash scripts are run in a real bash, as bash-completion would call them."""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import require
from timerd import cli
from timerd.tools import completion

ROOT = Path(__file__).resolve().parents[2]


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def _script(*argv: str) -> str:
    """What `timerd completion ARGV...` prints, as a user sources it."""
    return subprocess.run([sys.executable, "-m", "timerd", "completion", *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True).stdout


def _complete(tmp_path: Path, program: str, words: list[str]) -> set[str]:
    """What bash offers for `words` (the last one being typed), from the generated script."""
    path = tmp_path / program
    path.write_text(_script("bash", "--program", program))
    func = f"_shtab_{program}"
    line = " ".join(["source", str(path), ";", f"COMP_WORDS=({program} {' '.join(words)})",
                     f"; COMP_CWORD={len(words)}", f"; COMP_LINE='{program} {' '.join(words)}'",
                     f"; COMP_POINT=${{#COMP_LINE}}; {func}",
                     "; printf '%s\\n' \"${COMPREPLY[@]}\""])
    done = subprocess.run(["bash", "-c", line],
                          capture_output=True, text=True, timeout=30, check=True)
    return {w.strip() for w in done.stdout.splitlines() if w.strip()}


def test_bash_completes_every_timerd_subcommand(tmp_path: Path) -> None:
    names = set(_subcommands(cli.parser()))
    assert {"run", "config", "hall", "completion", "doctor"} <= names
    assert names <= _complete(tmp_path, "timerd", ['""'])
    assert "--annotated" in _complete(tmp_path, "timerd", ["config", "--a"])


def test_bash_completes_timerctl_options(tmp_path: Path) -> None:
    offered = _complete(tmp_path, "timerctl", ["--"])
    assert {"--socket", "--instance", "--json", "--help", "--version"} <= offered


def test_bash_completes_every_command_of_every_builtin_profile_and_its_fixed_words(
        tmp_path: Path) -> None:
    """`timerctl <TAB>` offers every command of every built-in profile, and a fixed argument
    its words (issue 46 item 2: before, timerctl completed options only)."""
    names = set(completion.profile_commands())
    assert {"start", "goal", "penalty", "timeout", "shot", "forfeit", "help", "status"} <= names
    assert _complete(tmp_path, "timerctl", ['""']) == names
    assert _complete(tmp_path, "timerctl", ["go"]) == {"goal", "goalie-change"}
    assert _complete(tmp_path, "timerctl", ["goal", '""']) == {"home", "away"}
    assert _complete(tmp_path, "timerctl", ["penalty", "home", '""']) == {
        "minor", "major", "misconduct"}
    assert _complete(tmp_path, "timerctl", ["shot", "away", "s"]) == {"scored"}
    assert _complete(tmp_path, "timerctl", ["--json", "pa"]) == {"pause", "passive"}


def _zsh_screen(tmp_path: Path, typed: str, expect: str) -> str:
    """zsh in tmux with the generated `_timerctl` on its fpath: type `typed`, press TAB twice
    (complete, then list), and the screen once it shows `expect` (a 20 s deadline)."""
    require(shutil.which("zsh") is not None and shutil.which("tmux") is not None,
            "zsh and tmux (Debian packages zsh, tmux)")
    (tmp_path / "_timerctl").write_text(_script("zsh", "--program", "timerctl"))
    session = f"timerd-zsh-{tmp_path.name}"
    tmux = ["tmux", "-L", session]
    subprocess.run([*tmux, "new-session", "-d", "-x", "150", "-y", "40", "zsh -f -i"],
                   check=True, timeout=30)
    try:
        subprocess.run([*tmux, "send-keys", f"fpath=({tmp_path} $fpath); autoload -U compinit; "
                        "compinit -u; PS1='> '", "Enter", typed, "Tab", "Tab"],
                       check=True, timeout=30)
        deadline = time.monotonic() + 20
        while True:
            screen = subprocess.run([*tmux, "capture-pane", "-p"], capture_output=True,
                                    text=True, check=True, timeout=30).stdout
            if expect in screen or time.monotonic() > deadline:
                return screen
            time.sleep(0.1)
    finally:
        subprocess.run([*tmux, "kill-server"], check=False, timeout=30)


@pytest.mark.e2e
def test_zsh_completes_timerctls_commands_and_their_fixed_words(tmp_path: Path) -> None:
    screen = _zsh_screen(tmp_path, "timerctl penalty home ", "misconduct")
    assert all(kind in screen for kind in ("minor", "major", "misconduct")), screen
    screen = _zsh_screen(tmp_path, "timerctl goalie", "goalie-change")
    assert "> timerctl goalie-change" in screen, screen


@pytest.mark.parametrize("shell", ["zsh", "tcsh"])
def test_the_other_shells_get_a_script(shell: str) -> None:
    text = _script(shell, "--program", "timerctl")
    assert "timerctl" in text
    assert "socket" in text


def test_install_writes_and_uninstall_removes_the_scripts(tmp_path: Path) -> None:
    out = io.StringIO()
    _script("--install", "--root", str(tmp_path))
    paths = [tmp_path / p.relative_to("/") for p in completion.installed_paths()]
    assert {p.name for p in paths} == {"timerd", "timerctl", "_timerd", "_timerctl"}
    assert all("--version" in p.read_text() for p in paths)
    assert all("penalty" in p.read_text() for p in paths if p.name.endswith("timerctl"))
    args = cli.parser().parse_args(["completion", "--uninstall", "--root", str(tmp_path)])
    assert completion.main(args, {}, out) == 0
    assert not any(p.exists() for p in paths)


def _help(*argv: str) -> str:
    return subprocess.run([sys.executable, "-m", "timerd", *argv, "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=30, check=True).stdout


def test_help_names_every_subcommand() -> None:
    top = cli.parser()
    text = _help()
    for name in _subcommands(top):
        assert f"\n    {name} " in text or f"\n    {name}\n" in text, name
    for name, sub in _subcommands(top).items():
        nested = _subcommands(sub)
        if nested:
            text = _help(name)
            assert all(n in text for n in nested), (name, nested)
